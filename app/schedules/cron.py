"""Cron expressions in UTC: five fields or a preset, and the next time one is due."""

from __future__ import annotations

from datetime import UTC, datetime

from croniter import CroniterError, croniter

from app.errors import Invalid

__all__ = ["PRESETS", "next_after", "normalise"]

PRESETS = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@weekly": "0 0 * * 0"}


def normalise(expression: str) -> str:
    """Return the expression trimmed and checked (a preset stays as written), else raise 422."""
    text = " ".join(expression.split())
    fields = PRESETS.get(text, text)
    if len(fields.split(" ")) != 5 or not croniter.is_valid(fields) or not _ever_due(fields):
        raise Invalid(
            "cron",
            f"{expression!r} is not a schedule: give five cron fields in UTC "
            "(minute hour day-of-month month day-of-week, e.g. '0 3 * * *') "
            "or one of @hourly, @daily, @weekly.",
        )
    return text


def _ever_due(fields: str) -> bool:
    # "0 0 31 2 *" parses but names no day: croniter gives up searching for one.
    try:
        croniter(fields, datetime(2000, 1, 1, tzinfo=UTC)).get_next(datetime)
    except (CroniterError, ValueError, OverflowError):
        return False
    return True


def next_after(expression: str, moment: datetime) -> datetime:
    """Return the first due time strictly after ``moment`` (UTC, whole minutes)."""
    fields = PRESETS.get(expression, expression)
    start = moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)
    due: datetime = croniter(fields, start).get_next(datetime)
    return due.astimezone(UTC)
