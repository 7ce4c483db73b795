"""The next batch: where it narrows a corpus figure's interval most per annotator-minute.

Every figure a plan aims at is a ratio of design-weighted per-document counts (:data:`METRICS`:
F1 = 2·matched / (gold + predicted), precision, recall, entity accuracy). Its linearisation
``u_i = (a_i − R·b_i) / b̄`` (``b̄`` the weighted mean denominator) makes the ratio's variance that
of a weighted total, estimated within each stratum × batch cell as the bootstrap resamples
(``scoring.design``). With a surrogate (a pre-annotator's counts on every document of the pool,
their corpus totals known), the figure is prediction-powered: ``λ·F + Σ w·(y − λ·f)`` for each
total, ``λ`` chosen to minimise the variance (PPI++; 0 when the surrogate is useless), and only the
residuals' spread is left.

The next batch adds ``m_h`` documents to stratum ``h`` (``R_h`` documents left, ``c_h`` minutes
each, spread ``S_h`` of the contributions). Under the batch rule of ``scoring.design`` it adds
``α²·Σ R_h²·S_h² / m_h`` (``α`` its share of the gold) to the total's variance, which for a given
budget is least at ``m_h ∝ R_h·S_h / √c_h`` (cost-aware Neyman allocation, Cochran §5.5). The plan
mixes that with the proportional allocation (:data:`DEFENSIVE_SHARE` of the budget), so that
spreads measured on few documents cannot make it much worse than today's design, and gives every
stratum with documents left at least one (the batch rule needs each remaining document to have a
chance). For a target it finds the least budget whose expected anytime-valid half-width
(:mod:`goldloop.scoring.confseq`) meets it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.sample.planned import SampleState
from goldloop.scoring.bootstrap import ratio
from goldloop.scoring.confseq import TUNED_AT, anytime_half_width, fixed_half_width
from goldloop.scoring.design import NO_DESIGN, Design, batch_weights, read_design
from goldloop.scoring.inputs import SystemPredictions
from goldloop.scoring.ppi_corpus import ppi_corpus_figures
from goldloop.scoring.ppi_inputs import SurrogateParts
from goldloop.scoring.regimes import E2E_COLUMNS, end_to_end_counts

METRICS: dict[str, tuple[tuple[str, ...], tuple[str, ...], float]] = {
    # figure: (numerator columns, denominator columns, numerator factor)
    "f1": (("matched",), ("gold", "predicted"), 2.0),
    "precision": (("matched",), ("predicted",), 1.0),
    "recall": (("matched",), ("gold",), 1.0),
    "entity_accuracy": (("id_correct",), ("id_comparable",), 1.0),
}
DEFENSIVE_SHARE = 0.2
"""Share of a batch's minutes spent as the proportional design spends them."""
MIN_TIMED = 3
"""Timed documents a stratum needs before its own minutes are used (else the campaign's)."""


class PlanError(GoldloopError):
    """A plan cannot be made from these inputs (no design, no figure yet, another sample)."""


class NoEffortRecord(PlanError):
    """No labelled document has its minutes, and none were stated."""


class BudgetTooSmall(PlanError):
    """A budget that buys no document, or not one per stratum with documents left."""


