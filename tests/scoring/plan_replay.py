"""Seeded replays of a campaign with a known truth: what the plan tests and ``benchmarks/plan.py``
share.

A synthetic pool of :data:`POOL_DOCS` documents in strata that differ in the spread of F1's
per-document contributions and in minutes per document (``heterogeneous``), or in neither
(``homogeneous``: the plan has no signal to use). Each replay draws a proportional pilot, then
batches of equal minutes: (a) proportional, as ``goldloop sample --extend`` draws them; (b) as
``plan_batch`` allocates them; (c) the same with a surrogate (a pre-annotator's counts on the
whole pool, good or useless). After every batch it looks, and stops at the first batch whose
anytime-valid half-width is within the target; the fixed-size interval used the same way (its
first batch within the target) is recorded beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from goldloop.sample.strata import plan_draws
from goldloop.scoring.plan import Labelled, Surrogate, Target, plan_batch, ratio_parts, standing

POOL_DOCS = 20_000
SEEDS = 200
TARGET = 0.03
PILOT_DOCS = 150
BATCH_DOCS = 100  # a proportional batch; every strategy's batch costs its expected minutes

# name: (share of the pool, mean gold mentions, recall, precision, minutes per document)
HETEROGENEOUS = {
    # Negative controls: many, read quickly, almost nothing to get wrong.
    "none": (0.60, 0.02, 0.8, 0.9, 1.5),
    "common-low": (0.20, 1.5, 0.95, 0.95, 2.0),
    # Long abstracts dense with mentions: slow to verify, the figure varies a lot.
    "common-high": (0.08, 6.0, 0.95, 0.95, 6.0),
    # Short abstracts with rare relations: quick, and the system's quality varies most.
    "tail": (0.12, 3.0, 0.4, 0.5, 1.0),
}
HOMOGENEOUS = {name: (0.25, 2.5, 0.7, 0.75, 2.0) for name in ("s0", "s1", "s2", "s3")}


@dataclass(frozen=True)
class Pool:
    """Per document: its stratum index, end-to-end counts, minutes; the surrogates' counts."""

    names: list[str]
    strata: np.ndarray
    counts: np.ndarray  # columns of E2E_COLUMNS
    minutes: np.ndarray
    surrogates: dict[str, np.ndarray]

    def truth(self, metric: str = "f1") -> float:
        numerator, denominator = ratio_parts(self.counts, metric)
        return float(numerator.sum() / denominator.sum())


def make_pool(strata: dict[str, tuple[float, float, float, float, float]], seed: int = 1) -> Pool:
    rng = np.random.default_rng(seed)
    names = list(strata)
    sizes = [round(POOL_DOCS * strata[n][0]) for n in names]
    index = np.repeat(np.arange(len(names)), sizes)
    counts = np.zeros((len(index), 7), dtype=np.int64)
    minutes = np.zeros(len(index))
    for h, name in enumerate(names):
        _, mean_gold, recall, precision, mean_minutes = strata[name]
        here = index == h
        k = int(here.sum())
        gold = rng.poisson(mean_gold, k)
        # Recall varies between documents (some are hard throughout): spread within a stratum.
        doc_recall = rng.beta(8 * recall + 0.5, 8 * (1 - recall) + 0.5, k)
        matched = rng.binomial(gold, doc_recall)
        invented = rng.poisson(np.maximum(matched, 0.2) * (1 / precision - 1), k)
        counts[here, 0], counts[here, 1], counts[here, 2] = gold, matched + invented, matched
        counts[here, 3] = matched
        counts[here, 4] = rng.binomial(matched, 0.9)
        minutes[here] = rng.gamma(4.0, mean_minutes / 4.0, k)
    good = counts.copy()
    # A good pre-annotator: most documents' counts exactly, a few off by a mention or two.
    off = rng.random(len(index)) < 0.25
    good[off, 1] += rng.poisson(0.7, int(off.sum()))
    good[off, 2] = np.maximum(good[off, 2] - rng.poisson(0.4, int(off.sum())), 0)
    useless = counts[rng.permutation(len(index))]
    return Pool(names, index, counts, minutes, {"good": good, "useless": useless})


@dataclass(frozen=True)
class Outcome:
    """One replay: minutes and documents at the anytime stop, whether its interval covered the
    truth; the same for the fixed-size interval's (earlier) stop."""

    minutes: float
    documents: int
    covered: bool
    fixed_minutes: float
    fixed_covered: bool


Allocate = Callable[[Labelled, dict[str, int], list[float | None]], dict[str, int]]


