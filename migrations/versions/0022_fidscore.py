"""Quepid's nDCG@10 as Quepid computes it: imported copies of the old transcription updated

Until this revision, the JavaScript Relevo wrote for Quepid's shipped nDCG@10 used linear
gain and took its ideal from the returned docs, which is not what Quepid computes (gain
2^g - 1, ideal from every rated doc of the query). This revision gives the scorers that
still carry that exact code (made by a Quepid case import) the corrected code, as Quepid
itself re-syncs its communal scorers; a scorer whose code was edited is left as it is. The
code is written out here as the app had it at this revision. The downgrade puts the old
code back on the scorers that carry the new one.

Revision ID: 0022_fidscore
Revises: 0021_judges
Create Date: 2026-11-28
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022_fidscore"
down_revision: str | None = "0021_judges"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_scorers = sa.table(
    "scorers",
    sa.column("kind", sa.String),
    sa.column("code", sa.Text),
    sa.column("environment", sa.String),
)

OLD_CODE = """\
var k = 10;
var grades = [];
for (var i = 0; i < k; i++) grades.push(hasDocRating(i) ? docRating(i) : 0);

// Linear gain; the ideal is the same ten grades, best first (Quepid's local ideal).
var dcgOf = function (list) {
  var sum = 0;
  for (var i = 0; i < k; i++) sum += list[i] / Math.log2(i + 2);
  return sum;
};
var ideal = grades.slice().sort(function (a, b) { return b - a; });
var best = dcgOf(ideal);
setScore(best ? dcgOf(grades) / best : 0);
"""

NEW_CODE = """\
var k = 10;
var grades = [];
for (var i = 0; i < k; i++) grades.push(hasDocRating(i) ? docRating(i) : 0);

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


def _swap(before: str, after: str) -> None:
    op.execute(
        _scorers.update()
        .where(
            _scorers.c.kind == "javascript",
            _scorers.c.environment == "quepid",
            _scorers.c.code == before,
        )
        .values(code=after)
    )


def upgrade() -> None:
    _swap(OLD_CODE, NEW_CODE)


def downgrade() -> None:
    _swap(NEW_CODE, OLD_CODE)
