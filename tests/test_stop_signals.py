"""Serving processes clean up whatever signal stops them (`relevo serve` and `relevo demo`)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from app.demo.run import taken_ports

ROOT = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# uvicorn re-raises the signal once it has shut down; this stands in for it.
SCRIPT = """
import os, signal, sys, time
from app.runtime import serve_until_stopped

def serve():
    print("serving", flush=True)
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))
    time.sleep(10)
    print("not stopped", flush=True)

def cleanup():
    print("cleaned up", flush=True)

serve_until_stopped(serve, cleanup=cleanup)
print("after", flush=True)
"""


@pytest.mark.parametrize("name", ["SIGTERM", "SIGINT"])
def test_the_cleanup_runs_and_the_process_ends_by_the_signal(name: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, name],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout.split() == ["serving", "cleaned", "up"]
    assert done.returncode == -getattr(signal, name)


def test_a_demo_stopped_by_sigterm_stops_its_engine(tmp_path: Path) -> None:
    port, engine_port = _free_port(), _free_port()
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env["RELEVO_DATA_DIR"] = str(tmp_path / "data")
    command = "from app.cli import main; raise SystemExit(main())"
    ports = ["--port", str(port), "--engine-port", str(engine_port)]
    demo = subprocess.Popen(
        [sys.executable, "-c", command, "demo", *ports],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            assert demo.poll() is None, demo.stderr.read() if demo.stderr else ""
            try:
                if httpx.get(f"http://127.0.0.1:{port}/login", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail("the demo did not start serving")
        demo.send_signal(signal.SIGTERM)
        _, err = demo.communicate(timeout=60)
    finally:
        if demo.poll() is None:
            demo.kill()
            demo.wait()
    assert demo.returncode == -signal.SIGTERM
    assert "Stopped the server and the engine." in err
    # The engine was stopped, not left to notice its parent had gone.
    assert taken_ports([("127.0.0.1", engine_port)]) == []
