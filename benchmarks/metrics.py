"""Many metrics at once: scoring cost of 6 built-in metrics against 1, and the case page.

1. A stored, finished 10,000-query run (10 docs per query, graded ratings) is re-scored
   from the database (``rescore.rescore_run``: one read of the stored results, every metric
   scored over the same inputs) with the primary metric only, then with 6 built-in metrics
   (NDCG@10, P@10, ERR@10, AP@10, RR@10, DCG@10). Also timed: the scoring alone, without
   the database (the same inputs, 1 metric against 6).
2. The case page's server time (page data, then the whole route with its template) for a
   5,000-query case with 6 metrics and 20 tags (each query has 1-3 tags).

Prints the medians of ``--repeat`` passes. Targets: 6 metrics at most 1.5x one metric
(issue #37; every metric is scored in one pass over shared arrays); the case page within
0.3 s (issue #27).

    python benchmarks/metrics.py [--queries 10000] [--page-queries 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import insert, select, update
from sqlalchemy.orm import Session, sessionmaker

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.pages import data as case_pages
from app.cases.schemas import CaseCreate
from app.config import Settings
from app.db import session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.main import create_app
from app.models import Case, Query, Rating, Run, RunQuery, Scorer, User
from app.outbound.policy import OutboundPolicy, install_policy
from app.runs import rescore as rescoring
from app.runs import service as run_service
from app.runs.plan import score_with_metrics
from app.runs.scoring_input import stored_input
from app.runtime import tune_gc
from app.scorers.config import config_of

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)

METRICS = ["NDCG@10", "P@10", "ERR@10", "AP@10", "RR@10", "DCG@10"]
TAGS = [f"tag{i:02d}" for i in range(20)]
EMAIL, PASSWORD = "bench@example.com", "benchmark password"


def median_time(fn: Callable[[], Any], repeat: int) -> float:
    """Return the median wall time of ``repeat`` calls, in seconds."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def presets(session: Session) -> dict[str, int]:
    stmt = select(Scorer.name, Scorer.id).where(Scorer.owner_id.is_(None))
    return {name: sid for name, sid in session.execute(stmt)}


def build(factory: sessionmaker[Session], count: int, seed: int) -> tuple[int, int]:
    """Create a case of ``count`` tagged queries, ratings and a finished stored run."""
    rng = random.Random(seed)
    with session_scope(factory) as session:
        user = session.scalar(select(User).where(User.email == EMAIL))
        if user is None:
            user = user_service.create_user(session=session, email=EMAIL, password=PASSWORD)
        endpoint = endpoint_service.create_endpoint(
            session=session,
            user=user,
            body=EndpointCreate(name="bench", engine="opensearch", url="http://127.0.0.1:9/x"),
        )
        ids = presets(session)
        case = case_service.create_case(
            session=session,
            user=user,
            body=CaseCreate(
                name=f"Bench {count}",
                search_endpoint_id=endpoint.id,
                query_template='{"query": {"match": {"title": "#$query##"}}}',
                field_spec="id:_id title:title",
                scorer_id=ids[METRICS[0]],
            ),
        )
        session.execute(
            insert(Query),
            [
                {
                    "case_id": case.id,
                    "text": f"query {n}",
                    "position": n,
                    "options": {},
                    "tags": rng.sample(TAGS, rng.randint(1, 3)),
                    "weight": float(rng.randint(1, 50)),
                }
                for n in range(count)
            ],
        )
        query_ids = list(session.scalars(select(Query.id).where(Query.case_id == case.id)))
        now = datetime.now(UTC)
        run = Run(
            case_id=case.id,
            try_number=1,
            scorer_id=case.scorer_id,
            status="finished",
            total=count,
            done=count,
            started_at=now,
            finished_at=now,
        )
        session.add(run)
        session.flush()
        rows: list[dict[str, Any]] = []
        ratings: list[dict[str, Any]] = []
        for position, qid in enumerate(query_ids):
            ranked = rng.sample([f"d{i}" for i in range(30)], 10)
            docs = [
                {"id": d, "rank": r + 1, "fields": {"title": f"Title {d}"}}
                for r, d in enumerate(ranked)
            ]
            rows.append(
                {
                    "run_id": run.id,
                    "query_id": qid,
                    "text": f"query {position}",
                    "position": position,
                    "status": "unscored",
                    "num_found": 100,
                    "docs": docs,
                    "log": [],
                }
            )
            ratings.extend(
                {"query_id": qid, "doc_id": d, "rating": float(rng.choice((0, 1, 2, 3)))}
                for d in ranked[:6]
            )
        session.execute(insert(RunQuery), rows)
        session.execute(insert(Rating), ratings)
        session.commit()
        return case.id, run.id


