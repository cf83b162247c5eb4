"""Relevo's score pass beside pytrec_eval (trec_eval's C) and ranx, on the same inputs.

Builds ``--queries`` queries as a run stores them (each a list of ranked doc dicts) with
each query's ratings (a dict doc id -> grade 0-3, some rated docs not returned, some
returned docs unrated). Every tool is timed from those same Python lists and dicts, its
conversion to its own input included:

- Relevo: scoring inputs over the stored docs -> the array pass -> outcomes + case score;
- pytrec_eval: qrels and run dicts -> RelevanceEvaluator -> evaluate;
- ranx: Qrels and Run from dicts -> evaluate (numba, compiled by a warm-up call first).

NDCG@10 (linear gain, trec_eval's ndcg_cut.10) is checked to agree query by query to 1e-9
with pytrec_eval before anything is timed; then the eight built-in presets in one pass are
timed beside pytrec_eval computing four measures (ndcg_cut.10, P.10, map_cut.10,
recip_rank). Prints the median of ``--repeat`` passes, queries/s and the ratios.

Usage: python benchmarks/score_sidebyside.py [--queries 20000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

import pytrec_eval
from ranx import Qrels, Run, evaluate

from app.runtime import tune_gc
from app.scoring import PRESETS, QueryInput, ScorerConfig, tally, validate_scorer
from app.scoring.score import score_many
from app.scoring.types import StoredDocs

Stored = list[list[dict[str, Any]]]


def make_inputs(count: int, seed: int = 11) -> tuple[Stored, list[dict[str, int]]]:
    """Return each query's stored ranked docs (10 of 30 candidates) and its 0-3 ratings."""
    rng = random.Random(seed)
    rows: Stored = []
    ratings: list[dict[str, int]] = []
    for _ in range(count):
        candidates = [f"d{i}" for i in range(30)]
        ranked = rng.sample(candidates, 10)
        rated = {d: rng.choice((0, 1, 2, 3)) for d in candidates if rng.random() < 0.6}
        rows.append([{"id": d, "rank": i + 1, "fields": {}} for i, d in enumerate(ranked)])
        ratings.append(rated)
    return rows, ratings


def config_of(name: str) -> ScorerConfig:
    preset = next(p for p in PRESETS if p.name == name)
    return validate_scorer(
        kind=preset.kind, params=preset.params, scale=preset.scale,
        scale_labels=preset.scale_labels, code=None, max_score=None,
    )  # fmt: skip


def relevo(configs: list[ScorerConfig], rows: Stored, ratings: list[dict[str, int]]) -> Any:
    inputs = [
        QueryInput(docs=StoredDocs(docs).as_sequence(), ratings=r)
        for docs, r in zip(rows, ratings, strict=True)
    ]
    found = score_many(configs, inputs)
    for outcomes in found:
        tally(outcomes)
    return found


def trec(measures: set[str], rows: Stored, ratings: list[dict[str, int]]) -> Any:
    qrels = {str(n): r for n, r in enumerate(ratings) if r}
    run = {
        str(n): {d["id"]: float(len(docs) - i) for i, d in enumerate(docs)}
        for n, docs in enumerate(rows)
    }
    return pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)


def ranx_ndcg(rows: Stored, ratings: list[dict[str, int]]) -> Any:
    qrels = Qrels.from_dict({str(n): r for n, r in enumerate(ratings) if r})
    run = Run.from_dict(
        {
            str(n): {d["id"]: float(len(docs) - i) for i, d in enumerate(docs)}
            for n, docs in enumerate(rows)
        }
    )
    return evaluate(qrels, run, "ndcg@10", return_mean=False)


def median_time(work: Callable[[], object], repeat: int) -> float:
    work()  # warm-up (ranx compiles its kernels on its first call)
    times = []
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tune_gc()  # as every Relevo process does at start
    warnings.filterwarnings("ignore")  # ranx's numba type-safety chatter
    rows, ratings = make_inputs(args.queries)
    ndcg = config_of("NDCG@10")
    presets = [config_of(p.name) for p in PRESETS]

    ours = relevo([ndcg], rows, ratings)[0]
    theirs = trec({"ndcg_cut.10"}, rows, ratings)
    compared = 0
    for n, outcome in enumerate(ours):
        expected = theirs.get(str(n), {}).get("ndcg_cut_10")
        if outcome.score is not None and expected is not None:
            assert abs(outcome.score - 100 * expected) < 1e-9, (n, outcome, expected)
            compared += 1
    print(
        f"{args.queries:,} queries, 10 ranked docs each, 0-3 ratings; NDCG@10 equal to 1e-9 "
        f"with pytrec_eval on all {compared:,} queries both score"
    )
    q = args.queries
    timings = {
        "relevo NDCG@10": median_time(lambda: relevo([ndcg], rows, ratings), args.repeat),
        "pytrec_eval ndcg_cut.10": median_time(
            lambda: trec({"ndcg_cut.10"}, rows, ratings), args.repeat
        ),
        "ranx ndcg@10": median_time(lambda: ranx_ndcg(rows, ratings), args.repeat),
        "relevo 8 presets, one pass": median_time(
            lambda: relevo(presets, rows, ratings), args.repeat
        ),
        "pytrec_eval 4 measures": median_time(
            lambda: trec({"ndcg_cut.10", "P.10", "map_cut.10", "recip_rank"}, rows, ratings),
            args.repeat,
        ),
    }
    print("(each timing from the same Python lists and dicts, conversion included)")
    for label, seconds in timings.items():
        print(f"  {label:<28} {seconds:7.3f} s  {q / seconds:>10,.0f} queries/s")
    one = timings["relevo NDCG@10"]
    print(f"NDCG@10: relevo / pytrec_eval speed {timings['pytrec_eval ndcg_cut.10'] / one:.2f}x")
    print(f"NDCG@10: relevo / ranx speed        {timings['ranx ndcg@10'] / one:.2f}x")
    print(
        "8 presets vs pytrec_eval's 4 measures: relevo speed "
        f"{timings['pytrec_eval 4 measures'] / timings['relevo 8 presets, one pass']:.2f}x"
    )


if __name__ == "__main__":
    main()
