"""The pure aggregation of many metrics: weighted means, per-tag summaries, Holm."""

from __future__ import annotations

import pytest
from statsmodels.stats.multitest import multipletests

from app.metrics import MetricDef, QueryScores, aggregate_mean, compare_metrics, holm, summarize
from app.queries.bulk_lines import BulkLineError, parse_line

NDCG, P5 = MetricDef(1, "NDCG@10"), MetricDef(2, "P@5")
QUERIES = [
    QueryScores(scores={1: 80.0, 2: 40.0}, tags=("head", "tail"), weight=3.0),
    QueryScores(scores={1: 20.0, 2: None}, tags=("tail",), weight=1.0),
    QueryScores(scores={1: None, 2: 100.0}, tags=("head",), weight=5.0),
]


def test_the_weighted_mean_is_the_sum_of_weighted_scores_over_the_sum_of_weights() -> None:
    pairs = [(80.0, 3.0), (20.0, 1.0)]
    assert aggregate_mean(pairs, weighted=True) == pytest.approx(65.0)
    assert aggregate_mean(pairs, weighted=False) == pytest.approx(50.0)
    assert aggregate_mean([], weighted=True) is None


def test_every_metric_is_summarised_over_its_scored_queries_only() -> None:
    plain, p5 = summarize([NDCG, P5], QUERIES)
    assert (plain.scorer_id, plain.name, plain.scored) == (1, "NDCG@10", 2)
    assert plain.case_score == pytest.approx(50.0)
    assert [(t.tag, t.count, t.mean, t.min) for t in plain.by_tag] == [
        ("head", 1, 80.0, 80.0),
        ("tail", 2, 50.0, 20.0),
    ]
    assert p5.scored == 2 and p5.case_score == pytest.approx(70.0)
    assert [(t.tag, t.count, t.mean, t.min) for t in p5.by_tag] == [
        ("head", 2, 70.0, 40.0),
        ("tail", 1, 40.0, 40.0),
    ]


def test_with_weights_the_case_and_every_tag_are_weighted() -> None:
    ndcg, p5 = summarize([NDCG, P5], QUERIES, weighted=True)
    assert ndcg.case_score == pytest.approx((3 * 80 + 1 * 20) / 4)  # 65
    assert p5.case_score == pytest.approx((3 * 40 + 5 * 100) / 8)  # 77.5
    head = next(t for t in p5.by_tag if t.tag == "head")
    assert (head.count, head.min) == (2, 40.0)
    assert head.mean == pytest.approx(77.5)


def test_holm_matches_statsmodels_and_keeps_missing_values() -> None:
    p = [0.01, 0.04, 0.03, 0.2]
    expected = multipletests(p, method="holm")[1]
    assert holm(p) == pytest.approx(list(expected))
    assert holm([0.01, None, 0.04]) == pytest.approx([0.02, None, 0.04])
    assert holm([None]) == [None]


def test_comparing_metrics_gives_deltas_p_values_holm_and_tag_deltas() -> None:
    base = {
        i: QueryScores(scores={1: float(10 * i), 2: 50.0}, tags=("odd",) if i % 2 else ("even",))
        for i in range(1, 11)
    }
    other = {
        i: QueryScores(
            scores={1: float(10 * i + (5 if i % 2 else -1)), 2: 50.0 + (i % 3)},
            tags=q.tags,
        )
        for i, q in base.items()
    }
    ndcg, p5 = compare_metrics([NDCG, P5], base, other)
    assert ndcg.n == 10 and ndcg.delta == pytest.approx((5 * 5 - 5 * 1) / 10)  # +2.0
    assert ndcg.base == pytest.approx(55.0) and ndcg.other == pytest.approx(57.0)
    assert [(t.tag, t.count) for t in ndcg.by_tag] == [("even", 5), ("odd", 5)]
    assert [t.delta for t in ndcg.by_tag] == pytest.approx([-1.0, 5.0])
    assert p5.delta == pytest.approx(sum(i % 3 for i in range(1, 11)) / 10)
    raw = [ndcg.p_randomization, p5.p_randomization]
    assert all(p is not None for p in raw)
    assert [ndcg.p_holm, p5.p_holm] == pytest.approx(list(multipletests(raw, method="holm")[1]))
    assert ndcg.p_t is not None and 0 < ndcg.p_t < 1


def test_bulk_lines_carry_tags_and_weight() -> None:
    line = parse_line("star wars\thead, brand ,head\t2.5")
    assert (line.text, line.tags, line.weight) == ("star wars", ("head", "brand"), 2.5)
    assert parse_line("batman") == parse_line("batman\t\t")
    assert parse_line("batman").tags is None and parse_line("batman").weight is None
    for bad in ("x\t\t0", "x\t\t-1", "x\t\tabc", "x\t\tnan", "x\ta\t1\textra", "x\t" + "t" * 41):
        with pytest.raises(BulkLineError):
            parse_line(bad)
