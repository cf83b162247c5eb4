"""Limits of the JavaScript sandbox: memory outside the V8 heap, WebAssembly, runaway runs,
the worker's environment and the console output kept per query."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.scoring import Limits, jsworker, score_queries
from tests.scoring.helpers import GRADED, config, query

GOOD = query("ab", {"a": 3, "b": 1})
BAD = query("ab", {"a": 2}, query_options={"bad": True})


def guarded(code: str) -> Any:
    """Return a scorer that runs code on queries with option bad and scores the others."""
    body = f"if (qOption('bad')) {{ {code} }} else {{ setScore(docRating(0) * 10); }}"
    return config("javascript", code=body, scale=GRADED)


def test_webassembly_is_not_available() -> None:
    code = "setScore(typeof WebAssembly === 'undefined' && !('WebAssembly' in globalThis) ? 7 : 1)"
    [outcome] = score_queries(config("javascript", code=code), [GOOD])
    assert outcome.score == 7


def test_typed_array_growth_fails_only_its_query() -> None:
    grow = "var a = []; while (true) a.push(new Uint8Array(1e8));"
    outcomes = score_queries(guarded(grow), [GOOD, BAD, GOOD], limits=Limits(time_s=30.0))
    assert [o.status for o in outcomes] == ["scored", "error", "scored"]
    assert [outcomes[0].score, outcomes[2].score] == [30, 30]
    assert outcomes[1].reason is not None
    assert "RangeError: Array buffer allocation failed" in outcomes[1].reason


def test_a_run_that_keeps_timing_out_is_stopped() -> None:
    limits = Limits(time_s=0.1, max_timeouts_in_a_row=3)
    queries = [GOOD, BAD, BAD, GOOD, BAD, BAD, BAD, BAD, GOOD, BAD]
    outcomes = score_queries(guarded("while (true) {}"), queries, limits=limits)
    timeout = "scorer exceeded its 0.1 s time limit"
    stopped = "stopped: the scorer hit its time limit on 3 queries in a row"
    # The good query between the first two timeouts and the next three resets the count.
    assert [o.reason for o in outcomes] == [
        None, timeout, timeout, None, timeout, timeout, timeout, stopped, stopped, stopped
    ]  # fmt: skip
    assert [outcomes[0].score, outcomes[3].score] == [30, 30]


def test_the_worker_environment_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:secret@db/relevo")
    monkeypatch.setenv("RELEVO_SECRET_KEY", "very-secret")
    monkeypatch.setenv("RELEVO_DATABASE_URL", "sqlite:///x.db")
    jsworker.close_workers()  # the next batch starts a worker with this environment
    try:
        [outcome] = score_queries(config("javascript", code="setScore(1)"), [GOOD])
        assert outcome.score == 1
        [pid] = jsworker.worker_pids()
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    finally:
        jsworker.close_workers()
    names = {item.split(b"=", 1)[0].decode() for item in raw.split(b"\0") if item}
    assert "PYTHONPATH" in names
    assert not names & {"DATABASE_URL", "RELEVO_SECRET_KEY", "RELEVO_DATABASE_URL"}
    assert names <= {"PYTHONPATH", *jsworker._ENV_KEPT}


def test_worker_env_keeps_only_harmless_variables() -> None:
    parent = {"PATH": "/usr/bin", "RELEVO_SECRET_KEY": "k", "DATABASE_URL": "x", "LANG": "C"}
    env = jsworker.worker_env(parent)
    assert env == {"PATH": "/usr/bin", "LANG": "C", "PYTHONPATH": jsworker._ROOT}


def test_console_output_is_capped_per_query() -> None:
    code = "for (var i = 0; i < 50; i++) console.log(i + 'x'.repeat(998)); setScore(1)"
    [outcome, other] = score_queries(config("javascript", code=code), [GOOD, GOOD])
    # Each line is 1,000 characters plus a newline: 16 fit in 16 KiB, the 17th does not.
    assert len(outcome.log) == 17
    assert outcome.log[15] == "15" + "x" * 998
    assert outcome.log[16] == "[console output truncated: 16 of 50 lines kept, 16 KiB per query]"
    assert other.log == outcome.log


def test_cap_log_counts_bytes_not_characters() -> None:
    line = "é" * 4096  # 8,192 bytes in UTF-8
    assert jsworker.cap_log([line, "a"]) == (line, "a")
    assert jsworker.cap_log([line, line]) == (
        line,
        "[console output truncated: 1 of 2 lines kept, 16 KiB per query]",
    )
