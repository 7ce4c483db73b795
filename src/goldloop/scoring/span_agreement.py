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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np

from goldloop.files.atomic import atomic_open
from goldloop.formats.gold import Document, Hit, paused_gc
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
from goldloop.scoring.folding import fold_answer
from goldloop.scoring.matching import match_spans

MODES = ("strict", "lenient")
CHART_RELATIONS = 10
_MATCH_MODE = {"strict": "exact", "lenient": "overlap"}
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
        counts[d, 0:4] = [len(hits_a), len(hits_b), *_paired(_spans(hits_a), _spans(hits_b))]
        counts[d, 4:6] = [len(hits_a), len(hits_b)]
        keyed_a, keyed_b = _grouped(hits_a, slice(2, 4)), _grouped(hits_b, slice(2, 4))
        for key in keyed_a.keys() & keyed_b.keys():
            counts[d, 6:8] += _paired(keyed_a[key], keyed_b[key])
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


# A span as compared: offsets, folded relation id, direction ("symmetric" on a symmetric relation).
_Labelled = tuple[int, int, str, str]


@dataclass(frozen=True)
class Groups:
    """The count columns' groups: 0 all spans, 1 labelled, then each relation, then each
    direction. Relations and directions are two namespaces: a relation id may be spelled like a
    direction (``"forward"``, ``"none"``) and still needs its own group."""

    relation: dict[str, int]
    direction: dict[str, int]

    @classmethod
    def of(cls, relations: Sequence[str], directions: Sequence[str]) -> Groups:
        return cls(
            {r: g for g, r in enumerate(relations, start=2)},
            {d: g for g, d in enumerate(directions, start=2 + len(relations))},
        )

    @property
    def size(self) -> int:
        return 2 + len(self.relation) + len(self.direction)


class Labeller:
    """Hits as compared: each distinct (id, direction) folded through the KB once (a report
    meets a few hundred of them on thousands of hits); ``folded`` holds those it met."""

    def __init__(self, kb: KB | None) -> None:
        self.kb = kb
        self.folded: dict[tuple[str, str | None], tuple[str, str]] = {}

    def __call__(self, hits: Sequence[Hit]) -> list[_Labelled]:
        out = []
        for hit in hits:
            key = (hit.entity_id, hit.direction)
            found = self.folded.get(key)
            if found is None:
                found = self.folded[key] = self._fold(*key)
            out.append((hit.a, hit.b, *found))
        return out

    def fold(self, hit: Hit) -> tuple[str, str]:
        """One hit's folded relation id and direction (``symmetric`` on a symmetric relation,
        ``none`` for no direction)."""
        return self.fold_key((hit.entity_id, hit.direction))

    def fold_key(self, key: tuple[str, str | None]) -> tuple[str, str]:
        """:meth:`fold` of a hit whose (id, direction) is ``key``."""
        found = self.folded.get(key)
        if found is None:
            found = self.folded[key] = self._fold(*key)
        return found

    def _fold(self, entity_id: str, direction: str | None) -> tuple[str, str]:
        relation_id, direction = fold_answer(self.kb, entity_id, direction)
        relation = self.kb.get(str(relation_id)) if self.kb is not None else None
        if relation is not None and relation.is_symmetric:
            direction = "symmetric"
        return str(relation_id), direction or "none"


# One side's spans of every document: document, start, end, relation's and direction's group.
SpanArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


@dataclass(frozen=True)
class Overlaps:
    """Span pairs read off the overlaps: side A's span ``first[i]`` pairs side B's
    ``second[i]`` (indices into each side's :data:`SpanArrays`), in the documents where that is
    the greedy matcher's pairing; ``matcher`` marks the others, which only the matcher pairs."""

    first: np.ndarray
    second: np.ndarray
    matcher: np.ndarray


