"""Judges: create, change, list, delete, and the plain config their calls are made with."""

from __future__ import annotations

from typing import cast

import httpx
from sqlalchemy import func, select
from sqlalchemy.orm import Session, selectinload

from app import access
from app.credentials import basic_authorization, origin, split_credentials
from app.errors import Conflict, Invalid, NotFound
from app.judges.judge import JudgeConfig
from app.judges.prompt import DEFAULT_PROMPT, prompt_sha256
from app.judges.schemas import JudgeCreate, JudgeRead, JudgeUpdate, Provider
from app.models import Judge, JudgeRun, User
from app.secret_box import SecretUnreadable, opened
from app.teams import service as teams

ACTIVE = ("queued", "running")


def visible_judge(*, session: Session, user: User, judge_id: int) -> Judge:
    """Return the judge when the user may see (and use) it, else raise NotFound."""
    return access.get_visible(
        session=session, model=Judge, object_id=judge_id, user=user, label="judge"
    )


def list_judges(*, session: Session, user: User) -> list[Judge]:
    """Return the judges the user may see, by name."""
    stmt = (
        select(Judge)
        .where(access.visible_clause(Judge, user=user))
        .options(selectinload(Judge.teams))
        .order_by(Judge.name, Judge.id)
    )
    return list(session.scalars(stmt))


def create_judge(*, session: Session, user: User, body: JudgeCreate) -> Judge:
    """Create and return a judge owned by the user; its key and header values are sealed."""
    shared = teams.teams_for_sharing(session=session, user=user, team_ids=body.team_ids)
    values = body.model_dump(exclude={"team_ids", "api_key", "headers"})
    values["base_url"], credentials = _split_credentials(values["base_url"])
    judge = Judge(owner_id=user.id, **values)
    judge.api_key_sealed = body.api_key or None
    judge.headers = _with_credentials(dict(body.headers), credentials)
    judge.teams = shared
    session.add(judge)
    session.flush()
    return judge


def update_judge(*, session: Session, user: User, judge: Judge, body: JudgeUpdate) -> Judge:
    """Apply the given fields; an empty api_key removes the key.

    Pointing the judge at another origin (scheme, host or port) drops its key and headers
    unless they are sent again in the same request (null is not sent): a key never follows
    a URL elsewhere. Credentials in the URL become its Authorization header, sealed.
    """
    teams.set_sharing(session=session, user=user, obj=judge, team_ids=body.team_ids)
    changes = body.model_dump(exclude_unset=True, exclude={"team_ids"})
    new_url = changes.get("base_url")
    if new_url is not None:
        changes["base_url"], credentials = _split_credentials(new_url)
        moved = origin(changes["base_url"]) != origin(judge.base_url)
        if credentials is not None:
            sent = changes.get("headers")
            kept = sent if sent is not None else {} if moved else _stored_headers(judge)
            changes["headers"] = _with_credentials(kept, credentials, sent=sent is not None)
        if moved:
            if changes.get("api_key") is None:
                changes["api_key"] = ""
            if changes.get("headers") is None:
                changes["headers"] = {}
    if "api_key" in changes:
        key = changes.pop("api_key")
        if key is not None:
            judge.api_key_sealed = key or None
    if "headers" in changes:
        headers = changes.pop("headers")
        if headers is not None:
            judge.headers = dict(headers)
    if "prompt" in changes:
        judge.prompt = changes.pop("prompt")  # None or "" is the default prompt again
    for name, value in changes.items():
        if value is not None or name.startswith("price_"):
            setattr(judge, name, value)
    session.flush()
    return judge


def _split_credentials(url: str) -> tuple[str, str | None]:
    try:
        return split_credentials(url)
    except httpx.InvalidURL as exc:
        raise Invalid("base_url", "That is not a valid URL.") from exc


def _with_credentials(
    headers: dict[str, str], credentials: str | None, *, sent: bool = True
) -> dict[str, str]:
    """Return the headers with a URL's credentials as the Authorization header it meant."""
    if credentials is None:
        return headers
    given = [name for name in headers if name.lower() == "authorization"]
    if given and sent:
        raise Invalid(
            "base_url", "Give credentials either in the URL or as an Authorization header."
        )
    kept = {name: value for name, value in headers.items() if name not in given}
    return {**kept, "Authorization": basic_authorization(credentials)}


