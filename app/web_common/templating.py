"""Jinja2 setup shared by the page routers, with the small display helpers templates use."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.templating import Jinja2Templates
from jinja2 import StrictUndefined
from starlette.responses import Response

from app.search import adapter_for
from app.search.explain import explain_view
from app.security import new_csrf_token
from app.vocabulary import (
    ACTIVE_RUN_STATUSES,
    Engine,
    HttpMethod,
    QueryStatus,
    RunStatus,
    is_partial,
)
from app.web_common.charts import range_hue, score_chart
from app.web_common.urls import url_for

TEMPLATES_DIR = Path(__file__).resolve().parent.parent.parent / "templates"
templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
# A name a template uses but no handler passes is a bug to see at once, not an empty string.
templates.env.undefined = StrictUndefined
# The JSON twin a page declares in its head (macros.html: alternate), read back for the header.
_TWIN_LINK = re.compile(rb'<link rel="alternate" type="application/json" href="([^"]*)">')
NO_VALUE = "\u2013"  # an en dash stands for "no score yet"


def score_hue(score: float | None) -> int:
    """Return the hsl hue of a 0-100 score: 0 is red, 100 is green."""
    if score is None:
        return 0
    return round(max(0.0, min(100.0, score)) * 1.2)


def scale_hue(value: float, scale: Sequence[Any]) -> int:
    """Return the hue of a rating by its place on the scale, lowest red to highest green."""
    values = [float(getattr(e, "value", e)) for e in scale]
    low, high = min(values), max(values)
    return score_hue(100.0 if high == low else (value - low) * 100.0 / (high - low))


def fmt_score(score: float | None) -> str:
    """Return a score rounded for display, or a dash when there is none."""
    return NO_VALUE if score is None else str(round(score))


def fmt_number(value: float | None) -> str:
    """Return a number without a needless '.0' (3.0 → '3', 0.5 → '0.5')."""
    return "" if value is None else f"{value:g}"


def fmt_delta(value: float | None, places: int = 1) -> str:
    """Return a signed change ("+2.5", "-0.3"), "0.0" for one that rounds to nothing (never
    "-0.0"), or a dash when there is none."""
    if value is None:
        return NO_VALUE
    shown = f"{value:+.{places}f}"
    return shown[1:] if float(shown) == 0 else shown


def fmt_time(value: datetime | None) -> str:
    """Return a timestamp to the minute, UTC."""
    return NO_VALUE if value is None else value.strftime("%Y-%m-%d %H:%M")


def fmt_duration(started: datetime | None, finished: datetime | None) -> str:
    """Return how long a run took, in seconds."""
    if started is None or finished is None:
        return NO_VALUE
    return f"{(finished - started).total_seconds():.1f} s"


Point = tuple[float, float]


def chart_points(
    scores: Sequence[float | None], width: float, height: float, pad: float = 2.0
) -> list[Point | None]:
    """Return SVG coordinates of scores (0-100) spread evenly across a width, None where a
    score is missing: the missing value keeps its place, so the chart shows a gap there."""
    if not scores:
        return []
    step = (width - 2 * pad) / max(1, len(scores) - 1)
    inner = height - 2 * pad
    return [
        None
        if s is None
        else (
            round(pad + i * step, 1),
            round(pad + inner - max(0.0, min(100.0, s)) * inner / 100, 1),
        )
        for i, s in enumerate(scores)
    ]


def chart_segments(points: Sequence[Point | None]) -> list[list[Point]]:
    """Return the runs of consecutive present points: a missing one ends a line, never
    joins its neighbours or drops to 0."""
    segments: list[list[Point]] = [[]]
    for point in points:
        if point is None:
            if segments[-1]:
                segments.append([])
        else:
            segments[-1].append(point)
    return [segment for segment in segments if segment]


def polyline(points: Sequence[Point]) -> str:
    """Return the `points` attribute of an SVG polyline."""
    return " ".join(f"{x},{y}" for x, y in points)


def rated(scored: int | None, total: int | None, errors: int = 0, unscored: int = 0) -> str | None:
    """Return the rating coverage of a score that is not partial ("23 of 25 queries rated"),
    or None when every query was scored (or the score is partial: coverage says why)."""
    if scored is None or not total or not unscored:
        return None
    if is_partial(scored, total, errors, unscored):
        return None
    return f"{total - unscored} of {total} queries rated"


def coverage(
    scored: int | None, total: int | None, errors: int = 0, unscored: int = 0
) -> str | None:
    """Return why a partial score covers fewer than all queries ("21 of 25 queries: 4
    errors"), or None when it is not partial (unrated queries alone: see rated)."""
    if scored is None or not is_partial(scored, total, errors, unscored):
        return None
    assert total is not None  # is_partial says so
    reasons = []
    if errors:
        reasons.append(f"{errors} error{'' if errors == 1 else 's'}")
    if unscored:
        reasons.append(f"{unscored} unscored")
    missing = total - scored - errors - unscored
    if missing > 0:
        reasons.append(f"{missing} not run")
    why = f": {', '.join(reasons)}" if reasons else ""
    return f"{scored} of {total} queries{why}"


def run_state(run: Any) -> str:
    """Return the status to show for a run: one where every query errored shows as failed."""
    status = str(run.status)
    if status == RunStatus.FINISHED and run.total and run.errors == run.total:
        return str(RunStatus.FAILED)
    return status


def knobs_text(knobs: dict[str, Any] | None) -> str:
    """Return a run's knob values by name ("boost=2, fuzziness=1"), or "" when it has none."""
    if not knobs:
        return ""
    return ", ".join(
        f"{name}={value:g}" if isinstance(value, (int, float)) else f"{name}={value}"
        for name, value in sorted(knobs.items())
    )


def run_label(run_id: int, try_number: int, knobs: dict[str, Any] | None = None) -> str:
    """Return how a run is named wherever one is chosen or listed: "Run 12 · try 3 ·
    fuzziness=1", so that two runs of a sweep over the same try can be told apart."""
    label = f"Run {run_id} · try {try_number}"
    return f"{label} · {knobs_text(knobs)}" if knobs else label


def pretty_json(value: Any) -> str:
    """Return a value as indented JSON text (escaped by the template like any text)."""
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


templates.env.globals.update(
    url_for=url_for,
    adapter_for=adapter_for,
    score_hue=score_hue,
    scale_hue=scale_hue,
    fmt_score=fmt_score,
    fmt_number=fmt_number,
    fmt_delta=fmt_delta,
    fmt_time=fmt_time,
    fmt_duration=fmt_duration,
    chart_points=chart_points,
    chart_segments=chart_segments,
    coverage=coverage,
    rated=rated,
    knobs_text=knobs_text,
    range_hue=range_hue,
    score_chart=score_chart,
    run_label=run_label,
    polyline=polyline,
    pretty_json=pretty_json,
    explain_view=explain_view,
    run_state=run_state,
    # The domain's words, so that templates compare with them instead of spelling them out.
    ACTIVE_RUN_STATUSES=ACTIVE_RUN_STATUSES,
    Engine=Engine,
    HttpMethod=HttpMethod,
    QueryStatus=QueryStatus,
    RunStatus=RunStatus,
)


def csrf_token(request: Request) -> str:
    """Return the session's CSRF token, creating it on first use."""
    token = request.session.get("csrf")
    if not isinstance(token, str):
        token = new_csrf_token()
        request.session["csrf"] = token
    return token


def is_htmx(request: Request) -> bool:
    """Return whether htmx sent the request (so a fragment, not a page, is wanted)."""
    return request.headers.get("hx-request") == "true"


def render(
    request: Request,
    name: str,
    context: dict[str, Any],
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    """Render a page with the CSRF token in its context; a page that names its JSON twin in
    its head also gets the twin in a `Link` header, so both come from the one declaration."""
    # base.html shows the navigation only to a signed-in user; pages without one pass none.
    full = {"csrf_token": csrf_token(request), "user": None, **context}
    response = templates.TemplateResponse(
        request, name, full, status_code=status_code, headers=headers
    )
    body = bytes(response.body)  # bytes already: no copy
    head_end = body.find(b"</head>")
    twin = _TWIN_LINK.search(body, 0, head_end) if head_end >= 0 else None
    if twin is not None:
        href = html.unescape(twin.group(1).decode())
        response.headers["Link"] = f'<{href}>; rel="alternate"; type="application/json"'
    return response
