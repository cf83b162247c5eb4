"""Judge runs on a book against the fake model: estimate, budget, failures, cache, cancel."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import JudgeJudgement, JudgeRun, Pair
from tests.fixtures.users import ApiUser
from tests.judges.fake_llm import FakeLLM, fake_llm
from tests.support.books import make_book

pytestmark = pytest.mark.runner

ENDED = {"finished", "failed", "cancelled", "paused"}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with fake_llm() as server:
        yield server


def make_judge(api: ApiUser, llm: FakeLLM, **extra: Any) -> dict[str, Any]:
    body = {
        "name": "Fake judge",
        "provider": "openai",
        "base_url": f"{llm.url}/v1",
        "model": "gpt-fake",
        "api_key": "sk-run",
        "requests_per_minute": 100_000,
        "price_input_per_mtok": 1.0,
        "price_output_per_mtok": 2.0,
        **extra,
    }
    response = api.post("/api/v1/judges", json=body)
    assert response.status_code == 201, response.text
    judge: dict[str, Any] = response.json()
    return judge


def book_with(api: ApiUser, docs: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A 0-3 book with one pair per doc (query "q", doc ids d0, d1, ...)."""
    book = make_book(api, **extra)
    pairs = [
        {"query_text": "q", "doc_id": f"d{i}", "fields": fields} for i, fields in enumerate(docs)
    ]
    assert api.post(f"/api/v1/books/{book['id']}/pairs", json={"pairs": pairs}).status_code == 200
    return book


def start(api: ApiUser, book_id: int, judge_id: int, **extra: Any) -> dict[str, Any]:
    response = api.post(f"/api/v1/books/{book_id}/judge-runs", json={"judge_id": judge_id, **extra})
    assert response.status_code == 202, response.text
    run: dict[str, Any] = response.json()
    return run