def ratio_parts(counts: np.ndarray, metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Per document the numerator and denominator of ``metric`` from end-to-end counts
    (columns ``E2E_COLUMNS``)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    top, bottom, factor = METRICS[metric]
    counts = np.asarray(counts, dtype=float)
    column = {name: counts[:, i] for i, name in enumerate(E2E_COLUMNS)}
    numerator = factor * sum((column[c] for c in top), np.zeros(len(counts)))
    return numerator, sum((column[c] for c in bottom), np.zeros(len(counts)))


@dataclass(frozen=True)
class SurrogatePart:
    """A surrogate part (documents only a pre-annotator saw, drawn with known probabilities):
    per document the figure's parts against the pre-annotation, and its design."""

    numerator: np.ndarray
    denominator: np.ndarray
    design: Design


@dataclass(frozen=True)
class Surrogate:
    """A pre-annotator's parts on the labelled documents (their order) and its corpus totals:
    known (a pre-annotation of the whole pool), or estimated from a :class:`SurrogatePart`."""

    numerator: np.ndarray
    denominator: np.ndarray
    total_numerator: float
    total_denominator: float
    part: SurrogatePart | None = None


def surrogate_of(
    stand_in: np.ndarray, part_counts: np.ndarray, metric: str, part_design: Design
) -> Surrogate:
    """The :class:`Surrogate` of end-to-end counts against a pre-annotation: ``stand_in`` on the
    labelled documents, ``part_counts`` on a surrogate part (totals: its design-weighted sums)."""
    numerator, denominator = ratio_parts(stand_in, metric)
    part_top, part_bottom = ratio_parts(part_counts, metric)
    return Surrogate(
        numerator,
        denominator,
        float(part_design.weights @ part_top),
        float(part_design.weights @ part_bottom),
        SurrogatePart(part_top, part_bottom, part_design),
    )


@dataclass(frozen=True)
class Labelled:
    """The human gold so far: per document the figure's parts, its design (``p_incl``, batch,
    bootstrap cell) and its plan stratum; a surrogate when there is one."""

    numerator: np.ndarray
    denominator: np.ndarray
    p_incl: np.ndarray
    batches: np.ndarray
    cells: np.ndarray
    strata: Sequence[str]
    surrogate: Surrogate | None = None
    design: Design | None = None  # what a surrogate part's figures need besides the above

    @property
    def weights(self) -> np.ndarray:
        return batch_weights(self.p_incl, self.batches)


def labelled_from(
    documents: Sequence[Document],
    counts: np.ndarray,
    metric: str,
    design: Design,
    strata: Sequence[str] | None = None,
    surrogate: Surrogate | None = None,
) -> Labelled:
    """The :class:`Labelled` of a gold whose design was read (``scoring.design.read_design``)
    and its end-to-end ``counts``; ``strata`` default to the documents' own."""
    numerator, denominator = ratio_parts(counts, metric)
    return Labelled(
        numerator=numerator,
        denominator=denominator,
        p_incl=np.array([d.p_incl or 1.0 for d in documents], dtype=float),
        batches=np.array([-1 if d.batch is None else d.batch for d in documents]),
        cells=design.cells,
        strata=list(strata) if strata is not None else [d.stratum or "" for d in documents],
        surrogate=surrogate,
        design=design,
    )


def gold_contributions(
    documents: Sequence[Document],
    system: SystemPredictions,
    kb: KB | None,
    metric: str,
    *,
    match_mode: str = "overlap",
    source: str = "the gold",
    sample: SampleState | None = None,
    parts: SurrogateParts | None = None,
) -> Labelled:
    """The human gold's :class:`Labelled` for ``system``'s ``metric``: its design read (refused
    without one), each document in its stratum of ``sample`` (the plan's strata) when given.
    With a surrogate part and the pre-annotation of the gold's documents (``parts``, as
    ``scoring.ppi_inputs`` reads them; ``system`` read over both parts), the figure is
    prediction-powered."""
    design = read_design(documents, source=source)
    if design is None:
        raise PlanError(f"{source}: {NO_DESIGN}")
    if sample is not None:
        stray = next((d for d in documents if d.doc_id not in sample.doc_ids), None)
        if stray is not None:
            raise PlanError(
                f"{source}: document {stray.doc_id!r} is not in the sample {sample.path}: the "
                "gold and the sample are of different campaigns"
            )
    strata = None if sample is None else [sample.plan_stratum(d.stratum or "") for d in documents]
    counts = end_to_end_counts(documents, system, kb, match_mode)
    surrogate = (
        None
        if parts is None
        else surrogate_of(
            end_to_end_counts(parts.pre_annotated, system, kb, match_mode),
            end_to_end_counts(parts.documents, system, kb, match_mode),
            metric,
            parts.design,
        )
    )
    return labelled_from(documents, counts, metric, design, strata, surrogate)


@dataclass(frozen=True)
class Standing:
    """Where the corpus figure stands: its estimate, standard error, the fixed-size and the
    anytime-valid half-widths, over how many human documents; ``lam`` the surrogate's weight."""

    value: float
    se: float
    n_docs: int
    half_width: float
    anytime_half_width: float
    lam: float | None
    contributions: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": _round(self.value),
            "se": _round(self.se),
            "n_docs": self.n_docs,
            "half_width": _round(self.half_width),
            "anytime_half_width": _round(self.anytime_half_width),
            "surrogate_lambda": None if self.lam is None else _round(self.lam),
        }


