"""Migration 0022_fidscore: imported copies of the old nDCG@10 code get Quepid's real one."""

from __future__ import annotations

import importlib

from alembic import command
from sqlalchemy import create_engine, text

from app.db import alembic_config
from app.scoring.quepid_scorers import shipped_scorer

_INSERT = text(
    "INSERT INTO scorers (name, kind, params, code, scale, max_score, environment, created_at,"
    " updated_at) VALUES (:name, 'javascript', '{}', :code, '[0, 1, 2, 3]', 1.0, :env,"
    " CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
)


def _codes(url: str) -> dict[str, str]:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT name, code FROM scorers")).all()
            return {name: code for name, code in rows}
    finally:
        engine.dispose()


def test_the_old_ndcg_code_is_replaced_and_edited_code_is_left(empty_db_url: str) -> None:
    migration = importlib.import_module("migrations.versions.0022_fidscore")
    shipped = shipped_scorer("NDCG@10")
    assert shipped is not None and shipped.code == migration.NEW_CODE
    config = alembic_config(empty_db_url)
    command.upgrade(config, "0019")
    engine = create_engine(empty_db_url)
    with engine.begin() as conn:
        conn.execute(_INSERT, {"name": "imported", "code": migration.OLD_CODE, "env": "quepid"})
        edited = migration.OLD_CODE + "// mine\n"
        conn.execute(_INSERT, {"name": "edited", "code": edited, "env": "quepid"})
        conn.execute(_INSERT, {"name": "relevo", "code": migration.OLD_CODE, "env": "relevo"})
    engine.dispose()
    command.upgrade(config, "0022_fidscore")
    assert _codes(empty_db_url) == {
        "imported": shipped.code,
        "edited": edited,
        "relevo": migration.OLD_CODE,
    }
    command.downgrade(config, "0019")
    assert _codes(empty_db_url)["imported"] == migration.OLD_CODE
