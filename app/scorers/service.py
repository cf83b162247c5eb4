"""Scorers: presets, the user's own, and stateless scoring."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session, selectinload

from app import access
from app.access import visible_clause, visible_scorer
from app.errors import Conflict, Invalid
from app.models import Book, Case, Scorer, User
from app.scorers.config import build_config, config_of
from app.scorers.schemas import (
    ScaleEntry,
    ScorerCreate,
    ScoreRequest,
    ScorerOption,
    ScorerRead,
    ScorerUpdate,
)
from app.scoring import (
    PRESETS,
    Outcome,
    QueryInput,
    ScoreDoc,
    ScorerConfig,
    score_queries,
)
from app.scoring.presets import is_builtin_name
from app.teams import service as teams

DEFAULT_PRESET = "Classic"


def seed_presets(*, session: Session) -> None:
    """Create the built-in presets that are missing; existing ones are left as they are."""
    existing = set(session.scalars(select(Scorer.name).where(Scorer.owner_id.is_(None))))
    for preset in PRESETS:
        if preset.name in existing:
            continue
        session.add(
            Scorer(
                owner_id=None,
                name=preset.name,
                kind=preset.kind,
                params=dict(preset.params),
                scale=list(preset.scale),
                scale_labels=dict(preset.scale_labels) if preset.scale_labels else None,
                max_score=preset.max_score,
            )
        )
    session.flush()


def default_scorer(*, session: Session) -> Scorer:
    """Return the preset new cases use when none is chosen."""
    scorer = session.scalar(
        select(Scorer).where(Scorer.owner_id.is_(None), Scorer.name == DEFAULT_PRESET)
    )
    if scorer is None:
        seed_presets(session=session)
        return default_scorer(session=session)
    return scorer


def list_scorers(*, session: Session, user: User) -> list[Scorer]:
    """Return the presets, then the user's scorers, each group by name."""
    stmt = (
        select(Scorer)
        .where(or_(Scorer.owner_id.is_(None), visible_clause(Scorer, user=user)))
        .options(selectinload(Scorer.teams))
        .order_by(Scorer.owner_id.is_not(None), Scorer.id)
    )
    return list(session.scalars(stmt))


def config_of_spec(spec: ScorerCreate) -> ScorerConfig:
    """Return the validated scoring config of a scorer body (not stored)."""
    return build_config(
        kind=spec.kind,
        params=spec.params,
        scale=spec.scale,
        scale_labels=spec.scale_labels,
        code=spec.code,
        max_score=spec.max_score,
        environment=spec.environment,
    )


def create_scorer(*, session: Session, user: User, body: ScorerCreate) -> Scorer:
    """Validate and store a new scorer of the user's."""
    _not_a_builtin_name(body.name)
    config = config_of_spec(body)
    shared = teams.teams_for_sharing(session=session, user=user, team_ids=body.team_ids)
    scorer = Scorer(owner_id=user.id, name=body.name, kind=body.kind)
    scorer.teams = shared
    _store_config(scorer, config, body.scale_labels)
    session.add(scorer)
    session.flush()
    return scorer


def update_scorer(*, session: Session, user: User, scorer: Scorer, body: ScorerUpdate) -> Scorer:
    """Change a user's scorer and (its owner only) who it is shared with; presets are read-only."""
    teams.set_sharing(session=session, user=user, obj=scorer, team_ids=body.team_ids)
    _writable(scorer)
    if body.name is not None and body.name != scorer.name:
        _not_a_builtin_name(body.name)
    changes = body.model_dump(exclude_unset=True, exclude={"team_ids"})
    merged: dict[str, Any] = {
        "params": scorer.params,
        "scale": scorer.scale,
        "scale_labels": scorer.scale_labels,
        "code": scorer.code,
        "max_score": scorer.max_score,
        "environment": scorer.environment,
    }
    merged.update({k: v for k, v in changes.items() if k != "name"})
    config = build_config(kind=scorer.kind, **merged)
    if body.name is not None:
        scorer.name = body.name
    _store_config(scorer, config, merged["scale_labels"])
    session.flush()
    return scorer


def delete_scorer(*, session: Session, user: User, scorer: Scorer) -> None:
    """Delete (its owner only) a user's scorer that no case uses."""
    access.require_owner(user=user, obj=scorer, action="delete it")
    _writable(scorer)
    used = session.scalar(select(func.count()).select_from(Case).where(Case.scorer_id == scorer.id))
    if used:
        raise Conflict("This scorer is used by cases; give them another scorer first.")
    session.delete(scorer)
    session.flush()


