"""Quepid's shipped scorers, written for Relevo's Quepid environment.

A Quepid case export usually names its scorer without the code (``{"name": "AP@10"}``).
For each name Quepid ships, this is JavaScript that computes what that Quepid scorer
computes, run with ``environment: "quepid"`` (so NaN becomes 0, as Quepid shows it). These
are not Relevo's built-in presets of the same names, whose numbers differ on purpose (for
example Quepid's nDCG@10 uses gain 2^g - 1 and sums its ideal over every rated doc of the
query, not only the first k).

Each scorer reports Quepid's raw value; ``max_score`` maps it onto Relevo's 0-100 (1 for
the 0-1 metrics; the largest value possible on the scale for CG and DCG).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["QUEPID_NAMES", "SHIPPED", "ShippedScorer", "shipped_scorer"]


@dataclass(frozen=True)
class ShippedScorer:
    """One of Quepid's shipped scorers: its name, our code for it, its scale."""

    name: str
    code: str
    scale: list[int]
    max_score: float
    labels: dict[str, str]
    # The name Quepid gives it, exactly: Quepid finds a case's scorer by case-sensitive name.
    quepid_name: str


_GRADED = {"0": "Poor", "1": "Fair", "2": "Good", "3": "Perfect"}
_BINARY = {"0": "Irrelevant", "1": "Relevant"}
_K = 10
# The largest DCG@10 and CG@10 on a 0-3 scale: every one of the ten docs rated 3.
_MAX_DCG = sum((2**3 - 1) / math.log2(i + 2) for i in range(_K))
_MAX_CG = 3 * _K

# Ratings of the first k positions, 0 where unrated or past the end of the results.
_TOP_GRADES = """
var k = 10;
var grades = [];
for (var i = 0; i < k; i++) grades.push(hasDocRating(i) ? docRating(i) : 0);
"""

_NDCG = (
    _TOP_GRADES
    + """
// Quepid's nDCG@10 since Quepid 8.1: gain 2^g - 1 and a log2(rank + 1) discount. The ideal
// is every rated doc of the query, best first, and its DCG runs over all of them (more than
// k when more than k docs are rated), so a query with many good docs cannot reach 1.
var gainOf = function (grade) { return Math.pow(2, grade) - 1; };
var dcg = 0;
for (var i = 0; i < k; i++) dcg += gainOf(grades[i]) / Math.log2(i + 2);
var ideal = [];
eachDocWithRating(function (doc) { ideal.push(doc.rating); });
ideal.sort(function (a, b) { return b - a; });
var best = 0;
for (var j = 0; j < ideal.length; j++) best += gainOf(ideal[j]) / Math.log2(j + 2);
setScore(best ? dcg / best : 0);
"""
)

_NDCG_CUT = (
    _TOP_GRADES
    + """
// Exponential gain; the ideal is the query's best ratings (all its rated docs), first k.
var top = topRatings(k);
var ideal = [];
for (var i = 0; i < k; i++) ideal.push(top[i] ? top[i] : 0);
var dcgOf = function (list) {
  var sum = 0;
  for (var i = 0; i < k; i++) sum += (Math.pow(2, list[i]) - 1) / Math.log2(i + 2);
  return sum;
};
var best = dcgOf(ideal);
setScore(best ? dcgOf(grades) / best : 0);
"""
)

_DCG = """
var sum = 0;
eachDoc(function (doc, i) {
  sum += (Math.pow(2, docRating(i)) - 1) / Math.log2(i + 2);
}, 10);
setScore(sum);
"""

_CG = """
var sum = 0;
eachDoc(function (doc, i) { sum += docRating(i); }, 10);
setScore(sum);
"""

_PRECISION = """
var relevant = 0, seen = 0;
eachDoc(function (doc, i) {
  if (hasDocRating(i) && docRating(i) > 0) relevant += 1;
  seen += 1;
}, 10);
setScore(seen ? relevant / seen : 0);
"""

