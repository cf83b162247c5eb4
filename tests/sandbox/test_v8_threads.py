"""V8 contexts created by several threads at once do not abort the process.

V8 aborts (``Check failed: !IsConfigurablePoolInitialized()``, SIGTRAP) when two threads
create a process's first isolate at the same moment; run planning checks scorers' code in
threads. Each attempt is a fresh interpreter, since only the first isolates can race.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
THREADS = 8
ATTEMPTS = 4

# Every thread waits at the barrier, then creates its process's first V8 context with the
# others: check_javascript compiles (each thread its own code, so no cache answers), and
# score_javascript_in_process builds a whole isolate.
RACE = textwrap.dedent(
    """
    import sys, threading
    from app.scoring import ScorerSyntaxError
    from app.scoring.js_bridge import check_javascript, score_javascript_in_process
    from tests.scoring.helpers import config, query

    barrier = threading.Barrier({threads})
    results = {{}}

    def check(n):
        barrier.wait()
        try:
            check_javascript("setScore(" + str(n) + ") +")
        except ScorerSyntaxError as exc:
            results[n] = exc.line

    def score(n):
        barrier.wait()
        cfg = config("javascript", code="setScore(" + str(n) + ")")
        results[n] = score_javascript_in_process(cfg, [query("a", {{"a": 1}})])[0].raw_score

    work = check if sys.argv[1] == "check" else score
    threads = [threading.Thread(target=work, args=(n,)) for n in range({threads})]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(sorted(results.items()))
    """
).format(threads=THREADS)


@pytest.mark.parametrize(
    ("work", "each"),
    [("check", lambda n: 1), ("score", lambda n: float(n))],
    ids=["check_javascript", "in-process scoring"],
)
def test_threads_creating_their_first_contexts_at_once(work: str, each: object) -> None:
    assert callable(each)
    expected = str(sorted((n, each(n)) for n in range(THREADS)))
    for _ in range(ATTEMPTS):
        done = subprocess.run(
            [sys.executable, "-c", RACE, work],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (done.returncode, done.stdout.strip()) == (0, expected), done.stderr[-2000:]
