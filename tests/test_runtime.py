"""The app tunes the garbage collector for its allocation pattern when it starts."""

from __future__ import annotations

import gc

from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.runtime import GC_THRESHOLDS


def test_the_app_raises_the_collectors_thresholds(app: FastAPI) -> None:
    gc.set_threshold(700, 10, 10)
    with TestClient(app):
        assert gc.get_threshold() == GC_THRESHOLDS
    assert GC_THRESHOLDS[0] > 700