_AVERAGE_PRECISION = """
// Precision at each relevant doc of the top k, over every relevant rated doc of the query
// (none relevant: 0 / 0, which Quepid shows as 0).
var depth = Math.min(10, numReturned());
var found = 0, sum = 0;
eachDoc(function (doc, i) {
  if (hasDocRating(i) && docRating(i) > 0) {
    found += 1;
    sum += found / (i + 1);
  }
}, depth);
var relevant = 0;
eachDocWithRating(function (doc) { if (doc.rating > 0) relevant += 1; });
setScore(sum / relevant);
"""

_RECIPROCAL_RANK = """
var first = 0;
eachDoc(function (doc, i) {
  if (first === 0 && hasDocRating(i) && docRating(i) > 0) first = i + 1;
}, 10);
setScore(first > 0 ? 1 / first : 0);
"""

_ERR = """
// Expected reciprocal rank on a 0-3 scale; unrated docs count as 0.
var depth = Math.min(10, numReturned());
var err = 0, trust = 1;
for (var i = 0; i < depth; i++) {
  var grade = hasDocRating(i) ? docRating(i) : 0;
  var useful = (Math.pow(2, grade) - 1) / Math.pow(2, 3);
  err += trust * useful / (i + 1);
  trust *= 1 - useful;
}
setScore(err);
"""

_CLASSIC = """
// Quepid's original scorer: the mean rating on 0-100, less the edit distance from the best.
var score = avgRating100(10);
if (score !== null) score -= editDistanceFromBest(10);
setScore(score);
"""

_ALL = (
    ShippedScorer("NDCG@10", _NDCG.strip() + "\n", [0, 1, 2, 3], 1.0, _GRADED, "nDCG@10"),
    ShippedScorer(
        "NDCG_CUT@10", _NDCG_CUT.strip() + "\n", [0, 1, 2, 3], 1.0, _GRADED, "NDCG_CUT@10"
    ),
    ShippedScorer("DCG@10", _DCG.strip() + "\n", [0, 1, 2, 3], _MAX_DCG, _GRADED, "DCG@10"),
    ShippedScorer("CG@10", _CG.strip() + "\n", [0, 1, 2, 3], float(_MAX_CG), _GRADED, "CG@10"),
    ShippedScorer("P@10", _PRECISION.strip() + "\n", [0, 1], 1.0, _BINARY, "P@10"),
    ShippedScorer("AP@10", _AVERAGE_PRECISION.strip() + "\n", [0, 1], 1.0, _BINARY, "AP@10"),
    ShippedScorer("RR@10", _RECIPROCAL_RANK.strip() + "\n", [0, 1], 1.0, _BINARY, "RR@10"),
    ShippedScorer("ERR@10", _ERR.strip() + "\n", [0, 1, 2, 3], 1.0, _GRADED, "ERR@10"),
    ShippedScorer("Classic", _CLASSIC.strip() + "\n", list(range(1, 11)), 100.0, {}, "v1"),
)

SHIPPED: Mapping[str, ShippedScorer] = {s.name.lower(): s for s in _ALL}
# The names of the scorers Quepid installs (its db/scorers and migrations), case-folded:
# a scorer exported under one of them would be scored by Quepid's own code.
QUEPID_NAMES = frozenset(
    [s.quepid_name.casefold() for s in _ALL]
    + ["ndcg@5", "dcg@5", "cg@5", "p@5", "ap@5", "v1 (legacy)"]
)
# Other names Quepid has used for the same scorers.
# ("v1 (legacy)": Quepid's migrations sync a communal scorer of that name from v1.js.)
_ALIASES = {
    "ndcg_cut@10": "ndcg_cut@10",
    "v1": "classic",
    "v1 (legacy)": "classic",
    "quepid classic": "classic",
}


def shipped_scorer(name: str) -> ShippedScorer | None:
    """Return Quepid's shipped scorer of this name (any case, spaces trimmed), or None."""
    key = " ".join(name.split()).lower()
    return SHIPPED.get(_ALIASES.get(key, key))
