"""What a JavaScript scorer cannot reach: WebAssembly, unbounded memory, secrets, endless logs."""

from __future__ import annotations

from pathlib import Path

import pytest

import app
from app.sandbox import JsPool, PoolSettings, install_pool
from app.sandbox.prelude import MAX_QUERY_LOG_CHARS
from app.sandbox.protocol import MEMORY_ENV, worker_environment
from app.scoring import score_queries
from app.scoring.types import ScorerConfig
from tests.scoring.helpers import config, query

GOOD = query("ab", {"a": 3, "b": 1})
# A worker memory cap other than the default, to see the pool's setting reach the process.
MEMORY = 768 * 1024 * 1024


def js(code: str, max_score: float | None = None) -> ScorerConfig:
    return config("javascript", code=code, max_score=max_score)


BAD = query("ab", {"a": 3}, query_options={"bad": True})


def _guarded(code: str) -> str:
    return f"if (qOption('bad')) {{ {code} }} else {{ setScore(docRating(0) * 10); }}"


def test_webassembly_is_not_there() -> None:
    code = "setScore(typeof WebAssembly === 'undefined' && !('WebAssembly' in globalThis) ? 1 : 0)"
    assert [o.score for o in score_queries(js(code, max_score=1), [GOOD])] == [100]


def test_typed_arrays_past_the_worker_cap_fail_only_their_query() -> None:
    # 40 x 64 MiB of typed arrays is far past the worker's 1 GiB address-space cap (and
    # outside V8's heap, so the isolate's heap limit alone would not stop it). Not filled:
    # the cap counts reserved memory, and filling a gigabyte first could take a loaded
    # machine past the query's time limit.
    grow = "var b = []; for (var i = 0; i < 40; i++) b.push(new Uint8Array(64 << 20));"
    outcomes = score_queries(js(_guarded(grow + " setScore(1);")), [GOOD, BAD, GOOD])
    assert [o.status for o in outcomes] == ["scored", "error", "scored"]
    assert outcomes[1].reason == "RangeError: Array buffer allocation failed (line 1)"
    # Under the cap, the same kind of allocation works: the cap, not typed arrays, refused.
    fits = "var b = []; for (var i = 0; i < 3; i++) b.push(new Uint8Array(64 << 20).fill(1));"
    assert score_queries(js(fits + " setScore(b.length);"), [GOOD])[0].score == 3


def test_console_output_is_capped_per_query() -> None:
    code = "for (var i = 0; i < 100; i++) console.log('x'.repeat(1000)); setScore(2)"
    first, second = score_queries(js(code), [GOOD, GOOD])
    for outcome in (first, second):  # each query has its own budget
        assert outcome.score == 2
        text = "".join(outcome.log)
        marker = " … (console output truncated)"
        assert len(text) == MAX_QUERY_LOG_CHARS + len(marker)
        assert outcome.log[-1].endswith(marker) and len(outcome.log) == 17


def test_workers_inherit_no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    parent = {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "DATABASE_URL": "postgresql://relevo:s3cret@db/relevo",
        "RELEVO_SECRET_KEY": "k" * 48,
        "AWS_SECRET_ACCESS_KEY": "aws",
        "PYTHONPATH": "/somewhere/else",
    }
    env = worker_environment(parent, memory_bytes=MEMORY)
    assert env == {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONPATH": str(Path(app.__file__).resolve().parents[1]),  # holds the app package
        MEMORY_ENV: str(MEMORY),
    }
    # A worker started now, with secrets in the server's environment, sees none of them.
    monkeypatch.setenv("DATABASE_URL", "postgresql://relevo:s3cret@db/relevo")
    monkeypatch.setenv("RELEVO_SECRET_KEY", "k" * 48)
    with JsPool(PoolSettings(memory_bytes=MEMORY)) as pool:
        previous = install_pool(pool)
        try:
            assert score_queries(js("setScore(1)"), [GOOD])[0].score == 1
            pids = pool.pids()
            _check_workers(pids)
        finally:
            install_pool(previous)


def _check_workers(pids: list[int]) -> None:
    assert pids
    for pid in pids:
        names = {
            item.split(b"=", 1)[0].decode()
            for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            if item
        }
        assert "DATABASE_URL" not in names and "RELEVO_SECRET_KEY" not in names
        assert MEMORY_ENV in names
        limits = Path(f"/proc/{pid}/limits").read_text()
        data = next(line for line in limits.splitlines() if line.startswith("Max data size"))
        assert data.split()[3] == str(MEMORY)
