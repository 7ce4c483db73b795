"""Pairwise span agreement between two annotators: F1, strict and lenient, overall and labelled,
per folded relation and per direction, with document bootstrap intervals; and α_u.

F1 between two annotators is the positive specific agreement 2m / (n_a + n_b) (Hripcsak &
Rothschild, JAMIA 12, 2005), where m spans are paired one to one by the shared matcher
(``scoring.matching.match_spans``): ``strict`` needs the same offsets, ``lenient`` any shared
character. Precision is the share of B's spans paired, recall the share of A's. *Labelled*
pairs also need the same folded relation and direction (a symmetric relation agrees in any
direction); *per relation* pairs only spans both sides gave that folded relation. The figures
describe the shared documents (the sample); ``weights`` (per document, default 1) let a caller
weight documents, e.g. by inverse inclusion probability for the corpus, and the bootstrap
resamples the weighted counts (α_u stays unweighted: a figure of the sample). *Incomplete* positions (INCEpTION's term) are the spans only
one side marked, leniently: the ones κ pairs with ``∅``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from goldloop.files.atomic import atomic_open
from goldloop.formats.gold import Document
from goldloop.heap import paused_gc
from goldloop.kb import KB
from goldloop.scoring.alpha_u import (
    AlphaU,
    UnitTable,
    alpha_from_compact,
    alpha_from_counts,
    alpha_value,
    compact_counts,
    unit_counts,
)
from goldloop.scoring.bootstrap import Ratios, document_bootstrap, ratio
from goldloop.scoring.span_table import (
    MODES,
    Labeller,
    SpanTable,
    grouped,
    paired,
    span_counts,
    spans_of,
)

CHART_RELATIONS = 10
SAMPLE = "sample"


@dataclass(frozen=True)
class Figure:
    """F1, precision and recall of one kind of pairing, with the F1's bootstrap interval."""

    f1: float | None
    precision: float | None
    recall: float | None
    interval: list[float | None]

    def to_dict(self) -> dict[str, Any]:
        return {
            "f1": self.f1,
            "precision": self.precision,
            "recall": self.recall,
            "interval": self.interval,
            "of": SAMPLE,
        }


@dataclass(frozen=True)
class GroupRow:
    """Counts and F1 within one folded relation (or one direction)."""

    key: str
    n_a: float
    n_b: float
    f1_strict: float | None
    f1_lenient: float | None
    interval_strict: list[float | None]
    interval_lenient: list[float | None]

    def to_dict(self, key_name: str) -> dict[str, Any]:
        return {
            key_name: self.key,
            "n_a": _number(self.n_a),
            "n_b": _number(self.n_b),
            "f1_strict": self.f1_strict,
            "f1_lenient": self.f1_lenient,
            "f1_strict_interval": self.interval_strict,
            "f1_lenient_interval": self.interval_lenient,
        }


@dataclass(frozen=True)
class SpanAgreement:
    span_f1: dict[str, Figure]
    span_f1_labelled: dict[str, Figure]
    only_a: float
    only_b: float
    per_relation: list[GroupRow]
    per_direction: list[GroupRow]
    alpha_spans: AlphaU
    alpha_relations: AlphaU
    n_boot: int
    seed: int
    level: float

    def to_dict(self) -> dict[str, Any]:
        """The report keys ``span_f1``, ``span_f1_labelled``, ``alpha_u``, ``incomplete``,
        ``per_relation``, ``per_direction``, with α_u's intervals and the bootstrap settings."""
        return {
            "span_f1": {mode: figure.to_dict() for mode, figure in self.span_f1.items()},
            "span_f1_labelled": {
                mode: figure.to_dict() for mode, figure in self.span_f1_labelled.items()
            },
            "alpha_u": {"spans": self.alpha_spans.value, "relations": self.alpha_relations.value},
            "alpha_u_interval": {
                "spans": self.alpha_spans.interval,
                "relations": self.alpha_relations.interval,
                "of": SAMPLE,
            },
            "incomplete": {"only_a": _number(self.only_a), "only_b": _number(self.only_b)},
            "per_relation": [row.to_dict("entity_id") for row in self.per_relation],
            "per_direction": [row.to_dict("direction") for row in self.per_direction],
            "span_bootstrap": {"n": self.n_boot, "seed": self.seed, "level": self.level},
        }


