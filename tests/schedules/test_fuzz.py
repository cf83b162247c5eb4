"""The schedules, alerts, webhooks, annotations and dashboard routes never answer 5xx."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from hypothesis import HealthCheck, given, settings

from tests.fixtures.users import ApiUser
from tests.schedules.helpers import new_case

EXAMPLES_PER_OPERATION = 25
OURS = ("/schedule", "/alerts", "/webhooks", "/annotations", "/dashboard", "/watch")


@pytest.mark.filterwarnings("ignore")
def test_no_route_of_ours_answers_5xx(app: FastAPI, api: ApiUser) -> None:
    new_case(api, queries=1)  # case 1 exists, so many generated paths reach the services
    schema = schemathesis.openapi.from_dict(app.openapi())
    failures: list[str] = []
    total = 0
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]  # the schema is FastAPI's own
        if not any(part in operation.path for part in OURS):
            continue

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
            kwargs = case.as_transport_kwargs(base_url="http://testserver", headers=api.headers)
            kwargs.pop("cookies", None)
            response = api.client.request(**kwargs)
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.formatted_path} {kwargs.get('json')}")

        check()
    assert total >= 300
    assert failures == []
