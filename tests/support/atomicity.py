"""What tests/test_request_atomicity.py's world adds for its upload and judging routes: the
files uploaded (a Quepid book, a ratings CSV, a TREC run), click events a click model can
judge, a judge failure to retry, and a judge on a fake language model."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import JudgeFailure
from tests.fixtures.users import ApiUser
from tests.support.clicks import send_events, ubi_event

__all__ = [
    "QUEPID_BOOK",
    "RATINGS_CSV",
    "TREC_RUN",
    "add_click_events",
    "add_judge_failure",
    "add_model_judge",
]

# A Quepid book export: two pairs, rated by the world's two users (alice owns the world).
QUEPID_BOOK = json.dumps(
    {
        "name": "Imported book",
        "scorer": {"name": "AP@10", "scale": [0, 1, 2, 3]},
        "query_doc_pairs": [
            {
                "query_text": "star wars",
                "doc_id": "11",
                "position": 0,
                "document_fields": '{"title": "Star Wars"}',
                "judgements": [
                    {"rating": 3, "user_email": "alice@example.com"},
                    {"rating": 2, "user_email": "bob@example.com"},
                ],
            },
            {
                "query_text": "alien",
                "doc_id": "12",
                "position": 1,
                "document_fields": '{"title": "Alien"}',
                "judgements": [{"rating": 1, "user_email": "alice@example.com"}],
            },
        ],
    }
)
# Ratings of the world's case: one query it has, one it has not (which the import adds).
RATINGS_CSV = "query,docid,rating\nstar wars,d7,2\nnew text,d8,1\n"
# Results of a result-file endpoint: one query, two docs.
TREC_RUN = "q1 Q0 d1 1 2.5 run\nq1 Q0 d2 2 1.5 run\n"

# Searches for "shoes" (search id, doc, rank, clicked): A, B and C each shown more than once.
_SEARCHES = [
    ("s0", "A", 1, True),
    ("s1", "A", 1, False),
    ("s2", "B", 2, True),
    ("s3", "B", 2, False),
    ("s4", "B", 1, False),
    ("s5", "A", 2, False),
    ("s6", "C", 2, False),
    ("s7", "C", 1, True),
]


def add_click_events(api: ApiUser, log_id: int) -> None:
    """Store impressions and clicks of the "shoes" searches in the log."""
    events = []
    for search, doc, rank, clicked in _SEARCHES:
        events.append(ubi_event(search, "shoes", doc, rank, "impression"))
        if clicked:
            events.append(ubi_event(search, "shoes", doc, rank, "click"))
    send_events(api, log_id, events)


def add_judge_failure(
    factory: sessionmaker[Session], *, run_id: int, judge_id: int, pair_id: int
) -> None:
    """Record that the judge's run could not rate the pair (what "retry" runs again)."""
    with session_scope(factory) as session:
        session.add(JudgeFailure(run_id=run_id, pair_id=pair_id, judge_id=judge_id, reason="500"))


def add_model_judge(api: ApiUser, url: str) -> int:
    """Create a judge on the language model served at ``url``; return its id."""
    body: dict[str, Any] = {
        "name": "model judge",
        "provider": "openai",
        "base_url": f"{url}/v1",
        "model": "gpt-fake",
        "api_key": "sk-model",
        "requests_per_minute": 100_000,
    }
    response = api.post("/api/v1/judges", json=body)
    assert response.status_code == 201, response.text
    judge_id: int = response.json()["id"]
    return judge_id
