"""One pass of NDCG@10 over a run's stored rankings and ratings, beside pytrec_eval.

Builds 100,000 queries as a finished run stores them (a ranked list of doc dicts per
query, and the query's ratings), then times Relevo's re-scoring path end to end: stored
rows → scoring inputs → NDCG@10 outcomes → case score. pytrec_eval scores the same qrels
and run (``ndcg_cut.10``, linear gain), timed from its input dicts made beforehand and,
like Relevo's, from the stored rows (its conversion included); the per-query scores of
both are checked to agree before anything is printed.

Each side prints the median of ``--repeat`` consecutive passes.

Usage: python benchmarks/score_pass.py [--queries 100000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from typing import Any

import pytrec_eval

from app.models import RunQuery
from app.runs.scoring_input import stored_input
from app.runtime import tune_gc
from app.scoring import PRESETS, score_queries, tally, validate_scorer


def make_run(count: int, seed: int = 11) -> tuple[list[RunQuery], list[dict[str, float]]]:
    """Return stored rows (docs as a run keeps them) and each query's ratings."""
    rng = random.Random(seed)
    rows: list[RunQuery] = []
    ratings: list[dict[str, float]] = []
    for n in range(count):
        candidates = [f"d{i}" for i in range(30)]
        ranked = rng.sample(candidates, 10)
        rated = {d: float(rng.choice((0, 1, 2, 3))) for d in candidates if rng.random() < 0.6}
        docs: list[dict[str, Any]] = [
            {"id": d, "rank": n + 1, "fields": {}, "rating": rated.get(d)}
            for n, d in enumerate(ranked)
        ]
        # Stored rows as the run left them (not added to any session).
        rows.append(RunQuery(text=f"query {n}", docs=docs, num_found=100))
        ratings.append(rated)
    return rows, ratings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tune_gc()  # as every Relevo process does at start

    preset = next(p for p in PRESETS if p.kind == "ndcg")
    config = validate_scorer(
        kind=preset.kind, params=preset.params, scale=preset.scale,
        scale_labels=preset.scale_labels, code=None, max_score=None,
    )  # fmt: skip
    rows, ratings = make_run(args.queries)

    def relevo() -> list[float | None]:
        # As rescore_run does: a generator, so each input is scored as soon as it is made.
        inputs = (stored_input(row, r, {}, {}) for row, r in zip(rows, ratings, strict=True))
        outcomes = score_queries(config, inputs)
        tally(outcomes)
        return [o.score for o in outcomes]

    def convert() -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
        """pytrec_eval's input, made from the same stored rows and ratings."""
        qrels = {str(n): {d: int(g) for d, g in r.items()} for n, r in enumerate(ratings)}
        run = {
            str(n): {d["id"]: float(len(row.docs) - i) for i, d in enumerate(row.docs)}
            for n, row in enumerate(rows)
        }
        return qrels, run

    qrels, run = convert()

    def trec() -> dict[str, dict[str, float]]:
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
        return dict(evaluator.evaluate(run))

    def trec_converting() -> dict[str, dict[str, float]]:
        made_qrels, made_run = convert()
        evaluator = pytrec_eval.RelevanceEvaluator(made_qrels, {"ndcg_cut.10"})
        return dict(evaluator.evaluate(made_run))

    ours, theirs = relevo(), trec()
    for n, score in enumerate(ours):
        expected = theirs[str(n)]["ndcg_cut_10"] * 100 if str(n) in theirs else None
        if score is not None and expected is not None:
            assert abs(score - expected) < 1e-9, (n, score, expected)

    def rate(fn: Any) -> float:
        """Queries/s of the median of ``--repeat`` consecutive passes (not the best one)."""
        times = []
        for _ in range(args.repeat):
            gc.collect()
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return float(args.queries / statistics.median(times))

    ours_rate, bare, converting = rate(relevo), rate(trec), rate(trec_converting)
    print(f"{args.queries:,} queries, 10 ranked docs each, 0-3 ratings; scores agree")
    print(f"relevo NDCG@10, stored rows -> outcomes + case score: {ours_rate:>10,.0f} queries/s")
    print(f"pytrec_eval ndcg_cut.10, its input made beforehand:  {bare:>10,.0f} queries/s")
    print(f"pytrec_eval ndcg_cut.10, stored rows -> its input:   {converting:>10,.0f} queries/s")
    print(
        f"relevo / pytrec_eval: {ours_rate / bare:.2f}x (input made beforehand), "
        f"{ours_rate / converting:.2f}x (conversion included, as relevo's own)"
    )


if __name__ == "__main__":
    main()
