"""Krippendorff's unitizing α (α_u) between two annotators over the characters of their documents.

Krippendorff, Mathet, Bouvry & Widlöcher, "On the reliability of unitizing textual continua:
further developments", *Quality & Quantity* 50, 2016 (the coincidence form of uα). Each
annotator cuts a document into sections: its units (a span with a category) and the gap, the
characters none of its units cover (category ∅). The observed coincidence of categories c and k
is the number of characters a c-section of one annotator shares with a k-section of the other,
over both orders; α_u = 1 − D_o / D_e with nominal distances, where D_o is the share of
coinciding characters whose categories differ and D_e the share expected by chance:
``P(c, k) = (n_c n_k − [c = k] s_c) / (N² − Σ s)``, with ``n_c`` the characters in c-sections of
both annotators, ``s_c`` the sum of squared unit lengths (a unit cannot pair with itself) and,
as the paper divides gaps freely, ``s_∅ = n_∅`` (one-character gap units).

All shared documents form one continuum (no unit crosses a document's end), so the figure is the
pooled one. Identical units of one annotator count once; an annotator's overlapping units (nested
spans, two relations on one phrase) are each a section, and two relations both sides put on one
phrase also coincide crosswise, which lowers α_u for relations. Undefined (None) when nothing can
disagree by chance (one category throughout, or no characters).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np

from goldloop.scoring.bootstrap import document_bootstrap

# A unit: half-open character offsets [a, b) and its category.
Unit = tuple[int, int, str]

# Columns of one document's counts: coinciding characters of equal category, all coinciding
# characters, then n_c and s_c per category with the gap first.
_AGREE, _TOTAL, _FIRST = 0, 1, 2


@dataclass(frozen=True)
class AlphaU:
    value: float | None
    interval: list[float | None]


def category_index(units: Sequence[Sequence[Unit]]) -> dict[str, int]:
    """Each category's column (1, 2, ...; the gap is 0), in sorted order."""
    names = sorted({category for side in units for _, _, category in side})
    return {name: i + 1 for i, name in enumerate(names)}


def alpha_from_counts(sums: np.ndarray) -> np.ndarray:
    """α_u from summed document counts (rows: resamples), NaN where undefined."""
    return alpha_from_compact(compact_counts(np.atleast_2d(np.asarray(sums, dtype=float))))


def compact_counts(counts: np.ndarray) -> np.ndarray:
    """The columns of :func:`alpha_counts` that α_u reads, fewer: agreeing and all coinciding
    characters, ``Σ n_c``, ``Σ s_c``, then ``n_c`` per category. ``s_c`` enters α_u only through
    its sum, so a resample sums one column for it instead of one per category (half the columns
    of α_u for relations to resample)."""
    k = (counts.shape[1] - _FIRST) // 2
    n = counts[:, _FIRST : _FIRST + k]
    return np.column_stack(
        [counts[:, :_FIRST], n.sum(axis=1), counts[:, _FIRST + k :].sum(axis=1), n]
    )


def alpha_from_compact(sums: np.ndarray) -> np.ndarray:
    """α_u from summed :func:`compact_counts` (rows: resamples), NaN where undefined.

    The counts are characters, whole numbers summed exactly (far below 2**53: N² for N
    characters), so summing ``s_c`` before or after ``n_c² − s_c`` gives the same floats.
    """
    sums = np.asarray(sums, dtype=float)  # squares of float32 sums would round
    total_n, total_s, n = sums[:, _FIRST], sums[:, _FIRST + 1], sums[:, _FIRST + 2 :]
    pairs = total_n**2 - total_s
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = 1 - (((n * n).sum(axis=1) - total_s) / pairs)
        observed = 1 - sums[:, _AGREE] / sums[:, _TOTAL]
        alpha = 1 - observed / expected
    undefined = (pairs <= 0) | (sums[:, _TOTAL] <= 0) | ~(expected > 1e-12)
    return np.where(undefined, np.nan, alpha)


