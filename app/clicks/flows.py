"""Use cases that cross domains: a sample of a click log's queries added to a case."""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.clicks import samples
from app.clicks.schemas import FromLogBody, FromLogRead
from app.models import Case, ClickLog
from app.queries import service as queries
from app.queries.bulk_lines import MAX_TEXT, MAX_WEIGHT

__all__ = ["add_sample_to_case"]


def add_sample_to_case(
    *, session: Session, case: Case, log: ClickLog, body: FromLogBody
) -> FromLogRead:
    """Add a sample of the log's queries to the case: weight = design weight, tag sample:<design>,
    and each query's inclusion probability stored with it.

    A text the case has gets the tag; it keeps the weight (and inclusion probability) it has
    unless ``body.replace_weights``, and the answer lists which weights were kept or replaced.
    A text a case cannot hold (too long, or with a tab or a line break) is left out and
    counted. A query that would get more than 20 tags refuses the whole sample (422).
    """
    drawn = samples.sample(session=session, log=log, body=body)
    tag = f"sample:{body.design}"
    had = {q.text: q.weight for q in queries.list_queries(session=session, case=case)}
    lines, skipped = [], 0
    design: dict[str, float] = {}
    for query in drawn.queries:
        text = query.text.strip()
        if not text or len(text) > MAX_TEXT or any(c in text for c in "\t\r\n"):
            skipped += 1
            continue
        design[text] = min(query.weight, MAX_WEIGHT)
        keep = text in had and not body.replace_weights
        lines.append(f"{text}\t{tag}" if keep else f"{text}\t{tag}\t{design[text]!r}")
    added = queries.add_queries(session=session, case=case, texts=lines)
    # Each query whose weight the sample set keeps its inclusion probability under this
    # design (the last such sample's).
    chance = {s.text.strip(): s.inclusion_probability for s in drawn.queries}
    replaced: list[int] = []
    kept: list[int] = []
    for row in added:
        if row.text in had and had[row.text] != design.get(row.text, had[row.text]):
            (replaced if body.replace_weights else kept).append(row.id)
        if row.text not in had or body.replace_weights:
            row.inclusion_probability = chance.get(row.text, row.inclusion_probability)
    session.flush()
    return FromLogRead(
        sample=drawn,
        query_ids=[q.id for q in added],
        skipped=skipped,
        weights_replaced=replaced,
        weights_kept=kept,
    )
