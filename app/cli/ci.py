"""`relevo run` for CI: bars per metric (``--fail-under NAME=VALUE``), a tag, a JSON report."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Query, Run
from app.runs import service as run_service
from app.runs.schemas import MetricRead, RunDetail

__all__ = ["Bar", "UnknownMetric", "parse_bar", "report", "tagged_metrics", "under_bars"]


class UnknownMetric(Exception):
    """A bar names a metric the run does not have."""


@dataclass(frozen=True)
class Bar:
    """A minimum score: of a named metric, or (name None) of the case score."""

    name: str | None
    value: float


def parse_bar(text: str) -> Bar:
    """Return the bar of ``VALUE`` or ``NAME=VALUE`` (argparse type: bad text is a usage error)."""
    name, sep, raw = text.rpartition("=")
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not VALUE or NAME=VALUE (e.g. 62 or ndcg@10=62)"
        ) from None
    if not math.isfinite(value) or (sep and not name.strip()):
        raise argparse.ArgumentTypeError(f"{text!r} is not VALUE or NAME=VALUE")
    return Bar(name=name.strip() if sep else None, value=value)


def tagged_metrics(*, session: Session, run: Run, tag: str | None) -> list[MetricRead]:
    """Return the run's metrics over all its queries, or only those with the tag."""
    return run_service.metrics_read(session=session, run=run, tag=tag)


def under_bars(
    metrics: Sequence[MetricRead], bars: Sequence[Bar], *, case_score: float | None
) -> list[str]:
    """Return one sentence per bar not reached (a metric with no score is under any bar).

    Raises UnknownMetric when a bar names no metric of the run (names are case-insensitive).
    """
    by_name = {m.name.casefold(): m for m in metrics}
    failed = []
    for bar in bars:
        if bar.name is None:
            label, score = "Case score", case_score
        else:
            metric = by_name.get(bar.name.casefold())
            if metric is None:
                names = ", ".join(m.name for m in metrics) or "none"
                raise UnknownMetric(f"No metric named {bar.name!r} in this run (metrics: {names}).")
            label, score = metric.name, metric.case_score
        if score is None or score < bar.value:
            shown = "-" if score is None else f"{score:.2f}"
            failed.append(f"{label} {shown} is below {bar.value:g}.")
    return failed


def report(
    *, session: Session, detail: RunDetail, metrics: Sequence[MetricRead], tag: str | None
) -> dict[str, Any]:
    """Return the run as JSON data with every metric and each query's tags and weight.

    With a tag, only the queries carrying it are listed and the metrics are theirs.
    """
    ids = [q.query_id for q in detail.queries if q.query_id is not None]
    tags: dict[int, tuple[list[str], float]] = {}
    if ids:
        stmt = select(Query.id, Query.tags, Query.weight).where(Query.id.in_(ids))
        tags = {qid: (list(t or []), float(w)) for qid, t, w in session.execute(stmt)}
    queries = []
    for query in detail.queries:
        query_tags, weight = tags.get(query.query_id or 0, ([], 1.0))
        if tag is not None and tag not in query_tags:
            continue
        queries.append({**query.model_dump(mode="json"), "tags": query_tags, "weight": weight})
    data = detail.model_dump(mode="json")
    data.update(
        tag=tag,
        metrics=[m.model_dump(mode="json") for m in metrics],
        queries=queries,
    )
    return data