def _stored_headers(judge: Judge) -> dict[str, str]:
    try:
        return dict(opened(judge, "headers"))
    except SecretUnreadable:
        return {}  # replaced by what is sent


def delete_judge(*, session: Session, user: User, judge: Judge) -> None:
    """Delete (its owner only) a judge with no run under way (its judgements go with it)."""
    access.require_owner(user=user, obj=judge, action="delete it")
    active = session.scalar(
        select(func.count())
        .select_from(JudgeRun)
        .where(JudgeRun.judge_id == judge.id, JudgeRun.status.in_(ACTIVE))
    )
    if active:
        raise Conflict("This judge has a run under way; cancel it first.")
    session.delete(judge)
    session.flush()


def template_of(judge: Judge) -> str:
    """Return the prompt template the judge uses (its own, or the default)."""
    return judge.prompt or DEFAULT_PROMPT


def to_read(judge: Judge) -> JudgeRead:
    """Return the public view of a judge: secrets reduced to their presence."""
    template = template_of(judge)
    return JudgeRead(
        id=judge.id,
        name=judge.name,
        owner_id=judge.owner_id,
        provider=cast(Provider, judge.provider),
        base_url=judge.base_url,
        model=judge.model,
        has_api_key=bool(judge.api_key_sealed),
        header_names=sorted(judge.headers or {}),
        prompt=template,
        uses_default_prompt=not judge.prompt,
        prompt_sha256=prompt_sha256(template),
        temperature=judge.temperature,
        max_output_tokens=judge.max_output_tokens,
        requests_per_minute=judge.requests_per_minute,
        tokens_per_minute=judge.tokens_per_minute,
        max_concurrency=judge.max_concurrency,
        price_input_per_mtok=judge.price_input_per_mtok,
        price_output_per_mtok=judge.price_output_per_mtok,
        timeout_s=judge.timeout_s,
        team_ids=teams.team_ids(judge),
    )


def config_of(judge: Judge) -> JudgeConfig:
    """Return the plain settings a call is made with, secrets unsealed.

    Raises Conflict when a stored secret cannot be decrypted with the configured keys.
    """
    try:
        api_key = opened(judge, "api_key_sealed")
        headers = opened(judge, "headers")
    except SecretUnreadable as exc:
        raise Conflict(f"The judge's key or headers cannot be read: {exc}") from exc
    return JudgeConfig(
        provider=judge.provider,
        base_url=judge.base_url,
        model=judge.model,
        api_key=api_key,
        headers=tuple(sorted((str(k), str(v)) for k, v in headers.items())),
        temperature=judge.temperature,
        max_output_tokens=judge.max_output_tokens,
        requests_per_minute=judge.requests_per_minute,
        tokens_per_minute=judge.tokens_per_minute,
        max_concurrency=judge.max_concurrency,
        timeout_s=judge.timeout_s,
        price_input_per_mtok=judge.price_input_per_mtok,
        price_output_per_mtok=judge.price_output_per_mtok,
    )


def is_priced(judge: Judge) -> bool:
    """Whether the judge has a price: without one, its costs are unknown (not free)."""
    return judge.price_input_per_mtok is not None or judge.price_output_per_mtok is not None


def judge_names(*, session: Session, judge_ids: list[int]) -> dict[int, str]:
    """Return judge id → name for these ids (missing ids are left out)."""
    if not judge_ids:
        return {}
    rows = session.execute(select(Judge.id, Judge.name).where(Judge.id.in_(judge_ids)))
    return {i: n for i, n in rows}


def get_judge_for_book(*, session: Session, user: User, judge_id: int) -> Judge:
    """Return a judge the user may use on a book (404 otherwise, said as 'no judge')."""
    try:
        return visible_judge(session=session, user=user, judge_id=judge_id)
    except NotFound:
        raise NotFound(f"No judge with id {judge_id}.") from None
