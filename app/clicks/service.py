"""Click logs: create, share, ingest UBI records in batches, and summarise what is stored."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import Table, func, select, union_all
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session, selectinload

from app import access
from app.clicks import ingest
from app.clicks.schemas import (
    MAX_REFUSED,
    ClickLogCreate,
    ClickLogRead,
    ClickLogSummary,
    ClickLogUpdate,
    IngestResult,
    RankCtr,
    Refusal,
)
from app.models import ClickLog, UbiEvent, UbiQuery, User
from app.teams import service as teams

__all__ = [
    "create_log",
    "delete_log",
    "get_log",
    "ingest_records",
    "list_logs",
    "summary",
    "to_read",
    "update_log",
]

# Rows per batch: one executemany and one commit each.
BATCH = 2000
CHART_RANKS = 20
Kind = Literal["queries", "events"]


def get_log(*, session: Session, user: User, click_log_id: int) -> ClickLog:
    """Return the click log when the user may see it, else raise NotFound."""
    return access.get_visible(
        session=session, model=ClickLog, object_id=click_log_id, user=user, label="click log"
    )


def list_logs(*, session: Session, user: User) -> list[ClickLog]:
    """Return the click logs the user may see, newest first."""
    stmt = (
        select(ClickLog)
        .where(access.visible_clause(ClickLog, user=user))
        .options(selectinload(ClickLog.teams))
        .order_by(ClickLog.id.desc())
    )
    return list(session.scalars(stmt))


def to_read(log: ClickLog) -> ClickLogRead:
    """Return the API view of a click log."""
    return ClickLogRead.model_validate(log).model_copy(update={"team_ids": teams.team_ids(log)})


def create_log(*, session: Session, user: User, body: ClickLogCreate) -> ClickLog:
    """Create a click log owned by the user."""
    shared = teams.teams_for_sharing(session=session, user=user, team_ids=body.team_ids)
    log = ClickLog(owner_id=user.id, name=body.name, position_base=body.position_base)
    log.teams = shared
    session.add(log)
    session.flush()
    return log


def update_log(*, session: Session, user: User, log: ClickLog, body: ClickLogUpdate) -> ClickLog:
    """Rename a log, change its position base or (its owner only) who it is shared with."""
    teams.set_sharing(session=session, user=user, obj=log, team_ids=body.team_ids)
    for name, value in body.model_dump(exclude_unset=True, exclude={"team_ids"}).items():
        if value is not None:
            setattr(log, name, value)
    session.flush()
    return log


def delete_log(*, session: Session, user: User, log: ClickLog) -> None:
    """Delete (its owner only) a click log with everything stored in it."""
    access.require_owner(user=user, obj=log, action="delete it")
    session.delete(log)
    session.flush()


def ingest_records(
    *, session: Session, log: ClickLog, kind: Kind, records: Iterable[ingest.Record]
) -> IngestResult:
    """Store the good records in batches (a record already stored is skipped), list the bad.

    Each batch is committed: a body of millions of events never holds the database's write
    lock for long, and since storing is idempotent, a client whose upload broke off sends it
    again and only what is missing is stored.
    """
    result = IngestResult()
    batch: list[dict[str, Any]] = []
    for record in records:
        try:
            if record.error is not None:
                raise ingest.BadRecord(record.error)
            row = _row(kind, record.value, log.position_base)
        except ingest.BadRecord as exc:
            result.refused_count += 1
            if len(result.refused) < MAX_REFUSED:
                result.refused.append(Refusal(line=record.line, message=str(exc)))
            continue
        row["click_log_id"] = log.id
        batch.append(row)
        if len(batch) >= BATCH:
            _insert(session, kind, batch, result)
            batch = []
    if batch:
        _insert(session, kind, batch, result)
    return result


def _row(kind: Kind, value: Any, position_base: int) -> dict[str, Any]:
    if kind == "events":
        return ingest.event_row(value, position_base=position_base)
    row = ingest.query_row(value)
    row["hit_count"] = None if row["hit_ids"] is None else len(row["hit_ids"])
    # A query that returned nothing shows no impressions: stored as SQL NULL, not JSON [].
    row["hit_ids"] = row["hit_ids"] or None
    return row


def _insert(session: Session, kind: Kind, rows: list[dict[str, Any]], result: IngestResult) -> None:
    table: Table = (UbiEvent if kind == "events" else UbiQuery).__table__  # type: ignore[assignment]
    unique = ["click_log_id", "digest" if kind == "events" else "key"]
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    # One statement, compiled once and cached, sent with many parameter sets: SQLAlchemy's
    # "insertmanyvalues" batches them and returns the ids of the rows actually inserted.
    stmt = dialect.insert(table).on_conflict_do_nothing(index_elements=unique).returning(table.c.id)
    stored = len(session.execute(stmt, rows).all())
    session.flush()
    result.stored += stored
    result.duplicates += len(rows) - stored


def summary(*, session: Session, log: ClickLog) -> ClickLogSummary:
    """Return what the log holds: counts, actions, distinct query texts, dates, impressions."""
    by_action = dict(
        session.execute(
            select(UbiEvent.action_name, func.count())
            .where(UbiEvent.click_log_id == log.id)
            .group_by(UbiEvent.action_name)
            .order_by(UbiEvent.action_name)
        ).all()
    )
    queries = session.scalar(select(func.count()).where(UbiQuery.click_log_id == log.id)) or 0
    texts = union_all(
        select(UbiQuery.user_query.label("text")).where(UbiQuery.click_log_id == log.id),
        select(UbiEvent.user_query.label("text")).where(
            UbiEvent.click_log_id == log.id, UbiEvent.user_query.is_not(None)
        ),
    ).subquery()
    stamps = union_all(
        select(UbiQuery.timestamp.label("at")).where(UbiQuery.click_log_id == log.id),
        select(UbiEvent.timestamp.label("at")).where(UbiEvent.click_log_id == log.id),
    ).subquery()
    first_at, last_at = session.execute(select(func.min(stamps.c.at), func.max(stamps.c.at))).one()
    with_hits = session.scalar(
        select(func.count()).where(UbiQuery.click_log_id == log.id, UbiQuery.hit_ids.is_not(None))
    )
    return ClickLogSummary(
        queries=queries,
        events=sum(by_action.values()),
        by_action=by_action,
        distinct_queries=session.scalar(select(func.count(func.distinct(texts.c.text)))) or 0,
        first_at=_aware(first_at),
        last_at=_aware(last_at),
        impressions="events" if by_action.get("impression") else "hit_ids" if with_hits else "none",
        ctr_by_rank=ctr_by_rank(session=session, log=log),
    )


def ctr_by_rank(*, session: Session, log: ClickLog, max_rank: int = CHART_RANKS) -> list[RankCtr]:
    """Return impressions, clicks and CTR at each rank that has impression events."""
    counted = session.execute(
        select(UbiEvent.rank, UbiEvent.action_name, func.count())
        .where(
            UbiEvent.click_log_id == log.id,
            UbiEvent.action_name.in_(["impression", "click"]),
            UbiEvent.rank.between(1, max_rank),
        )
        .group_by(UbiEvent.rank, UbiEvent.action_name)
    ).all()
    shown: dict[int, int] = {r or 0: n for r, action, n in counted if action == "impression"}
    clicked: dict[int, int] = {r or 0: n for r, action, n in counted if action == "click"}
    return [
        RankCtr(
            rank=rank,
            impressions=shown[rank],
            clicks=clicked.get(rank, 0),
            ctr=clicked.get(rank, 0) / shown[rank],
        )
        for rank in sorted(shown)
    ]


def _aware(value: datetime | None) -> datetime | None:
    # SQLite gives back the UTC times it stores without their offset.
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value
