"""The app tunes the garbage collector for its allocation pattern when it starts."""

from __future__ import annotations

import gc
from pathlib import Path

from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.runtime import GC_THRESHOLDS
from tests.fixtures.outbound import SUITE_HOSTS


def test_the_app_raises_the_collectors_thresholds(tmp_path: Path) -> None:
    app = create_app(
        Settings(
            trusted_engine_hosts=SUITE_HOSTS,
            data_dir=tmp_path,
            database_url=f"sqlite:///{tmp_path}/gc.db",
            secret_key="gc",
        )
    )
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        with TestClient(app):
            assert gc.get_threshold() == GC_THRESHOLDS
    finally:
        gc.set_threshold(*before)
    assert GC_THRESHOLDS[0] > 700
