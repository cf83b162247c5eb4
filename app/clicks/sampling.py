"""Query samples from traffic: top-N, uniform, probability proportional to size, strata.

Pure functions over a population of distinct query texts and their frequencies (searches).
Every draw is seeded, and every chosen query carries its inclusion probability π and its
design weight, frequency / π: a case's weighted mean with these weights estimates quality per
search (each sampled query stands for its own searches and those of the queries it
represents), not per distinct query.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["STRATA", "Drawn", "draw", "strata_of"]

Design = Literal["top", "uniform", "pps", "stratified"]
STRATA = ("head", "torso", "tail")
# Shares of all searches: the most frequent queries making the first half are the head, the
# next 30% the torso, the rest the tail.
HEAD_SHARE, TORSO_SHARE = 0.5, 0.8


@dataclass(frozen=True)
class Drawn:
    """One sampled query."""

    index: int
    inclusion_probability: float
    weight: float
    stratum: str | None = None


def strata_of(frequency: np.ndarray) -> np.ndarray:
    """Return each query's stratum (0 head, 1 torso, 2 tail) by its cumulative share."""
    order = np.argsort(-frequency, kind="stable")
    share = np.cumsum(frequency[order]) / max(float(frequency.sum()), 1.0)
    # A query is in the head while the searches before it are under half of all.
    before = share - frequency[order] / max(float(frequency.sum()), 1.0)
    ranked = np.where(before < HEAD_SHARE, 0, np.where(before < TORSO_SHARE, 1, 2))
    found = np.empty_like(ranked)
    found[order] = ranked
    return found


def pps_probabilities(frequency: np.ndarray, size: int) -> np.ndarray:
    """Return π proportional to frequency for a sample of `size`, the largest capped at 1."""
    pi = np.zeros(frequency.size)
    certain = np.zeros(frequency.size, dtype=bool)
    while True:
        left = size - int(certain.sum())
        rest = frequency * ~certain
        pi = np.where(certain, 1.0, left * rest / max(float(rest.sum()), 1e-12))
        over = (pi > 1.0) & ~certain
        if not over.any():
            return np.clip(pi, 0.0, 1.0)
        certain |= over


def _systematic(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return the indices chosen by systematic sampling over a random order (exact π)."""
    order = rng.permutation(pi.size)
    edges = np.concatenate([[0.0], np.cumsum(pi[order])])
    start = rng.random()
    points = start + np.arange(int(np.floor(edges[-1] - start)) + 1)
    hit = np.searchsorted(edges, points, side="right") - 1
    return np.sort(order[hit[(hit >= 0) & (hit < pi.size)]])


def _uniform(candidates: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    take = min(size, candidates.size)
    return np.sort(rng.choice(candidates, size=take, replace=False)) if take else candidates[:0]


def _allocate(frequency: np.ndarray, strata: np.ndarray, size: int) -> dict[int, int]:
    searches = np.array([frequency[strata == s].sum() for s in range(3)], dtype=np.float64)
    counts = np.array([(strata == s).sum() for s in range(3)])
    wanted = np.floor(size * searches / max(float(searches.sum()), 1.0)).astype(int)
    wanted = np.where(counts > 0, np.maximum(wanted, 1), 0)
    return {s: int(min(wanted[s], counts[s])) for s in range(3)}


def draw(
    frequency: Sequence[int],
    *,
    design: Design,
    size: int,
    seed: int,
    strata: Mapping[str, int] | None = None,
) -> list[Drawn]:
    """Return the sampled queries (indices into `frequency`), each with π and its weight."""
    freq = np.asarray(frequency, dtype=np.float64)
    rng = np.random.default_rng(seed)
    n = freq.size
    if design == "top":
        chosen = np.argsort(-freq, kind="stable")[: min(size, n)]
        return [Drawn(int(i), 1.0, float(freq[i])) for i in chosen]
    if design == "uniform":
        pi = min(size, n) / max(n, 1)
        return [Drawn(int(i), pi, float(freq[i]) / pi) for i in _uniform(np.arange(n), size, rng)]
    if design == "pps":
        probabilities = pps_probabilities(freq, min(size, n))
        chosen = _systematic(probabilities, rng)
        return [
            Drawn(int(i), float(probabilities[i]), float(freq[i] / probabilities[i]))
            for i in chosen
        ]
    groups = strata_of(freq)
    sizes = (
        {s: int(strata.get(name, 0)) for s, name in enumerate(STRATA)}
        if strata is not None
        else _allocate(freq, groups, size)
    )
    drawn: list[Drawn] = []
    for s, name in enumerate(STRATA):
        members = np.flatnonzero(groups == s)
        if not members.size or sizes[s] <= 0:
            continue
        pi = min(sizes[s], members.size) / members.size
        drawn += [
            Drawn(int(i), pi, float(freq[i]) / pi, name) for i in _uniform(members, sizes[s], rng)
        ]
    return drawn
