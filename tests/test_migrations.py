"""The models and the migrations describe the same schema, on both databases."""

from __future__ import annotations

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, inspect

from app.db import alembic_config, make_engine, migrate, ours
from app.models import Base


def test_migrations_match_models(app: object, db_url: str) -> None:
    engine = make_engine(db_url)
    migrate(engine)  # a second migrate on an up-to-date database changes nothing
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_name": ours}
        )
        diff = compare_metadata(context, Base.metadata)
    engine.dispose()
    assert diff == []


def test_migrations_apply_to_an_empty_sqlite_file(tmp_path: object) -> None:
    url = f"sqlite:///{tmp_path}/fresh.db"
    engine = make_engine(url)
    migrate(engine)
    tables = set(inspect(create_engine(url)).get_table_names())
    engine.dispose()
    assert {
        "users",
        "api_keys",
        "search_endpoints",
        "cases",
        "tries",
        "queries",
        "ratings",
        "scorers",
        "runs",
        "run_queries",
        "alembic_version",
    } <= tables


def test_the_lookup_indexes_exist(app: object, db_url: str) -> None:
    inspector = inspect(create_engine(db_url))
    rating_keys = [c["column_names"] for c in inspector.get_unique_constraints("ratings")]
    assert ["query_id", "doc_id"] in rating_keys
    run_query_indexes = [i["column_names"] for i in inspector.get_indexes("run_queries")]
    assert ["run_id", "position"] in run_query_indexes


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names()) - {"alembic_version"}
    finally:
        engine.dispose()


def test_every_migration_downgrades_and_upgrades_again(empty_db_url: str) -> None:
    config = alembic_config(empty_db_url)
    revisions = list(ScriptDirectory.from_config(config).walk_revisions())  # newest first
    command.upgrade(config, "head")
    full = _tables(empty_db_url)
    for _revision in revisions:
        # One step down at a time, so that each migration's downgrade runs on its own.
        command.downgrade(config, "-1")
    assert _tables(empty_db_url) == set()
    command.upgrade(config, "head")
    ours_now = {t for t in _tables(empty_db_url) if not t.startswith("procrastinate_")}
    assert _tables(empty_db_url) == full
    assert ours_now == {t.name for t in Base.metadata.sorted_tables}
    queue_tables = {"procrastinate_jobs", "procrastinate_workers", "procrastinate_events"}
    # The job queue's tables exist on PostgreSQL only (SQLite runs execute in-process).
    assert (queue_tables <= full) == empty_db_url.startswith("postgresql")
