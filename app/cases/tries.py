"""A case's numbered tries."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.access import valid_id
from app.errors import NotFound
from app.models import Case, Try

__all__ = ["get_try"]


def get_try(*, session: Session, case: Case, number: int) -> Try:
    """Return one numbered try of the case, or 404."""
    found = (
        session.scalar(select(Try).where(Try.case_id == case.id, Try.number == number))
        if valid_id(number)
        else None
    )
    if found is None:
        raise NotFound(f"Case {case.id} has no try {number}.")
    return found
