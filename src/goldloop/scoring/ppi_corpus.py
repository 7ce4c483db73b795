"""Prediction-powered corpus figures (PPI++, stratified): the human gold corrects a pre-annotator
that stands in for gold on a larger surrogate part of the pool.

Every corpus figure is a function ``g`` of corpus totals ``T`` of per-document counts (TP, FP,
FN …; ``metrics`` as in :mod:`goldloop.scoring.design`). Per stratum ``h`` the total is

    T̂_h = Σ_{human i in h} w_i (y_i − λ_h f_i) + λ_h Σ_{surrogate j in h} v_j f_j

with ``y`` a document's counts against the human gold, ``f`` against the pre-annotation, ``w``
and ``v`` the two parts' design weights (``1/p_incl`` and the batch rule, :func:`read_design`).
Both sums are unbiased for the stratum's totals whatever ``λ_h`` is, so ``T̂ = Σ_h T̂_h`` is, if
the two parts are independent draws of known probability from the same pool and the
pre-annotator was fixed before the gold was seen. The interval is the delta method: ``u = ∇g·y``,
``r = ∇g·f``, variance the within-cell (stratum × batch) spread of ``w(u − λr)`` plus that of
``vλr``, summed over cells (as the stratified bootstrap of the ``corpus`` object treats cells).
``λ_h`` is PPI++'s power tuning (Angelopoulos, Duchi & Zrnic 2023, as ``ppi_py`` computes it for
a weighted mean) on the stratum's ``u`` and ``r``, clipped to [0, 1], chosen per figure: 0 gives
the classical estimate, so a useless pre-annotator costs almost nothing. Unstratified with equal
weights this is ``ppi_py.ppi_mean_ci`` for a mean (``tests/scoring/ppi_reference.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from goldloop.scoring.design import Design, Metrics
from goldloop.scoring.ppi import z_value

# Relative step of the central differences that give each figure's gradient.
STEP = 1e-6


@dataclass(frozen=True)
class PpiFigures:
    """A report's ``corpus_ppi`` object: the ``corpus`` object's keys (figure values, their
    intervals, the human part's design) plus ``lambda`` (per figure, per stratum),
    ``effective_docs`` (per figure: how many human documents the classical interval would need
    for this width) and ``surrogate_docs``. ``standard_errors`` are the figures' (not written)."""

    values: dict[str, float | None]
    intervals: dict[str, list[float | None]]
    n_docs: int
    n_strata: int
    population_docs: float
    weights: str
    lambdas: dict[str, dict[str, float]]
    effective_docs: dict[str, float | None]
    surrogate_docs: int
    standard_errors: dict[str, float | None]

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.values,
            "intervals": self.intervals,
            "n_docs": self.n_docs,
            "n_strata": self.n_strata,
            "population_docs": self.population_docs,
            "weights": self.weights,
            "lambda": self.lambdas,
            "effective_docs": self.effective_docs,
            "surrogate_docs": self.surrogate_docs,
        }


def ppi_corpus_figures(
    gold: np.ndarray,
    stand_in: np.ndarray,
    surrogate: np.ndarray,
    metrics: Metrics,
    design: Design,
    surrogate_design: Design,
    *,
    level: float = 0.95,
    lam: float | None = None,
    bounds: tuple[float, float] | None = (0.0, 1.0),
) -> PpiFigures:
    """Each figure of ``metrics`` estimated by PPI++ with its ``level`` interval.

    ``gold`` and ``stand_in`` (one row per human document, in ``design``'s order) are the
    counts against the human gold and against the pre-annotation; ``surrogate`` (one row per
    surrogate document, in ``surrogate_design``'s order) against the pre-annotation. ``lam``
    fixes λ in every stratum (0: the classical estimate; 1: plain PPI) instead of tuning it.
    ``bounds`` clip each value and interval (figures that are shares). A figure undefined at the
    estimate (a zero denominator) is ``None`` with ``[None, None]``.
    """
    y = np.asarray(gold, dtype=float)
    f = np.asarray(stand_in, dtype=float)
    s = np.asarray(surrogate, dtype=float)
    if y.shape != f.shape or y.shape[1:] != s.shape[1:]:
        raise ValueError(f"count shapes differ: {y.shape}, {f.shape}, {s.shape}")
    human = _Part(design, len(y))
    part = _Part(surrogate_design, len(s))
    labels = sorted(set(human.labels.tolist()))
    names = list(metrics(np.zeros((1, y.shape[1]))))
    z = z_value(level)

    def totals(lams: np.ndarray) -> np.ndarray:
        """``T̂`` for λ per stratum (``labels``' order); surrogate strata without people: 0."""
        at_human = lams[human.index(labels)]
        at_part = np.append(lams, 0.0)[part.index(labels)]
        return (
            human.weights @ (y - at_human[:, None] * f)
            + (part.weights * at_part) @ s
        )  # fmt: skip

    start = _gradients(metrics, totals(np.ones(len(labels))), names)
    figures: dict[str, _Figure] = {}
    for name in names:
        if lam is None:
            lams = np.array([_tuned(human, part, label, y, f, s, start[name]) for label in labels])
        else:
            lams = np.full(len(labels), float(lam))
        figures[name] = _figure(name, metrics, totals(lams), lams, labels, human, part, y, f, s)
    return PpiFigures(
        values={name: _clip(fig.value, bounds) for name, fig in figures.items()},
        intervals={name: fig.interval(z, bounds) for name, fig in figures.items()},
        n_docs=len(y),
        n_strata=design.n_strata,
        population_docs=round(design.population_docs, 6),
        weights=design.basis,
        lambdas={
            name: {label: round(fig.lams[k], 6) for k, label in enumerate(labels)}
            for name, fig in figures.items()
        },
        effective_docs={name: fig.effective_docs(len(y)) for name, fig in figures.items()},
        surrogate_docs=len(s),
        standard_errors={
            name: None if fig.variance is None else math.sqrt(fig.variance)
            for name, fig in figures.items()
        },
    )


