"""What the page benchmarks share: timing a call, and logging a test client in.

Imported by the scripts of this folder as `timing` (a script's own folder is on its path).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

from bs4 import BeautifulSoup
from fastapi.testclient import TestClient


def timed(label: str, work: Callable[[], object], repeat: int) -> None:
    """Print the median wall and CPU time of `repeat` calls, after one warm-up call.

    The CPU time (this process's, SQLite included) is the steadier number on a busy machine:
    wall time adds the waits for the other core's work.
    """
    work()
    wall, cpu = [], []
    for _ in range(repeat):
        started, used = time.perf_counter(), time.process_time()
        work()
        wall.append(time.perf_counter() - started)
        cpu.append(time.process_time() - used)
    print(
        f"{label}: median {statistics.median(wall) * 1000:.1f} ms wall, "
        f"{statistics.median(cpu) * 1000:.1f} ms CPU "
        f"(wall min {min(wall) * 1000:.1f}, max {max(wall) * 1000:.1f}; {repeat} runs)"
    )


def log_in(client: TestClient, email: str, password: str) -> None:
    """Log the client in through the login form, as a browser would."""
    page = BeautifulSoup(client.get("/login").text, "html.parser")
    token = page.select_one("input[name=csrf_token]")
    assert token is not None
    client.post(
        "/login", data={"email": email, "password": password, "csrf_token": str(token["value"])}
    )