def span_agreement(
    shared: Sequence[tuple[Document, Document]],
    kb: KB | None,
    *,
    weights: Mapping[str, float] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    table: SpanTable | None = None,
) -> SpanAgreement:
    """Span F1, α_u and incomplete positions over ``(A's, B's)`` version of each shared document.

    ``weights`` maps a ``doc_id`` to its weight (missing: 1); ``table``: these documents'
    :class:`SpanTable`, when the caller reads it too (agreement's κ pairs), else one of its own.
    """
    # Many small tuples and none in a cycle: the collector's passes would only cost time.
    with paused_gc():
        if table is None:
            table = SpanTable.of(shared, kb)
        groups, arrays = table.groups, table.arrays
        counts: np.ndarray = span_counts(table.labelled, groups, arrays, table.overlaps)
        if weights is not None:
            counts = counts * np.array([weights.get(a.doc_id, 1.0) for a, _ in shared])[:, None]
        totals = counts.sum(axis=0)
        # One bootstrap for every figure: the same resamples, drawn once.
        alpha_spans, alpha_relations = _alpha_counts(shared, table)
        # Only F1 has an interval, and it reads a group's two sides only as n_a + n_b: one
        # column for both makes the bootstrap's product and the F1s a quarter cheaper; α_u's
        # compact counts halve its columns. Only for whole counts, whose sums are exact in any
        # order (the same figures); weighted ones are multiplied densely (BLAS), whose rounding
        # depends on the matrix's width, so they keep every column and the figures they had.
        f1_counts, whole = counts, weights is None
        alpha_columns, alpha_of = _all_columns, alpha_from_counts
        if whole:
            # Shapes spelled out: no document may be shared (a campaign before its first double
            # task is annotated), and -1 cannot be inferred from zero rows.
            n_groups = counts.shape[1] // 4
            by_group = counts.reshape(len(counts), n_groups, 4)
            # Twice the pairs, F1's numerator, doubled once a document rather than once a
            # resample (exact: whole numbers).
            f1_counts = np.concatenate(
                [(by_group[:, :, 0] + by_group[:, :, 1])[:, :, None], 2 * by_group[:, :, 2:]],
                axis=2,
            ).reshape(len(counts), 3 * n_groups)
            alpha_columns, alpha_of = compact_counts, alpha_from_compact
        resampled = [f1_counts, alpha_columns(alpha_spans), alpha_columns(alpha_relations)]
        ends = np.cumsum([part.shape[1] for part in resampled])

        def metrics(sums: np.ndarray) -> dict[str, np.ndarray]:
            return {
                **({} if whole else _f1_of_groups(sums[:, : ends[0]])),
                "alpha:spans": alpha_of(sums[:, ends[0] : ends[1]]),
                "alpha:relations": alpha_of(sums[:, ends[1] :]),
            }

        def f1_ratios(sums: np.ndarray) -> Ratios:
            return _f1_of_sides(sums[:, : ends[0]])

        every = np.hstack(resampled, dtype=float)
        # Whole counts: F1's ratios read float32 sums as well, α_u reads them as floats.
        intervals = document_bootstrap(
            every, metrics, n_boot, seed, level, ratios=f1_ratios if whole else None, float32=whole
        )

    return _report(
        table, totals, intervals, alpha_spans, alpha_relations, n_boot=n_boot, seed=seed,
        level=level,
    )  # fmt: skip


