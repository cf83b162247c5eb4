"""Judge, judge test and judge run bodies."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, field_validator

from app.bodies import Name, PositiveTimeout, RequestBody, ResponseBody, TeamIds

# One rule for header names and values, whoever the headers are for.
from app.endpoints.schemas import _check_headers
from app.judges.prompt import unknown_placeholders
from app.outbound.destinations import url_problem

Provider = Literal["openai", "anthropic"]
PairsChoice = Literal["unjudged", "all", "failed"]
MAX_PROMPT_CHARS = 20_000


def _url(value: str) -> str:
    value = value.strip()
    if not value.startswith(("http://", "https://")) or len(value) < 10:
        raise ValueError("must be an http:// or https:// URL")
    problem = url_problem(value)  # unusable, or refused by the outbound policy: 422 now
    if problem is not None:
        raise ValueError(problem)
    return value.rstrip("/")


def _ascii_secret(value: str | None) -> str | None:
    if value and not (value.isascii() and value.isprintable()):
        raise ValueError("must be printable ASCII (it is sent in an HTTP header)")
    return value


def _ascii_headers(value: dict[str, str] | None) -> dict[str, str] | None:
    for name, header in (value or {}).items():
        if not header.isascii():
            raise ValueError(f"the value of header {name!r} must be ASCII")
    return _check_headers(value)


def _prompt(value: str | None) -> str | None:
    if value is None or not value.strip():
        return None
    unknown = unknown_placeholders(value)
    if unknown:
        names = ", ".join("{{" + n + "}}" for n in unknown)
        raise ValueError(
            f"unknown placeholder {names}: use {{{{query}}}}, {{{{information_need}}}}, "
            "{{doc}} and {{scale}}"
        )
    return value


class JudgeCreate(RequestBody):
    name: Name
    provider: Provider
    base_url: str = Field(max_length=2000)
    model: str = Field(min_length=1, max_length=200)
    api_key: str | None = Field(default=None, max_length=4000)
    headers: dict[str, str] = Field(default_factory=dict)
    prompt: str | None = Field(default=None, max_length=MAX_PROMPT_CHARS)
    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    max_output_tokens: int = Field(default=512, ge=1, le=100_000)
    requests_per_minute: int = Field(default=60, ge=1, le=1_000_000)
    tokens_per_minute: int = Field(default=0, ge=0, le=1_000_000_000)
    max_concurrency: int = Field(default=4, ge=1, le=64)
    price_input_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    price_output_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    timeout_s: PositiveTimeout = 30.0
    team_ids: TeamIds = Field(default_factory=list)

    _base_url = field_validator("base_url")(_url)
    _the_prompt = field_validator("prompt")(_prompt)
    _key = field_validator("api_key")(_ascii_secret)

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        return _ascii_headers(value) or {}


class JudgeUpdate(RequestBody):
    name: Name | None = None
    provider: Provider | None = None
    base_url: str | None = Field(default=None, max_length=2000)
    model: str | None = Field(default=None, min_length=1, max_length=200)
    api_key: str | None = Field(default=None, max_length=4000)
    headers: dict[str, str] | None = None
    prompt: str | None = Field(default=None, max_length=MAX_PROMPT_CHARS)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_output_tokens: int | None = Field(default=None, ge=1, le=100_000)
    requests_per_minute: int | None = Field(default=None, ge=1, le=1_000_000)
    tokens_per_minute: int | None = Field(default=None, ge=0, le=1_000_000_000)
    max_concurrency: int | None = Field(default=None, ge=1, le=64)
    price_input_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    price_output_per_mtok: float | None = Field(default=None, ge=0, le=10_000)
    timeout_s: PositiveTimeout | None = None
    team_ids: TeamIds | None = None

    @field_validator("base_url")
    @classmethod
    def _base_url(cls, value: str | None) -> str | None:
        return None if value is None else _url(value)

    _the_prompt = field_validator("prompt")(_prompt)
    _key = field_validator("api_key")(_ascii_secret)

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        return _ascii_headers(value)


class JudgeRead(ResponseBody):
    id: int
    name: str
    owner_id: int
    provider: Provider
    base_url: str
    model: str
    has_api_key: bool
    header_names: list[str]
    prompt: str
    uses_default_prompt: bool
    prompt_sha256: str
    temperature: float
    max_output_tokens: int
    requests_per_minute: int
    tokens_per_minute: int
    max_concurrency: int
    price_input_per_mtok: float | None
    price_output_per_mtok: float | None
    timeout_s: float
    team_ids: list[int] = Field(default_factory=list)


class JudgeTest(RequestBody):
    book_id: int
    n: int = Field(default=5, ge=1, le=20)


class JudgeTestItem(ResponseBody):
    pair_id: int
    query_text: str
    doc_id: str
    # The document's title from the pair's stored fields (None when they hold none).
    doc_title: str | None = None
    prompt: str
    reply: str | None
    rating: float | None
    explanation: str | None
    error: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    latency_ms: float


class JudgeTestRead(ResponseBody):
    judge_id: int
    book_id: int
    # False when the judge has no prices: every cost_usd is then 0 for unknown, not free.
    priced: bool = True
    items: list[JudgeTestItem]


class JudgeRunCreate(RequestBody):
    judge_id: int
    pairs: PairsChoice = "unjudged"
    limit: int | None = Field(default=None, ge=1, le=1_000_000)
    budget_usd: float | None = Field(default=None, gt=0, le=1_000_000)
    budget_tokens: int | None = Field(default=None, gt=0, le=10_000_000_000)
    dry_run: bool = False


class JudgeRunEstimate(ResponseBody):
    pairs: int
    calls: int
    cached: int
    tokens_in_estimate: int
    tokens_out_estimate: int
    cost_usd_estimate: float | None


class FailureRead(ResponseBody):
    pair_id: int
    reason: str


class JudgeRunRead(ResponseBody):
    id: int
    book_id: int
    judge_id: int
    judge_name: str
    status: str
    pairs: PairsChoice
    pairs_total: int
    judged: int
    cached: int
    failed: int
    tokens_in: int
    tokens_out: int
    cost_usd: float
    budget_usd: float | None
    budget_tokens: int | None
    message: str | None
    created_at: datetime
    finished_at: datetime | None
    # Paused, or running in a process that stopped: POST .../resume goes on where it was.
    resumable: bool = False
    # False when the judge has no prices and nothing was costed: cost_usd 0 means unknown.
    priced: bool = True
    failures: list[FailureRead] | None = None
    # The name of the API key of the agent that started it (over MCP), else null.
    agent: str | None = None


class JudgeJudgementRead(ResponseBody):
    judge_id: int
    rating: float | None
    unrateable: bool
    explanation: str | None
    model: str
    prompt_sha256: str
    temperature: float
    tokens_in: int
    tokens_out: int
    latency_ms: float
    cost_usd: float
    cached: bool


class RaterRef(ResponseBody):
    kind: Literal["user", "judge", "clicks"]
    id: int
    name: str


class KappaWith(ResponseBody):
    user_id: int
    # The person's e-mail (the raters' names on the book page).
    name: str = ""
    n: int
    kappa: float | None
    weighted_kappa: float | None


class JudgeCalibration(ResponseBody):
    judge_id: int
    name: str
    pairs: int
    kappa_with: list[KappaWith]
    mean_kappa: float | None
    mean_person_kappa: float | None
    alpha_with_judges: float | None
    alpha_without_judges: float | None
    confusion: list[list[int]]
    verdict: str
