"""An agent's tuning loop over MCP on stdio: how long each tool takes on the demo case.

Seeds the demo (25 queries, the embedded engine) in a temporary SQLite database, starts
`relevo mcp` as a subprocess with an agent's key, and prints the median of several calls of
`list_cases`, `get_case`, `compare_runs` and `propose_try` (a draft run of every query and
its comparison with the current try, held-out half included), and the time to start the
server and initialize a session.

    python benchmarks/mcp_tools.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from app.accounts import service as users
from app.cli.database import session_factory
from app.config import Settings
from app.demo.corpus import index_movies, start_osmem
from app.demo.setup import DEMO_EMAIL, prepare_demo
from app.outbound.policy import OutboundPolicy, install_policy

LOOPBACK = ("127.0.0.0/8",)
ROOT = Path(__file__).resolve().parent.parent


async def _measure(env: dict[str, str], case_id: int, repeat: int) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {}

    async def timed(name: str, session: ClientSession, **arguments: Any) -> Any:
        began = time.perf_counter()
        result = await session.call_tool(name, arguments)
        timings.setdefault(name, []).append(time.perf_counter() - began)
        assert not result.is_error, result.content
        return result.structured_content

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "app.cli", "mcp"], env=env, cwd=str(ROOT)
    )
    began = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        timings["start and initialize"] = [time.perf_counter() - began]
        for i in range(repeat):
            await timed("list_cases", session)
            await timed("get_case", session, case_id=case_id)
            proposal = await timed(
                "propose_try", session, case_id=case_id, knobs={"fuzziness": 1 + i % 2}
            )
            await timed(
                "compare_runs",
                session,
                case_id=case_id,
                base_run_id=proposal["base_run_id"],
                other_run_id=proposal["run_id"],
            )
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    engine = start_osmem()
    try:
        index_movies(engine.url, "movies")
        with tempfile.TemporaryDirectory() as tmp:
            settings = Settings(
                data_dir=Path(tmp) / "data",
                database_url=f"sqlite:///{tmp}/bench.db",
                secret_key="bench",
                trusted_engine_hosts=LOOPBACK,
            )
            factory = session_factory(settings)
            info = prepare_demo(session_factory=factory, engine_url=engine.url)
            with factory() as session:
                user = users.get_by_email(session=session, email=DEMO_EMAIL)
                assert user is not None
                key = users.create_api_key(
                    session=session, user=user, name="bench", scopes=["read", "run"]
                )[1]
            env = {
                "DATABASE_URL": settings.resolved_database_url,
                "RELEVO_DATA_DIR": str(settings.data_dir),
                "RELEVO_SECRET_KEY": "bench",
                "RELEVO_ALLOWED_ENGINE_HOSTS": ",".join(LOOPBACK),
                "RELEVO_API_KEY": key,
            }
            timings = asyncio.run(_measure(env, info.case_id, args.repeat))
    finally:
        engine.close()
    print(f"demo case ({args.repeat} rounds), median seconds:")
    for name, values in timings.items():
        print(f"  {name:<22} {statistics.median(values):8.3f}  (n={len(values)})")


if __name__ == "__main__":
    main()
