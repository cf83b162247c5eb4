"""A generator of search sessions from known relevances and position biases.

Each session picks a query, shows its docs in a random order (so that every doc is seen at
every rank), and users click as the chosen model says: "pbm" (click = examined at the rank's
bias * attracted by the doc) or "cascade" (read top-down, click when attracted, stop when
satisfied; the dynamic Bayesian network with gamma = 1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.clicks.click_models import Impressions


@dataclass(frozen=True)
class World:
    """The truth: per query, its docs' attractiveness and satisfaction; biases by rank."""

    attract: np.ndarray  # (queries, docs)
    satisfy: np.ndarray  # (queries, docs)
    bias: np.ndarray  # (ranks,), rank 1 first


def make_world(seed: int, *, queries: int = 5, docs: int = 6) -> World:
    """Return a world whose docs' attractiveness is well apart, best first; biases fall."""
    rng = np.random.default_rng(seed)
    # Evenly spaced levels, each moved by less than a third of the gap: a sample can tell them.
    levels = np.linspace(0.85, 0.1, docs)
    gap = levels[0] - levels[1]
    attract = levels[None, :] + rng.uniform(-gap / 3, gap / 3, size=(queries, docs))
    satisfy = rng.uniform(0.3, 0.9, size=(queries, docs))
    bias = 1.0 / np.arange(1, docs + 1) ** 0.7
    return World(attract=attract.copy(), satisfy=satisfy, bias=bias)


def simulate(world: World, *, sessions: int, seed: int, model: str) -> Impressions:
    """Return the impressions of `sessions` sessions; pair = query * docs + doc."""
    rng = np.random.default_rng(seed)
    n_queries, n_docs = world.attract.shape
    query = rng.integers(0, n_queries, size=sessions)
    order = np.argsort(rng.random((sessions, n_docs)), axis=1)  # order[s, r] = doc at rank r
    attract = world.attract[query[:, None], order]
    attracted = rng.random((sessions, n_docs)) < attract
    if model == "pbm":
        clicked = attracted & (rng.random((sessions, n_docs)) < world.bias[None, :])
    else:
        satisfied = rng.random((sessions, n_docs)) < world.satisfy[query[:, None], order]
        stops = attracted & satisfied
        # Examined: no satisfying click above this rank.
        before: np.ndarray = np.cumsum(stops, axis=1) - stops
        clicked = attracted & (before == 0)
    return Impressions(
        session=np.repeat(np.arange(sessions), n_docs).astype(np.int64),
        pair=(query[:, None] * n_docs + order).ravel().astype(np.int64),
        rank=np.tile(np.arange(1, n_docs + 1), sessions).astype(np.int64),
        value=clicked.ravel().astype(np.float64),
        n_pairs=n_queries * n_docs,
    )
