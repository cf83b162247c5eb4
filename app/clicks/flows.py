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

    A text the case has gets the tag and the weight too; a text a case cannot hold (too long,
    or with a tab or a line break) is left out and counted.
    """
    drawn = samples.sample(session=session, log=log, body=body)
    tag = f"sample:{body.design}"
    lines, skipped = [], 0
    for query in drawn.queries:
        text = query.text.strip()
        if not text or len(text) > MAX_TEXT or any(c in text for c in "\t\r\n"):
            skipped += 1
            continue
        lines.append(f"{text}\t{tag}\t{min(query.weight, MAX_WEIGHT)!r}")
    added = queries.add_queries(session=session, case=case, texts=lines)
    # Each query keeps its inclusion probability under this design (the last sample's).
    chance = {s.text.strip(): s.inclusion_probability for s in drawn.queries}
    for row in added:
        row.inclusion_probability = chance.get(row.text, row.inclusion_probability)
    session.commit()
    return FromLogRead(sample=drawn, query_ids=[q.id for q in added], skipped=skipped)
