"""Print query-scores per second for each built-in scorer and for JavaScript scorers.

Run with ``python benchmarks/scoring.py``. Rankings are random 10-doc lists over 20 rated
candidates on a 0-3 scale (1-10 for classic). JavaScript goes through the worker process that
``score_queries`` uses; the "in-process" lines run the same engine in this process, to show
what the worker costs.
"""

from __future__ import annotations

import gc
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.scoring import (
    PRESETS,
    QueryInput,
    ScoreDoc,
    ScorerConfig,
    score_queries,
    validate_scorer,
)
from app.scoring.js_bridge import score_javascript_in_process

BUILTIN_QUERIES = 100_000
JS_QUERIES = 10_000
FRESH_ISOLATE_QUERIES = 300

JS_NDCG = """
var k = 10;
var ideal = topRatings(k);
var dcg = 0, idcg = 0;
for (var i = 0; i < k; i++) {
  if (hasDocRating(i)) dcg += docRating(i) / Math.log2(i + 2);
  if (ideal[i]) idcg += ideal[i] / Math.log2(i + 2);
}
setScore(idcg > 0 ? dcg / idcg : null);
"""


def make_queries(count: int, scale: tuple[float, ...], seed: int = 7) -> list[QueryInput]:
    """Return random queries: 10 returned docs out of 20 candidates, most of them rated."""
    rng = random.Random(seed)
    docs = [ScoreDoc(id=f"d{i}") for i in range(20)]
    queries = []
    for _ in range(count):
        ranking = rng.sample(docs, 10)
        ratings = {doc.id: float(rng.choice(scale)) for doc in docs if rng.random() < 0.7}
        queries.append(QueryInput(docs=ranking, ratings=ratings))
    return queries


def rate(
    queries: list[QueryInput], config: ScorerConfig, repeats: int = 3, score: Any = score_queries
) -> float:
    """Return query-scores per second of one score_queries call, best of a few runs."""
    best = math.inf
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        score(config, queries)
        best = min(best, time.perf_counter() - start)
    return len(queries) / best


def main() -> None:
    """Print one line per scorer."""
    for preset in PRESETS:
        config = validate_scorer(
            kind=preset.kind,
            params=preset.params,
            scale=preset.scale,
            scale_labels=preset.scale_labels,
            code=None,
            max_score=None,
        )
        queries = make_queries(BUILTIN_QUERIES, preset.scale)
        per_second = rate(queries, config)
        print(f"{preset.kind:<18} k=10  {per_second:>12,.0f} queries/s")

    js = validate_scorer(
        kind="javascript", params=None, scale=(0, 1, 2, 3), scale_labels=None,
        code=JS_NDCG, max_score=1,
    )  # fmt: skip
    queries = make_queries(JS_QUERIES, (0, 1, 2, 3))
    score_queries(js, queries[:1])  # start the worker outside the measurement
    print(f"{'javascript ndcg':<18} k=10  {rate(queries, js):>12,.0f} queries/s"
          f"  (worker, one isolate, {JS_QUERIES:,} queries)")  # fmt: skip
    in_process = rate(queries, js, score=score_javascript_in_process)
    print(f"{'javascript ndcg':<18} k=10  {in_process:>12,.0f} queries/s"
          f"  (in-process, one isolate, {JS_QUERIES:,} queries)")  # fmt: skip
    few = queries[:FRESH_ISOLATE_QUERIES]
    for label, score in (("worker", score_queries), ("in-process", score_javascript_in_process)):
        start = time.perf_counter()
        for query in few:
            score(js, [query])
        per_call = (time.perf_counter() - start) / len(few)
        print(f"{'javascript ndcg':<18} k=10  {1 / per_call:>12,.0f} queries/s"
              f"  ({label}, one call per query: {per_call * 1000:.1f} ms a call)")  # fmt: skip


if __name__ == "__main__":
    main()
