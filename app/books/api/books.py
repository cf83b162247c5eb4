"""Books: pairs, raters' judgements, agreement, sync into a case, export and import."""

from __future__ import annotations

import json
from typing import Any, Literal

from fastapi import APIRouter, Body, Response

from app.accounts.deps import CurrentUser
from app.books import calibration, service
from app.books import io as book_io
from app.books import sync as book_sync
from app.books.deps import BookDep, PairDep
from app.books.schemas import (
    AgreementRead,
    BookCreate,
    BookRead,
    BookUpdate,
    JudgementPut,
    MyJudgement,
    PairRead,
    PairsAdded,
    PairsPost,
    PairToJudge,
    Populate,
    SyncBody,
    SyncResult,
)
from app.cases.deps import CaseDep
from app.teams import service as teams
from app.web_common.deps import SessionDep

router = APIRouter(tags=["books"])


@router.post("/books", response_model=BookRead, status_code=201)
def create_book(body: BookCreate, user: CurrentUser, session: SessionDep) -> BookRead:
    """Create a book on a scale."""
    return service.to_read(
        session=session, book=service.create_book(session=session, user=user, body=body)
    )


@router.get("/books", response_model=list[BookRead])
def list_books(user: CurrentUser, session: SessionDep) -> list[BookRead]:
    """Return the books the caller may see."""
    books = service.list_books(session=session, user=user)
    counts = service.pair_counts(session=session, book_ids=[b.id for b in books])
    return [
        BookRead.model_validate(b).model_copy(
            update={"pair_count": counts[b.id], "team_ids": teams.team_ids(b)}
        )
        for b in books
    ]


@router.post("/books/import", response_model=BookRead, status_code=201)
def import_book(
    user: CurrentUser,
    session: SessionDep,
    data: Any = Body(...),
) -> BookRead:
    """Create a book from Quepid's book export/import JSON."""
    return service.to_read(
        session=session, book=book_io.import_quepid(session=session, user=user, data=data)
    )


@router.get("/books/{book_id}", response_model=BookRead)
def get_book(book: BookDep, session: SessionDep) -> BookRead:
    """Return a book."""
    return service.to_read(session=session, book=book)


@router.patch("/books/{book_id}", response_model=BookRead)
def update_book(
    book: BookDep, body: BookUpdate, user: CurrentUser, session: SessionDep
) -> BookRead:
    """Rename a book, change its scale or (its owner only) who it is shared with."""
    return service.to_read(
        session=session, book=service.update_book(session=session, user=user, book=book, body=body)
    )


@router.delete("/books/{book_id}", status_code=204)
def delete_book(book: BookDep, user: CurrentUser, session: SessionDep) -> None:
    """Delete a book with its pairs and judgements (its owner only)."""
    service.delete_book(session=session, user=user, book=book)


@router.post("/books/{book_id}/pairs", response_model=PairsAdded)
def add_pairs(book: BookDep, body: PairsPost, session: SessionDep) -> PairsAdded:
    """Upsert query-doc pairs by (query text, doc id)."""
    created, existing = service.add_pairs(session=session, book=book, pairs=body.pairs)
    return PairsAdded(created=created, existing=existing)


@router.get("/books/{book_id}/pairs", response_model=list[PairRead])
def list_pairs(book: BookDep, session: SessionDep) -> list[PairRead]:
    """Return the book's pairs with every rater's judgement."""
    return service.pairs_read(session=session, book=book)


@router.post("/books/{book_id}/populate", response_model=PairsAdded)
def populate(book: BookDep, body: Populate, user: CurrentUser, session: SessionDep) -> PairsAdded:
    """Add the top docs of every query of a case's latest finished run (409 when none)."""
    created, existing = service.populate(
        session=session, user=user, book=book, case_id=body.case_id, depth=body.depth
    )
    return PairsAdded(created=created, existing=existing)


@router.get("/books/{book_id}/next", response_model=PairToJudge, responses={204: {}})
def next_pair(book: BookDep, user: CurrentUser, session: SessionDep) -> Any:
    """Return the next pair for the caller to judge, or 204 when none is left."""
    pair = service.next_pair(session=session, book=book, user=user)
    if pair is None:
        return Response(status_code=204)
    return PairToJudge.model_validate(pair)


@router.put("/books/{book_id}/pairs/{pair_id}/judgement", response_model=MyJudgement)
def put_judgement(
    pair: PairDep, body: JudgementPut, book: BookDep, user: CurrentUser, session: SessionDep
) -> MyJudgement:
    """Record the caller's judgement of a pair (replacing theirs); off-scale is 422."""
    judgement = service.judge(session=session, book=book, pair_id=pair.id, user=user, body=body)
    return MyJudgement.model_validate(judgement)


@router.get("/books/{book_id}/agreement", response_model=AgreementRead)
def agreement(book: BookDep, session: SessionDep) -> AgreementRead:
    """Return Krippendorff's alpha and Cohen's kappa per rater pair."""
    return calibration.agreement(session=session, book=book)


@router.get("/books/{book_id}/export", response_model=None)
def export_book(
    book: BookDep, session: SessionDep, format: Literal["csv", "quepid"] = "csv"
) -> Response:
    """Export the judgements as CSV or as Quepid's book JSON."""
    if format == "csv":
        return Response(
            book_io.export_csv(session=session, book=book),
            media_type="text/csv; charset=utf-8",
            headers={"Content-Disposition": f'attachment; filename="book-{book.id}.csv"'},
        )
    return Response(
        json.dumps(book_io.export_quepid(session=session, book=book), ensure_ascii=False),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="book-{book.id}.json"'},
    )


@router.post("/cases/{case_id}/books/{book_id}/sync", response_model=SyncResult)
def sync(
    case: CaseDep, book: BookDep, body: SyncBody, user: CurrentUser, session: SessionDep
) -> SyncResult:
    """Write the book's aggregate into the case's ratings and re-score the latest run."""
    return book_sync.sync(session=session, case_id=case.id, book=book, body=body, user=user)
