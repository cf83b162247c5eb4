"""JavaScript runs in worker processes: a scorer that kills V8 fails its query, not the server."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.sandbox import CRASH_MESSAGE, WORKER_MESSAGE, JsPool, PoolSettings, install_pool
from app.sandbox.pool import MAX_CRASHES_IN_A_ROW
from app.sandbox.process import logger as PROCESS_LOG
from app.sandbox.protocol import COMMAND, result_from_row
from app.scoring import Limits, QueryInput, score_queries
from tests.scoring.helpers import CLASSIC_SCALE, config, query

ROOT = Path(__file__).resolve().parents[2]

# Aborts V8 (and so its process) within half a second: "Fatal JavaScript invalid size error".
SPLIT_CRASH = '"x".repeat(2**28).split("")'
# Keeps V8 busy in a built-in that ignores termination, then aborts it (out of memory).
FILL_CRASH = "new Array(2**28).fill(0)"

CLASSIC = """
var score = avgRating100();
if (score !== null) score -= editDistanceFromBest();
setScore(score);
"""


def guarded(crash: str) -> Any:
    """Return the Quepid classic scorer, which runs crash first on queries with option bad."""
    code = f"if (qOption('bad')) {{ {crash}; }}\n{CLASSIC}"
    return config("javascript", code=code, scale=CLASSIC_SCALE)


def graded(n: int, bad: bool = False) -> QueryInput:
    """Return the n-th of a family of classic-scale queries with different scores."""
    ratings = {c: (i * 3 + n) % 10 + 1 for i, c in enumerate("abcdefghij") if (i + n) % 3}
    return query("abcdefghij"[n % 5 :], ratings, query_options={"bad": True} if bad else {})


def builtin(queries: list[QueryInput]) -> list[float | None]:
    """Return the built-in classic scores of the queries."""
    return [o.score for o in score_queries(config("classic", scale=CLASSIC_SCALE), queries)]


UsePool = Callable[..., JsPool]


@pytest.fixture
def use_pool() -> Iterator[UsePool]:
    """Return a function that installs a fresh pool with the given settings for this test."""
    made: list[tuple[JsPool, JsPool | None]] = []

    def use(**settings: Any) -> JsPool:
        pool = JsPool(PoolSettings(**settings))
        made.append((pool, install_pool(pool)))
        return pool

    yield use
    for pool, previous in reversed(made):
        install_pool(previous)
        pool.close()


def test_a_query_that_aborts_v8_fails_alone(use_pool: UsePool) -> None:
    pool = use_pool()
    queries = [graded(n, bad=n in (5, 150)) for n in range(200)]
    outcomes = score_queries(guarded(SPLIT_CRASH), queries)
    errors = [i for i, o in enumerate(outcomes) if o.status == "error"]
    assert errors == [5, 150]
    assert {outcomes[i].reason for i in errors} == {CRASH_MESSAGE}
    expected = builtin(queries)
    assert [o.score for i, o in enumerate(outcomes) if i not in errors] == [
        s for i, s in enumerate(expected) if i not in errors
    ]
    assert pool.started <= 5  # each culprit: one crash in the batch, one to pin it down


def test_a_huge_fill_fails_alone_and_fast(
    use_pool: UsePool, caplog: pytest.LogCaptureFixture
) -> None:
    pool = use_pool(grace_s=0.3)
    queries = [graded(1), graded(2, bad=True), graded(3)]
    outcomes = score_queries(guarded(FILL_CRASH), queries, limits=Limits(time_s=0.2))
    assert [o.status for o in outcomes] == ["scored", "error", "scored"]
    # Fast: the pool killed the worker past its time limit and grace, in the batch and once
    # more to pin the culprit down, rather than wait for V8 to abort on its own (about 10 s a
    # try), which the log would show as "died".
    lost = [r.message for r in caplog.records if r.name == PROCESS_LOG.name]
    assert len(lost) == 2
    assert all("stopped answering and was killed" in line for line in lost)
    assert pool.started == 3  # the first worker and one replacement per kill
    # Killed when it overran its time limit without stopping, before V8 aborts on its own.
    assert outcomes[1].reason in (CRASH_MESSAGE, "scorer exceeded its 0.2 s time limit")
    assert [outcomes[0].score, outcomes[2].score] == [builtin(queries)[0], builtin(queries)[2]]


def test_a_scorer_that_crashes_on_every_query_gives_up_quickly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outcomes = score_queries(guarded(SPLIT_CRASH), [graded(n, bad=True) for n in range(300)])
    assert {o.status for o in outcomes} == {"error"}
    assert all(o.reason and o.reason.startswith(CRASH_MESSAGE) for o in outcomes)
    assert outcomes[0].reason == CRASH_MESSAGE
    assert (
        outcomes[-1].reason
        == CRASH_MESSAGE + "; the remaining queries were not run after 3 crashes"
    )
    deaths = [r for r in caplog.records if r.name == PROCESS_LOG.name and "died" in r.message]
    assert len(deaths) == MAX_CRASHES_IN_A_ROW


def test_scoring_works_after_a_crash() -> None:
    crashed = score_queries(guarded(SPLIT_CRASH), [graded(0, bad=True)])
    assert crashed[0].reason == CRASH_MESSAGE
    queries = [graded(n) for n in range(20)]
    assert [o.score for o in score_queries(guarded(SPLIT_CRASH), queries)] == builtin(queries)


def test_the_worker_is_reused(use_pool: UsePool) -> None:
    pool = use_pool()
    queries = [graded(n) for n in range(10)]
    score_queries(guarded(SPLIT_CRASH), queries)
    pids = pool.pids()
    for _ in range(5):
        assert [o.score for o in score_queries(guarded(SPLIT_CRASH), queries)] == builtin(queries)
    assert pool.pids() == pids
    assert pool.started == 1  # the first call started it


def test_concurrent_calls_get_their_own_answers(use_pool: UsePool) -> None:
    pool = use_pool()
    results: dict[int, list[float | None]] = {}
    expected: dict[int, list[float | None]] = {}

    def work(k: int) -> None:
        code = f"if (qOption('bad')) {{ {SPLIT_CRASH}; }} setScore(docRating(0) * {k})"
        scorer = config("javascript", code=code, scale=CLASSIC_SCALE, max_score=1000)
        queries = [graded(n, bad=k == 3 and n == 7) for n in range(300)]
        expected[k] = [q.ratings.get(q.docs[0].id, 0) * k / 10 for q in queries]
        if k == 3:
            expected[k][7] = None
        results[k] = [o.score for o in score_queries(scorer, queries)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 7)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(results) == [1, 2, 3, 4, 5, 6]
    assert results == expected
    assert len(pool.pids()) <= pool.settings.workers


def test_closed_workers_come_back(use_pool: UsePool) -> None:
    pool = use_pool()
    queries = [graded(n) for n in range(3)]
    score_queries(guarded(SPLIT_CRASH), queries)
    old = set(pool.pids())
    pool.close()
    assert pool.pids() == []
    assert [o.score for o in score_queries(guarded(SPLIT_CRASH), queries)] == builtin(queries)
    assert not old & set(pool.pids())


def test_without_an_installed_pool_a_call_has_workers_of_its_own() -> None:
    previous = install_pool(None)
    try:
        queries = [graded(n) for n in range(3)]
        assert [o.score for o in score_queries(guarded(SPLIT_CRASH), queries)] == builtin(queries)
    finally:
        install_pool(previous)


def test_a_worker_exits_when_its_parent_dies() -> None:
    script = textwrap.dedent(
        """
        import os
        from app.sandbox import JsPool, install_pool
        from app.scoring import score_queries
        from tests.scoring.helpers import config, query
        pool = JsPool()
        install_pool(pool)
        score_queries(config("javascript", code="setScore(1)"), [query("a", {})])
        print(pool.pids()[0], flush=True)
        os._exit(0)  # the pool is never closed: the worker must notice on its own
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, timeout=60
    )
    pid = int(done.stdout.split()[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    pytest.fail("the worker outlived its parent")


@pytest.mark.parametrize(
    "command",
    [
        (sys.executable, "-c", "import sys; sys.exit(3)"),
        (str(ROOT / "no-such-python"), "-c", COMMAND),
    ],
)
def test_a_worker_that_cannot_start_is_an_error(
    use_pool: UsePool, command: tuple[str, ...]
) -> None:
    use_pool(command=command)
    outcomes = score_queries(guarded(SPLIT_CRASH), [graded(n) for n in range(5)])
    assert {o.reason for o in outcomes} == {
        WORKER_MESSAGE + "; the remaining queries were not run after 3 crashes"
    }
    use_pool()  # a pool that can start workers
    assert score_queries(guarded(SPLIT_CRASH), [graded(1)])[0].status == "scored"


@pytest.mark.parametrize(
    "row",
    [
        ["hacked", 1.0, 1.0, None, []],
        ["scored", "1", 1.0, None, []],
        ["scored", 1.0, 1.0, None, [1]],
        ["scored", 1.0, 1.0, None],
    ],
)
def test_outcomes_from_a_worker_are_checked(row: list[Any]) -> None:
    with pytest.raises(ValueError):
        result_from_row(row)


def test_the_app_owns_its_workers_and_stops_them_when_it_stops(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from app.config import Settings
    from app.main import create_app
    from app.sandbox import current_pool
    from tests.fixtures.outbound import SUITE_HOSTS

    suite_pool = current_pool()
    app = create_app(
        Settings(
            trusted_engine_hosts=SUITE_HOSTS,
            data_dir=tmp_path,
            database_url=f"sqlite:///{tmp_path}/js.db",
            secret_key="js",
        )
    )
    with TestClient(app):
        pool = current_pool()
        assert pool is not None and pool is not suite_pool
        queries = [graded(n) for n in range(3)]
        assert [o.score for o in score_queries(guarded(SPLIT_CRASH), queries)] == builtin(queries)
        pids = pool.pids()
        assert len(pids) == 1
    assert current_pool() is suite_pool
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
