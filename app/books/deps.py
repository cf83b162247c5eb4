"""Loading a pair of a book the caller may see, or 404 (``owned()`` in app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app import access
from app.accounts.deps import owned
from app.books.service import get_pair
from app.models import Book, Pair

__all__ = ["BookDep", "PairDep", "WebBookDep"]

BookDep = Annotated[Book, Depends(owned(access.visible_book, "book_id"))]
WebBookDep = Annotated[Book, Depends(owned(access.visible_book, "book_id", page=True))]
PairDep = Annotated[Pair, Depends(owned(get_pair, "pair_id", inside=("book", BookDep)))]