def standing(labelled: Labelled, level: float = 0.95, tuned_at: float = TUNED_AT) -> Standing:
    """The corpus figure now, with both half-widths (the anytime one holds however often one
    looks); refused when the gold holds nothing the figure counts."""
    weights = labelled.weights
    value, u, lam = _linearised(labelled, weights)
    se = math.sqrt(_variance_of_total(u, weights, labelled.cells)) / float(weights.sum())
    surrogate = labelled.surrogate
    if surrogate is not None and surrogate.part is not None and labelled.design is not None:
        # Totals estimated from a surrogate part: the figure and its error as score's
        # corpus_ppi gives them (stratified PPI++, the part's own variance included).
        part = surrogate.part
        figures = ppi_corpus_figures(
            np.column_stack([labelled.numerator, labelled.denominator]),
            np.column_stack([surrogate.numerator, surrogate.denominator]),
            np.column_stack([part.numerator, part.denominator]),
            lambda s: {"value": ratio(s[:, 0], s[:, 1])},
            labelled.design,
            part.design,
            level=level,
        )
        if figures.values["value"] is not None and figures.standard_errors["value"] is not None:
            value, se = float(figures.values["value"]), float(figures.standard_errors["value"])
    n = len(weights)
    return Standing(
        value=value,
        se=se,
        n_docs=n,
        half_width=fixed_half_width(se, level),
        anytime_half_width=anytime_half_width(se, n, level, tuned_at),
        lam=lam,
        contributions=u,
    )


@dataclass(frozen=True)
class StratumState:
    """One stratum as the plan sees it: documents left to draw, labelled so far, the spread of
    its contributions, minutes per document and where they come from."""

    name: str
    remaining: int
    labelled: int
    spread: float
    minutes: float
    minutes_from: str  # "measured" | "campaign" (too few timed here) | "stated"

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "spread": _round(self.spread), "minutes": _round(self.minutes)}


@dataclass(frozen=True)
class NextBatch:
    """The planned batch: documents per stratum, their minutes and LLM cost, and the half-widths
    expected after it."""

    by_stratum: dict[str, int]
    minutes: float
    llm_usd: float | None
    expected_half_width: float
    expected_anytime_half_width: float

    @property
    def documents(self) -> int:
        return sum(self.by_stratum.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents": self.documents,
            "by_stratum": self.by_stratum,
            "minutes": _round(self.minutes),
            "llm_usd": None if self.llm_usd is None else _round(self.llm_usd),
            "expected_half_width": _round(self.expected_half_width),
            "expected_anytime_half_width": _round(self.expected_anytime_half_width),
        }


@dataclass(frozen=True)
class Target:
    """What the plan aims at: a half-width for the anytime-valid interval, or a budget."""

    half_width: float | None = None
    budget_minutes: float | None = None

    def __post_init__(self) -> None:
        if (self.half_width is None) == (self.budget_minutes is None):
            raise ValueError("a target is a half-width or a budget, exactly one")
        if self.half_width is not None and not 0 < self.half_width < 1:
            raise ValueError(f"half_width must lie in (0, 1), got {self.half_width}")
        if self.budget_minutes is not None and not self.budget_minutes > 0:
            raise ValueError(f"budget_minutes must be > 0, got {self.budget_minutes}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class BatchPlan:
    """A plan: where the figure stands, whether the target is reached, the strata and (unless
    reached, or nothing is left to draw) the next batch."""

    standing: Standing
    target: Target
    reached: bool
    strata: list[StratumState]
    next_batch: NextBatch | None
    level: float
    tuned_at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "level": self.level,
            "anytime_tuned_at": self.tuned_at,
            "target": self.target.to_dict(),
            "now": self.standing.to_dict(),
            "reached": self.reached,
            "next_batch": None if self.next_batch is None else self.next_batch.to_dict(),
            "strata": [s.to_dict() for s in self.strata],
        }


def stratum_states(
    labelled: Labelled,
    contributions: np.ndarray,
    remaining: Mapping[str, int],
    minutes_by_doc: Sequence[float | None],
    stated_minutes: float | None = None,
) -> list[StratumState]:
    """Each stratum with documents left: its spread (of the labelled documents there; of all
    of them when it has fewer than two) and minutes per document (its timed documents'
    mean; the campaign's when it has fewer than :data:`MIN_TIMED`; ``stated_minutes`` when
    nothing is timed). ``minutes_by_doc`` is in the labelled documents' order."""
    strata = np.asarray(labelled.strata)
    timed = np.array([math.nan if m is None else float(m) for m in minutes_by_doc])
    measured = ~np.isnan(timed)
    if not measured.any() and stated_minutes is None:
        raise NoEffortRecord(
            "no effort record: no labelled document has a lead time yet, and no minutes per "
            "document were stated"
        )
    campaign = float(timed[measured].mean()) if measured.any() else float(stated_minutes or 0)
    pooled = float(np.std(contributions, ddof=1)) if len(contributions) > 1 else 0.0
    out = []
    for name in sorted(remaining):
        here = strata == name
        spread = float(np.std(contributions[here], ddof=1)) if here.sum() > 1 else pooled
        mine = timed[here & measured]
        if len(mine) >= MIN_TIMED:
            minutes, source = float(mine.mean()), "measured"
        elif measured.any():
            minutes, source = campaign, "campaign"
        else:
            minutes, source = float(stated_minutes or 0), "stated"
        out.append(
            StratumState(name, int(remaining[name]), int(here.sum()), spread, minutes, source)
        )
    return out


