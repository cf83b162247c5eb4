"""Negative grades (a -1..4 scale, as trec_eval's qrels.rel_level): no gain, judged non-relevant.

trec_eval reads a negative grade as judged but not relevant: it adds nothing to a DCG or
an ideal and is never relevant. Relevo's built-ins do the same; pytrec_eval checks the ones
trec_eval computes, and the others must give what they give with the grade read as 0.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
import pytrec_eval

from app.scoring import QueryInput, score_queries
from tests.scoring.helpers import config, query

SCALE = (-1, 0, 1, 2, 3, 4)

# A qrels file in trec_eval's format (QID 0 DOCID GRADE) with grades from -1 to 4, and a run.
QRELS = """\
q1 0 d1 4
q1 0 d2 -1
q1 0 d3 2
q1 0 d4 -1
q1 0 d5 0
q1 0 d6 1
q1 0 d11 3
q2 0 e1 -1
q2 0 e2 -1
q2 0 e3 1
q2 0 e9 2
q3 0 f1 -1
q3 0 f2 3
"""
RUN = {
    "q1": ["d2", "d1", "d4", "d3", "d7", "d5", "d8", "d6", "d9", "d10"],
    "q2": ["e1", "e2", "e4", "e5", "e3", "e6", "e7", "e8", "e10", "e11"],
    "q3": ["f1", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f2"],
}


def _qrels() -> dict[str, dict[str, int]]:
    parsed: dict[str, dict[str, int]] = pytrec_eval.parse_qrel(io.StringIO(QRELS))
    return parsed


def _queries(zeroed: bool = False) -> list[QueryInput]:
    qrels = _qrels()
    return [
        query(RUN[qid], {d: (max(g, 0) if zeroed else g) for d, g in qrels[qid].items()})
        for qid in sorted(RUN)
    ]


# Relevo's built-in and the trec_eval measure that computes the same thing.
TREC_EVAL: list[tuple[str, dict[str, Any], str]] = [
    ("ndcg", {}, "ndcg_cut.10"),
    ("precision", {}, "P.10"),
    ("average_precision", {}, "map_cut.10"),
    ("reciprocal_rank", {}, "recip_rank"),
]


@pytest.mark.parametrize(("kind", "params", "measure"), TREC_EVAL)
def test_negative_grades_score_as_trec_eval_scores_them(
    kind: str, params: dict[str, Any], measure: str
) -> None:
    run = {qid: {doc: 100.0 - rank for rank, doc in enumerate(docs)} for qid, docs in RUN.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(_qrels(), {measure})
    expected = evaluator.evaluate(run)
    key = measure.replace(".", "_")
    outcomes = score_queries(config(kind, params, SCALE), _queries())
    for qid, outcome in zip(sorted(RUN), outcomes, strict=True):
        assert outcome.status == "scored", (qid, outcome.reason)
        assert outcome.raw_score == pytest.approx(expected[qid][key], abs=1e-12), qid


# Every built-in, pinned by hand on q1 (d2 and d4 rated -1; gains read as 0):
# top ten grades [-1, 4, -1, 2, _, 0, _, 1, _, _], all grades {4, 3, 2, 1, 0, -1, -1}.
HAND: list[tuple[str, dict[str, Any], float]] = [
    # linear DCG = 4/log2 3 + 2/log2 5 + 1/log2 9 = 3.700537; ideal 4, 3, 2, 1 = 7.323466
    ("ndcg", {}, 50.5299),
    # 2^g - 1: DCG = 15/log2 3 + 3/log2 5 + 1/log2 9 = 11.071441; 15 at all ten: 68.153390
    ("dcg", {}, 16.2449),
    ("cg", {}, 17.5),  # (4 + 2 + 0 + 1) / (10 x 4)
    ("precision", {}, 30.0),  # d1, d3, d6 of ten
    ("average_precision", {}, 34.375),  # (1/2 + 2/4 + 3/8) / 4 relevant (d11 not returned)
    ("reciprocal_rank", {}, 50.0),
    # R = (2^g - 1) / 16: 15/16 at 2, 3/16 at 4, 1/16 at 8 (the -1s stop nobody):
    # 15/32 + (3/64)(1/16) + (1/128)(1/16)(13/16)
    ("err", {}, 47.2076),
]


@pytest.mark.parametrize(("kind", "params", "score"), HAND)
def test_every_builtin_reads_a_negative_grade_as_no_gain(
    kind: str, params: dict[str, Any], score: float
) -> None:
    outcome = score_queries(config(kind, params, SCALE), _queries()[:1])[0]
    assert outcome.status == "scored", outcome.reason
    assert outcome.score == pytest.approx(score, abs=5e-5)


@pytest.mark.parametrize(
    ("kind", "params"),
    [
        ("ndcg", {}),
        ("ndcg", {"gain": "exponential", "ideal": "results", "unrated": "skip"}),
        ("ndcg", {"ideal": "max"}),
        ("dcg", {}),
        ("dcg", {"gain": "linear"}),
        ("cg", {}),
        ("precision", {}),
        ("average_precision", {}),
        ("reciprocal_rank", {}),
        ("err", {}),
        ("classic", {}),
    ],
)
def test_a_negative_grade_counts_as_a_judged_zero(kind: str, params: dict[str, Any]) -> None:
    negative = score_queries(config(kind, params, SCALE), _queries())
    zeroed = score_queries(config(kind, params, SCALE), _queries(zeroed=True))
    assert [o.status for o in negative] == ["scored"] * 3
    assert [o.score for o in negative] == [o.score for o in zeroed]
