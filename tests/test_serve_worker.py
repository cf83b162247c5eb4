"""`relevo serve` and its queue worker: the worker never outlives the server, and comes back.

Real processes on a PostgreSQL database of each test's own: the server is started as a
deployment starts it, its worker is found among its children in /proc, and the server is
stopped with SIGTERM or killed with SIGKILL, or the worker is killed under it. Also the
supervisor's back-off, and the demo's engine process, which must not outlive the demo.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine

from app.accounts import service as user_service
from app.db import make_session_factory
from app.supervisor import WorkerSupervisor, describe_exit
from tests.fixtures.database import _postgres_database
from tests.fixtures.users import PASSWORD
from tests.support.slow_engine import slow_engine

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="finds processes through /proc (Linux)"
)

ROOT = Path(__file__).resolve().parents[1]
START_S = 90.0  # a server and its worker start (imports, migrations) on a busy machine
GONE_S = 15.0  # a worker's orderly stop takes about a second when it has no chunk under way


def _stat(pid: int) -> tuple[str, int] | None:
    """Return the state and the parent pid of a process, or None when there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")  # a zombie has ended


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            stat = _stat(int(entry.name))
            if stat is not None and stat[1] == pid and stat[0] not in ("Z", "X"):
                found.append(int(entry.name))
    return sorted(found)


def _until(check: Callable[[], Any], timeout_s: float, what: str) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}")
        time.sleep(0.1)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass
class Serve:
    """A running `relevo serve`, its address and every process seen under it."""

    process: subprocess.Popen[bytes]
    url: str
    log: Path
    seen: set[int] = field(default_factory=set)

    def workers(self) -> list[int]:
        """Return the server's children now (its workers), remembering them for cleanup."""
        found = _children(self.process.pid)
        self.seen.update(found)
        return found

    def descendants_of(self, pid: int) -> list[int]:
        """Return a process's children (a worker's JavaScript processes), remembered too."""
        found = _children(pid)
        self.seen.update(found)
        return found

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def serve(db_url: str, tmp_path: Path) -> Iterator[Serve]:
    """Start `relevo serve --workers 1` and wait until it answers and its worker runs."""
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "RELEVO_RUN_QUEUE": "postgres",
        "RELEVO_RUN_CHUNK_SIZE": "10",
        "RELEVO_WORKER_STALLED_S": "2",
        "RELEVO_DATA_DIR": str(tmp_path),
        "RELEVO_SECRET_KEY": "serve-worker-test",
        "PYTHONPATH": str(ROOT),
    }
    log = tmp_path / "serve.log"
    command = [sys.executable, "-m", "app.cli", "serve", "--workers", "1", "--port", str(port)]
    command += ["--concurrency", "2"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=out)
    server = Serve(process, f"http://127.0.0.1:{port}", log)
    try:
        _until(lambda: _answers(server.url) or process.poll() is not None, START_S, "the server")
        assert process.poll() is None, server.log_text()
        _until(server.workers, START_S, "the server's worker")
        yield server
    except BaseException:
        print(server.log_text()[-20_000:])  # shown with the failure
        raise
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)
        for pid in server.seen:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _answers(url: str) -> bool:
    try:
        return httpx.get(f"{url}/api/v1/health", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _api(server: Serve, db_url: str) -> httpx.Client:
    """Return a client of the server with a new user's API key."""
    engine = create_engine(db_url)
    try:
        with make_session_factory(engine)() as session:
            user = user_service.create_user(
                session=session, email="serve@example.com", password=PASSWORD
            )
            _key, clear = user_service.create_api_key(session=session, user=user, name="t")
            session.commit()
    finally:
        engine.dispose()
    return httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {clear}"}, timeout=120
    )


