"""The typed ORM models of Relevo's domain."""

from app.models.base import Base
from app.models.cases import Case, Query, Rating, Try
from app.models.endpoints import SearchEndpoint
from app.models.runs import Run, RunQuery
from app.models.scorers import Scorer
from app.models.users import ApiKey, User

__all__ = [
    "ApiKey",
    "Base",
    "Case",
    "Query",
    "Rating",
    "Run",
    "RunQuery",
    "Scorer",
    "SearchEndpoint",
    "Try",
    "User",
]
