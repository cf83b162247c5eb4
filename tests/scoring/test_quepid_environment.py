"""The Quepid environment: the same scorer code gives what Quepid's browser shows.

Expected values come from SCORING.md ("Quepid environment"), its worked data X and Y, and
Quepid's own scorer tests (AP@10 0.25, CG@10 4, P@10 0.5 on their data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from app.scoring import Outcome, ScorerConfig, score_queries
from app.scoring.errors import ScorerConfigError
from app.scoring.quepid_scorers import SHIPPED, shipped_scorer
from tests.scoring.helpers import CLASSIC_SCALE, GRADED, config, query

DATA_X = (list("abcde"), {"a": 2, "c": 3, "d": 0, "e": 1, "x": 3})
DATA_Y = (list("abcde"), {"a": 8, "c": 10, "d": 6, "x": 9})


def js(code: str, env: str, scale: Sequence[float] = GRADED, top: float = 100) -> ScorerConfig:
    return config("javascript", code=code, scale=scale, max_score=top, environment=env)


def both(
    code: str,
    docs: Sequence[str],
    ratings: Mapping[str, float],
    scale: Sequence[float] = GRADED,
    top: float = 100,
) -> tuple[Outcome, Outcome]:
    """Return the outcome of the code in the relevo and in the quepid environment."""
    q = query(docs, ratings)
    relevo = score_queries(js(code, "relevo", scale, top), [q])[0]
    quepid = score_queries(js(code, "quepid", scale, top), [q])[0]
    return relevo, quepid


def test_edit_distance_is_quepids_table() -> None:
    relevo, quepid = both("setScore(editDistanceFromBest())", *DATA_X)
    assert (relevo.score, quepid.score) == (4, 3)  # Quepid under-counts leading edits
    relevo, quepid = both("setScore(editDistanceFromBest())", *DATA_Y, scale=CLASSIC_SCALE)
    assert (relevo.score, quepid.score) == (3, 2)


def test_ratings_are_read_through_parse_int_except_doc_rating() -> None:
    code = (
        "setScore(avgRating() * 1000 + bestDocs[0].rating * 100 + topRatings(1)[0] * 10"
        " + docRating(0))"
    )
    ratings = {"a": 2.7, "b": 1.2}
    relevo, quepid = both(code, ["a", "b"], ratings, top=10_000)
    assert relevo.raw_score == pytest.approx(1.95 * 1000 + 270 + 27 + 2.7)
    assert quepid.raw_score == pytest.approx(1.5 * 1000 + 200 + 20 + 2.7)


def test_a_mean_of_zero_has_no_avg_rating_100_in_quepid() -> None:
    code = "var s = avgRating100(); setScore(s === null ? 42 : s + 7)"
    relevo, quepid = both(code, ["a", "b"], {"a": 0, "b": 0})
    assert (relevo.score, quepid.score) == (7, 42)


@pytest.mark.parametrize(
    ("code", "relevo_status", "quepid_score"),
    [
        ("setScore(0 / 0)", "error", 0.0),
        ("setScore('ten')", "error", 0.0),
        ("setScore(-5)", "scored", 0.0),
        ("setScore(null)", "unscored", 0.0),
        ("var nothing = 1;", "error", 0.0),
    ],
)
def test_quepid_cleans_up_the_value(code: str, relevo_status: str, quepid_score: float) -> None:
    relevo, quepid = both(code, *DATA_X)
    assert relevo.status == relevo_status
    assert (quepid.status, quepid.score, quepid.raw_score) == ("scored", quepid_score, 0.0)


def test_no_score_in_quepid_only_without_results_or_ratings() -> None:
    zsr = score_queries(js("var z;", "quepid"), [query([], {"a": 1})])[0]
    assert (zsr.status, zsr.reason) == ("unscored", 'no results (Quepid shows "zsr")')
    unrated = score_queries(js("setScore(null)", "quepid"), [query(["a"], {})])[0]
    assert (unrated.status, unrated.reason) == ("unscored", 'no ratings (Quepid shows "--")')
    thrown = score_queries(js("throw new Error('boom')", "quepid"), [query(["a"], {"a": 1})])
    assert thrown[0].status == "error" and "boom" in (thrown[0].reason or "")


def test_both_environments_have_the_query_its_options_and_doc_fields() -> None:
    from app.scoring import QueryInput, ScoreDoc

    code = """
      recordDepthOfRanking(5); refreshRatedDocs(5);
      setScore(query.query_text.length * 100 + options.boost * 10 + docs[0].doc.year % 10);
    """
    q = QueryInput(
        docs=[ScoreDoc("a", {"year": 1999})],
        ratings={"a": 1},
        query_options={"boost": 3},
        case_options={"lang": "en"},
        text="star wars",
    )
    for env in ("relevo", "quepid"):
        outcome = score_queries(js(code, env, top=10_000), [q])[0]
        assert outcome.raw_score == 9 * 100 + 3 * 10 + 9, env


def test_only_javascript_scorers_have_an_environment() -> None:
    with pytest.raises(ScorerConfigError) as info:
        config("ndcg", environment="quepid")
    assert info.value.field == "environment"
    with pytest.raises(ScorerConfigError):
        config("javascript", code="setScore(1)", environment="angular")


def shipped(name: str, docs: Sequence[str], ratings: Mapping[str, float]) -> Outcome:
    scorer = shipped_scorer(name)
    assert scorer is not None
    cfg = js(scorer.code, "quepid", scorer.scale, scorer.max_score)
    return score_queries(cfg, [query(docs, ratings)])[0]


@pytest.mark.parametrize(
    ("name", "docs", "ratings", "raw"),
    [
        # Quepid's own tests of its shipped scorers.
        ("AP@10", ["1", "2"], {"1": 0, "2": 1, "3": 1}, 0.25),
        ("CG@10", ["1", "2", "3"], {"1": 0, "2": 3, "3": 1}, 4.0),
        ("P@10", ["1", "2"], {"1": 1, "2": 0}, 0.5),
        # Data X: both nDCGs use gain 2^g - 1 and take their ideal from all the ratings;
        # with five rated docs (fewer than k) they agree.
        ("NDCG@10", *DATA_X, 0.5159779304),
        ("NDCG_CUT@10", *DATA_X, 0.5159779304),
        ("DCG@10", *DATA_X, 6.8868528072),
        ("CG@10", *DATA_X, 6.0),
        ("ERR@10", *DATA_X, 0.5592447917),
        ("RR@10", *DATA_X, 1.0),
        ("P@10", *DATA_X, 0.6),
        ("AP@10", *DATA_X, (1 + 2 / 3 + 3 / 5) / 4),
        # Nothing relevant: AP is 0 / 0, which Quepid shows as 0.
        ("AP@10", ["a", "b"], {"a": 0, "b": 0}, 0.0),
        # Fewer than ten docs, and a relevant doc that was not returned.
        ("RR@10", ["a", "b", "c"], {"c": 1, "z": 1}, 1 / 3),
        ("Classic", *DATA_Y, 78.0),
    ],
)
def test_shipped_scorers_give_quepids_numbers(
    name: str, docs: list[str], ratings: dict[str, float], raw: float
) -> None:
    outcome = shipped(name, docs, ratings)
    assert outcome.status == "scored"
    assert outcome.raw_score == pytest.approx(raw, abs=1e-9)


# SCORING.md's data Z: eleven docs rated 3 (a, b and nine not returned), y rated 1, c rated 0.
DATA_Z = (["a", "b", "c"], {"a": 3, "b": 3, "c": 0, "y": 1} | {f"x{n}": 3 for n in range(1, 10)})


@pytest.mark.parametrize(
    ("name", "score"),
    [
        # DCG = 7/log2(2) + 7/log2(3) = 11.416508. Quepid's nDCG@10 sums its ideal over all
        # 13 rated docs: 7 x (1/log2(2) + ... + 1/log2(12)) + 1/log2(13) = 34.027754.
        ("NDCG@10", 33.5506),
        # NDCG_CUT@10 (and Quepid's nDCG@10 before 8.1) cut the ideal at ten docs: 31.804915.
        ("NDCG_CUT@10", 35.8954),
    ],
)
def test_quepids_ndcg_takes_its_ideal_from_every_rated_doc(name: str, score: float) -> None:
    outcome = shipped(name, *DATA_Z)
    assert outcome.status == "scored"
    assert outcome.score == pytest.approx(score, abs=5e-5)


def test_quepids_ndcg_has_no_score_above_zero_without_relevant_ratings() -> None:
    assert shipped("NDCG@10", ["a", "b"], {"a": 0, "z": 0}).score == 0.0
    assert shipped("NDCG@10", [], {"z": 2}).score == 0.0  # no results: 0, as Quepid shows


def test_shipped_scorers_are_found_by_any_spelling_of_their_name() -> None:
    assert len(SHIPPED) == 9
    found = shipped_scorer("  ap@10 ")
    assert found is not None and found.name == "AP@10" and found.scale == [0, 1]
    classic = shipped_scorer("v1")
    assert classic is not None and classic.name == "Classic"
    assert shipped_scorer("v1 (legacy)") == classic
    # Quepid finds a case's scorer by its exact, case-sensitive name.
    assert {s.name: s.quepid_name for s in SHIPPED.values()} == {
        "NDCG@10": "nDCG@10",
        "NDCG_CUT@10": "NDCG_CUT@10",
        "DCG@10": "DCG@10",
        "CG@10": "CG@10",
        "P@10": "P@10",
        "AP@10": "AP@10",
        "RR@10": "RR@10",
        "ERR@10": "ERR@10",
        "Classic": "v1",
    }
    assert shipped_scorer("My own scorer") is None
