"""Strata, allocation and the draw.

A document's stratum is its year tercile × verb-mention density × tail, named
``y{0,1,2}-{none|low|high}[-tail|-common]`` (``none`` strata carry no tail suffix: they are the
negative controls). Boundaries come from the whole pool, so a stratum means the same thing in
every batch. A batch is allocated over strata by largest remainder; a stratum asked for more
than it holds is capped and its surplus is allocated again over the others. Every non-empty
stratum gets at least one draw, so every remaining document has a non-zero inclusion
probability: when a batch is smaller than the number of non-empty strata, the smallest strata
are merged into one stratum, ``merged``, first.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Types only: the CLI reads ROLES from here to write its help, without the pool's readers.
    from goldloop.sample.pool import PoolDoc

ROLES = ("primary", "double", "reserve", "blind")
# A blind document is annotated without candidates in NAME-blind and with them in NAME, by two
# people: the paired documents that measure what pre-annotation saves and anchors (README,
# "What pre-annotation costs and saves"). Last, so a batch without blind documents draws exactly
# as before; listed in a report only when asked for, so such a report reads as before.
OPTIONAL_ROLES = ("blind",)
MERGED = "merged"


@dataclass(frozen=True)
class Boundaries:
    """Cut points computed over the whole pool."""

    year_cuts: tuple[float, float]
    density_median: float
    common: frozenset[str]  # the tail_top_k canonical ids present in most documents

    def stratum(self, doc: PoolDoc) -> str:
        year = 0 if doc.year <= self.year_cuts[0] else 1 if doc.year <= self.year_cuts[1] else 2
        verbs = doc.n_verb_mentions
        if verbs == 0:
            return f"y{year}-none"
        density = "low" if verbs <= self.density_median else "high"
        tail = "tail" if doc.entity_ids - self.common else "common"
        return f"y{year}-{density}-{tail}"


def boundaries(pool: Iterable[PoolDoc], tail_top_k: int) -> Boundaries:
    docs = list(pool)
    if not docs:
        return Boundaries((math.inf, math.inf), 0.0, frozenset())
    import numpy as np  # here: the CLI's help reads ROLES from this module

    low, high = np.quantile([d.year for d in docs], [1 / 3, 2 / 3])
    positive = [d.n_verb_mentions for d in docs if d.n_verb_mentions > 0]
    frequency = Counter(eid for d in docs for eid in d.entity_ids)
    ranked = sorted(frequency, key=lambda eid: (-frequency[eid], eid))
    return Boundaries(
        year_cuts=(float(low), float(high)),
        density_median=float(statistics.median(positive)) if positive else 0.0,
        common=frozenset(ranked[:tail_top_k]),
    )


def largest_remainder(total: int, weights: Mapping[str, float]) -> dict[str, int]:
    """Split ``total`` in proportion to ``weights``; leftover units go to the largest remainders
    (ties by name, so the split is deterministic)."""
    positive = {k: w for k, w in weights.items() if w > 0}
    if total <= 0 or not positive:
        return {k: 0 for k in weights}
    scale = sum(positive.values())
    quotas = {k: total * w / scale for k, w in positive.items()}
    shares = {k: math.floor(q) for k, q in quotas.items()}
    leftover = total - sum(shares.values())
    for k in sorted(quotas, key=lambda k: (-(quotas[k] - shares[k]), k))[:leftover]:
        shares[k] += 1
    return {k: shares.get(k, 0) for k in weights}


def allocate(total: int, caps: Mapping[str, int], weights: Mapping[str, float]) -> dict[str, int]:
    """Largest-remainder allocation with caps: a capped stratum's surplus is re-split over the
    strata with room left, by weight (by room once no weighted stratum has any)."""
    alloc = {k: 0 for k in caps}
    target = min(total, sum(caps.values()))
    while (remaining := target - sum(alloc.values())) > 0:
        room = {k: caps[k] - alloc[k] for k in caps if alloc[k] < caps[k]}
        weighted = {k: weights.get(k, 0.0) for k in room if weights.get(k, 0.0) > 0}
        shares = largest_remainder(remaining, weighted or {k: float(r) for k, r in room.items()})
        for k, share in shares.items():
            alloc[k] += min(share, room[k])
    return alloc


@dataclass(frozen=True)
class Plan:
    """Where each non-empty stratum is drawn from (itself or ``MERGED``) and how many draws each
    of those draw strata gets (at least one each)."""

    groups: dict[str, str]
    allocation: dict[str, int]


def plan_draws(total: int, sizes: Mapping[str, int], weights: Mapping[str, float]) -> Plan:
    """``allocate`` with a floor of one draw per non-empty stratum.

    A batch smaller than the number of non-empty strata first merges the lowest-weight strata
    (ties: smaller, then by name) into ``MERGED`` until there are as many draw strata as draws.
    A draw stratum the weights leave empty then takes one draw from the largest allocation, so
    the allocation equals ``allocate``'s whenever that already reaches every stratum.
    """
    filled = {s: n for s, n in sizes.items() if n > 0}
    target = min(total, sum(filled.values()))
    groups = {s: s for s in filled}
    if target == 0:
        return Plan(groups, {})
    if target < len(filled):
        lightest = sorted(filled, key=lambda s: (weights.get(s, 0.0), filled[s], s))
        for stratum in lightest[: len(filled) - target + 1]:
            groups[stratum] = MERGED
    group_sizes: Counter[str] = Counter()
    group_weights: dict[str, float] = {}
    for stratum, group in groups.items():
        group_sizes[group] += filled[stratum]
        group_weights[group] = group_weights.get(group, 0.0) + weights.get(stratum, 0.0)
    allocation = allocate(target, group_sizes, group_weights)
    for group in sorted(g for g, k in allocation.items() if k == 0):
        # When target >= the number of groups, an empty one implies a donor with two or more.
        donor = max(sorted(allocation), key=lambda g: allocation[g])
        allocation[donor] -= 1
        allocation[group] += 1
    return Plan(groups, allocation)


def stratum_weights(
    sizes: Mapping[str, int], tail_weight: float, none_fraction: float
) -> dict[str, float]:
    """``none_fraction`` of the batch to the negative-control strata by size; the rest to the
    others by size, tail strata counted ``tail_weight`` times."""
    none_total = sum(n for s, n in sizes.items() if s.endswith("-none"))
    weighted = {s: n * (tail_weight if s.endswith("-tail") else 1.0) for s, n in sizes.items()}
    other_total = sum(w for s, w in weighted.items() if not s.endswith("-none"))
    weights = {}
    for s, n in sizes.items():
        if s.endswith("-none"):
            weights[s] = none_fraction * n / none_total if none_total else 0.0
        else:
            weights[s] = (1 - none_fraction) * weighted[s] / other_total if other_total else 0.0
    return weights


@dataclass(frozen=True)
class Drawn:
    doc: PoolDoc
    stratum: str
    p_incl: float
    role: str


def draw(
    remaining: Mapping[str, list[PoolDoc]],
    allocation: Mapping[str, int],
    role_sizes: Mapping[str, int],
    rng: random.Random,
) -> list[Drawn]:
    """A seeded random draw within each stratum, then roles over the batch in proportion."""
    picked: list[tuple[PoolDoc, str, float]] = []
    for stratum in sorted(allocation):
        k = allocation[stratum]
        members = sorted(remaining[stratum], key=lambda d: d.doc_id)
        if k:
            p_incl = k / len(members)
            picked += [(doc, stratum, p_incl) for doc in rng.sample(members, k)]
    rng.shuffle(picked)
    counts = role_counts(len(picked), role_sizes)
    roles = [role for role in ROLES for _ in range(counts[role])]
    return [Drawn(doc, s, p, role) for (doc, s, p), role in zip(picked, roles, strict=True)]


def role_counts(drawn: int, role_sizes: Mapping[str, int]) -> dict[str, int]:
    """The requested role sizes, or, when the pool could not fill the batch, the blind part whole
    (the comparison whose size the study chose; ``run_sample`` refuses a pool smaller than it)
    and the other roles in proportion in what is left."""
    if drawn >= sum(role_sizes.values()):
        return {role: role_sizes.get(role, 0) for role in ROLES}
    blind = min(role_sizes.get("blind", 0), drawn)
    others = {role: float(role_sizes.get(role, 0)) for role in ROLES if role != "blind"}
    return {**largest_remainder(drawn - blind, others), "blind": blind}
