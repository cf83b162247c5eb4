"""The scorer side of a Quepid import: the case's scorer (Quepid's shipped one, the file's
own code, one the user has, or Relevo's export of a built-in), its extra metrics and the
check that the file's ratings fit its scale."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from app.access import visible_clause
from app.cases import service as case_service
from app.errors import Invalid
from app.interop.quepid_parse import RELEVO_KEY, QuepidCase, QuepidQuery
from app.interop.quepid_parse_scorer import QUEPID_ENVIRONMENT, QUEPID_SUFFIX
from app.interop.quepid_values import MAX_NAME_CHARS, _path
from app.models import Scorer, User
from app.scorers import service as scorer_service
from app.scorers.config import build_config, config_of
from app.scoring.presets import is_builtin_name
from app.scoring.quepid_scorers import ShippedScorer, shipped_scorer
from app.vocabulary import ScorerKind


def quepid_scorer_name(name: str) -> str:
    """Return the name an imported Quepid scorer gets: "AP@10 (Quepid)", never a built-in's."""
    return f"{name}{QUEPID_SUFFIX}"


IMPORTED_SUFFIX = " (imported)"


def _imported_name(name: str, warnings: list[str]) -> str:
    """Return the name for a file's own scorer code: its name, unless a built-in has it."""
    if not is_builtin_name(name):
        return name
    # Other code under a built-in's name (an older Quepid AP@10, say) would be taken for
    # the built-in, which computes other numbers.
    renamed = f"{name.strip()}{IMPORTED_SUFFIX}"
    warnings.append(
        f'The file\'s scorer "{name}" has code of its own, and "{name}" is the name of a '
        f'built-in scorer that computes other numbers: it is imported as "{renamed}".'
    )
    return renamed


def quepid_shipped(name: str) -> ShippedScorer | None:
    """Return Quepid's shipped scorer of this name (also as Relevo names it, "AP@10 (Quepid)"),
    written for Relevo's Quepid environment."""
    stripped = name.strip()
    if stripped.endswith(QUEPID_SUFFIX):
        stripped = stripped[: -len(QUEPID_SUFFIX)]
    return shipped_scorer(stripped)


def scorer_for(
    session: Session, user: User, parsed: QuepidCase, warnings: list[str]
) -> tuple[Scorer, bool]:
    """Return the case's scorer and whether it was created for this import."""
    shipped = quepid_shipped(parsed.scorer.name)
    if parsed.scorer.code is not None:
        return _javascript_scorer(session, user, _own_code(parsed, shipped, warnings))
    if shipped is not None:
        return _javascript_scorer(session, user, _shipped_code(shipped))
    return _named_or_default(session, user, parsed.scorer.name, warnings)


def _own_code(parsed: QuepidCase, shipped: ShippedScorer | None, warnings: list[str]) -> _Wanted:
    """Return the scorer the file's own code makes (Quepid's shipped one when it is its code)."""
    wanted = parsed.scorer
    assert wanted.code is not None
    scale = wanted.scale or (
        [float(v) for v in shipped.scale] if shipped else _scale_of(parsed.queries)
    )
    # Quepid's own scorers of that name set 0-1 (or 0-100) scores: keep their scale.
    top = wanted.max_score or (float(shipped.max_score) if shipped else 100.0)
    same = shipped if shipped is not None and shipped.code == wanted.code else None
    return _Wanted(
        # Quepid's own scorer (its code unchanged) is named as every import names it.
        name=quepid_scorer_name(same.name)
        if same is not None
        else _imported_name(wanted.name, warnings),
        code=wanted.code,
        scale=scale,
        max_score=top,
        environment=wanted.environment or QUEPID_ENVIRONMENT,
        labels=same.labels if same is not None else None,
        former_name=same.name if same is not None else None,
    )


def _shipped_code(shipped: ShippedScorer) -> _Wanted:
    """Return Quepid's shipped scorer, as the file names it without its code."""
    return _Wanted(
        name=quepid_scorer_name(shipped.name),
        code=shipped.code,
        scale=[float(v) for v in shipped.scale],
        max_score=float(shipped.max_score),
        environment=QUEPID_ENVIRONMENT,
        labels=shipped.labels or None,
        former_name=shipped.name,
    )


def _named_or_default(
    session: Session, user: User, name: str, warnings: list[str]
) -> tuple[Scorer, bool]:
    """Return the scorer of this name the user can see (their own first), else the default
    scorer with a warning saying how to get Quepid's numbers."""
    mine = session.scalar(
        select(Scorer)
        .where(Scorer.name == name, visible_clause(Scorer, user=user))
        .order_by(Scorer.owner_id != user.id, Scorer.id)
        .limit(1)
    )
    if mine is not None:
        return mine, False
    fallback = scorer_service.default_scorer(session=session)
    warnings.append(
        f'The Quepid scorer "{name}" is not one of Quepid\'s shipped scorers and the '
        f'file does not carry its code: the case is scored with "{fallback.name}". Create a '
        "JavaScript scorer with its code (environment quepid) and choose it in the case's "
        "settings to get Quepid's numbers."
    )
    return fallback, False


