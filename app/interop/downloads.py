"""A case's files as a response streams them: read after the route has returned.

The response body is made after the route's session is closed, so each file is read with a
session of its own; a case deleted in between gives an empty file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from sqlalchemy.orm import Session, sessionmaker

from app.errors import NotFound
from app.interop import ratings_io
from app.models import Case, Run

__all__ = ["CaseLines", "attachment", "case_file", "run_as_trec"]

CaseLines = Callable[[Session, Case], Iterator[str]]


def case_file(
    *, session_factory: sessionmaker[Session], case_id: int, lines: CaseLines
) -> Iterator[bytes]:
    """Yield the case's file, line by line, read with a session of its own."""
    with session_factory() as session:
        case = session.get(Case, case_id)
        if case is None:  # deleted between the route and the first line
            return
        for text in lines(session, case):
            yield text.encode()


def run_as_trec(run_id: int) -> CaseLines:
    """Return the lines of one run of the case as a TREC run file."""

    def lines(session: Session, case: Case) -> Iterator[str]:
        stored = session.get(Run, run_id)
        if stored is None:
            raise NotFound(f"Run {run_id} no longer exists.")
        return ratings_io.run_as_trec(session, stored)

    return lines


def attachment(name: str) -> dict[str, str]:
    """Return the headers that make a browser save the response as ``name``."""
    return {"Content-Disposition": f'attachment; filename="{name}"'}
