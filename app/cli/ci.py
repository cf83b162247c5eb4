"""`relevo run` for CI: bars per metric (``--fail-under NAME=VALUE``), a tag, a JSON report."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.models import Case, Query, Run
from app.runs import service as run_service
from app.runs.metrics import metric_defs
from app.runs.schemas import MetricRead, RunDetail

__all__ = [
    "Bar",
    "GateError",
    "UnknownMetric",
    "UnknownTag",
    "check_gate",
    "parse_bar",
    "report",
    "tagged_metrics",
    "under_bars",
]


class GateError(Exception):
    """The gate cannot be checked as asked; nothing was run."""


class UnknownMetric(GateError):
    """A bar names a metric the case (or the run) does not have."""


class UnknownTag(GateError):
    """No query of the case carries the tag."""


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


def check_gate(*, session: Session, case: Case, bars: Sequence[Bar], tag: str | None) -> None:
    """Raise GateError when a bar names no metric of the case or no query carries the tag.

    Checked before the run is made, so that a typo costs neither a run in the history nor an
    alert evaluation.
    """
    ids = [case.scorer_id, *(int(i) for i in case.metric_scorer_ids or [])]
    names = [m.name for m in metric_defs(session=session, ids=[i for i in ids if i is not None])]
    known = {name.casefold() for name in names}
    for bar in bars:
        if bar.name is not None and bar.name.casefold() not in known:
            raise UnknownMetric(
                f"No metric named {bar.name!r} in case {case.id} "
                f"(metrics: {', '.join(names) or 'none'}); nothing was run."
            )
    if tag is None:
        return
    tags = {
        t
        for row in session.scalars(select(Query.tags).where(Query.case_id == case.id))
        for t in row or []
    }
    if tag not in tags:
        raise UnknownTag(
            f"No query of case {case.id} has the tag {tag!r} "
            f"(tags: {', '.join(sorted(tags)) or 'none'}); nothing was run."
        )


def tagged_metrics(*, session: Session, run: Run, tag: str | None) -> list[MetricRead]:
    """Return the run's metrics over all its queries, or only those with the tag."""
    return run_service.metrics_read(session=session, run=run, tag=tag)


def under_bars(
    metrics: Sequence[MetricRead],
    bars: Sequence[Bar],
    *,
    case_score: float | None,
    tag: str | None = None,
) -> list[str]:
    """Return one sentence per bar not reached (a metric with no score is under any bar,
    and the sentence says that nothing was scored).

    Raises UnknownMetric when a bar names no metric of the run (names are case-insensitive).
    """
    by_name = {m.name.casefold(): m for m in metrics}
    over = "" if tag is None else f" over the queries tagged {tag!r}"
    scope = "the case's queries" if tag is None else f"the queries tagged {tag!r}"
    failed = []
    for bar in bars:
        if bar.name is None:
            primary = metrics[0].name if metrics else "the case's metric"
            label, score = f"Case score ({primary}){over}", case_score
        else:
            metric = by_name.get(bar.name.casefold())
            if metric is None:
                names = ", ".join(m.name for m in metrics) or "none"
                raise UnknownMetric(f"No metric named {bar.name!r} in this run (metrics: {names}).")
            label, score = f"{metric.name}{over}", metric.case_score
        if score is None:
            failed.append(
                f"{label} has no score: none of {scope} was scored (each errored or has no "
                f"relevant rating), so it cannot reach {bar.value:g}."
            )
        elif score < bar.value:
            failed.append(f"{label} {score:.2f} is below {bar.value:g}.")
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