def relevo_scorer(
    session: Session, user: User, spec: Any, loc: tuple[str | int, ...]
) -> tuple[Scorer, bool]:
    """Return the scorer Relevo's export describes: a built-in or one the user can see with
    that name and the same config, else a new one of the user's (whether it was created)."""
    if not isinstance(spec, dict):
        raise Invalid(loc, f'"{_path(loc)}" must be an object describing a scorer.')
    name = spec.get("name")
    kind = spec.get("kind")
    if not isinstance(name, str) or not name.strip() or kind not in set(ScorerKind):
        raise Invalid(loc, f'"{_path(loc)}" needs a scorer\'s "name" and "kind".')
    labels = spec.get("scale_labels")
    try:
        config = build_config(
            kind=kind,
            params=spec.get("params") or {},
            scale=spec.get("scale") or [],
            scale_labels=labels if isinstance(labels, dict) else None,
            code=spec.get("code"),
            max_score=spec.get("max_score"),
            environment=spec.get("environment"),
        )
    except (Invalid, TypeError, ValueError) as exc:
        why = exc.message if isinstance(exc, Invalid) else str(exc)
        raise Invalid(loc, f'"{_path(loc)}" is not a scorer Relevo can use: {why}') from exc
    name = name.strip()[:MAX_NAME_CHARS]
    candidates = session.scalars(
        select(Scorer)
        .where(
            Scorer.name == name, or_(Scorer.owner_id.is_(None), visible_clause(Scorer, user=user))
        )
        .order_by(Scorer.owner_id.is_not(None), Scorer.owner_id != user.id, Scorer.id)
    )
    for scorer in candidates:
        if config_of(scorer) == config:
            return scorer, False
    scorer = Scorer(
        owner_id=user.id,
        # Never a built-in's name: this one computes something else.
        name=f"{name}{IMPORTED_SUFFIX}"[:MAX_NAME_CHARS] if is_builtin_name(name) else name,
        kind=kind,
        params=dict(config.params),
        code=config.code,
        scale=list(config.scale),
        scale_labels=dict(labels) if isinstance(labels, dict) and labels else None,
        max_score=config.max_score,
        environment=config.environment,
    )
    session.add(scorer)
    session.flush()
    return scorer, True


def relevo_metrics(
    session: Session, user: User, scorer: Scorer, relevo: Mapping[str, Any]
) -> tuple[list[int], str]:
    """Return the extra metrics' scorer ids and the aggregate Relevo's export carries."""
    loc: tuple[str | int, ...] = ("options", RELEVO_KEY)
    metrics = relevo.get("metrics") or []
    if not isinstance(metrics, list):
        raise Invalid((*loc, "metrics"), f'"{_path((*loc, "metrics"))}" must be a list.')
    ids = [
        relevo_scorer(session, user, spec, (*loc, "metrics", index))[0].id
        for index, spec in enumerate(metrics)
    ]
    aggregate = relevo.get("aggregate") or "mean"
    if aggregate not in ("mean", "weighted_mean"):
        raise Invalid(
            (*loc, "aggregate"),
            f'"{_path((*loc, "aggregate"))}" must be "mean" or "weighted_mean".',
        )
    ids = case_service.metric_scorers(session=session, user=user, primary_id=scorer.id, ids=ids)
    return ids, str(aggregate)


def _scale_of(queries: list[QuepidQuery]) -> list[float]:
    """Return a whole-number scale covering the ratings (0-3 when there are none)."""
    values = [r for q in queries for r in q.ratings.values()]
    low = math.floor(min(values, default=0.0))
    high = math.ceil(max(values, default=3.0))
    if high - low > 10:
        return sorted(set(values))[:11]
    return [float(v) for v in range(low, max(high, low + 1) + 1)]


@dataclass(frozen=True)
class _Wanted:
    """A JavaScript scorer the import needs."""

    name: str
    code: str
    scale: list[float]
    max_score: float
    environment: str
    labels: Mapping[str, str] | None
    former_name: str | None = None  # what earlier imports named it ("AP@10")


def _javascript_scorer(session: Session, user: User, wanted: _Wanted) -> tuple[Scorer, bool]:
    """Return the user's identical JavaScript scorer (same code, scale, max score and
    environment) of this name, or of its former name, else a new one of this name."""
    name = wanted.name[:MAX_NAME_CHARS]
    names = [name] if wanted.former_name is None else [name, wanted.former_name]
    config = build_config(
        kind=ScorerKind.JAVASCRIPT,
        params=None,
        scale=wanted.scale,
        scale_labels=wanted.labels,
        code=wanted.code,
        max_score=wanted.max_score,
        environment=wanted.environment,
    )
    candidates = session.scalars(
        select(Scorer)
        .where(
            Scorer.owner_id == user.id,
            Scorer.kind == ScorerKind.JAVASCRIPT,
            Scorer.name.in_(names),
        )
        .order_by(Scorer.name != name, Scorer.id)
    )
    for scorer in candidates:
        if (
            scorer.code == config.code
            and [float(v) for v in scorer.scale] == list(config.scale)
            and scorer.max_score == config.max_score
            and scorer.environment == config.environment
        ):
            return scorer, False
    scorer = Scorer(
        owner_id=user.id,
        name=name,
        kind=ScorerKind.JAVASCRIPT,
        params=dict(config.params),
        code=config.code,
        scale=list(config.scale),
        scale_labels=dict(wanted.labels) if wanted.labels else None,
        max_score=config.max_score,
        environment=config.environment,
    )
    session.add(scorer)
    session.flush()
    return scorer, True


def check_scale(scorer: Scorer, parsed: QuepidCase) -> None:
    """Refuse ratings outside the scorer's scale, listing them (nothing is written)."""
    low, high = scorer_service.rating_bounds(scorer)
    off = [
        (index, query.text, doc, rating)
        for index, query in enumerate(parsed.queries)
        for doc, rating in query.ratings.items()
        if not low <= rating <= high
    ]
    if not off:
        return
    shown = "; ".join(f'"{text}" / {doc}: {rating:g}' for _i, text, doc, rating in off[:10])
    more = f" and {len(off) - 10} more" if len(off) > 10 else ""
    raise Invalid(
        ("queries", off[0][0], "ratings"),
        f'{len(off)} ratings are outside the scale of the scorer "{scorer.name}" '
        f"({low:g}-{high:g}): {shown}{more}. Nothing was imported.",
    )