def _created(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code in (200, 201), response.text
    body: dict[str, Any] = response.json()
    return body


def _finished_run(
    api: httpx.Client, index_url: str, *, javascript: bool, queries: int
) -> dict[str, Any]:
    """Make a case and run it through the queue; return the run once it has finished."""
    endpoint = _created(
        api.post(
            "/api/v1/search-endpoints",
            json={"name": "slow", "engine": "opensearch", "url": index_url, "timeout_s": 30},
        )
    )
    if javascript:
        code = "setScore(numReturned() > 0 ? 1 : 0);"
        body = {"name": "js", "kind": "javascript", "scale": [0, 1], "code": code}
        scorer_id = _created(api.post("/api/v1/scorers", json=body))["id"]
    else:
        scorer_id = next(s["id"] for s in api.get("/api/v1/scorers").json() if s["name"] == "P@10")
    case = _created(
        api.post(
            "/api/v1/cases",
            json={
                "name": "Serve",
                "search_endpoint_id": endpoint["id"],
                "query_template": '{"query": {"match": {"title": "#$query##"}}}',
                "scorer_id": scorer_id,
            },
        )
    )
    texts = {"queries": [f"query {n}" for n in range(queries)]}
    _created(api.post(f"/api/v1/cases/{case['id']}/queries/bulk", json=texts))
    return _created(api.post(f"/api/v1/cases/{case['id']}/runs?wait=true"))


@pytest.fixture
def queue_db() -> Iterator[str]:
    """A PostgreSQL database of this test's own."""
    yield from _postgres_database()


@pytest.mark.parametrize(
    "how", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL], ids=["sigterm", "sigint", "sigkill"]
)
def test_the_worker_and_its_javascript_processes_end_with_the_server(
    queue_db: str, tmp_path: Path, how: signal.Signals
) -> None:
    with slow_engine(delay_s=0.01) as engine, serve(queue_db, tmp_path) as server:
        with _api(server, queue_db) as api:
            # One chunk (chunks of 10): the worker scores one batch of JavaScript at a time.
            run = _finished_run(api, engine.index_url, javascript=True, queries=8)
        assert run["status"] == "finished" and run["errors"] == 0, run
        (worker,) = server.workers()
        sandboxes = server.descendants_of(worker)
        assert sandboxes, "the worker scored with JavaScript processes of its own"

        server.process.send_signal(how)
        assert server.process.wait(timeout=60) == -how  # ended by the signal, as uvicorn does
        _until(lambda: not any(_alive(p) for p in [worker, *sandboxes]), GONE_S, "them to end")
    if how != signal.SIGKILL:  # an orderly stop: the server stopped its worker itself
        assert f"stopping worker (pid {worker})" in server.log_text()


def test_a_killed_worker_is_started_again_and_executes_the_next_run(
    queue_db: str, tmp_path: Path
) -> None:
    with slow_engine(delay_s=0.01) as engine, serve(queue_db, tmp_path) as server:
        (first,) = server.workers()
        os.kill(first, signal.SIGKILL)
        second = _until(lambda: [p for p in server.workers() if p != first], START_S, "a worker")
        assert not _alive(first) and len(second) == 1
        assert f"worker 1 (pid {first}) was killed by signal SIGKILL" in server.log_text()
        assert f"started worker 1 (pid {second[0]})" in server.log_text()

        with _api(server, queue_db) as api:
            run = _finished_run(api, engine.index_url, javascript=False, queries=12)
        assert run["status"] == "finished" and run["progress"] == {"done": 12, "total": 12}, run
        assert server.workers() == second


def test_a_worker_that_keeps_failing_is_restarted_less_and_less_often(
    caplog: pytest.LogCaptureFixture,
) -> None:
    failing = [sys.executable, "-c", "raise SystemExit(3)"]
    supervisor = WorkerSupervisor(failing, 1, first_delay_s=0.05, max_delay_s=0.2, steady_s=3600)
    caplog.set_level(logging.INFO, logger=WorkerSupervisor.__module__)
    supervisor.start()
    try:
        _until(lambda: len(_restarts(caplog)) >= 5, 60, "five restarts")
    finally:
        supervisor.stop()
    assert supervisor.pids() == []
    assert _restarts(caplog)[:5] == ["0.05", "0.1", "0.2", "0.2", "0.2"]
    assert "worker 1 (pid " in caplog.text and ") exited with code 3 after " in caplog.text


def _restarts(caplog: pytest.LogCaptureFixture) -> list[str]:
    return re.findall(r"restarting it in ([\d.]+) s", caplog.text)


@pytest.mark.parametrize(
    ("returncode", "said"),
    [
        (0, "exited with code 0"),
        (2, "exited with code 2"),
        (-9, "was killed by signal SIGKILL"),
        (-15, "was killed by signal SIGTERM"),
    ],
)
def test_how_a_worker_ended_is_said_in_words(returncode: int, said: str) -> None:
    assert describe_exit(returncode) == said


DEMO_ENGINE = """
import time
from app.demo.corpus import start_osmem
server = start_osmem(addr="127.0.0.1:0")
print(server.process.pid, flush=True)
time.sleep(600)
"""


def test_the_demo_engine_ends_when_the_demo_is_killed(tmp_path: Path) -> None:
    # `relevo demo` starts osmem-server as start_osmem does; a SIGKILL runs none of the
    # demo's code, and the engine still ends (it watches its parent's pid and stdin).
    out = tmp_path / "demo.out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with out.open("wb") as stdout:
        demo = subprocess.Popen(
            [sys.executable, "-c", DEMO_ENGINE], cwd=ROOT, env=env, stdout=stdout
        )
    engine: int | None = None
    try:
        text = _until(lambda: out.read_text().strip() or demo.poll() is not None, 60, "osmem")
        engine = pid = int(text)
        stat = _stat(pid)
        assert stat is not None and stat[1] == demo.pid  # the demo's own child, running
        demo.kill()
        demo.wait(timeout=30)
        _until(lambda: not _alive(pid), GONE_S, "the engine to end")
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait(timeout=30)
        if engine is not None and _alive(engine):
            os.kill(engine, signal.SIGKILL)