class _Part:
    """One part's weights, cells and stratum labels (one stratum when the design has none)."""

    def __init__(self, design: Design, n: int) -> None:
        if len(design.weights) != n:
            raise ValueError(f"{n} rows of counts but a design of {len(design.weights)}")
        self.weights = np.asarray(design.weights, dtype=float)
        self.cells = np.asarray(design.cells)
        strata = design.strata
        self.labels = np.array([""] * n if strata is None else [str(v) for v in strata])

    def index(self, labels: list[str]) -> np.ndarray:
        """Each document's position in ``labels`` (``len(labels)`` when not among them)."""
        at = {label: k for k, label in enumerate(labels)}
        return np.array([at.get(v, len(labels)) for v in self.labels.tolist()], dtype=np.int64)

    def spread(self, values: np.ndarray) -> float:
        """Σ over cells of Σ (x − the cell's mean)² of ``x = w · values``: the variance of the
        weighted total, cells drawn independently with replacement."""
        x = self.weights * values
        if len(x) == 0:
            return 0.0
        cells = np.unique(self.cells, return_inverse=True)[1]
        n = np.bincount(cells).astype(float)
        means = np.bincount(cells, weights=x) / n
        return float(((x - means[cells]) ** 2).sum())


def _tuned(
    human: _Part,
    part: _Part,
    label: str,
    y: np.ndarray,
    f: np.ndarray,
    s: np.ndarray,
    gradient: np.ndarray | None,
) -> float:
    """PPI++'s λ for one stratum (``ppi_py``'s ``_calc_lam_glm`` on the linearised counts, each
    part's weights scaled to mean 1 in the stratum), clipped to [0, 1]; 0 when the stratum has
    no surrogate document or no range."""
    mine, theirs = human.labels == label, part.labels == label
    if gradient is None or not theirs.any() or mine.sum() < 2:
        return 0.0
    w = human.weights[mine] / human.weights[mine].mean()
    v = part.weights[theirs] / part.weights[theirs].mean()
    grads, grads_hat = w * (y[mine] @ gradient), w * (f[mine] @ gradient)
    unlabelled = v * (s[theirs] @ gradient)
    n, m = len(grads), len(unlabelled)
    covariance = float(np.mean((grads - grads.mean()) * (grads_hat - grads_hat.mean())))
    variance = float(np.var(np.concatenate([grads_hat, unlabelled]), ddof=1))
    if not variance > 0:
        return 0.0
    return float(np.clip(covariance / ((1 + n / m) * variance), 0.0, 1.0))


@dataclass(frozen=True)
class _Figure:
    value: float | None
    variance: float | None
    classical: float | None  # the variance with λ = 0 (human documents alone)
    lams: list[float]

    def interval(self, z: float, bounds: tuple[float, float] | None) -> list[float | None]:
        if self.value is None or self.variance is None:
            return [None, None]
        half = z * math.sqrt(self.variance)
        return [_clip(self.value - half, bounds), _clip(self.value + half, bounds)]

    def effective_docs(self, n: int) -> float | None:
        if self.variance is None or self.classical is None or not self.variance > 0:
            return None
        return round(n * self.classical / self.variance, 1)


def _figure(
    name: str,
    metrics: Metrics,
    t: np.ndarray,
    lams: np.ndarray,
    labels: list[str],
    human: _Part,
    part: _Part,
    y: np.ndarray,
    f: np.ndarray,
    s: np.ndarray,
) -> _Figure:
    value = float(np.asarray(metrics(t[None, :])[name])[0])
    gradient = _gradients(metrics, t, [name])[name]
    if math.isnan(value) or gradient is None:
        return _Figure(None, None, None, lams.tolist())
    u, r = y @ gradient, f @ gradient
    at_human = lams[human.index(labels)]
    at_part = np.append(lams, 0.0)[part.index(labels)]
    variance = human.spread(u - at_human * r) + part.spread(at_part * (s @ gradient))
    return _Figure(value, variance, human.spread(u), lams.tolist())


def _gradients(metrics: Metrics, t: np.ndarray, names: list[str]) -> dict[str, np.ndarray | None]:
    """Each figure's gradient at totals ``t`` by central differences (one ``metrics`` call);
    ``None`` where the figure is undefined near ``t``."""
    k = len(t)
    steps = STEP * np.maximum(np.abs(t), 1.0)
    shifted = np.concatenate([t + np.diag(steps), t - np.diag(steps)])
    out = metrics(shifted)
    gradients: dict[str, np.ndarray | None] = {}
    for name in names:
        values = np.asarray(out[name], dtype=float)
        slope = (values[:k] - values[k:]) / (2 * steps)
        gradients[name] = None if np.isnan(slope).any() else slope
    return gradients


def _clip(value: float | None, bounds: tuple[float, float] | None) -> float | None:
    if value is None:
        return None
    if bounds is not None:
        value = min(max(value, bounds[0]), bounds[1])
    return round(value, 12)