def wait(api: ApiUser, book_id: int, run_id: int, timeout_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        run: dict[str, Any] = api.get(f"/api/v1/books/{book_id}/judge-runs/{run_id}").json()
        if run["status"] in ENDED or time.monotonic() > deadline:
            return run
        time.sleep(0.05)


def judge_ratings(api: ApiUser, book_id: int) -> dict[str, Any]:
    pairs = api.get(f"/api/v1/books/{book_id}/pairs").json()
    return {
        p["doc_id"]: [j for j in p["judgements"] if j.get("judge_id") is not None] for p in pairs
    }


def test_run_rates_every_pair_with_provenance(api: ApiUser, llm: FakeLLM) -> None:
    judge = make_judge(api, llm, temperature=0.3)
    book = book_with(api, [{"title": "A", "grade": 3}, {"title": "B", "grade": 0}])
    run = start(api, book["id"], judge["id"])
    assert run["status"] == "queued" and run["pairs_total"] == 2
    done = wait(api, book["id"], run["id"])
    assert done["status"] == "finished", done
    assert (done["judged"], done["cached"], done["failed"]) == (2, 0, 0)
    assert done["tokens_out"] == 24 and done["tokens_in"] > 100
    assert done["cost_usd"] == pytest.approx((done["tokens_in"] + 2 * 24) / 1e6, abs=1e-6)
    ratings = judge_ratings(api, book["id"])
    assert [j["rating"] for j in ratings["d0"]] == [3.0]
    assert [j["rating"] for j in ratings["d1"]] == [0.0]
    first = ratings["d0"][0]
    assert first["judge_id"] == judge["id"] and first["model"] == "gpt-fake"
    assert first["prompt_sha256"] == judge["prompt_sha256"]
    assert first["temperature"] == 0.3 and first["tokens_out"] == 12
    assert first["explanation"] == "fake says so" and first["cached"] is False
    assert first["latency_ms"] > 0


def test_failures_are_listed_with_reasons_and_retried(api: ApiUser, llm: FakeLLM) -> None:
    judge = make_judge(api, llm)
    docs: list[dict[str, Any]] = [
        {"grade": 2},
        {"fake": "non_json"},
        {"fake": "off_scale"},
        {"fake": "500"},
    ]
    book = book_with(api, docs)
    done = wait(api, book["id"], start(api, book["id"], judge["id"])["id"])
    assert done["status"] == "finished"
    assert (done["judged"], done["failed"]) == (1, 3)
    reasons = {f["pair_id"]: f["reason"] for f in done["failures"]}
    assert len(reasons) == 3
    assert any("not JSON" in r for r in reasons.values())
    assert any("not on the scale" in r for r in reasons.values())
    assert any("HTTP 500" in r and "after 4 attempts" in r for r in reasons.values())
    # "failed" takes exactly the three again; the fake now behaves for none of them but
    # the 500s, so the reasons stay and nothing already rated is asked again.
    before = len(llm.requests)
    again = wait(api, book["id"], start(api, book["id"], judge["id"], pairs="failed")["id"])
    assert again["pairs_total"] == 3 and again["failed"] == 3
    assert len(llm.requests) - before == 2 + 4  # non-JSON and off-scale once, the 500 four times


def test_dry_run_estimates_and_sends_nothing(api: ApiUser, llm: FakeLLM) -> None:
    judge = make_judge(api, llm, max_output_tokens=50)
    book = book_with(api, [{"grade": 1}, {"grade": 2}, {"grade": 3}])
    response = api.post(
        f"/api/v1/books/{book['id']}/judge-runs",
        json={"judge_id": judge["id"], "dry_run": True, "limit": 2},
    )
    assert response.status_code == 200, response.text
    estimate = response.json()
    assert (estimate["pairs"], estimate["calls"], estimate["cached"]) == (2, 2, 0)
    assert estimate["tokens_out_estimate"] == 100  # min(max_output_tokens, 80) per call
    assert estimate["tokens_in_estimate"] > 200
    expected = (estimate["tokens_in_estimate"] * 1.0 + 100 * 2.0) / 1e6
    assert estimate["cost_usd_estimate"] == pytest.approx(expected, abs=1e-6)
    assert llm.requests == []
    assert api.get(f"/api/v1/books/{book['id']}/judge-runs").json() == []


def test_cache_reuses_a_judgement_and_says_so(api: ApiUser, llm: FakeLLM) -> None:
    judge = make_judge(api, llm)
    book = book_with(api, [{"grade": 2}, {"grade": 1}])
    wait(api, book["id"], start(api, book["id"], judge["id"])["id"])
    assert len(llm.requests) == 2
    estimate = api.post(
        f"/api/v1/books/{book['id']}/judge-runs",
        json={"judge_id": judge["id"], "dry_run": True, "pairs": "all"},
    ).json()
    assert (estimate["calls"], estimate["cached"]) == (0, 2)
    again = wait(api, book["id"], start(api, book["id"], judge["id"], pairs="all")["id"])
    assert (again["judged"], again["cached"], again["cost_usd"]) == (0, 2, 0.0)
    assert len(llm.requests) == 2  # nothing paid twice
    ratings = judge_ratings(api, book["id"])
    assert ratings["d0"][0]["cached"] is True and ratings["d0"][0]["rating"] == 2.0
    # "unjudged" has nothing left to do
    assert start(api, book["id"], judge["id"])["pairs_total"] == 0


def test_the_cache_never_serves_another_users_answer(
    api: ApiUser, other_api: ApiUser, llm: FakeLLM
) -> None:
    # Bob plants an answer for a pair he guessed, with a judge just like Alice's (same
    # provider, URL, model and prompt) whose server says what he wants.
    planted = make_judge(other_api, llm)
    bobs = book_with(other_api, [{"grade": 3, "fake": "obey", "note": "answer 0"}])
    assert (
        wait(other_api, bobs["id"], start(other_api, bobs["id"], planted["id"])["id"])["judged"]
        == 1
    )
    assert len(llm.requests) == 1
    judge = make_judge(api, llm)
    book = book_with(api, [{"grade": 3, "fake": "obey", "note": "answer 0"}])
    estimate = api.post(
        f"/api/v1/books/{book['id']}/judge-runs", json={"judge_id": judge["id"], "dry_run": True}
    ).json()
    assert (estimate["calls"], estimate["cached"]) == (1, 0)  # reveals nothing of Bob's
    done = wait(api, book["id"], start(api, book["id"], judge["id"])["id"])
    assert (done["judged"], done["cached"]) == (1, 0)
    assert len(llm.requests) == 2  # Alice's own model was asked
    mine = judge_ratings(api, book["id"])["d0"][0]
    assert mine["cached"] is False and mine["judge_id"] == judge["id"]


def test_the_cache_is_scoped_to_the_judges_url(api: ApiUser, llm: FakeLLM) -> None:
    first = make_judge(api, llm)
    book = book_with(api, [{"grade": 2}])
    wait(api, book["id"], start(api, book["id"], first["id"])["id"])
    with fake_llm() as elsewhere:
        moved = make_judge(api, elsewhere, name="Same model elsewhere")
        estimate = api.post(
            f"/api/v1/books/{book['id']}/judge-runs",
            json={"judge_id": moved["id"], "dry_run": True},
        ).json()
        assert (estimate["calls"], estimate["cached"]) == (1, 0)
    same = make_judge(api, llm, name="Same model, same server")
    estimate = api.post(
        f"/api/v1/books/{book['id']}/judge-runs", json={"judge_id": same["id"], "dry_run": True}
    ).json()
    assert (estimate["calls"], estimate["cached"]) == (0, 1)  # the owner's own cache serves


def test_budget_in_tokens_stops_before_it_is_exceeded(api: ApiUser, llm: FakeLLM) -> None:
    judge = make_judge(api, llm, max_output_tokens=20, max_concurrency=1)
    book = book_with(api, [{"grade": 1, "n": i} for i in range(6)])
    budget = 1000
    done = wait(api, book["id"], start(api, book["id"], judge["id"], budget_tokens=budget)["id"])
    assert done["status"] == "paused"
    assert "budget of 1000 tokens" in done["message"]
    spent = done["tokens_in"] + done["tokens_out"]
    assert 0 < spent <= budget
    assert 0 < done["judged"] < 6
    assert len(llm.requests) == done["judged"]


def test_budget_in_usd_needs_prices(api: ApiUser, llm: FakeLLM) -> None:
    judge = make_judge(api, llm, price_input_per_mtok=None, price_output_per_mtok=None)
    book = book_with(api, [{"grade": 1}])
    response = api.post(
        f"/api/v1/books/{book['id']}/judge-runs", json={"judge_id": judge["id"], "budget_usd": 1}
    )
    assert response.status_code == 422


def test_ten_failures_in_a_row_pause_the_run(api: ApiUser, llm: FakeLLM) -> None:
    judge = make_judge(api, llm, max_concurrency=1)
    book = book_with(api, [{"fake": "non_json", "n": i} for i in range(14)])
    done = wait(api, book["id"], start(api, book["id"], judge["id"])["id"])
    assert done["status"] == "paused"
    assert "10 failures in a row" in done["message"] and "not JSON" in done["message"]
    assert done["failed"] == 10 and len(llm.requests) == 10


def test_cancel_stops_a_running_run(api: ApiUser, llm: FakeLLM) -> None:
    llm.delay_s = 0.05
    judge = make_judge(api, llm, max_concurrency=1)
    book = book_with(api, [{"grade": 1, "n": i} for i in range(200)])
    run = start(api, book["id"], judge["id"])
    deadline = time.monotonic() + 10
    while not llm.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    cancelled = api.post(f"/api/v1/books/{book['id']}/judge-runs/{run['id']}/cancel")
    assert cancelled.status_code == 200
    done = wait(api, book["id"], run["id"])
    assert done["status"] == "cancelled"
    assert done["judged"] < 200 and len(llm.requests) < 200


def test_cancel_answers_cancelled_and_stops_waiting_at_once(
    api: ApiUser, llm: FakeLLM, session_factory: sessionmaker[Session]
) -> None:
    llm.gate = threading.Event()  # the model hangs until the test ends
    judge = make_judge(api, llm, max_concurrency=2, timeout_s=120)
    book = book_with(api, [{"grade": 1, "n": i} for i in range(6)])
    run = start(api, book["id"], judge["id"])
    url = f"/api/v1/books/{book['id']}/judge-runs/{run['id']}"
    try:
        deadline = time.monotonic() + 10
        while len(llm.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        cancelled = api.post(f"{url}/cancel")
        assert cancelled.status_code == 200
        assert (cancelled.json()["status"], cancelled.json()["resumable"]) == ("cancelled", False)
        # The runner abandons the two calls it was waiting for and ends, counting them at
        # their worst case (they may be billed), while the model still hangs.
        deadline = time.monotonic() + 20
        while (row := api.get(url).json())["cost_usd"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not llm.gate.is_set()
        assert row["status"] == "cancelled" and row["cost_usd"] > 0
        assert row["tokens_out"] == 2 * 512  # max_output_tokens of each abandoned call
        with session_scope(session_factory) as session:
            stored = session.get(JudgeRun, run["id"])
            assert stored is not None and stored.cancel_requested
            assert (stored.reserved_usd, stored.reserved_tokens_in) == (0.0, 0)
        assert len(llm.requests) == 2  # nothing sent after the cancel
        assert api.post(f"{url}/resume").status_code == 409
    finally:
        llm.gate.set()


def test_a_cancelled_run_is_never_put_back_by_the_resumer(
    api: ApiUser, llm: FakeLLM, session_factory: sessionmaker[Session]
) -> None:
    from app.judges import runs as judge_runs

    judge = make_judge(api, llm)
    other = make_judge(api, llm)
    book = book_with(api, [{"grade": 1}])
    old = datetime.now(UTC) - timedelta(minutes=5)
    with session_scope(session_factory) as session:
        # Its cancel was asked, then its worker died (the usual reason to cancel a run stuck
        # on a hanging model); a process may even have written "running" over the cancel.
        asked = JudgeRun(
            book_id=book["id"],
            judge_id=judge["id"],
            status="running",
            cancel_requested=True,
            heartbeat_at=old,
        )
        # Cancelled through the API once its worker was gone.
        dead = JudgeRun(
            book_id=book["id"], judge_id=other["id"], status="running", heartbeat_at=old
        )
        session.add_all([asked, dead])
        session.commit()
        asked_id, dead_id = asked.id, dead.id
    url = f"/api/v1/books/{book['id']}/judge-runs"
    assert api.post(f"{url}/{dead_id}/cancel").json()["status"] == "cancelled"
    with session_scope(session_factory) as session:
        assert judge_runs.resume_stale_runs(session=session) == []
        statuses = dict(session.execute(select(JudgeRun.id, JudgeRun.status)).all())
    assert (statuses[asked_id], statuses[dead_id]) == ("running", "cancelled")
    assert api.post(f"{url}/{asked_id}/resume").status_code == 409
    assert llm.requests == []


def test_spend_reserved_before_a_call_counts_after_a_crash(
    api: ApiUser, llm: FakeLLM, session_factory: sessionmaker[Session]
) -> None:
    from app.judges import run_store

    judge = make_judge(api, llm)
    book = book_with(api, [{"grade": 1}, {"grade": 2}])
    with session_scope(session_factory) as session:
        pair_ids = sorted(session.scalars(select(Pair.id).where(Pair.book_id == book["id"])))
        run = JudgeRun(
            book_id=book["id"],
            judge_id=judge["id"],
            status="running",
            pair_ids=pair_ids,
            pairs_total=2,
            heartbeat_at=datetime.now(UTC) - timedelta(minutes=5),
        )
        session.add(run)
        session.commit()
        run_id = run.id
        # The dead process had sent a call (reserved first), and was killed before its
        # result was stored: the provider billed it, the run must say so.
        worst = run_store.Reservation(tokens_in=300, tokens_out=512, usd=0.5)
        assert run_store.reserve(session=session, run_id=run_id, reservation=worst)
    resumed = api.post(f"/api/v1/books/{book['id']}/judge-runs/{run_id}/resume")
    assert resumed.status_code == 202, resumed.text
    done = wait(api, book["id"], run_id)
    assert (done["status"], done["judged"]) == ("finished", 2)
    assert len(llm.requests) == 2  # that pair is asked again (and paid again)
    paid = sum((len(llm.prompt_of(r.body)) // 4 * 1.0 + 12 * 2.0) / 1_000_000 for r in llm.requests)
    assert done["cost_usd"] == pytest.approx(0.5 + paid, abs=1e-6)
    assert done["tokens_out"] == 512 + 2 * 12
    with session_scope(session_factory) as session:
        row = session.get(JudgeRun, run_id)
        assert row is not None and (row.reserved_usd, row.reserved_tokens_out) == (0.0, 0)


def test_one_run_per_judge_at_a_time(api: ApiUser, llm: FakeLLM) -> None:
    llm.delay_s = 0.05
    judge = make_judge(api, llm, max_concurrency=1)
    book = book_with(api, [{"grade": 1, "n": i} for i in range(40)])
    run = start(api, book["id"], judge["id"])
    second = api.post(f"/api/v1/books/{book['id']}/judge-runs", json={"judge_id": judge["id"]})
    assert second.status_code == 409
    api.post(f"/api/v1/books/{book['id']}/judge-runs/{run['id']}/cancel")
    assert wait(api, book["id"], run["id"])["status"] == "cancelled"


def test_twelve_concurrent_starts_make_one_run_that_asks_once_per_pair(
    api: ApiUser, llm: FakeLLM, session_factory: sessionmaker[Session]
) -> None:
    llm.delay_s = 0.05
    judge = make_judge(api, llm, max_concurrency=2)
    book = book_with(api, [{"grade": 1, "n": i} for i in range(8)])
    gate = threading.Barrier(12)

    def one_start(_: int) -> Any:
        gate.wait()
        return api.post(f"/api/v1/books/{book['id']}/judge-runs", json={"judge_id": judge["id"]})

    with ThreadPoolExecutor(12) as pool:
        answers = list(pool.map(one_start, range(12)))
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [202] + [409] * 11, [a.text for a in answers if a.status_code >= 500]
    busy = next(a.json() for a in answers if a.status_code == 409)
    assert "already has a run under way" in busy["detail"]
    run = next(a.json() for a in answers if a.status_code == 202)
    assert wait(api, book["id"], run["id"])["status"] == "finished"
    assert len(llm.requests) == 8  # once per pair
    with session_scope(session_factory) as session:
        runs = session.scalars(select(JudgeRun).where(JudgeRun.judge_id == judge["id"])).all()
    assert [r.id for r in runs] == [run["id"]]


def test_the_database_refuses_a_second_active_run_of_a_judge(
    api: ApiUser, llm: FakeLLM, session_factory: sessionmaker[Session]
) -> None:
    judge = make_judge(api, llm)
    book = book_with(api, [{"grade": 1}])
    with session_scope(session_factory) as session:
        session.add(JudgeRun(book_id=book["id"], judge_id=judge["id"], status="queued"))
        session.commit()
        session.add(JudgeRun(book_id=book["id"], judge_id=judge["id"], status="running"))
        with pytest.raises(IntegrityError):
            session.commit()
        session.rollback()
        # Runs that ended do not count: any number of them.
        for status in ("finished", "cancelled", "paused", "failed", "finished"):
            session.add(JudgeRun(book_id=book["id"], judge_id=judge["id"], status=status))
        session.commit()


def test_anthropic_judge_runs_and_429_is_honoured(api: ApiUser, llm: FakeLLM) -> None:
    judge = make_judge(api, llm, provider="anthropic", base_url=llm.url, model="claude-fake")
    book = book_with(api, [{"grade": 3, "fake": "429_once"}, {"grade": 2}])
    done = wait(api, book["id"], start(api, book["id"], judge["id"])["id"])
    assert (done["status"], done["judged"], done["failed"]) == ("finished", 2, 0)
    assert len(llm.requests) == 3
    assert all(r.path == "/v1/messages" for r in llm.requests)


def test_someone_elses_judge_or_book_is_404(api: ApiUser, other_api: ApiUser, llm: FakeLLM) -> None:
    judge = make_judge(api, llm)
    book = book_with(other_api, [{"grade": 1}])
    response = other_api.post(
        f"/api/v1/books/{book['id']}/judge-runs", json={"judge_id": judge["id"]}
    )
    assert response.status_code == 404
    mine = book_with(api, [{"grade": 1}])
    assert other_api.get(f"/api/v1/books/{mine['id']}/judge-runs").status_code == 404


def test_a_run_left_by_a_stopped_process_resumes_where_it_was(
    api: ApiUser, llm: FakeLLM, session_factory: sessionmaker[Session]
) -> None:
    judge = make_judge(api, llm)
    book = book_with(api, [{"grade": g} for g in (0, 1, 2, 3)])
    # A run that rated the first pair, then its process died: "running", heartbeat old.
    first = wait(api, book["id"], start(api, book["id"], judge["id"], limit=1)["id"])
    assert first["judged"] == 1
    with session_scope(session_factory) as session:
        pair_ids = sorted(session.scalars(select(Pair.id).where(Pair.book_id == book["id"])))
        run = JudgeRun(
            book_id=book["id"],
            judge_id=judge["id"],
            status="running",
            pair_ids=pair_ids,
            pairs_total=4,
            heartbeat_at=datetime.now(UTC) - timedelta(minutes=5),
        )
        session.add(run)
        session.flush()
        done = session.scalars(
            select(JudgeJudgement).where(JudgeJudgement.pair_id == pair_ids[0])
        ).one()
        done.run_id = run.id  # the dead process had stored this one
        session.commit()
        run_id = run.id
    listed = api.get(f"/api/v1/books/{book['id']}/judge-runs/{run_id}").json()
    assert listed["resumable"] is True
    before = len(llm.requests)
    resumed = api.post(f"/api/v1/books/{book['id']}/judge-runs/{run_id}/resume")
    assert resumed.status_code == 202, resumed.text
    ended = wait(api, book["id"], run_id)
    assert ended["status"] == "finished"
    assert len(llm.requests) - before == 3  # the three pairs it had not done, no more
    ratings = judge_ratings(api, book["id"])
    assert [ratings[f"d{i}"][0]["rating"] for i in range(4)] == [0.0, 1.0, 2.0, 3.0]
    again = api.post(f"/api/v1/books/{book['id']}/judge-runs/{run_id}/resume")
    assert again.status_code == 409  # a finished run has nothing to resume


def test_stale_runs_are_put_back_in_the_queue_once_and_fresh_ones_are_left(
    api: ApiUser, llm: FakeLLM, session_factory: sessionmaker[Session]
) -> None:
    from app.judges import runs as judge_runs

    judge = make_judge(api, llm)
    other = make_judge(api, llm)
    book = book_with(api, [{"grade": g} for g in (0, 1)])
    now = datetime.now(UTC)
    with session_scope(session_factory) as session:
        pair_ids = sorted(session.scalars(select(Pair.id).where(Pair.book_id == book["id"])))

        def left(judge_id: int, beat: datetime) -> int:
            run = JudgeRun(
                book_id=book["id"],
                judge_id=judge_id,
                status="running",
                pair_ids=pair_ids,
                pairs_total=2,
                heartbeat_at=beat,
            )
            session.add(run)
            session.flush()
            return run.id

        stale = left(judge["id"], now - timedelta(minutes=2))  # its process stopped
        fresh = left(other["id"], now - timedelta(seconds=5))  # still beating
        session.commit()
        assert judge_runs.resume_stale_runs(session=session, now=now) == [stale]
        assert judge_runs.resume_stale_runs(session=session, now=now) == []  # once only
        statuses = dict(session.execute(select(JudgeRun.id, JudgeRun.status)).all())
    assert (statuses[stale], statuses[fresh]) == ("queued", "running")
