"""The home dashboard and the case's schedule card in a real browser (headless Chromium)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.models import Alert, AlertCheck, AlertEvent, Query
from tests.browser.live import PASSWORD, serving
from tests.schedules.helpers import add_run

pytestmark = pytest.mark.browser


@dataclass(frozen=True)
class DashboardApp:
    url: str
    case_ids: dict[str, int]


def _cases(factory: sessionmaker[Session]) -> dict[str, int]:
    now = datetime.now(UTC)
    with session_scope(factory) as session:
        ann = user_service.create_user(session=session, email="ann@example.com", password=PASSWORD)
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=ann,
            body=EndpointCreate(name="e", engine="opensearch", url="http://127.0.0.1:9/movies"),
        )
        ids = {}
        for name, scores in (("Steady", [50, 52]), ("Slipping", [80, 61]), ("New", [])):
            body = CaseCreate(name=name, search_endpoint_id=endpoint.id, query_template="{}")
            case = case_service.create_case(session=session, user=ann, body=body)
            query = Query(case_id=case.id, text="q")
            session.add(query)
            session.commit()
            ran = [
                add_run(session, case.id, [query.id], [s], finished_at=now - timedelta(days=2 - i))
                for i, s in enumerate(scores)
            ]
            if name == "Slipping":
                rule = Alert(case_id=case.id, kind="drop", points=5)
                session.add(rule)
                session.flush()
                session.add(AlertCheck(run_id=ran[-1].id, triggered=True))
                reason = "score fell 19.00 points from the previous run"
                session.add(
                    AlertEvent(
                        alert_id=rule.id,
                        case_id=case.id,
                        run_id=ran[-1].id,
                        payload={"alert": {"reason": reason}},
                    )
                )
                session.commit()
            ids[name] = case.id
    return ids


@pytest.fixture(scope="module")
def dashboard_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DashboardApp]:
    """Serve a fresh app with three cases of one user: one slipping, one steady, one new."""
    from app.config import Settings
    from app.main import create_app
    from tests.fixtures.outbound import SUITE_HOSTS

    data_dir: Path = tmp_path_factory.mktemp("dashboard-app")
    app = create_app(
        Settings(
            trusted_engine_hosts=SUITE_HOSTS,
            data_dir=data_dir,
            database_url=f"sqlite:///{data_dir}/relevo.db",
            secret_key="dashboard-test-secret",
        )
    )
    try:
        with serving(app) as url:
            yield DashboardApp(url, _cases(app.state.session_factory))
    finally:
        app.state.engine.dispose()


def test_the_dashboard_shows_what_got_worse_first(
    browser: Any, dashboard_app: DashboardApp
) -> None:
    page = browser.new_page()
    try:
        page.goto(f"{dashboard_app.url}/login")
        page.fill("input[name=email]", "ann@example.com")
        page.fill("input[name=password]", PASSWORD)
        page.click("#login-form button[type=submit]")
        page.wait_for_url(f"{dashboard_app.url}/")
        page.click("nav.mainnav a:text('Dashboard')")
        page.wait_for_selector("#dashboard")
        names = page.locator("#dashboard tbody tr td:first-child").all_inner_texts()
        assert names == ["Slipping", "Steady", "New"]
        assert page.locator("#dashboard .delta-7d").all_inner_texts() == ["-19.00", "+2.00", "—"]
        states = page.locator("#dashboard .alert-state").all_inner_texts()
        assert states[0].startswith("Drop: score fell 19.00 points from the previous run (run ")
        assert states[1:] == ["—", "—"]
        assert page.locator("#dashboard .delta-last-run").all_inner_texts() == [
            "-19.00",
            "+2.00",
            "—",
        ]
        assert page.locator("#dashboard tr.dashboard-case >> nth=0 >> svg polyline").count() == 1

        # The case page loads its schedule card with htmx; saving swaps it in place.
        page.click("#dashboard a:text('Steady')")
        page.wait_for_url(f"{dashboard_app.url}/cases/{dashboard_app.case_ids['Steady']}")
        page.wait_for_selector("#schedule-form input[name=cron]")
        page.fill("#schedule-form input[name=cron]", "15 6 * * *")
        page.click("#schedule-form button[type=submit]")
        page.wait_for_selector("#schedule-state time.next-run")
        assert page.inner_text("#schedule-state time.next-run").endswith("06:15 UTC")
        assert page.url.endswith(f"/cases/{dashboard_app.case_ids['Steady']}")
        page.click("nav.mainnav a:text('Dashboard')")
        page.wait_for_selector("#dashboard")
        steady = page.locator("#dashboard tr.dashboard-case >> nth=1")
        assert steady.locator(".next-run").inner_text().endswith("06:15")
    finally:
        page.close()
