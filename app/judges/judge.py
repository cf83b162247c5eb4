"""A judge's settings as plain data, and what asking it about one pair gave."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["JudgeConfig", "Outcome", "estimate_tokens"]


@dataclass(frozen=True)
class JudgeConfig:
    """A judge's settings as plain data, secrets unsealed (built just before calling)."""

    provider: str
    base_url: str
    model: str
    api_key: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    temperature: float = 0.0
    max_output_tokens: int = 512
    requests_per_minute: int = 60
    tokens_per_minute: int = 0
    max_concurrency: int = 4
    timeout_s: float = 30.0
    price_input_per_mtok: float | None = None
    price_output_per_mtok: float | None = None

    @property
    def priced(self) -> bool:
        """Whether the judge has a price: without one, its costs are unknown (not free)."""
        return self.price_input_per_mtok is not None or self.price_output_per_mtok is not None

    def cost(self, tokens_in: int, tokens_out: int) -> float:
        """Return the price of these tokens in USD (0 where no price is set)."""
        return (
            tokens_in * (self.price_input_per_mtok or 0.0)
            + tokens_out * (self.price_output_per_mtok or 0.0)
        ) / 1_000_000


@dataclass
class Outcome:
    """What asking the judge about one pair gave: a rating, or the reason there is none."""

    rating: float | None = None
    explanation: str | None = None
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    raw_reply: str | None = None


def estimate_tokens(text: str) -> int:
    """Return a rough token count of ``text`` (about four characters a token, rounded up)."""
    return max(1, (len(text) + 3) // 4)
