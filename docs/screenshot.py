"""Make README's screenshot, docs/case-page.png: the demo after its tuning story.

Run by hand (`.venv/bin/python docs/screenshot.py`): it starts `relevo demo` on free ports
with a data directory of its own, tunes the Movies case as README tells (fuzziness 1, then
2, then 1 with ratingWeight 1: tries 2 to 4), opens `star wars` for rating and saves the first
screen of the page. Needs Debian's Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
EMAIL, PASSWORD = "demo@relevo.example", "relevo-demo-password"
STEPS = ({"fuzziness": 1}, {"fuzziness": 2}, {"fuzziness": 1, "ratingWeight": 1})


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_until_up(url: str, process: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"relevo demo exited with {process.returncode}")
        try:
            if httpx.get(f"{url}/api/v1/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("relevo demo did not answer within 5 minutes")


def _tune(url: str, env: dict[str, str]) -> int:
    made = subprocess.run(
        [str(BIN / "relevo"), "api-keys", "create", EMAIL],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    api = httpx.Client(
        base_url=f"{url}/api/v1",
        headers={"Authorization": f"Bearer {made.stdout.strip().splitlines()[-1]}"},
        timeout=300,
    )
    case_id = int(next(c["id"] for c in api.get("/cases").json() if c["name"] == "Movies"))
    for knobs in STEPS:
        current = api.get(f"/cases/{case_id}").json()["knobs"]
        api.patch(f"/cases/{case_id}", json={"knobs": current | knobs}).raise_for_status()
        run = api.post(f"/cases/{case_id}/runs?wait=true").json()
        print(f"try {run['try_number']}: {knobs} -> {run['case_score']:.2f}")
    return case_id


def _shoot(url: str, case_id: int, target: Path) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium",
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 1100})
        page.goto(f"{url}/login")
        page.fill("input[name=email]", EMAIL)
        page.fill("input[name=password]", PASSWORD)
        page.click("#login-form button[type=submit]")
        page.wait_for_url(f"{url}/")
        page.goto(f"{url}/cases/{case_id}")
        page.get_by_role("link", name="star wars", exact=True).click()
        page.locator(".doc").first.wait_for()
        page.screenshot(path=str(target))  # the first screen: score, queries, star wars open
        browser.close()


def main() -> None:
    """Start the demo, tune it, take the screenshot, stop the demo."""
    port, engine_port = _free_port(), _free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "RELEVO_DATA_DIR": data}
        demo = subprocess.Popen(
            [str(BIN / "relevo"), "demo", "--port", str(port), "--engine-port", str(engine_port)],
            env=env,
            cwd=ROOT,
        )
        try:
            _wait_until_up(url, demo)
            case_id = _tune(url, env)
            _shoot(url, case_id, ROOT / "docs" / "case-page.png")
        finally:
            demo.terminate()
            demo.wait(timeout=30)
    print("wrote docs/case-page.png")


if __name__ == "__main__":
    main()
