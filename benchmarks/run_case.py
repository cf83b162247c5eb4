"""How much the runner adds to the engine's own time.

Builds a 1,000-query case against osmem-server with the movie corpus, then prints:
- the wall time of a run (fetch, score, persist) through the real runner;
- the wall time of a bare httpx loop POSTing the same bodies (rendered beforehand, so the
  loop is pure I/O) at the same concurrency, with httpx's default client and with the
  client the runs use (several small connection pools: ``app.outbound.transport``), the
  latter telling the runner's own cost apart from the transport's;
- each consecutive run's times and ratio, then the medians and their ratio (target <= 1.10:
  report the median, not the best run);
- the time to re-score one query after a rating change, and the whole run.

Usage: python benchmarks/run_case.py [--queries 1000] [--concurrency 8] [--repeat 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from sqlalchemy import select

from app.accounts import service as users
from app.cases import service as cases
from app.cases.schemas import CaseCreate
from app.config import Settings
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.demo.corpus import index_movies, load_movies, start_osmem
from app.endpoints import service as endpoints
from app.endpoints.schemas import EndpointCreate
from app.models import Case, Query, Scorer
from app.outbound.policy import OutboundPolicy, install_policy
from app.outbound.transport import engine_http_client
from app.queries import service as queries
from app.queries.schemas import RatingIn
from app.runs import inputs as run_inputs
from app.runs import rescore as rescoring
from app.runs import service as runs
from app.runs.runner import execute_run
from app.runtime import tune_gc
from app.scorers import service as scorers
from app.search import SearchClient, build_es_body

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)

TEMPLATE = '{"query": {"multi_match": {"query": "#$query##", "fields": ["title^10", "director"]}}}'


def query_texts(count: int) -> list[str]:
    """Return distinct queries made of title words from the corpus."""
    texts: list[str] = []
    for movie in load_movies():
        words = str(movie.get("title", "")).lower().split()
        for size in (1, 2):
            text = " ".join(words[:size])
            if text and text not in texts:
                texts.append(text)
        if len(texts) >= count:
            break
    return texts[:count]


async def bare_loop(
    url: str, bodies: list[dict[str, object]], http: httpx.AsyncClient, limit: int
) -> float:
    """POST the already rendered bodies with nothing but a semaphore; return the wall time."""
    gate = asyncio.Semaphore(limit)

    async def one(body: dict[str, object]) -> None:
        async with gate:
            response = await http.post(url, json=body, timeout=10.0)
            response.json()

    started = time.perf_counter()
    await asyncio.gather(*(one(b) for b in bodies))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tune_gc()  # as every Relevo process does at start

    server = start_osmem()
    tmp = Path(tempfile.mkdtemp(prefix="relevo-bench-"))
    try:
        index_movies(server.url, "movies")
        settings = Settings(trusted_engine_hosts=LOOPBACK, data_dir=tmp, secret_key="bench")
        engine = make_engine(settings.resolved_database_url)
        migrate(engine)
        factory = make_session_factory(engine)
        with session_scope(factory) as session:
            scorers.seed_presets(session=session)
            user = users.create_user(
                session=session, email="bench@example.com", password="benchmark-password"
            )
            endpoint = endpoints.create_endpoint(
                session=session,
                user=user,
                body=EndpointCreate(
                    name="osmem",
                    engine="opensearch",
                    url=f"{server.url}/movies",
                    max_concurrency=args.concurrency,
                ),
            )
            ndcg = session.scalar(select(Scorer).where(Scorer.name == "NDCG@10"))
            assert ndcg is not None
            case = cases.create_case(
                session=session,
                user=user,
                body=CaseCreate(
                    name="bench",
                    search_endpoint_id=endpoint.id,
                    query_template=TEMPLATE,
                    scorer_id=ndcg.id,
                    field_spec="id:_id title:title director genre",
                ),
            )
            created = queries.add_queries(
                session=session, case=case, texts=query_texts(args.queries)
            )
            for query in created[::3]:
                queries.set_ratings(
                    session=session,
                    query=query,
                    scorer=ndcg,
                    user=user,
                    ratings=[RatingIn(doc_id=str(i), rating=i % 4) for i in range(1, 400, 7)],
                )
            plan = run_inputs.load_plan(
                session=session, run_id=runs.create_run(session=session, case=case).id
            )
            case_id = case.id
        print(f"case: {len(plan.queries)} queries, concurrency {args.concurrency}, SQLite at {tmp}")

        async def timed_run() -> float:
            with session_scope(factory) as session:
                case = session.get(Case, case_id)
                assert case is not None
                run_id = runs.create_run(session=session, case=case).id
            async with engine_http_client() as http:  # the client runs use in the app
                started = time.perf_counter()
                await execute_run(session_factory=factory, run_id=run_id, search=SearchClient(http))
                return time.perf_counter() - started

        bodies = [build_es_body(plan.request_for(q)) for q in plan.queries]
        url = f"{plan.endpoint.url}/_search"

        async def timed_bare(client: Callable[[], httpx.AsyncClient]) -> float:
            async with client() as http:
                return await bare_loop(url, bodies, http, args.concurrency)

        times: dict[str, list[float]] = {"runner": [], "httpx": [], "spread": []}

        async def measure() -> None:
            await timed_bare(httpx.AsyncClient)  # warm the engine's caches for every side
            for _ in range(args.repeat):
                times["httpx"].append(await timed_bare(httpx.AsyncClient))
                times["spread"].append(await timed_bare(engine_http_client))
                times["runner"].append(await timed_run())

        asyncio.run(measure())
        for n, (run_t, bare_t, spread_t) in enumerate(
            zip(times["runner"], times["httpx"], times["spread"], strict=True), 1
        ):
            print(
                f"  run {n}: runner {run_t:.3f} s, bare httpx {bare_t:.3f} s "
                f"(ratio {run_t / bare_t:.3f}), bare through the runs' client {spread_t:.3f} s "
                f"(ratio {run_t / spread_t:.3f})"
            )
        run_s = statistics.median(times["runner"])
        bare_s = statistics.median(times["httpx"])
        spread_s = statistics.median(times["spread"])
        print(f"runner (fetch + score + persist): median {run_s:.3f} s over {args.repeat} runs")
        print(f"bare httpx loop, same requests:   median {bare_s:.3f} s over {args.repeat} runs")
        print(f"bare loop, the runs' client:      median {spread_s:.3f} s over {args.repeat} runs")
        print(f"ratio runner / bare httpx: {run_s / bare_s:.3f}  (target <= 1.10)")
        # The runner's own cost: the same loop through the client the runner uses.
        print(f"ratio runner / bare loop on the runs' client: {run_s / spread_s:.3f}")
        # Each run is paired with the bare loops measured just before it, on the same load.
        paired = statistics.median(
            r / b for r, b in zip(times["runner"], times["httpx"], strict=True)
        )
        print(f"median of the per-run ratios (bare httpx): {paired:.3f}")

        with session_scope(factory) as session:
            rated_case = session.get(Case, case_id)
            assert rated_case is not None
            first = session.scalars(select(Query).where(Query.case_id == case_id)).first()
            assert first is not None and ndcg is not None
            queries.set_ratings(
                session=session,
                query=first,
                scorer=ndcg,
                user=user,
                ratings=[RatingIn(doc_id="1", rating=3)],
            )
            started = time.perf_counter()
            rescoring.rescore_query(session=session, case=rated_case, query=first)
            one = time.perf_counter() - started
            started = time.perf_counter()
            latest = runs.latest_finished_run(session=session, case=rated_case)
            assert latest is not None
            rescoring.rescore_run(session=session, run=latest)
            whole = time.perf_counter() - started
        print(f"re-score after one rating change: {one * 1000:.1f} ms (one query + case score)")
        print(f"re-score the whole run ({len(plan.queries)} queries): {whole * 1000:.1f} ms")
        engine.dispose()
    finally:
        server.close()


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
