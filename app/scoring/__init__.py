"""Relevo's scoring: pure functions from ranked results and ratings to scores (SCORING.md).

No I/O, no ORM: the built-in metrics score many queries at once over numpy arrays
(``app.scoring.batch``; ``app.scoring.metrics`` keeps their per-query definitions, the
reference the tests hold the arrays to); JavaScript scorers run in a V8
isolate with the Quepid helper environment, inside a worker process
(``app.sandbox``) so that a scorer that aborts V8 fails only its own queries.

The JavaScript sandbox is a library of its own, ``app.sandbox``, below scoring: it imports
only ``app.vocabulary`` (an import-linter contract holds it), takes and gives its own types
(``app.sandbox.types``), and ``js_bridge`` is where scoring turns its configs, queries and
outcomes into them and back.
"""

from app.sandbox.limits import JS_HEAP_LIMIT_BYTES, JS_TIME_LIMIT_S, Limits
from app.scoring.errors import ScorerConfigError, ScorerError, ScorerSyntaxError
from app.scoring.js_bridge import check_javascript
from app.scoring.presets import PRESETS, Preset
from app.scoring.score import (
    Tally,
    case_score,
    score_many,
    score_pass,
    score_queries,
    score_query,
    tally,
)
from app.scoring.types import Outcome, QueryInput, ScoreDoc, ScorerConfig
from app.scoring.validation import KINDS, validate_scorer

__all__ = [
    "JS_HEAP_LIMIT_BYTES",
    "JS_TIME_LIMIT_S",
    "KINDS",
    "PRESETS",
    "Limits",
    "Outcome",
    "Preset",
    "QueryInput",
    "ScoreDoc",
    "ScorerConfig",
    "ScorerConfigError",
    "ScorerError",
    "ScorerSyntaxError",
    "Tally",
    "case_score",
    "check_javascript",
    "score_many",
    "score_pass",
    "score_queries",
    "score_query",
    "tally",
    "validate_scorer",
]
