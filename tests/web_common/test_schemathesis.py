"""Property-based API run with schemathesis: a few hundred examples, never a 5xx."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings

from tests.fixtures.users import ApiUser
from tests.support.api import make_case, make_endpoint

EXAMPLES_PER_OPERATION = 6


@pytest.mark.filterwarnings("ignore")
def test_no_route_answers_5xx(app: FastAPI, api: ApiUser) -> None:
    endpoint = make_endpoint(api, "http://127.0.0.1:9/movies")
    make_case(api, endpoint["id"])
    schema = schemathesis.openapi.from_dict(app.openapi())
    failures: list[str] = []
    total = 0
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # the schema is FastAPI's own
        if operation.path.endswith("/runs") and operation.method.upper() == "POST":
            continue  # starting runs calls engines; covered by the run tests
        if operation.path.endswith("/pull"):
            continue  # a pull starts a job that calls engines: tests/clicks/test_pull.py

        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy())
        def check(case: Any) -> None:
            nonlocal total
            total += 1
            # The suite's own client: a fresh one per call would restart the app each time.
            kwargs = case.as_transport_kwargs(base_url="http://testserver", headers=api.headers)
            kwargs.pop("cookies", None)
            response = api.client.request(**kwargs)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path}: {response.status_code}")

        check()
    assert total >= 100
    assert failures == []
