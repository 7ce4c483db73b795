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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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


def document_counts(
    length: int, units_a: Sequence[Unit], units_b: Sequence[Unit], index: Mapping[str, int]
) -> np.ndarray:
    """One document's additive counts (see the module docstring), ``2 + 2 (K + 1)`` columns."""
    k = len(index) + 1
    row = np.zeros(_FIRST + 2 * k, dtype=np.int64)
    if length <= 0:
        return row
    sides = [_side(units, length, index) for units in (units_a, units_b)]
    (a1, b1, c1, cover1), (a2, b2, c2, cover2) = sides
    # Unit against unit: the characters each pair shares.
    shared = np.clip(np.minimum.outer(b1, b2) - np.maximum.outer(a1, a2), 0, None)
    total = int(shared.sum())
    agree = int(shared[np.equal.outer(c1, c2)].sum())
    # A unit against the other side's gap: its characters the other side left uncovered.
    prefix1 = np.concatenate(([0], np.cumsum(cover1)))
    prefix2 = np.concatenate(([0], np.cumsum(cover2)))
    total += int((b1 - a1).sum() - (prefix2[b1] - prefix2[a1]).sum())
    total += int((b2 - a2).sum() - (prefix1[b2] - prefix1[a2]).sum())
    both_gap = int(np.count_nonzero(~cover1 & ~cover2))
    row[_AGREE] = agree + both_gap
    row[_TOTAL] = total + both_gap
    n = row[_FIRST : _FIRST + k]
    s = row[_FIRST + k :]
    for a, b, c, cover in sides:
        lengths = b - a
        np.add.at(n, c, lengths)
        np.add.at(s, c, lengths * lengths)
        gap = length - int(np.count_nonzero(cover))
        n[0] += gap
        s[0] += gap
    return row


def _side(
    units: Sequence[Unit], length: int, index: Mapping[str, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    kept = sorted({(a, b, c) for a, b, c in units if b > a})
    if any(a < 0 or b > length for a, b, _ in kept):
        raise ValueError(f"a unit lies outside its document of {length} characters")
    a = np.array([u[0] for u in kept], dtype=np.int64)
    b = np.array([u[1] for u in kept], dtype=np.int64)
    c = np.array([index[u[2]] for u in kept], dtype=np.int64)
    # Which characters some unit covers: +1 at each start, −1 at each end, running sum.
    steps = np.zeros(length + 1, dtype=np.int64)
    np.add.at(steps, a, 1)
    np.add.at(steps, b, -1)
    return a, b, c, np.cumsum(steps[:-1]) > 0


def alpha_from_counts(sums: np.ndarray) -> np.ndarray:
    """α_u from summed document counts (rows: resamples), NaN where undefined."""
    sums = np.atleast_2d(np.asarray(sums, dtype=float))
    k = (sums.shape[1] - _FIRST) // 2
    n = sums[:, _FIRST : _FIRST + k]
    s = sums[:, _FIRST + k :]
    total_n = n.sum(axis=1)
    pairs = total_n**2 - s.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = 1 - ((n * n - s).sum(axis=1) / pairs)
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
        counts, lambda sums: {"alpha": alpha_from_counts(sums)}, n_boot, seed, level
    )
    return AlphaU(alpha_value(counts), interval.get("alpha", [None, None]))


def alpha_counts(documents: Sequence[tuple[int, Sequence[Unit], Sequence[Unit]]]) -> np.ndarray:
    """One row of additive counts per ``(length, units_a, units_b)`` document."""
    index = category_index([side for _, *sides in documents for side in sides])
    return np.array(
        [document_counts(length, a, b, index) for length, a, b in documents], dtype=np.int64
    ).reshape(len(documents), _FIRST + 2 * (len(index) + 1))


def alpha_value(counts: np.ndarray) -> float | None:
    """α_u of the documents whose :func:`alpha_counts` rows are ``counts`` (None: undefined)."""
    value = float(alpha_from_counts(counts.sum(axis=0))[0])
    return None if np.isnan(value) else value
