"""Corpus figures: design-weighted (Hájek) estimates from the sampler's inclusion probabilities.

A document of batch ``c`` with inclusion probability ``p`` weighs ``α_c / p + Σ_{b > c} α_b``,
``α_b`` = the share of the gold's documents that batch ``b`` holds. Why: batch ``b`` draws from
the documents earlier batches left, so ``Σ_{S_<b} y + Σ_{S_b} y / p`` estimates a corpus total
without bias whatever the earlier batches drew (an earlier document stands for itself there),
and the weights above are those batch estimates averaged with the weights ``α_b``. One batch
gives ``w = 1 / p``. ``p`` is the sampler's: a two-phase batch's carries both phases' factors.
A ratio figure is a ratio of weighted per-document counts; its interval is the stratified
bootstrap (``scoring.bootstrap``) within each stratum × batch cell.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from goldloop.errors import DesignRefused, GoldloopError, SettingError
from goldloop.formats.gold import Document
from goldloop.scoring.bootstrap import document_bootstrap, ratio
from goldloop.scoring.modes import DESIGN_MODES

NO_DESIGN = "no corpus figures: the gold carries no p_incl (the sampler's inclusion probability)"
# The smallest p_incl taken: one document in 10^12, far below any corpus a sampler draws from.
# A p_incl inside (0, 1] but smaller would give a weight 1/p_incl, or weighted sums of counts,
# that float arithmetic cannot hold (1e-310 gives an infinite weight), so it is refused.
MIN_P_INCL = 1e-12

Metrics = Callable[[np.ndarray], dict[str, np.ndarray]]


class NotInGold(GoldloopError):
    """A part names a document its gold does not hold (:func:`part_design`): the two lists
    disagree, which no setting mends, so it is worded as it is, not as a design option."""


@dataclass(frozen=True)
class Design:
    """Per document (in the gold's order): its weight, its bootstrap cell (stratum × batch) and
    its stratum label (``None``: not known, as one stratum)."""

    weights: np.ndarray
    cells: np.ndarray
    n_strata: int
    basis: str  # "1/p_incl" or "equal"
    strata: np.ndarray | None = None

    @property
    def population_docs(self) -> float:
        """Σ w: how many eligible documents the gold stands for."""
        return float(self.weights.sum())


def read_design(
    documents: Sequence[Document], mode: str = "use", source: Path | str | None = None
) -> Design | None:
    """The gold's design; ``None`` when no document carries ``p_incl`` (see ``NO_DESIGN``).

    A gold that mixes documents with and without ``p_incl``, or holds one outside
    [:data:`MIN_P_INCL`, 1], is refused naming the first such document, unless ``mode`` is
    ``ignore``: equal weights.
    """
    if mode not in DESIGN_MODES:
        raise SettingError("design", f"must be one of {', '.join(DESIGN_MODES)}, got {mode!r}")
    strata = [d.stratum or "" for d in documents]
    batches = [-1 if d.batch is None else d.batch for d in documents]
    n_strata = len(set(strata))
    cells = _cells(strata, batches)
    if mode == "ignore":
        return Design(np.ones(len(documents)), cells, n_strata, "equal", np.array(strata))
    where = f"{source}: " if source is not None else ""
    carrying = [i for i, d in enumerate(documents) if d.p_incl is not None]
    if not carrying:
        return None
    for i, document in enumerate(documents):
        p = document.p_incl
        if p is None:
            first = documents[carrying[0]].doc_id
            problem = f"has no p_incl while document {carrying[0] + 1} ({first!r}) has one"
        elif not (math.isfinite(p) and MIN_P_INCL <= p <= 1):
            problem = f"has p_incl {p!r}, outside [{MIN_P_INCL:g}, 1]"
        else:
            continue
        raise DesignRefused(f"{where}document {i + 1} ({document.doc_id!r}) {problem}")
    p_incl = np.array([d.p_incl for d in documents], dtype=float)
    return Design(
        batch_weights(p_incl, np.array(batches)), cells, n_strata, "1/p_incl", np.array(strata)
    )


def part_design(
    documents: Sequence[Document], part: Sequence[str], source: Path | str | None = None
) -> Design | None:
    """The design of the documents ``part`` names (in its order), a random part of each batch of
    the gold ``documents`` (a role dealt at random over the batch's draw, such as ``blind``).

    Each weighs its weight in the gold (:func:`read_design`: ``α_b`` the gold's batch shares)
    times ``n_c / m_c``, its batch's documents in the gold over those in the part: the part of
    batch ``c`` stands for all of the batch, so ``Σ_part w·y`` estimates the gold's ``Σ w·y``
    (and ``population_docs`` the gold's) whatever share of each batch the part holds. One batch:
    a constant factor, which a ratio figure does not see. ``None`` when the gold carries no
    ``p_incl``; a gold with some is refused as :func:`read_design` refuses it (``source`` names
    the gold), a part naming a document the gold lacks raises :class:`NotInGold`.
    """
    gold = read_design(documents, source=source)
    if gold is None:
        return None
    at = {d.doc_id: i for i, d in enumerate(documents)}
    missing = [doc_id for doc_id in part if doc_id not in at]
    if missing:
        where = f"{source}: " if source is not None else ""
        raise NotInGold(f"{where}document {missing[0]!r} is not among the gold's documents")
    rows = np.array([at[doc_id] for doc_id in part], dtype=np.int64)
    batches = np.array([-1 if d.batch is None else d.batch for d in documents])
    in_gold = Counter(batches.tolist())
    in_part = Counter(batches[rows].tolist())
    share = np.array([in_part[b] / in_gold[b] for b in batches[rows].tolist()])
    strata = [documents[i].stratum or "" for i in rows]
    return Design(
        gold.weights[rows] / share,
        _cells(strata, batches[rows].tolist()),
        len(set(strata)),
        gold.basis,
        np.array(strata),
    )


def batch_weights(p_incl: np.ndarray, batches: np.ndarray) -> np.ndarray:
    """``α_c / p + Σ_{b > c} α_b`` per document (the module's rule); ``1 / p`` for one batch."""
    labels, counts = np.unique(batches, return_counts=True)
    alpha = counts / counts.sum()
    later = np.cumsum(alpha[::-1])[::-1] - alpha  # Σ of α over the batches after each one
    position = np.searchsorted(labels, batches)
    return alpha[position] / p_incl + later[position]


@dataclass(frozen=True)
class CorpusFigures:
    """A report's ``corpus`` object: each figure on the design-weighted sums, its stratified
    bootstrap interval (none when the bootstrap is off), and the design it stands on."""

    values: dict[str, float | None]
    intervals: dict[str, list[float | None]]
    n_docs: int
    n_strata: int
    population_docs: float
    weights: str  # the design's basis: "1/p_incl" or "equal"

    def design(self) -> dict[str, Any]:
        """The design alone: ``n_docs``, ``n_strata``, ``population_docs``, ``weights``."""
        return {
            "n_docs": self.n_docs,
            "n_strata": self.n_strata,
            "population_docs": self.population_docs,
            "weights": self.weights,
        }

    def to_dict(self) -> dict[str, Any]:
        return {**self.values, "intervals": self.intervals, **self.design()}


@dataclass(frozen=True)
class WeightedRatio:
    """One design-weighted ratio and its 95% interval (``None`` without a bootstrap)."""

    value: float | None
    interval: list[float | None] | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def corpus_figures(
    per_document: np.ndarray,
    metrics: Metrics,
    design: Design,
    bootstrap: int,
    seed: int,
    level: float = 0.95,
) -> CorpusFigures:
    """``metrics`` on the weighted column sums of ``per_document``, each with its
    stratified-bootstrap interval (when ``bootstrap`` > 0), and the design's summary."""
    weights = design.weights
    sums = (weights @ np.asarray(per_document, dtype=float))[None, :]
    values = {name: _value(v[0]) for name, v in metrics(sums).items()}
    intervals = document_bootstrap(
        per_document, metrics, bootstrap, seed, level, weights=weights, cells=design.cells
    )
    return CorpusFigures(
        values=values,
        intervals={
            name: [None if v is None else _round(v) for v in bounds]
            for name, bounds in intervals.items()
        },
        n_docs=len(weights),
        n_strata=design.n_strata,
        population_docs=round(design.population_docs, 6),
        weights=design.basis,
    )


def weighted_ratio(
    numerator: np.ndarray, denominator: np.ndarray, design: Design, bootstrap: int, seed: int
) -> WeightedRatio:
    """Σ w·numerator / Σ w·denominator over documents (one count each) with its 95% interval,
    for any figure that is a ratio of per-document counts."""
    per_document = np.column_stack([numerator, denominator])
    figures = corpus_figures(
        per_document, lambda s: {"value": ratio(s[:, 0], s[:, 1])}, design, bootstrap, seed
    )
    return WeightedRatio(figures.values["value"], figures.intervals.get("value"))


def _cells(strata: list[str], batches: list[int]) -> np.ndarray:
    """Stratum × batch cells; a batch's cells of one document are pooled into one cell (joined
    to the batch's smallest other cell when only one), because a lone document adds no variance
    to a resample and would narrow the interval (collapsed strata: slightly wide instead)."""
    keys = list(zip(strata, batches, strict=True))
    sizes = Counter(keys)
    for batch in set(batches):
        lone = [key for key in sizes if key[1] == batch and sizes[key] == 1]
        if not lone:
            continue
        others = sorted((n, key) for key, n in sizes.items() if key[1] == batch and n > 1)
        target = others[0][1] if len(lone) == 1 and others else ("\0lone", batch)
        keys = [target if key in lone else key for key in keys]
    index: dict[tuple[str, int], int] = {}
    return np.array([index.setdefault(key, len(index)) for key in keys], dtype=np.int64)


def _value(value: float) -> float | None:
    return None if math.isnan(value) else _round(float(value))


def _round(value: float) -> float:
    """12 decimals: weighted sums carry float noise in the last digits (an upper bound of
    1.0000000000000002 for a recall of 1) that no reader needs."""
    return round(value, 12)