def alpha_u(
    documents: Sequence[tuple[int, Sequence[Unit], Sequence[Unit]]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> AlphaU:
    """α_u over ``(length, units_a, units_b)`` per document, with a document bootstrap interval."""
    counts = alpha_counts(documents)
    interval = document_bootstrap(
        compact_counts(counts),
        lambda sums: {"alpha": alpha_from_compact(sums)},
        n_boot,
        seed,
        level,
    )
    return AlphaU(alpha_value(counts), interval.get("alpha", [None, None]))


def alpha_counts(documents: Sequence[tuple[int, Sequence[Unit], Sequence[Unit]]]) -> np.ndarray:
    """One row of additive counts per ``(length, units_a, units_b)`` document, ``2 + 2 (K + 1)``
    columns (see the module docstring; a document of no characters counts nothing)."""
    index = category_index([side for _, *sides in documents for side in sides])
    lengths = [length for length, _, _ in documents]

    def side(units: Sequence[Sequence[Unit]]) -> UnitArrays:
        flat = chain.from_iterable(
            (d, a, b, index[c])
            for d, (length, document) in enumerate(zip(lengths, units, strict=True))
            if length > 0
            for a, b, c in document
        )
        doc, a, b, c = np.fromiter(flat, dtype=np.int64).reshape(-1, 4).T
        return doc, a, b, c

    sides = [side([a for _, a, _ in documents]), side([b for _, _, b in documents])]
    return unit_counts(np.array(lengths, dtype=np.int64), sides, len(index) + 1)


# One annotator's units of every document: document (row), start, end, category (1..K).
UnitArrays = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def unit_counts(lengths: np.ndarray, units: Sequence[UnitArrays], k: int) -> np.ndarray:
    """:func:`alpha_counts` of documents of ``lengths`` whose two annotators' ``units`` are
    given as arrays, ``k`` categories with the gap (units of documents of no characters are left
    out)."""
    return UnitTable(lengths, units).counts(k)


class UnitTable:
    """Both annotators' distinct units of every document, laid end to end (no unit crosses a
    document's end): numpy's cost per call, not per document. What the counts read of the
    units' places (the characters each pair of units shares, those a unit shares with the other
    side's gap, those neither side covers) is computed once, for :meth:`counts` by the units'
    categories and, where it is the same units, by one category (:meth:`span_counts`)."""

    def __init__(self, lengths: np.ndarray, units: Sequence[UnitArrays]) -> None:
        n_docs = len(lengths)
        lengths = np.maximum(lengths, 0)
        starts = np.concatenate(([0], np.cumsum(lengths)))
        sides = [_side(lengths, side, starts) for side in units]
        self.sides = sides
        self.n_docs = n_docs
        # Unit against unit within a document: the characters each pair shares.
        (doc1, a1, b1, _, cover1), (doc2, a2, b2, _, cover2) = sides
        self.first, self.second = _pairs_within(doc1, doc2, n_docs)
        first, second = self.first, self.second
        self.shared = np.clip(
            np.minimum(b1[first], b2[second]) - np.maximum(a1[first], a2[second]), 0, None
        )
        total = _per_document(doc1[first], self.shared, n_docs)
        # A unit against the other side's gap: its characters the other side left uncovered.
        for (doc, a, b, _, _), cover in zip(sides, (cover2, cover1), strict=True):
            uncovered = (b - a) - (_covered(cover, b) - _covered(cover, a))
            total += _per_document(doc, uncovered, n_docs)
        # Characters neither side covers: the length less what the units of both cover.
        either = np.concatenate([a1, a2]), np.concatenate([b1, b2])
        order = np.argsort(either[0], kind="stable")
        covered = _covered(_cover(either[0][order], either[1][order]), starts)
        self.both_gap = lengths - np.diff(covered)
        self.total = total + self.both_gap
        # Each side's gap: the length less what its units cover.
        self.gaps = [lengths - np.diff(_covered(cover, starts)) for *_, cover in sides]

    @property
    def spans_distinct(self) -> bool:
        """Whether no annotator marked one span twice (with two categories): then the units
        by one category are these units."""
        return not any(
            np.any((np.diff(doc) == 0) & (np.diff(a) == 0) & (np.diff(b) == 0))
            for doc, a, b, _, _ in self.sides
        )

    def counts(self, k: int) -> np.ndarray:
        """:func:`alpha_counts`'s rows, ``k`` categories with the gap."""
        return self._counts(k, [c for _, _, _, c, _ in self.sides])

    def span_counts(self, k: int) -> np.ndarray:
        """:meth:`counts` of the same units all in category 1 (``k``: 2, or 1 without units),
        as unit arrays of category 1 count them: only when :attr:`spans_distinct`."""
        if not self.spans_distinct:
            raise ValueError("an annotator marked a span twice: its units by one category differ")
        return self._counts(k, [np.ones_like(c) for _, _, _, c, _ in self.sides])

    def _counts(self, k: int, categories: Sequence[np.ndarray]) -> np.ndarray:
        n_docs, width = self.n_docs, _FIRST + 2 * k
        out = np.zeros((n_docs, width), dtype=np.int64)
        (doc1, *_), _ = self.sides
        c1, c2 = categories
        out[:, _TOTAL] = self.total
        same = c1[self.first] == c2[self.second]
        out[:, _AGREE] = _per_document(doc1[self.first][same], self.shared[same], n_docs)
        out[:, _AGREE] += self.both_gap
        flat = out.reshape(-1)
        for (doc, a, b, _, _), c, gap in zip(self.sides, categories, self.gaps, strict=True):
            span = b - a
            flat += _per_document(doc * width + _FIRST + c, span, n_docs * width)
            flat += _per_document(doc * width + _FIRST + k + c, span * span, n_docs * width)
            out[:, _FIRST] += gap
            out[:, _FIRST + k] += gap
        return out


def _per_document(index: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """``values`` summed by ``index`` into ``size`` slots, as integers: ``np.add.at``'s result
    (exact: the counts are characters, far below 2**53), by ``np.bincount``, many times faster."""
    return np.bincount(index, weights=values, minlength=size).astype(np.int64)


# The characters some units cover, as disjoint intervals: starts, ends, and the characters
# covered before each; from units sorted by start, without a character-by-character array.
Cover = tuple[np.ndarray, np.ndarray, np.ndarray]


def _side(
    lengths: np.ndarray, units: UnitArrays, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Cover]:
    """One annotator's distinct units of every document (document, start, end, category; offsets
    in the documents laid end to end, in document order) and the characters they cover."""
    doc, a, b, c = units
    kept = (b > a) & (lengths[doc] > 0)
    if np.any((a[kept] < 0) | (b[kept] > lengths[doc[kept]])):
        length = int(lengths[doc[kept][(a[kept] < 0) | (b[kept] > lengths[doc[kept]])][0]])
        raise ValueError(f"a unit lies outside its document of {length} characters")
    # Identical units of one annotator count once; rows sorted by document, then offsets: the
    # rows of ``np.unique(..., axis=0)``, by one lexsort (unique's row sort is a structured one,
    # several times slower, and was most of a report's α_u time).
    doc, a, b, c = doc[kept], a[kept], b[kept], c[kept]
    order = np.lexsort((c, b, a, doc))
    doc, a, b, c = doc[order], a[order], b[order], c[order]
    new = np.ones(len(doc), dtype=bool)
    new[1:] = (np.diff(doc) != 0) | (np.diff(a) != 0) | (np.diff(b) != 0) | (np.diff(c) != 0)
    doc, a, b, c = doc[new], a[new], b[new], c[new]
    a, b = a + starts[doc], b + starts[doc]
    return doc, a, b, c, _cover(a, b)


def _cover(a: np.ndarray, b: np.ndarray) -> Cover:
    """:data:`Cover` of the units ``[a, b)``, sorted by ``a``. A unit starting at or after the
    end of all before it starts an interval (touching ones too: none crosses a document's end)."""
    reach = np.maximum.accumulate(b) if len(b) else b
    first = np.flatnonzero(np.concatenate(([True], a[1:] >= reach[:-1])))[: len(a)]
    ends = reach[np.concatenate((first[1:] - 1, [len(a) - 1]))] if len(a) else reach
    begins = a[first]
    return begins, ends, np.concatenate(([0], np.cumsum(ends - begins)))[:-1]


def _covered(cover: Cover, x: np.ndarray) -> np.ndarray:
    """How many characters before each offset ``x`` the cover holds."""
    begins, ends, before = cover
    if not len(begins):
        return np.zeros(len(x), dtype=np.int64)
    j = np.searchsorted(begins, x, side="right") - 1  # the last interval starting at or before x
    at = np.maximum(j, 0)
    return np.where(j >= 0, before[at] + np.minimum(x, ends[at]) - begins[at], 0)


def _pairs_within(doc1: np.ndarray, doc2: np.ndarray, n_docs: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (side-1 unit, side-2 unit) index pair of one document; both sides in document order."""
    count2 = np.bincount(doc2, minlength=n_docs)
    start2 = np.concatenate(([0], np.cumsum(count2)))[:-1]
    per_unit = count2[doc1]
    first = np.repeat(np.arange(len(doc1)), per_unit)
    # Within each unit's run, 0, 1, ...: the offset into its document's side-2 units.
    run_start = np.repeat(np.cumsum(per_unit) - per_unit, per_unit)
    second = start2[doc1[first]] + np.arange(len(first)) - run_start
    return first, second


def alpha_value(counts: np.ndarray) -> float | None:
    """α_u of the documents whose :func:`alpha_counts` rows are ``counts`` (None: undefined)."""
    value = float(alpha_from_counts(counts.sum(axis=0))[0])
    return None if np.isnan(value) else value