def set_metrics(
    factory: sessionmaker[Session], case_id: int, run_id: int, names: list[str]
) -> None:
    with session_scope(factory) as session:
        ids = presets(session)
        extra = [ids[n] for n in names[1:]]
        case = session.get(Case, case_id)
        run = session.get(Run, run_id)
        assert case is not None and run is not None
        case.metric_scorer_ids = extra
        run.metric_scorer_ids = extra
        session.commit()


def rescore(factory: sessionmaker[Session], run_id: int) -> None:
    with session_scope(factory) as session:
        run = session.get(Run, run_id)
        assert run is not None
        rescoring.rescore_run(session=session, run=run)


def scoring_only(factory: sessionmaker[Session], run_id: int, repeat: int) -> tuple[float, float]:
    """Return the median scoring time (no database) of 1 metric and of 6 over the run."""
    with session_scope(factory) as session:
        run = session.get(Run, run_id)
        assert run is not None
        rows = run_service.run_queries(session=session, run=run)
        from app.queries.service import ratings_of

        ratings = ratings_of(session=session, query_ids=[r.query_id or 0 for r in rows])
        ids = presets(session)
        configs = [config_of(s) for s in (session.get(Scorer, ids[n]) for n in METRICS) if s]
        inputs = [stored_input(r, ratings[r.query_id or 0], {}, {}) for r in rows]

    # As a run scores: the primary's outcomes and every metric's scores, in one pass.
    def one() -> None:
        score_with_metrics(configs[0], [], inputs)

    def six() -> None:
        score_with_metrics(configs[0], list(enumerate(configs[1:], 1)), inputs)

    return median_time(one, repeat), median_time(six, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--page-queries", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tune_gc()
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        app = create_app(
            Settings(
                trusted_engine_hosts=LOOPBACK,
                data_dir=data_dir,
                database_url=f"sqlite:///{data_dir}/relevo.db",
                secret_key="benchmark-secret",
            )
        )
        with TestClient(app) as client:
            factory: sessionmaker[Session] = app.state.session_factory
            case_id, run_id = build(factory, args.queries, seed=7)
            # A first re-score of each setting is not timed: it writes every row's new
            # scores; the timed ones are re-scores of a run already scored that way.
            set_metrics(factory, case_id, run_id, METRICS[:1])
            rescore(factory, run_id)
            one = median_time(lambda: rescore(factory, run_id), args.repeat)
            set_metrics(factory, case_id, run_id, METRICS)
            rescore(factory, run_id)
            six = median_time(lambda: rescore(factory, run_id), args.repeat)
            print(
                f"re-score of a stored {args.queries:,}-query run (SQLite, read + score + write):"
            )
            print(f"  1 metric  {one:7.3f} s")
            print(f"  6 metrics {six:7.3f} s   ratio {six / one:.2f}x (target <= 1.5x, issue 37)")
            pure_one, pure_six = scoring_only(factory, run_id, args.repeat)
            print("scoring alone (same inputs, no database):")
            print(f"  1 metric  {pure_one:7.3f} s")
            print(f"  6 metrics {pure_six:7.3f} s   ratio {pure_six / pure_one:.2f}x")

            page_case, page_run = build(factory, args.page_queries, seed=8)
            set_metrics(factory, page_case, page_run, METRICS)
            rescore(factory, page_run)

            def page_data() -> None:
                with session_scope(factory) as session:
                    case = session.get(Case, page_case)
                    user = session.scalar(select(User).where(User.email == EMAIL))
                    assert case is not None and user is not None
                    case_pages.case_page(session=session, user=user, case=case)

            login = client.get("/login").text
            token = re.search(r'name="csrf_token" value="([^"]+)"', login)
            assert token is not None
            client.post(
                "/login",
                data={"email": EMAIL, "password": PASSWORD, "csrf_token": token.group(1)},
            )
            page_data()  # warm caches (templates, statements)
            data_s = median_time(page_data, args.repeat)
            response = client.get(f"/cases/{page_case}")
            route_s = median_time(lambda: client.get(f"/cases/{page_case}"), args.repeat)
            panel = "shown" if 'id="metric-panel"' in response.text else "MISSING"
            print(
                f"case page, {args.page_queries:,} queries, 6 metrics, {len(TAGS)} tags "
                f"(status {response.status_code}, metric panel {panel}):"
            )
            print(f"  page data     {data_s:7.3f} s")
            print(f"  whole route   {route_s:7.3f} s (target <= 0.3 s)")
            # The same page with one metric and no tags: what the metrics add to it.
            set_metrics(factory, page_case, page_run, METRICS[:1])
            with session_scope(factory) as session:
                session.execute(update(Query).where(Query.case_id == page_case).values(tags=[]))
                session.commit()
            rescore(factory, page_run)
            page_data()
            base_data = median_time(page_data, args.repeat)
            base_route = median_time(lambda: client.get(f"/cases/{page_case}"), args.repeat)
            print("the same case page with 1 metric and no tags (baseline):")
            print(f"  page data     {base_data:7.3f} s")
            print(f"  whole route   {base_route:7.3f} s")


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
