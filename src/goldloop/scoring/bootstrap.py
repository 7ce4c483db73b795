"""Percentile bootstrap over documents: resample documents, re-sum their counts, recompute.

With a design (per-document ``weights`` and ``cells``) the resampling is the stratified
Rao–Wu bootstrap: in each cell of ``n_h`` documents, ``n_h - 1`` are drawn with replacement and
each draw weighs ``w · n_h / (n_h - 1)``, so the replicates' variance of a weighted total is the
stratified estimator's; a cell of one document keeps its weight (it adds no variance).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Ratios:
    """Metrics given as ratios of whole numbers (none negative), in groups sharing a denominator
    (a relation's strict and lenient F1: 2m over n_a + n_b): ``names[g * k + j]`` is
    ``numerators[g, j] / denominators[g]`` per resample (``k`` metrics a group; NaN where the
    denominator is 0). Their percentiles are :func:`ratio`'s floats', found faster
    (:func:`ratio_percentiles`)."""

    names: list[str]
    numerators: np.ndarray  # (groups, k, resamples)
    denominators: np.ndarray  # (groups, resamples)


Metrics = Callable[[np.ndarray], Mapping[str, np.ndarray]]
RatioMetrics = Callable[[np.ndarray], Ratios]
# Counts multiplied as a sparse matrix when at most this share of them is nonzero.
SPARSE_SHARE = 0.25
# Ratios of whole numbers up to this sort as 16-bit ranks (:func:`ratio_percentiles`).
SMALL = 127


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Element-wise ``numerator / denominator``, NaN where the denominator is 0 (undefined)."""
    num = np.asarray(numerator, dtype=float)
    den = np.asarray(denominator, dtype=float)
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def f1(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """Harmonic mean, NaN where either side is undefined or both are 0 (as the seed's None)."""
    total = precision + recall
    return ratio(2 * precision * recall, np.where(np.isnan(total), 0.0, total))


def document_bootstrap(
    per_document: np.ndarray,
    metrics: Metrics,
    n: int,
    seed: int,
    level: float = 0.95,
    *,
    weights: np.ndarray | None = None,
    cells: np.ndarray | None = None,
    ratios: RatioMetrics | None = None,
    float32: bool = False,
) -> dict[str, list[float | None]]:
    """``[low, high]`` per metric from ``n`` resamples of the rows (documents) of ``per_document``.

    ``metrics`` maps summed counts (shape ``(resamples, columns)``) to one value per resample;
    NaN resamples (undefined metric) are left out, and a metric undefined in every resample gets
    ``[None, None]``. The same ``seed`` gives the same intervals. ``weights`` and ``cells`` (one
    per document, both or neither) make the sums design-weighted and the resampling stratified
    (Rao–Wu, within each cell). ``ratios``: more metrics, given as :class:`Ratios` of the same
    summed counts (their names after ``metrics``'). ``float32``: plain resamples of whole counts
    are summed as float32 where that is exact (every sum below 2**24), half the memory; the
    metrics then read float32 sums.
    """
    if n <= 0 or len(per_document) == 0:
        return {}
    if (weights is None) != (cells is None):
        raise ValueError("weights and cells go together")
    rng = np.random.default_rng(seed)
    rows = len(per_document)
    if weights is None or cells is None:
        counts = np.asarray(per_document)
        # Weighted counts stay real; plain counts sum exactly as integers.
        resample = _plain_sums(
            rng, counts if counts.dtype.kind == "f" else counts.astype(np.int64), float32
        )
    else:
        resample = _stratified_sums(
            rng,
            np.asarray(per_document, dtype=float),
            np.asarray(weights, dtype=float),
            np.asarray(cells),
        )
    chunk = max(1, min(n, 2_000_000 // max(rows, 1)))
    values: dict[str, list[np.ndarray]] = {}
    blocks: list[Ratios] = []
    done = 0
    while done < n:
        size = min(chunk, n - done)
        sums = resample(size)
        for name, value in metrics(sums).items():
            values.setdefault(name, []).append(value)
        if ratios is not None:
            blocks.append(ratios(sums))
        done += size
    tail = (1 - level) / 2 * 100
    q = [tail, 100 - tail]
    bounds: dict[str, list[float | None]] = {}
    if values:
        # One row per metric (contiguous), read as its column: numpy sorts those faster.
        sample = np.stack([_joined(v) for v in values.values()]).T
        found = percentiles(sample, q)
        bounds |= _bounds(list(values), found, ~np.isnan(sample).all(axis=0))
    if blocks:
        numerators = _joined([b.numerators for b in blocks], axis=2)
        denominators = _joined([b.denominators for b in blocks], axis=1)
        found = ratio_percentiles(numerators, denominators, q)
        # NaN only where undefined in every resample: the ratios of whole numbers are finite.
        bounds |= _bounds(blocks[0].names, found, ~np.isnan(found[0]))
    return bounds


def _bounds(
    names: list[str], found: np.ndarray, defined: np.ndarray
) -> dict[str, list[float | None]]:
    low, high = found
    return {
        name: [float(low[k]), float(high[k])] if defined[k] else [None, None]
        for k, name in enumerate(names)
    }


def _joined(chunks: list[np.ndarray], axis: int = 0) -> np.ndarray:
    return np.concatenate(chunks, axis=axis) if len(chunks) > 1 else chunks[0]


def ratio_percentiles(
    numerators: np.ndarray, denominators: np.ndarray, q: list[float]
) -> np.ndarray:
    """:func:`percentiles` of :class:`Ratios`' metrics (``numerators``: groups × k × resamples,
    ``denominators``: groups × resamples), a column per metric in their order.

    A group of ratios of whole numbers from 0 to :data:`SMALL` (a relation's F1) is sorted as
    the ranks of its fractions among all such fractions: 16-bit keys, which numpy sorts by
    radix, several times faster than the floats. The same floats come out: each rank stands
    for one float, one correctly rounded division whatever the terms it came from, and ranks
    are in the floats' order. Other groups are sorted as floats.
    """
    groups, k, size = numerators.shape
    out = np.empty((len(q), groups * k))
    largest = numerators.max(axis=2, initial=0)  # each metric's
    small = (largest.max(axis=1, initial=0) <= SMALL) & (
        denominators.max(axis=1, initial=0) <= SMALL
    )
    if not small.all():
        large = ~small
        floats = ratio(numerators[large], denominators[large][:, None, :])
        out[:, np.repeat(large, k)] = percentiles(floats.reshape(-1, size).T, q)
    if small.any():
        rank, value = _fractions()
        # Every group's index into the table at once (a large group's set to 0, its result
        # dropped), in float (exact: whole numbers), then as int32: numpy's quickest cast.
        index = np.multiply(numerators, SMALL + 1)
        index += denominators[:, None, :]
        index[~small] = 0
        valid = np.repeat(np.count_nonzero(denominators > 0, axis=1), k)
        # A ratio 0 in every resample (a relation never paired strictly: a third of a report's
        # F1s) is 0 wherever defined: nothing to sort.
        zero = np.repeat(small, k) & (largest.reshape(-1) == 0)
        out[:, zero] = np.where(valid[zero] > 0, 0.0, np.nan)
        rows = np.flatnonzero(np.repeat(small, k) & ~zero)
        keys = rank[index.reshape(-1, size)[rows].astype(np.int32)]
        keys.sort(axis=1, kind="stable")  # radix, for 16-bit keys
        out[:, rows] = _sorted_percentiles(valid[rows], q, lambda i, row: value[keys[row, i]])
    return out


@cache
def _fractions() -> tuple[np.ndarray, np.ndarray]:
    """Each ``n / d`` (0 <= n, d <= SMALL; index ``n (SMALL + 1) + d``) as its rank among their
    distinct :func:`ratio` floats (NaN, where d is 0, last), and each rank's float."""
    n, d = np.divmod(np.arange((SMALL + 1) ** 2), SMALL + 1)
    value, rank = np.unique(ratio(n, d), return_inverse=True)  # one NaN, last
    assert len(value) <= 2**16
    return rank.astype(np.uint16), value


def percentiles(sample: np.ndarray, q: list[float]) -> np.ndarray:
    """Each column's percentiles ``q`` over its non-NaN values (rows: ``q``), NaN for a column
    without any: the same floats as ``np.percentile(column[~isnan], q)`` one column at a time.

    One sort for all columns instead of one ``np.percentile`` call each (hundreds per report);
    the interpolation is numpy's linear method step by step (``_quantile``, ``_get_indexes``,
    ``_lerp`` in numpy 2.2), so the values are numpy's own, not merely close to them.
    """
    by_column = np.asarray(sample, dtype=float).T  # each column contiguous, as the caller's
    out = np.empty((len(q), by_column.shape[0]))
    # A column whose defined values are all one value (a relation never paired strictly: F1 0
    # in every resample; a third of an agreement report's) has it as every percentile (numpy's
    # interpolation between equal values gives the value itself): only the others are sorted,
    # the sort being most of the time.
    smallest, largest = np.fmin.reduce(by_column, axis=1), np.fmax.reduce(by_column, axis=1)
    constant = smallest == largest  # False where all are NaN
    out[:, constant] = smallest[constant]
    varies = by_column[~constant]  # a copy: sorted in place
    varies.sort(axis=1)
    valid = np.count_nonzero(~np.isnan(varies), axis=1)
    out[:, ~constant] = _sorted_percentiles(valid, q, lambda i, column: varies[column, i])
    return out


def _sorted_percentiles(
    valid: np.ndarray, q: list[float], at: Callable[[np.ndarray, np.ndarray], np.ndarray]
) -> np.ndarray:
    """:func:`percentiles` of columns sorted (NaN last) with ``valid`` values each, whose
    values ``at(positions, columns)`` reads."""
    quantiles = np.true_divide(np.asarray(q, dtype=float), np.float64(100))
    virtual = (valid - 1)[None, :] * quantiles[:, None]
    below = np.floor(virtual)
    previous = below.astype(np.intp)
    following = (below + 1).astype(np.intp)
    # numpy's index rules on a column of ``valid`` values: at or past the last value both ends
    # are the last (index -1, which gamma also sees), before the first both are the first.
    last = virtual >= (valid - 1)[None, :]
    previous[last] = -1
    following[last] = -1
    first = virtual < 0
    previous[first] = 0
    following[first] = 0
    gamma = virtual - previous
    end = np.broadcast_to(valid - 1, previous.shape)
    columns = np.broadcast_to(np.arange(len(valid)), previous.shape)
    low = at(np.where(previous == -1, end, previous).clip(0), columns)
    high = at(np.where(following == -1, end, following).clip(0), columns)
    diff = high - low
    out = low + diff * gamma
    np.subtract(high, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    out[:, valid == 0] = np.nan
    return out


def _plain_sums(
    rng: np.random.Generator, counts: np.ndarray, float32: bool = False
) -> Callable[[int], np.ndarray]:
    """The summed counts of ``size`` resamples of all rows: how often each document is drawn,
    then the counts those draws sum to (``float32``: as float32 where every column's are
    exact so, float counts holding whole numbers)."""
    rows = len(counts)
    as_float = np.asarray(counts, dtype=float)  # no copy of float counts
    magnitude = np.abs(as_float)
    # Whole counts (integers, or floats holding integers) multiply faster as floats (BLAS),
    # exactly while every partial sum stays below 2**53: a resample draws no row more than
    # ``rows`` times.
    whole = counts.dtype.kind != "f" or bool(np.all(as_float == np.trunc(as_float)))
    exact = whole and rows * magnitude.sum(axis=0).max(initial=0) < 2**53
    # A column of zeros sums to zero in every resample (most per relation columns of an
    # agreement report, some in every document): only the others are multiplied. Columns whose
    # sums stay below 2**24 (``rows`` draws of their largest count) multiply as float32, as
    # exactly and twice as fast. Column by column (the transpose): each column's resample sums
    # are then contiguous, which the metrics and the percentiles read faster.
    largest = magnitude.max(axis=0, initial=0)
    nonzero = largest > 0
    used, unused = np.flatnonzero(nonzero), np.flatnonzero(~nonzero)
    single = rows * largest[used] < 2**24
    by_column = as_float.T
    # Sparse rows where most counts are zero (most columns of an agreement report are one
    # relation's, counted in a few documents): scipy's product is single-threaded C over the
    # nonzeros, as fast as the dense BLAS product on one core (200 documents, 1,150 columns:
    # 3.2 ms against 4.8) and, unlike it, not slowed several-fold when other processes hold the
    # cores BLAS's threads wait for. Dense counts (a score's few columns) keep BLAS. Exact
    # either way: whole counts sum to the same floats in any order.
    parts: list[tuple[np.ndarray, Any]] = []
    narrow = float32 and exact and counts.dtype.kind == "f" and bool(single.all())
    for columns, dtype in ((used[single], np.float32), (used[~single], np.float64)):
        if not len(columns):
            continue
        block = np.ascontiguousarray(by_column[columns], dtype=dtype)
        at = np.flatnonzero(block != 0)  # numpy finds a mask's nonzeros far faster than floats'
        if len(at) > SPARSE_SHARE * block.size:
            parts.append((columns, block))
            continue
        from scipy import sparse  # loaded with the first sparse bootstrap, not every command

        # CSR's arrays straight from the nonzeros (scipy's own conversion of a dense array is
        # several times slower): row by row, each row's nonzero columns in order.
        indptr = np.searchsorted(at, np.arange(len(block) + 1) * rows)
        matrix = sparse.csr_matrix((block.ravel()[at], at % rows, indptr), shape=block.shape)
        parts.append((columns, matrix))

    def resample(size: int) -> np.ndarray:
        # One draw of all (size, rows) indices: the same stream as ``size`` draws of ``rows``.
        draws = rng.integers(0, rows, (size, rows))
        draws += np.arange(size)[:, None] * rows
        times = np.bincount(draws.ravel(), minlength=size * rows).reshape(size, rows)
        if not exact:
            return times @ counts
        sums = np.empty((counts.shape[1], size), dtype=np.float32 if narrow else np.float64)
        sums[unused] = 0.0
        for columns, matrix in parts:
            sums[columns] = matrix @ np.ascontiguousarray(times.T, dtype=matrix.dtype)
        return sums.T if whole and counts.dtype.kind == "f" else sums.T.astype(counts.dtype)

    return resample


def _stratified_sums(
    rng: np.random.Generator, counts: np.ndarray, weights: np.ndarray, cells: np.ndarray
) -> Callable[[int], np.ndarray]:
    """The weighted summed counts of ``size`` Rao–Wu resamples within cells."""
    order = np.argsort(cells, kind="stable")
    _, starts, sizes = np.unique(cells[order], return_index=True, return_counts=True)
    # Rows in cell order, each scaled by its weight in one draw: a resample's sums are then the
    # draw counts times these rows, plus the lone cells' fixed part.
    scale = np.repeat(np.where(sizes > 1, sizes / np.maximum(sizes - 1, 1), 0.0), sizes)
    ordered = counts[order] * (weights[order] * scale)[:, None]
    lone = np.repeat(sizes == 1, sizes)
    fixed = weights[order][lone] @ counts[order][lone]
    # One slot per draw: n_h - 1 per cell, each uniform over the cell's rows.
    resampled = sizes > 1
    slot_start = np.repeat(starts[resampled], sizes[resampled] - 1).astype(np.int32)
    slot_size = np.repeat(sizes[resampled], sizes[resampled] - 1).astype(float)
    rows = len(counts)

    def resample(size: int) -> np.ndarray:
        picks = rng.random((size, len(slot_start)))
        np.multiply(picks, slot_size, out=picks)
        index = picks.astype(np.int32)
        index += slot_start
        return np.stack([np.bincount(row, minlength=rows) @ ordered for row in index]) + fixed

    return resample
