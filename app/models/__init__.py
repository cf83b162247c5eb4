"""The typed ORM models of Relevo's domain."""

from app.models.base import Base
from app.models.books import Book, BookRater, CaseBookSync, Judgement, Pair
from app.models.cases import Case, Query, Rating, Try
from app.models.clicks import ClickJudgement, ClickLog, ClickRater, UbiEvent, UbiQuery
from app.models.endpoints import SearchEndpoint
from app.models.engine_limits import EngineRate, EngineSlot
from app.models.judges import (
    Judge,
    JudgeCacheEntry,
    JudgeFailure,
    JudgeJudgement,
    JudgeRun,
    JudgeTrial,
)
from app.models.runs import Run, RunQuery
from app.models.schedules import (
    Alert,
    AlertCheck,
    AlertEvent,
    Annotation,
    CaseSchedule,
    Delivery,
    ScheduleFiring,
    Webhook,
)
from app.models.scorers import Scorer
from app.models.static_results import StaticResult
from app.models.sweeps import Sweep
from app.models.teams import Team, TeamMember
from app.models.users import ApiKey, User, UserSession

__all__ = [
    "Alert",
    "AlertCheck",
    "AlertEvent",
    "Annotation",
    "ApiKey",
    "Base",
    "Book",
    "BookRater",
    "Case",
    "CaseBookSync",
    "CaseSchedule",
    "ClickJudgement",
    "ClickLog",
    "ClickRater",
    "Delivery",
    "EngineRate",
    "EngineSlot",
    "Judge",
    "JudgeCacheEntry",
    "JudgeFailure",
    "JudgeJudgement",
    "JudgeRun",
    "JudgeTrial",
    "Judgement",
    "Pair",
    "Query",
    "Rating",
    "Run",
    "RunQuery",
    "ScheduleFiring",
    "Scorer",
    "SearchEndpoint",
    "StaticResult",
    "Sweep",
    "Team",
    "TeamMember",
    "Try",
    "UbiEvent",
    "UbiQuery",
    "User",
    "UserSession",
    "Webhook",
]
