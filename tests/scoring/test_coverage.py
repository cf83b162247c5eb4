"""Score bands and rating impacts: unrated top-k docs set to the lowest or highest grade."""

from __future__ import annotations

import pytest

from app.scorers.config import build_config
from app.scoring import QueryInput, ScoreDoc, score_query
from app.scoring.coverage import bands, rating_impacts, unrated_top

NDCG = build_config(
    kind="ndcg", params={"k": 3}, scale=[0, 1, 2, 3], scale_labels=None, code=None, max_score=None
)


def _query(ids: list[str], ratings: dict[str, float]) -> QueryInput:
    return QueryInput(docs=[ScoreDoc(id=i) for i in ids], ratings=ratings)


def test_band_is_the_score_with_unrated_docs_lowest_and_highest() -> None:
    query = _query(["a", "b", "c", "d"], {"a": 2, "x": 3})
    assert unrated_top(query, 3) == ["b", "c"]
    [band] = bands(NDCG, [query], 3)
    low = score_query(NDCG, _query(["a", "b", "c", "d"], {"a": 2, "x": 3, "b": 0, "c": 0}))
    high = score_query(NDCG, _query(["a", "b", "c", "d"], {"a": 2, "x": 3, "b": 3, "c": 3}))
    assert (band.low, band.high) == (low.score, high.score)
    assert band.low is not None and band.high is not None
    # NDCG counts an unrated doc as 0, the lowest grade: today's score is the low end.
    today = score_query(NDCG, query).score
    assert today is not None
    assert band.low == today < band.high
    assert band.unrated == ["b", "c"]


def test_a_fully_rated_query_has_no_band_width() -> None:
    query = _query(["a", "b"], {"a": 3, "b": 1})
    [band] = bands(NDCG, [query], 3)
    assert band.low == band.high == score_query(NDCG, query).score
    assert rating_impacts(NDCG, [query], 3, scored_queries=1, limit=10) == []


def test_impacts_are_ordered_by_how_far_a_rating_moves_the_case_score() -> None:
    first = _query(["a", "b", "c"], {"a": 3})
    second = _query(["p", "q"], {"q": 1})
    impacts = rating_impacts(NDCG, [first, second], 3, scored_queries=2, limit=10)
    assert {(i.query_index, i.doc_id) for i in impacts} == {(0, "b"), (0, "c"), (1, "p")}
    points = [i.points for i in impacts]
    assert points == sorted(points, reverse=True)
    for impact in impacts:
        query = [first, second][impact.query_index]
        hi = score_query(
            NDCG, _query([d.id for d in query.docs], {**query.ratings, impact.doc_id: 3})
        )
        lo = score_query(
            NDCG, _query([d.id for d in query.docs], {**query.ratings, impact.doc_id: 0})
        )
        assert impact.points == pytest.approx(abs(hi.score - lo.score) / 2)  # type: ignore[operator]
        assert [d.id for d in query.docs][impact.rank - 1] == impact.doc_id
    # NDCG over the rated ideal: a top grade for b (rank 2) keeps the ranking ideal, so b
    # cannot move the score at all, while c (rank 3) can.
    reach = {i.doc_id: i.points for i in impacts}
    assert reach["b"] == 0.0 < reach["c"]
    assert impacts[-1].doc_id == "b"
    assert len(rating_impacts(NDCG, [first, second], 3, scored_queries=2, limit=2)) == 2