def overlap_pairs(arrays: Sequence[SpanArrays], n_docs: int) -> Overlaps:
    """:class:`Overlaps` of ``n_docs`` documents from both sides' :data:`SpanArrays`.

    When no span of a document overlaps two spans of the other side (the usual case), the greedy
    matcher pairs exactly the overlapping spans, whichever subset it is given (one relation, one
    relation and direction; strict: those at the same offsets). The others (a span overlapping
    two, an empty or reversed span) are left to the matcher.
    """
    sides = list(arrays)
    matcher = np.zeros(n_docs, dtype=bool)
    for doc, a, b, _, _ in sides:
        matcher[doc[(a < 0) | (a >= b)]] = True
    kept1, kept2 = (np.flatnonzero(~matcher[side[0]]) for side in sides)
    (doc1, a1, b1), (doc2, a2, b2) = (
        tuple(column[kept] for column in side[:3])
        for side, kept in zip(sides, (kept1, kept2), strict=True)
    )
    # The documents end to end, a character apart, so no span overlaps another document's.
    ends = np.zeros(n_docs, dtype=np.int64)
    np.maximum.at(ends, doc1, b1)
    np.maximum.at(ends, doc2, b2)
    start = np.concatenate(([0], np.cumsum(ends + 1)[:-1]))
    a1, b1, a2, b2 = a1 + start[doc1], b1 + start[doc1], a2 + start[doc2], b2 + start[doc2]
    # Spans of the other side each span overlaps: those starting before its end, less those
    # ending at or before its start (all of which start before its end).
    degree1 = np.searchsorted(np.sort(a2), b1) - np.searchsorted(np.sort(b2), a1, side="right")
    degree2 = np.searchsorted(np.sort(a1), b2) - np.searchsorted(np.sort(b1), a2, side="right")
    matcher[doc1[degree1 > 1]] = True
    matcher[doc2[degree2 > 1]] = True
    # A span overlapping one: it is the last of the other side to start before its end, unless
    # that one lies nested before it (then left to the matcher).
    by_start = np.argsort(a2, kind="stable")
    first = np.flatnonzero(degree1 == 1)
    second = by_start[np.searchsorted(a2[by_start], b1[first]) - 1]
    nested = b2[second] <= a1[first]
    matcher[doc1[first[nested]]] = True
    first, second = first[~nested], second[~nested]
    read = ~matcher[doc1[first]]
    return Overlaps(kept1[first[read]], kept2[second[read]], matcher)


def span_counts(
    labelled: Callable[[int], tuple[list[_Labelled], list[_Labelled]]],
    groups: Groups,
    arrays: Sequence[SpanArrays],
    overlaps: Overlaps,
) -> np.ndarray:
    """:func:`_group_counts`'s counts, read off the overlapping pairs where that is the same.

    Documents whose pairs :func:`overlap_pairs` read (``overlaps``) are counted all at once;
    the matcher's are matched by :func:`_group_counts` on their hits as compared
    (``labelled``: a document's A and B sides). ``arrays``: each side's :data:`SpanArrays`.
    """
    n_docs, width = len(overlaps.matcher), 4 * groups.size
    (doc1, a1, b1, rel1, dir1), (doc2, a2, b2, rel2, dir2) = arrays
    first, second = overlaps.first, overlaps.second
    strict = (a1[first] == a2[second]) & (b1[first] == b2[second])
    same_relation = rel1[first] == rel2[second]
    same_key = same_relation & (dir1[first] == dir2[second])
    doc = doc1[first]
    # Columns as _group_counts: n_a, n_b, strict and lenient pairs per group (0: all spans, 1:
    # labelled, then relations and directions); a strict pair also counts leniently. The
    # matcher's documents are counted here too, then overwritten.
    columns = [
        (doc1, 0),
        (doc1, 4),
        (doc1, 4 * rel1),
        (doc1, 4 * dir1),
        (doc2, 1),
        (doc2, 5),
        (doc2, 4 * rel2 + 1),
        (doc2, 4 * dir2 + 1),
        (doc, 3),
        (doc[strict], 2),
        (doc[same_relation], 4 * rel1[first][same_relation] + 3),
        (doc[same_relation & strict], 4 * rel1[first][same_relation & strict] + 2),
        (doc[same_key], 7),
        (doc[same_key & strict], 6),
        (doc[same_key], 4 * dir1[first][same_key] + 3),
        (doc[same_key & strict], 4 * dir1[first][same_key & strict] + 2),
    ]
    flat = np.concatenate([rows * width + column for rows, column in columns])
    counts = np.bincount(flat, minlength=n_docs * width).reshape(n_docs, width)
    matched = np.flatnonzero(overlaps.matcher)
    if len(matched):
        sides = [labelled(d) for d in matched.tolist()]
        counts[matched] = _group_counts([a for a, _ in sides], [b for _, b in sides], groups)
    return counts