def _alpha_counts(
    shared: Sequence[tuple[Document, Document]], table: SpanTable
) -> tuple[np.ndarray, np.ndarray]:
    """Per document, α_u's counts over the spans and over the relations.

    α_u's units are the relations, in sorted order from 1 (alpha_u.category_index), read through
    each relation's group; or the spans, one category (none without spans): the same units,
    counted on the same places, unless an annotator put two relations on one span, which then
    counts once."""
    relations, groups, arrays = table.relations, table.groups, table.arrays
    lengths = np.array([len(doc_a.text) for doc_a, _ in shared], dtype=np.int64)
    category = np.zeros(groups.size, dtype=np.int64)
    category[[groups.relation[r] for r in relations]] = np.arange(1, len(relations) + 1)
    units = UnitTable(lengths, [(doc, a, b, category[g]) for doc, a, b, g, _ in arrays])
    alpha_relations = units.counts(1 + len(relations))
    alpha_spans = (
        units.span_counts(1 + bool(relations))
        if units.spans_distinct
        else unit_counts(
            lengths,
            [(doc, a, b, np.ones_like(doc)) for doc, a, b, _, _ in arrays],
            1 + bool(relations),
        )
    )
    return alpha_spans, alpha_relations


def _report(
    table: SpanTable,
    totals: np.ndarray,
    intervals: dict[str, list[float | None]],
    alpha_spans: np.ndarray,
    alpha_relations: np.ndarray,
    *,
    n_boot: int,
    seed: int,
    level: float,
) -> SpanAgreement:
    """The figures of the summed ``totals``, with the bootstrap's ``intervals``."""
    relations, directions, groups = table.relations, table.directions, table.groups
    # Every group's figures at once: rows are groups; columns n_a, n_b, strict, lenient.
    by_group = totals.reshape(-1, 4)
    paired = by_group[:, 2:]
    # As Python floats at once (NaN: undefined), not one numpy scalar at a time.
    f1s = _values(ratio(2 * paired, (by_group[:, 0] + by_group[:, 1])[:, None]))
    precisions = _values(ratio(paired, by_group[:, 1:2]))
    recalls = _values(ratio(paired, by_group[:, 0:1]))
    sizes = by_group[:, :2].astype(float).tolist()

    def figures(group: int) -> dict[str, Figure]:
        return {
            mode: Figure(
                f1=f1s[group][i],
                precision=precisions[group][i],
                recall=recalls[group][i],
                interval=intervals.get(f"{group}:{mode}", [None, None]),
            )
            for i, mode in enumerate(MODES)
        }

    def row(group: int, key: str) -> GroupRow:
        # Without figures()'s precision and recall, which a row does not show (hundreds a
        # report).
        return GroupRow(
            key=key,
            n_a=sizes[group][0],
            n_b=sizes[group][1],
            f1_strict=f1s[group][0],
            f1_lenient=f1s[group][1],
            interval_strict=intervals.get(f"{group}:strict", [None, None]),
            interval_lenient=intervals.get(f"{group}:lenient", [None, None]),
        )

    per_relation = [row(groups.relation[r], r) for r in relations]
    per_relation.sort(key=lambda r: (-(r.n_a + r.n_b), r.key))
    return SpanAgreement(
        span_f1=figures(0),
        span_f1_labelled=figures(1),
        only_a=float(totals[0] - totals[3]),
        only_b=float(totals[1] - totals[3]),
        per_relation=per_relation,
        per_direction=[row(groups.direction[d], d) for d in directions],
        alpha_spans=AlphaU(alpha_value(alpha_spans), intervals.get("alpha:spans", [None, None])),
        alpha_relations=AlphaU(
            alpha_value(alpha_relations), intervals.get("alpha:relations", [None, None])
        ),
        n_boot=n_boot,
        seed=seed,
        level=level,
    )


def headline_counts(shared: Sequence[tuple[Document, Document]], kb: KB | None) -> np.ndarray:
    """Per shared document (``(A's, B's)`` versions): ``n_a``, ``n_b`` and the strict and lenient
    pairs, for all spans and then for labelled pairs: the counts of the headline span F1s, to be
    summed with any weights (:func:`headline_f1`)."""
    counts = np.zeros((len(shared), 8))
    label = Labeller(kb)
    for d, (doc_a, doc_b) in enumerate(shared):
        hits_a, hits_b = label(doc_a.ground_truth), label(doc_b.ground_truth)
        counts[d, 0:4] = [len(hits_a), len(hits_b), *paired(spans_of(hits_a), spans_of(hits_b))]
        counts[d, 4:6] = [len(hits_a), len(hits_b)]
        keyed_a, keyed_b = grouped(hits_a, slice(2, 4)), grouped(hits_b, slice(2, 4))
        for key in keyed_a.keys() & keyed_b.keys():
            counts[d, 6:8] += paired(keyed_a[key], keyed_b[key])
    return counts