def _not_a_builtin_name(name: str) -> None:
    """Refuse a user's scorer named as a built-in (in any case): a case would not say which."""
    if is_builtin_name(name):
        raise Invalid(
            "name",
            f'"{name}" is the name of a built-in scorer; give yours another name '
            f'(for example "{name} (mine)").',
        )


def _writable(scorer: Scorer) -> None:
    if scorer.owner_id is None:
        raise Conflict("Built-in presets are read-only; create your own scorer instead.")


def _store_config(scorer: Scorer, config: ScorerConfig, labels: Mapping[str, str] | None) -> None:
    scorer.params = dict(config.params)
    scorer.scale = list(config.scale)
    scorer.scale_labels = dict(labels) if labels else None
    scorer.code = config.code
    scorer.max_score = config.max_score
    scorer.environment = config.environment


def to_read(scorer: Scorer) -> ScorerRead:
    """Return the API view of a scorer."""
    return ScorerRead(
        id=scorer.id,
        name=scorer.name,
        kind=scorer.kind,
        params=scorer.params,
        code=scorer.code,
        scale=scorer.scale,
        scale_labels=scorer.scale_labels,
        max_score=scorer.max_score,
        environment=scorer.environment,
        builtin=scorer.owner_id is None,
        team_ids=[] if scorer.owner_id is None else teams.team_ids(scorer),
    )


def score_request(*, session: Session, user: User, body: ScoreRequest) -> Outcome:
    """Score the request's ranking with its stored or inline scorer; nothing is stored."""
    if body.scorer_id is not None:
        scorer = visible_scorer(session=session, user=user, scorer_id=body.scorer_id)
        config = config_of(scorer)
    else:
        assert body.scorer is not None  # the schema asks for exactly one of the two
        config = config_of_spec(body.scorer)
    low, high = config.scale[0], config.scale[-1]
    for doc_id, rating in body.ratings.items():
        if rating is not None and not (math.isfinite(rating) and low <= rating <= high):
            raise Invalid(
                ("ratings", doc_id),
                f"Rating {rating} of {doc_id!r} is outside the scorer's scale [{low:g}, {high:g}].",
            )
    return score_stateless(config=config, body=body, owner=user.id)


def score_stateless(*, config: ScorerConfig, body: ScoreRequest, owner: object = None) -> Outcome:
    """Score one ranking against the given ratings, storing nothing (owner: whose share)."""
    ratings = {doc: value for doc, value in body.ratings.items() if value is not None}
    query = QueryInput(
        docs=[ScoreDoc(id=doc_id) for doc_id in body.docs],
        ratings=ratings,
        num_found=body.num_found,
        query_options=body.options,
        case_options={},
        text=body.query_text,
    )
    return score_queries(config, [query], owner=owner)[0]


def rating_bounds(scorer: Scorer) -> tuple[float, float]:
    """Return the smallest and largest rating the scorer's scale allows."""
    scale = [float(v) for v in scorer.scale]
    return min(scale), max(scale)


def scorer_k(scorer: Scorer, *, rows: int) -> int:
    """Return the depth the scorer looks at: its parameter k, else the case's rows."""
    k = (scorer.params or {}).get("k")
    return int(k) if isinstance(k, int | float) and k >= 1 else rows


def scorer_options(*, session: Session, user: User) -> list[ScorerOption]:
    """Return the scorers the user may pick for a case, as form choices."""
    return [
        ScorerOption(id=s.id, name=s.name, builtin=s.is_builtin_preset)
        for s in list_scorers(session=session, user=user)
    ]


def scale_entries(scorer: Scorer | Book) -> list[ScaleEntry]:
    """Return the scorer's scale with labels and the keyboard digit of each value.

    On a scale of whole numbers within 0-10 the digit is the value itself (0 means 10
    when the scale has 10 but no 0, as on Classic's 1-10); otherwise digits count the
    entries from 0.
    """
    values = [float(v) for v in scorer.scale]
    labels = scorer.scale_labels or {}
    by_value = all(v.is_integer() and 0 <= v <= 10 for v in values) and not (
        0.0 in values and 10.0 in values
    )
    entries = []
    for index, value in enumerate(values):
        if by_value:
            digit: int | None = int(value) % 10
        else:
            digit = index if index < 10 else None
        entries.append(ScaleEntry(value=value, label=_label(labels, value), digit=digit))
    return entries


def zero_gives_ten(entries: Sequence[ScaleEntry]) -> bool:
    """Return whether the 0 key gives the rating 10 (a 1-10 scale keyed by value)."""
    return any(e.digit == 0 and e.value == 10.0 for e in entries)


def _label(labels: Mapping[str, Any], value: float) -> str:
    text = f"{value:g}"
    for key in (text, str(value), str(int(value)) if value.is_integer() else text):
        if labels.get(key):
            return str(labels[key])
    return text
