"""The job queue's tables on PostgreSQL: procrastinate's own schema, applied by a migration."""

from __future__ import annotations

from procrastinate.schema import SchemaManager

__all__ = ["QUEUE_PREFIX", "drop_queue_schema_sql", "queue_schema_sql"]

# Every object of the queue's schema is named with this prefix.
QUEUE_PREFIX = "procrastinate_"


def queue_schema_sql() -> str:
    """Return the SQL that creates the queue's tables, types, functions and triggers."""
    return str(SchemaManager.get_schema())


def drop_queue_schema_sql() -> str:
    """Return SQL that removes every object the queue's schema created."""
    return f"""
DO $$
DECLARE item record;
BEGIN
  FOR item IN SELECT tablename FROM pg_tables
      WHERE schemaname = current_schema() AND tablename LIKE '{QUEUE_PREFIX}%' LOOP
    EXECUTE format('DROP TABLE IF EXISTS %I CASCADE', item.tablename);
  END LOOP;
  FOR item IN SELECT p.oid::regprocedure AS signature FROM pg_proc p
      JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = current_schema() AND p.proname LIKE '{QUEUE_PREFIX}%' LOOP
    EXECUTE format('DROP FUNCTION IF EXISTS %s CASCADE', item.signature);
  END LOOP;
  FOR item IN SELECT t.typname FROM pg_type t
      JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = current_schema() AND t.typname LIKE '{QUEUE_PREFIX}%'
        AND t.typtype IN ('e', 'c') LOOP
    EXECUTE format('DROP TYPE IF EXISTS %I CASCADE', item.typname);
  END LOOP;
END $$;
"""