def headline_f1(sums: np.ndarray) -> dict[str, np.ndarray]:
    """``span_f1_strict``, ``span_f1_lenient``, ``span_f1_labelled_strict`` and
    ``span_f1_labelled_lenient`` from summed :func:`headline_counts` (one row per resample)."""
    f1s = _f1_of_groups(sums)
    return {
        f"span_f1{'' if group == 0 else '_labelled'}_{mode}": f1s[f"{group}:{mode}"]
        for group in (0, 1)
        for mode in MODES
    }


def _f1_of_sides(sums: np.ndarray) -> Ratios:
    """:func:`_f1_of_groups` from three columns a group: n_a + n_b, twice the strict and twice
    the lenient pairs; as whole numbers' ratios 2m / (n_a + n_b), whose percentiles the
    bootstrap finds faster than the floats' (the same floats)."""
    groups = sums.T.reshape(-1, 3, len(sums))
    names = [f"{group}:{mode}" for group in range(groups.shape[0]) for mode in MODES]
    return Ratios(names, groups[:, 1:], groups[:, 0])


def _f1_of_groups(sums: np.ndarray) -> dict[str, np.ndarray]:
    # Group by group (the transpose): a view of the bootstrap's column-wise sums, contiguous.
    groups = sums.T.reshape(-1, 4, len(sums))
    f1 = ratio(2 * groups[:, 2:], (groups[:, 0] + groups[:, 1])[:, None])
    return {
        f"{group}:{mode}": f1[group, i]
        for group in range(groups.shape[0])
        for i, mode in enumerate(MODES)
    }


def _all_columns(counts: np.ndarray) -> np.ndarray:
    return counts


def _values(x: np.ndarray) -> list[list[float | None]]:
    return [[None if math.isnan(v) else v for v in row] for row in x.tolist()]


def _number(x: float) -> float | int:
    """A count as an int when unweighted, so the report reads 3, not 3.0."""
    return int(x) if float(x).is_integer() else x


def write_relation_chart(rows: Sequence[GroupRow], names: Mapping[str, str], path: Path) -> None:
    """Per relation F1 (lenient, strict) with intervals, the most marked relations first."""
    import matplotlib  # matplotlib loads only when a chart is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    top = list(rows[:CHART_RELATIONS])[::-1]
    figure, axes = plt.subplots(figsize=(8, 1.2 + 0.45 * max(len(top), 1)))
    for shift, mode, colour in ((0.15, "lenient", "#3070b0"), (-0.15, "strict", "#f0a030")):
        ys, xs, low, high = [], [], [], []
        for y, row in enumerate(top):
            f1 = row.f1_lenient if mode == "lenient" else row.f1_strict
            interval = row.interval_lenient if mode == "lenient" else row.interval_strict
            if f1 is None:
                continue
            ys.append(y + shift)
            xs.append(f1)
            low.append(f1 - interval[0] if interval[0] is not None else 0.0)
            high.append(interval[1] - f1 if interval[1] is not None else 0.0)
        axes.errorbar(xs, ys, xerr=[low, high], fmt="o", color=colour, capsize=3, label=mode)
    axes.set_yticks(
        range(len(top)),
        [f"{names.get(row.key, row.key)} ({_number(row.n_a)}/{_number(row.n_b)})" for row in top],
    )
    axes.set(
        xlim=(-0.02, 1.02), xlabel="span F1 between A and B (bootstrap interval over documents)"
    )
    axes.set_title(f"per relation span F1, the {len(top)} most marked (spans A/B)")
    axes.legend(loc="lower right")
    figure.tight_layout()
    with atomic_open(path, "wb") as handle:
        figure.savefig(handle, format="png", dpi=100)
    plt.close(figure)
