"""The fixed words of Relevo's domain, each defined once.

Models (through ``Base.type_annotation_map``), API schemas, services and the pure
scoring and search layers all use these types. Each is a ``StrEnum``: a member equals,
hashes, formats and serializes as its plain string, so the database, the JSON API and
the templates hold exactly the same words as before they were types.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "ACTIVE_RUN_STATUSES",
    "Engine",
    "HttpMethod",
    "QueryStatus",
    "RunStatus",
    "ScorerKind",
    "TeamRole",
    "is_partial",
]


class RunStatus(StrEnum):
    """Where a run is in its life."""

    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


# A run in one of these states has not ended yet.
ACTIVE_RUN_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)


class QueryStatus(StrEnum):
    """The outcome of one query: scored, unscored (with a reason) or an error."""

    SCORED = "scored"
    UNSCORED = "unscored"
    ERROR = "error"


class Engine(StrEnum):
    """The search engines a search endpoint can talk to."""

    SOLR = "solr"
    ELASTICSEARCH = "elasticsearch"
    OPENSEARCH = "opensearch"
    SEARCHAPI = "searchapi"  # any JSON or HTML API, read by the endpoint's JavaScript mapper
    VESPA = "vespa"
    STATIC = "static"  # an uploaded result file (TREC run or CSV): no network at all


class HttpMethod(StrEnum):
    """How a search endpoint sends its requests."""

    GET = "GET"
    POST = "POST"


class ScorerKind(StrEnum):
    """A scorer's kind: the user's JavaScript or one of the built-in metrics."""

    JAVASCRIPT = "javascript"
    CLASSIC = "classic"
    NDCG = "ndcg"
    DCG = "dcg"
    CG = "cg"
    PRECISION = "precision"
    AVERAGE_PRECISION = "average_precision"
    RECIPROCAL_RANK = "reciprocal_rank"
    ERR = "err"


class TeamRole(StrEnum):
    """A member's role in a team: owners manage the team, members use what it shares."""

    OWNER = "owner"
    MEMBER = "member"


def is_partial(scored: int | None, total: int | None, errors: int = 0, unscored: int = 0) -> bool:
    """Return whether a score is partial: a query errored or was not run.

    A query left unscored (no ratings, or none relevant) is unrated, not a gap in the run:
    every run of the case leaves it out alike, so it makes no run partial (the pages show it
    as coverage, "23 of 25 queries rated").
    """
    if scored is None or not total:
        return False
    return errors > 0 or scored + unscored + errors < total
