"""Importing a 1,000,000-row ratings CSV: wall time and the process's peak memory.

Builds a temporary SQLite database (or uses `--database-url`, an empty PostgreSQL database
of its own) with one case, writes a CSV of 10,000 new query texts x 100 docs, previews it,
imports it (creating the queries and every rating in one transaction), then imports it again
(all unchanged), and prints seconds, rows per second and the peak resident memory.

    python benchmarks/import_ratings.py [--rows 1000000] [--database-url postgresql://...]
"""

from __future__ import annotations

import argparse
import io
import resource
import tempfile
import time
from pathlib import Path

from app.accounts import service as user_service
from app.cases import service as case_service
from app.cases.schemas import CaseCreate
from app.config import Settings
from app.db import make_engine, make_session_factory, migrate, session_scope
from app.endpoints import service as endpoint_service
from app.endpoints.schemas import EndpointCreate
from app.interop import ratings_io
from app.models import Case, User
from app.outbound.policy import OutboundPolicy, install_policy
from app.scorers import service as scorer_service

# Its engines and models listen on loopback, which Relevo refuses unless allowed.
LOOPBACK = ("127.0.0.0/8",)

DOCS_PER_QUERY = 100


def peak_mb() -> float:
    """Return the process's peak resident memory so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def write_csv(path: Path, rows: int) -> None:
    """Write `rows` ratings: texts with commas and quotes, grades 1-4 (classic's 1-10 scale)."""
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write("query,docid,rating\r\n")
        for n in range(rows):
            query, doc = divmod(n, DOCS_PER_QUERY)
            out.write(f'"query {query}, ""quoted""",doc-{query}-{doc},{1 + n % 4}\r\n')


def main() -> None:
    """Build the case, import the file and print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        settings = Settings(
            trusted_engine_hosts=LOOPBACK,
            data_dir=data,
            database_url=args.database_url or f"sqlite:///{data}/bench.db",
            secret_key="bench",
        )
        engine = make_engine(settings.resolved_database_url)
        migrate(engine)
        factory = make_session_factory(engine)
        with session_scope(factory) as session:
            scorer_service.seed_presets(session=session)
            user = user_service.create_user(
                session=session, email="bench@example.com", password="bench-password-long"
            )
            endpoint = endpoint_service.create_endpoint(
                session=session,
                user=user,
                body=EndpointCreate(name="b", engine="opensearch", url="http://127.0.0.1:9/x"),
            )
            case = case_service.create_case(
                session=session,
                user=user,
                body=CaseCreate(
                    name="Import",
                    search_endpoint_id=endpoint.id,
                    query_template='{"query": {"match": {"title": "#$query##"}}}',
                ),
            )
            case_id, user_id = case.id, user.id
        csv_path = data / "ratings.csv"
        write_csv(csv_path, args.rows)
        size_mb = csv_path.stat().st_size / 1024 / 1024
        print(f"{args.rows:,} rows ({size_mb:.1f} MiB CSV), {engine.dialect.name}")
        print(f"peak memory before importing: {peak_mb():.0f} MiB")
        for label, preview in (("preview", True), ("import", False), ("import again", False)):
            with session_scope(factory) as session, csv_path.open("rb") as raw:
                case_row = session.get(Case, case_id)
                user_row = session.get(User, user_id)
                assert case_row is not None and user_row is not None
                text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
                started = time.perf_counter()
                summary = ratings_io.import_ratings(
                    session=session,
                    case=case_row,
                    user=user_row,
                    stream=text,
                    fmt="csv",
                    preview=preview,
                )
                elapsed = time.perf_counter() - started
            print(
                f"{label}: {elapsed:.1f} s ({args.rows / elapsed:,.0f} rows/s); "
                f"{summary.queries_created} queries created, {summary.ratings_set:,} set, "
                f"{summary.ratings_unchanged:,} unchanged; peak memory {peak_mb():.0f} MiB"
            )
        engine.dispose()


if __name__ == "__main__":
    install_policy(OutboundPolicy(trusted=LOOPBACK))
    main()