def plan_batch(
    labelled: Labelled,
    remaining: Mapping[str, int],
    minutes_by_doc: Sequence[float | None],
    target: Target,
    *,
    stated_minutes: float | None = None,
    usd_per_document: float | None = None,
    level: float = 0.95,
    tuned_at: float = TUNED_AT,
) -> BatchPlan:
    """The plan for the next batch (:class:`BatchPlan`); ``remaining`` documents left per
    stratum. A target already reached plans no batch; a budget that buys no document, or not
    one per stratum, is refused (:class:`PlanError`)."""
    now = standing(labelled, level, tuned_at)
    states = [
        s
        for s in stratum_states(
            labelled, now.contributions, remaining, minutes_by_doc, stated_minutes
        )
        if s.remaining > 0
    ]
    reached = target.half_width is not None and bool(now.anytime_half_width <= target.half_width)
    if reached or not states:
        return BatchPlan(now, target, reached, states, None, level, tuned_at)
    projection = _Projection(labelled, now, states, level, tuned_at)
    if target.budget_minutes is not None:
        projection.check_budget(target.budget_minutes)
        by_stratum = projection.allocation(target.budget_minutes)
    else:
        assert target.half_width is not None
        by_stratum = projection.least_for(target.half_width)
    fixed, anytime = projection.half_widths(by_stratum)
    documents = sum(by_stratum.values())
    batch = NextBatch(
        by_stratum=by_stratum,
        minutes=projection.cost(by_stratum),
        llm_usd=None if usd_per_document is None else documents * usd_per_document,
        expected_half_width=fixed,
        expected_anytime_half_width=anytime,
    )
    return BatchPlan(now, target, False, states, batch, level, tuned_at)


class _Projection:
    """The variance after a candidate next batch, and the allocations of a budget."""

    def __init__(
        self,
        labelled: Labelled,
        now: Standing,
        states: list[StratumState],
        level: float,
        tuned_at: float,
    ) -> None:
        self.labelled, self.now, self.states = labelled, now, states
        self.level, self.tuned_at = level, tuned_at
        self.population = float(labelled.weights.sum())
        self.floor_cost = sum(s.minutes for s in states)

    def cost(self, by_stratum: Mapping[str, int]) -> float:
        return sum(s.minutes * by_stratum[s.name] for s in self.states)

    def check_budget(self, budget: float) -> None:
        cheapest = min(s.minutes for s in self.states)
        if budget < cheapest:
            raise BudgetTooSmall(
                f"a budget of {budget:g} minutes is below one document (the cheapest stratum "
                f"takes {cheapest:.2f} minutes)"
            )
        if budget < self.floor_cost:
            raise BudgetTooSmall(
                f"a budget of {budget:g} minutes buys fewer documents than the "
                f"{len(self.states)} strata with documents left need (one each: "
                f"{self.floor_cost:.1f} minutes)"
            )

    def allocation(self, budget: float) -> dict[str, int]:
        """Whole documents per stratum for ``budget`` minutes: the mixed allocation, rounded
        down, at least one per stratum and at most what is left."""
        rest = max(budget - self.floor_cost, 0.0)
        neyman = np.array([s.remaining * s.spread / math.sqrt(s.minutes) for s in self.states])
        minutes = np.array([s.minutes for s in self.states])
        remaining = np.array([s.remaining for s in self.states], dtype=float)
        share = np.zeros(len(self.states))
        if neyman.sum() > 0:
            share += (1 - DEFENSIVE_SHARE) * neyman / float(neyman @ minutes)
            share += DEFENSIVE_SHARE * remaining / float(remaining @ minutes)
        else:  # no spread measured anywhere: nothing to weigh by but the design
            share += remaining / float(remaining @ minutes)
        extra = np.minimum(np.floor(rest * share), remaining - 1)
        return {s.name: 1 + int(k) for s, k in zip(self.states, extra, strict=True)}

    def half_widths(self, by_stratum: Mapping[str, int]) -> tuple[float, float]:
        """The fixed-size and anytime-valid half-widths expected after ``by_stratum``."""
        labelled = self.labelled
        added = sum(by_stratum.values())
        new_batch = int(labelled.batches.max()) + 1 if len(labelled.batches) else 0
        weights = batch_weights(
            np.concatenate([labelled.p_incl, np.ones(added)]),
            np.concatenate([labelled.batches, np.full(added, new_batch)]),
        )
        n = len(labelled.p_incl)
        alpha = added / (n + added)
        variance = _variance_of_total(self.now.contributions, weights[:n], labelled.cells)
        variance += alpha**2 * sum(
            s.remaining**2 * s.spread**2 / by_stratum[s.name] for s in self.states
        )
        se = math.sqrt(variance) / self.population
        return (
            fixed_half_width(se, self.level),
            anytime_half_width(se, n + added, self.level, self.tuned_at),
        )

    def least_for(self, half_width: float) -> dict[str, int]:
        """The allocation of the least budget whose expected anytime half-width meets
        ``half_width`` (everything left when even that does not)."""
        everything = {s.name: s.remaining for s in self.states}
        high = self.cost(everything)
        low = self.floor_cost
        if self.half_widths(self.allocation(low))[1] <= half_width:
            return self.allocation(low)
        if self.half_widths(self.allocation(high))[1] > half_width:
            return everything
        while high - low > max(0.5, 1e-3 * high):
            middle = (low + high) / 2
            if self.half_widths(self.allocation(middle))[1] <= half_width:
                high = middle
            else:
                low = middle
        return self.allocation(high)


