"""Loading a pair of a book the caller may see, or 404 (see app/accounts/deps.py)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends

from app.accounts.deps import BookDep, owned
from app.books.service import get_pair
from app.models import Pair

__all__ = ["PairDep"]

PairDep = Annotated[Pair, Depends(owned(get_pair, "pair_id", inside=("book", BookDep)))]