def replay(pool: Pool, seed: int, strategy: str, surrogate: str | None = None) -> Outcome:
    """One seeded campaign with ``strategy`` ``proportional`` or ``plan``."""
    rng = np.random.default_rng(10_000 + seed)
    names = pool.names
    order = {h: rng.permutation(np.flatnonzero(pool.strata == h)) for h in range(len(names))}
    used = dict.fromkeys(range(len(names)), 0)
    drawn: list[np.ndarray] = []
    p_incl: list[np.ndarray] = []
    batches: list[np.ndarray] = []
    truth = pool.truth()
    numerator_all, denominator_all = ratio_parts(pool.counts, "f1")
    sur = None if surrogate is None else ratio_parts(pool.surrogates[surrogate], "f1")
    mean_minutes = np.array([pool.minutes[pool.strata == h].mean() for h in range(len(names))])
    sizes = np.bincount(pool.strata)
    batch_minutes = float(BATCH_DOCS * (sizes @ mean_minutes) / sizes.sum())
    fixed: tuple[float, bool] | None = None

    def take(allocation: dict[str, int], batch: int) -> None:
        for h, name in enumerate(names):
            k = allocation.get(name, 0)
            if not k:
                continue
            left = len(order[h]) - used[h]
            chosen = order[h][used[h] : used[h] + k]
            used[h] += k
            drawn.append(chosen)
            p_incl.append(np.full(k, k / left))
            batches.append(np.full(k, batch))

    def remaining() -> dict[str, int]:
        return {name: len(order[h]) - used[h] for h, name in enumerate(names)}

    take(_proportional(PILOT_DOCS, remaining()), 0)
    batch = 0
    while True:
        rows = np.concatenate(drawn)
        labelled = Labelled(
            numerator=numerator_all[rows],
            denominator=denominator_all[rows],
            p_incl=np.concatenate(p_incl),
            batches=np.concatenate(batches),
            cells=_cells(pool.strata[rows], np.concatenate(batches)),
            strata=[names[h] for h in pool.strata[rows]],
            surrogate=None
            if sur is None
            else Surrogate(sur[0][rows], sur[1][rows], float(sur[0].sum()), float(sur[1].sum())),
        )
        now = standing(labelled)
        spent = float(pool.minutes[rows].sum())
        if fixed is None and now.half_width <= TARGET:
            fixed = (spent, abs(now.value - truth) <= now.half_width)
        left = remaining()
        if now.anytime_half_width <= TARGET or sum(left.values()) == 0:
            assert fixed is not None
            return Outcome(
                spent, len(rows), abs(now.value - truth) <= now.anytime_half_width, *fixed
            )
        batch += 1
        if strategy == "proportional":
            allocation = _proportional(BATCH_DOCS, left)
        else:
            plan = plan_batch(
                labelled,
                left,
                list(pool.minutes[rows]),
                Target(budget_minutes=batch_minutes),
            )
            assert plan.next_batch is not None
            allocation = plan.next_batch.by_stratum
        take(allocation, batch)


def _proportional(total: int, remaining: dict[str, int]) -> dict[str, int]:
    """The sampler's allocation in proportion to what each stratum has left."""
    plan = plan_draws(total, remaining, {k: float(v) for k, v in remaining.items()})
    return dict(plan.allocation)


def _cells(strata: np.ndarray, batches: np.ndarray) -> np.ndarray:
    """Stratum × batch cells, a batch's one-document cells pooled (as ``scoring.design``)."""
    keys = strata.astype(np.int64) * 100_000 + batches
    _, inverse, sizes = np.unique(keys, return_inverse=True, return_counts=True)
    lone = sizes[inverse] == 1
    keys = np.where(lone, -1 - batches, keys)  # every lone document of a batch in one cell
    return np.unique(keys, return_inverse=True)[1]


@dataclass(frozen=True)
class Summary:
    """Mean minutes and coverage over the seeds of one strategy."""

    minutes: float
    documents: float
    coverage: float
    fixed_coverage: float


def summarise(outcomes: list[Outcome]) -> Summary:
    return Summary(
        minutes=float(np.mean([o.minutes for o in outcomes])),
        documents=float(np.mean([o.documents for o in outcomes])),
        coverage=float(np.mean([o.covered for o in outcomes])),
        fixed_coverage=float(np.mean([o.fixed_covered for o in outcomes])),
    )


def run(pool: Pool, strategy: str, surrogate: str | None = None, seeds: int = SEEDS) -> Summary:
    return summarise([replay(pool, seed, strategy, surrogate) for seed in range(seeds)])
