"""Many metrics of a case at once: per-tag and weighted aggregation of per-query scores.

Pure functions of plain data (no ORM, no FastAPI): the runs, the comparison, the case page
and the CLI all summarise stored per-query metric scores the same way.
"""

from app.metrics.aggregate import (
    AGGREGATES,
    MetricDef,
    MetricSummary,
    QueryScores,
    TagSummary,
    aggregate_mean,
    summarize,
)
from app.metrics.compare import MetricComparison, TagDelta, compare_metrics, holm

__all__ = [
    "AGGREGATES",
    "MetricComparison",
    "MetricDef",
    "MetricSummary",
    "QueryScores",
    "TagDelta",
    "TagSummary",
    "aggregate_mean",
    "compare_metrics",
    "holm",
    "summarize",
]
