"""Relevo's built-in metrics written as JavaScript for Quepid's scorer environment.

Quepid has no scorer that computes Relevo's built-ins (its P@10 reports 0-1 and scores a
query without relevant ratings 0, its nDCG@10 uses another ideal, its v1 under-counts the
edit distance...). A case export whose scorer is a built-in carries this code, so that the
user can create that scorer in Quepid and get the same numbers there: Relevo's score
(0-100, SCORING.md's definition, negative grades read as 0), or no score (``null``) where
Relevo leaves the query unscored. Quepid reads the ratings of ``bestDocs`` through
``parseInt``, so the numbers agree on whole-number ratings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from app.scoring.validation import normalize_params
from app.vocabulary import ScorerKind

__all__ = ["builtin_code"]

# Every kind starts from the same facts: the ratings of the returned docs (null when
# unrated) and of every rated doc of the query.
_PRELUDE = """\
var k = %(k)s, top = %(top)s;
var returned = [];
for (var i = 0; i < numReturned(); i++) returned.push(hasDocRating(i) ? docRating(i) : null);
var all = [];
eachDocWithRating(function (doc) { all.push(doc.rating); });
var sumOver = function (gains) {
  var total = 0;
  for (var i = 0; i < gains.length; i++) total += gains[i] / Math.log2(i + 2);
  return total;
};
var largest = function (list) {
  return list.slice().sort(function (a, b) { return b - a; }).slice(0, k);
};
"""

_NDCG = """\
// NDCG@k: gain %(gain)s, ideal "%(ideal)s", unrated docs %(unrated)s.
var gainOf = function (r) { r = Math.max(r, 0); return %(gain_js)s; };
var rated = returned.filter(function (r) { return r !== null; });
var actual = %(actual_js)s;
var ideal = %(ideal_js)s;
var idcg = %(idcg_js)s;
if (all.length === 0) setScore(null);
else if (returned.length === 0) setScore(0);
else if (idcg <= 0) setScore(null);
else setScore(100 * (sumOver(actual.map(gainOf)) / idcg));
"""

_DCG = """\
// DCG@k with gain %(gain)s, against gain(top) at every one of the k positions.
var gainOf = function (r) { r = Math.max(r, 0); return %(gain_js)s; };
var most = [];
for (var i = 0; i < k; i++) most.push(top);
var gains = returned.slice(0, k).map(function (r) { return gainOf(r === null ? 0 : r); });
if (all.length === 0) setScore(null);
else setScore(100 * sumOver(gains) / sumOver(most.map(gainOf)));
"""

_CG = """\
// CG@k against k x top.
var sum = 0;
returned.slice(0, k).forEach(function (r) { sum += r === null ? 0 : Math.max(r, 0); });
if (all.length === 0) setScore(null);
else setScore(100 * sum / (k * top));
"""

_FLAGS = """\
// Relevant: rated %(threshold)s or more.
var threshold = %(threshold)s;
var flags = returned.slice(0, k).map(function (r) { return r !== null && r >= threshold; });
"""

_PRECISION = """\
var hits = flags.filter(function (f) { return f; }).length;
if (all.length === 0) setScore(null);
else setScore(100 * (flags.length ? hits / flags.length : 0));
"""

_AVERAGE_PRECISION = """\
var relevant = all.filter(function (r) { return r >= threshold; }).length;
var hits = 0, total = 0;
flags.forEach(function (f, i) { if (f) { hits += 1; total += hits / (i + 1); } });
if (all.length === 0 || relevant === 0) setScore(null);
else setScore(100 * (total / relevant));
"""

_RECIPROCAL_RANK = """\
var first = flags.indexOf(true);
if (all.length === 0) setScore(null);
else setScore(100 * (first >= 0 ? 1 / (first + 1) : 0));
"""

_ERR = """\
// ERR@k: R = (2^grade - 1) / 2^top, unrated docs 0.
var err = 0, going = 1;
returned.slice(0, k).forEach(function (r, i) {
  var stop = r === null ? 0 : (Math.pow(2, Math.max(r, 0)) - 1) / Math.pow(2, top);
  err += going * stop / (i + 1);
  going *= 1 - stop;
});
if (all.length === 0) setScore(null);
else setScore(100 * err);
"""

_CLASSIC = """\
// Classic: floor(mean rating of the top k x 100 / top) less the edit distance between the
// top k's ratings and the best ratings (true Levenshtein, unlike Quepid's v1).
var shown = returned.slice(0, k).map(function (r) { return r === null ? null : Math.max(r, 0); });
var known = shown.filter(function (r) { return r !== null; });
var best = largest(all.map(function (r) { return Math.max(r, 0); }));
while (best.length < shown.length) best.push(null);
var distance = function (a, b) {
  var row = [];
  for (var j = 0; j <= b.length; j++) row.push(j);
  for (var i = 1; i <= a.length; i++) {
    var next = [i];
    for (var j = 1; j <= b.length; j++) {
      var swap = row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1);
      next.push(Math.min(row[j] + 1, next[j - 1] + 1, swap));
    }
    row = next;
  }
  return row[b.length];
};
if (all.length === 0 || known.length === 0) setScore(null);
else {
  var total = 0;
  known.forEach(function (r) { total += r; });
  setScore(Math.max(0, Math.floor(total / known.length * 100 / top) - distance(shown, best)));
}
"""


def _number(value: float) -> str:
    return json.dumps(int(value) if float(value).is_integer() else float(value))


def _ndcg(params: Mapping[str, Any]) -> str:
    exponential = params["gain"] == "exponential"
    skip = params["unrated"] == "skip"
    actual = (
        "rated.slice(0, k)"
        if skip
        else "returned.slice(0, k).map(function (r) { return r === null ? 0 : r; })"
    )
    ideal = {"rated": "largest(all)", "results": "largest(rated)", "max": "[]"}[params["ideal"]]
    idcg = (
        "sumOver(Array.apply(null, Array(k)).map(function () { return gainOf(top); }))"
        if params["ideal"] == "max"
        else "sumOver(ideal.map(gainOf))"
    )
    return _NDCG % {
        "gain": params["gain"],
        "ideal": params["ideal"],
        "unrated": "skipped" if skip else "as 0",
        "gain_js": "Math.pow(2, r) - 1" if exponential else "r",
        "actual_js": actual,
        "ideal_js": ideal,
        "idcg_js": idcg,
    }


def builtin_code(kind: str, params: Mapping[str, Any] | None, scale: list[float]) -> str:
    """Return JavaScript for Quepid that gives this built-in's score (0-100) or none."""
    full = normalize_params(kind, params, scale)
    head = _PRELUDE % {"k": full.get("k", 10), "top": _number(max(scale))}
    if kind == ScorerKind.NDCG:
        body = _ndcg(full)
    elif kind == ScorerKind.DCG:
        exponential = full["gain"] == "exponential"
        gain_js = "Math.pow(2, r) - 1" if exponential else "r"
        body = _DCG % {"gain": full["gain"], "gain_js": gain_js}
    elif kind == ScorerKind.CG:
        body = _CG
    elif kind == ScorerKind.ERR:
        body = _ERR
    elif kind == ScorerKind.CLASSIC:
        body = _CLASSIC
    else:
        flags = _FLAGS % {"threshold": _number(full["threshold"])}
        body = (
            flags
            + {
                ScorerKind.PRECISION: _PRECISION,
                ScorerKind.AVERAGE_PRECISION: _AVERAGE_PRECISION,
                ScorerKind.RECIPROCAL_RANK: _RECIPROCAL_RANK,
            }[ScorerKind(kind)]
        )
    return head + body
