"""The relevo command for schedules, alerts and webhooks."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from sqlalchemy import select

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.cli import main
from app.db import make_engine, make_session_factory, session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.models import Alert, CaseSchedule, Webhook
from app.outbound.policy import current_policy
from app.secret_box import opened
from tests.fixtures.users import PASSWORD


def test_schedules_alerts_and_webhooks_from_the_command_line(
    empty_db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", empty_db_url)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RELEVO_RUN_QUEUE", "inprocess")
    assert main(["db", "upgrade"]) == 0
    engine = make_engine(empty_db_url)
    factory = make_session_factory(engine)
    with session_scope(factory) as session:
        user = user_service.create_user(session=session, email="ops@example.com", password=PASSWORD)
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(name="e", engine="opensearch", url="http://127.0.0.1:9/movies"),
        )
        case = case_service.create_case(
            session=session,
            user=user,
            body=CaseCreate(name="c", search_endpoint_id=endpoint.id, query_template="{}"),
        )
        case_id = case.id
    monkeypatch.setattr("sys.stdin", io.StringIO("hook-secret\n"))
    assert (
        main(
            [
                "webhooks",
                "add",
                "ops@example.com",
                "slack",
                "https://hooks.example.com/a",
                "--secret-stdin",
            ]
        )
        == 0
    )
    assert main(["schedules", "set", str(case_id), "@weekly"]) == 0
    assert main(["schedules", "set", str(case_id), "every tuesday"]) == 2
    capsys.readouterr()
    assert main(["webhooks", "list", "ops@example.com"]) == 0
    (hook,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (hook["name"], hook["has_secret"]) == ("slack", True)
    assert (
        main(
            [
                "alerts",
                "add",
                str(case_id),
                "--kind",
                "drop",
                "--points",
                "3",
                "--webhook",
                str(hook["id"]),
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["alerts", "add", str(case_id), "--kind", "significant_drop"]) == 0
    added, note = capsys.readouterr().out.splitlines()
    assert added.endswith(f"(significant_drop) added to case {case_id}.")
    assert note.startswith("Note: Fires only when at least 6 queries changed score")
    assert main(["alerts", "add", str(case_id), "--kind", "below"]) == 2  # no threshold
    assert main(["alerts", "add", str(case_id), "--kind", "below", "--threshold", "500"]) == 2
    assert main(["schedules", "list"]) == 0
    assert "@weekly\tcurrent" in capsys.readouterr().out
    with session_scope(factory) as session:
        schedule = session.get(CaseSchedule, case_id)
        assert schedule is not None and schedule.cron == "@weekly"
        alert, significant = session.scalars(select(Alert).order_by(Alert.id))
        assert (alert.kind, alert.points, alert.webhook_ids) == ("drop", 3.0, [hook["id"]])
        assert significant.kind == "significant_drop"
        (webhook,) = session.scalars(select(Webhook))
        assert webhook.secret is not None and webhook.secret.startswith("sealed:v2:")
        assert opened(webhook, "secret") == "hook-secret"
    assert main(["alerts", "remove", str(case_id), str(alert.id)]) == 0
    assert main(["schedules", "clear", str(case_id)]) == 0
    assert main(["schedules", "clear", str(case_id)]) == 2
    engine.dispose()


def test_commands_obey_the_outbound_policy_of_their_environment(
    empty_db_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("DATABASE_URL", empty_db_url)
    monkeypatch.setenv("RELEVO_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("RELEVO_RUN_QUEUE", "inprocess")
    assert main(["db", "upgrade"]) == 0
    with session_scope(make_session_factory(make_engine(empty_db_url))) as session:
        user_service.create_user(session=session, email="ops@example.com", password=PASSWORD)
    before = current_policy()
    monkeypatch.delenv("RELEVO_ALLOWED_ENGINE_HOSTS")  # the defaults: private addresses blocked
    add = ["webhooks", "add", "ops@example.com", "metadata", "http://169.254.169.254/latest"]
    assert main(add) == 2
    assert "add its host to RELEVO_ALLOWED_ENGINE_HOSTS" in capsys.readouterr().err
    assert current_policy() is before  # the command's policy ends with it
    monkeypatch.setenv("RELEVO_ALLOWED_ENGINE_HOSTS", "169.254.169.254")
    assert main(add) == 0