def _linearised(labelled: Labelled, weights: np.ndarray) -> tuple[float, np.ndarray, float | None]:
    """The figure, each document's linearised contribution, and the surrogate's ``λ``."""
    a, b = labelled.numerator, labelled.denominator
    total_b = float(weights @ b)
    if total_b <= 0:
        raise PlanError(
            "the gold holds nothing this figure counts yet (its denominator is 0): label a pilot "
            "batch first"
        )
    population = float(weights.sum())
    value = float(weights @ a) / total_b
    u = (a - value * b) / (total_b / population)
    surrogate = labelled.surrogate
    if surrogate is None:
        return value, u, None
    fa, fb = surrogate.numerator, surrogate.denominator
    v = (fa - value * fb) / (total_b / population)
    lam = _power_tuned(u, v, weights, labelled.cells)
    top = lam * surrogate.total_numerator + float(weights @ (a - lam * fa))
    bottom = lam * surrogate.total_denominator + float(weights @ (b - lam * fb))
    if bottom <= 0:
        return value, u, 0.0
    value = top / bottom
    scale = bottom / population
    residual = ((a - lam * fa) - value * (b - lam * fb)) / scale
    return value, residual, lam


def _power_tuned(u: np.ndarray, v: np.ndarray, weights: np.ndarray, cells: np.ndarray) -> float:
    """The ``λ`` in [0, 1] that minimises the variance of ``Σ w·(u − λ·v)`` (PPI++)."""
    cu, cv = _centred(weights * u, cells), _centred(weights * v, cells)
    denominator = float(cv @ cv)
    return 0.0 if denominator <= 0 else float(np.clip((cu @ cv) / denominator, 0.0, 1.0))


def _centred(values: np.ndarray, cells: np.ndarray) -> np.ndarray:
    sizes = np.bincount(cells)
    means = np.bincount(cells, values) / np.maximum(sizes, 1)
    return values - means[cells]


def _variance_of_total(u: np.ndarray, weights: np.ndarray, cells: np.ndarray) -> float:
    """The variance of ``Σ w·u``, each cell a random draw of its size (with replacement: a
    slightly wide estimate); a cell of one document adds nothing (``scoring.design`` pools
    those)."""
    deviations = _centred(weights * u, cells)
    sizes = np.bincount(cells).astype(float)
    squares = np.bincount(cells, deviations**2)
    factor = np.divide(sizes, sizes - 1, out=np.zeros_like(sizes), where=sizes > 1)
    return float(factor @ squares)


def _round(value: float) -> float:
    return round(float(value), 6)