@dataclass(frozen=True)
class SpanTable:
    """The shared documents' spans as compared: each side's :data:`SpanArrays` and each span's
    (id, direction) as an index into ``keys``, the relations and directions they fold to
    (sorted) with their groups, and the pairs read off the overlaps. Span agreement counts
    from it; agreement's κ pairs read the same pairing."""

    shared: Sequence[tuple[Document, Document]]
    label: Labeller
    keys: list[tuple[str, str | None]]
    key_index: tuple[np.ndarray, np.ndarray]
    relations: list[str]
    directions: list[str]
    groups: Groups
    arrays: tuple[SpanArrays, SpanArrays]
    overlaps: Overlaps

    @classmethod
    def of(cls, shared: Sequence[tuple[Document, Document]], kb: KB | None) -> SpanTable:
        """The table of ``(A's, B's)`` versions of each shared document."""
        # One pass over the hits: offsets and an index per distinct (id, direction), which is
        # then folded once (a report meets a few hundred on thousands of hits).
        index: dict[tuple[str, str | None], int] = {}
        code = index.setdefault
        sides = [
            np.fromiter(
                chain.from_iterable(
                    (d, hit.a, hit.b, code((hit.entity_id, hit.direction), len(index)))
                    for d, document in enumerate(documents)
                    for hit in document.ground_truth
                ),
                dtype=np.int64,
            ).reshape(-1, 4)
            for documents in ([a for a, _ in shared], [b for _, b in shared])
        ]
        label = Labeller(kb)
        keys = list(index)
        folded = [label.fold_key(key) for key in keys]
        relations = sorted({r for r, _ in folded})
        directions = sorted({d for _, d in folded})
        groups = Groups.of(relations, directions)
        relation = np.array([groups.relation[r] for r, _ in folded], dtype=np.int64)
        direction = np.array([groups.direction[d] for _, d in folded], dtype=np.int64)
        arrays = tuple(
            (side[:, 0], side[:, 1], side[:, 2], relation[side[:, 3]], direction[side[:, 3]])
            for side in sides
        )
        return cls(
            shared,
            label,
            keys,
            (sides[0][:, 3], sides[1][:, 3]),
            relations,
            directions,
            groups,
            (arrays[0], arrays[1]),
            overlap_pairs(arrays, len(shared)),
        )

    def labelled(self, d: int) -> tuple[list[_Labelled], list[_Labelled]]:
        """Document ``d``'s hits as compared, A's and B's."""
        doc_a, doc_b = self.shared[d]
        return self.label(doc_a.ground_truth), self.label(doc_b.ground_truth)


def _group_counts(
    labelled_a: list[list[_Labelled]], labelled_b: list[list[_Labelled]], groups: Groups
) -> np.ndarray:
    """Per document: four counts (n_a, n_b, pairs strict, pairs lenient) for all spans, for
    labelled pairs, then per relation and per direction at the column ``groups`` gives."""
    counts = np.zeros((len(labelled_a), 4 * groups.size), dtype=np.int64)
    for d, (hits_a, hits_b) in enumerate(zip(labelled_a, labelled_b, strict=True)):
        row = [0] * counts.shape[1]
        row[0:4] = [len(hits_a), len(hits_b), *_paired(_spans(hits_a), _spans(hits_b))]
        row[4:6] = [len(hits_a), len(hits_b)]
        for side, hits in enumerate((hits_a, hits_b)):
            for _, _, relation, direction in hits:
                row[4 * groups.relation[relation] + side] += 1
                row[4 * groups.direction[direction] + side] += 1
        relations_a, relations_b = _grouped(hits_a, 2), _grouped(hits_b, 2)
        by_relation = {}
        for relation in relations_a.keys() & relations_b.keys():
            g = groups.relation[relation]
            by_relation[relation] = _paired(relations_a[relation], relations_b[relation])
            row[4 * g + 2 : 4 * g + 4] = by_relation[relation]
        # A labelled pair needs the same relation and direction; per direction is that pairing
        # split by direction, so each (relation, direction) is matched once for both, and not
        # again where both sides gave the relation in that one direction only.
        keyed_a, keyed_b = _grouped(hits_a, slice(2, 4)), _grouped(hits_b, slice(2, 4))
        for key in keyed_a.keys() & keyed_b.keys():
            relation = key[0]
            if keyed_a[key] == relations_a[relation] and keyed_b[key] == relations_b[relation]:
                strict, lenient = by_relation[relation]
            else:
                strict, lenient = _paired(keyed_a[key], keyed_b[key])
            g = groups.direction[key[1]]
            for column in (6, 4 * g + 2):
                row[column] += strict
                row[column + 1] += lenient
        counts[d] = row
    return counts


def _spans(hits: list[_Labelled]) -> list[tuple[int, int]]:
    return sorted((h[0], h[1]) for h in hits)


def _grouped(hits: list[_Labelled], key: int | slice) -> dict[Any, list[tuple[int, int]]]:
    """The sorted spans of each value of ``hit[key]``."""
    out: dict[Any, list[tuple[int, int]]] = {}
    for hit in hits:
        out.setdefault(hit[key], []).append((hit[0], hit[1]))
    for spans in out.values():
        spans.sort()
    return out


def _paired(spans_a: list[tuple[int, int]], spans_b: list[tuple[int, int]]) -> list[int]:
    """The pairs the shared matcher finds strictly and leniently between two sorted span lists."""
    return [
        len(spans_a) - match_spans(spans_a, spans_b, _MATCH_MODE[mode]).count(None)
        for mode in MODES
    ]


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
