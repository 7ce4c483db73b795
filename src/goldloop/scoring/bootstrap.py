"""Percentile bootstrap over documents: resample documents, re-sum their counts, recompute."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Metrics = Callable[[np.ndarray], dict[str, np.ndarray]]


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
    per_document: np.ndarray, metrics: Metrics, n: int, seed: int, level: float = 0.95
) -> dict[str, list[float | None]]:
    """``[low, high]`` per metric from ``n`` resamples of the rows (documents) of ``per_document``.

    ``metrics`` maps summed counts (shape ``(resamples, columns)``) to one value per resample;
    NaN resamples (undefined metric) are left out, and a metric undefined in every resample gets
    ``[None, None]``. The same ``seed`` gives the same intervals.
    """
    if n <= 0 or len(per_document) == 0:
        return {}
    rng = np.random.default_rng(seed)
    counts = np.asarray(per_document)
    # Weighted counts (corpus figures) stay real; plain counts sum exactly as integers.
    counts = counts if counts.dtype.kind == "f" else counts.astype(np.int64)
    rows = len(counts)
    chunk = max(1, min(n, 2_000_000 // max(rows, 1)))
    values: dict[str, list[np.ndarray]] = {}
    done = 0
    while done < n:
        size = min(chunk, n - done)
        # How often each document is drawn in each resample, then the counts those draws sum to.
        weights = np.stack(
            [np.bincount(rng.integers(0, rows, rows), minlength=rows) for _ in range(size)]
        )
        for name, value in metrics(weights @ counts).items():
            values.setdefault(name, []).append(value)
        done += size
    tail = (1 - level) / 2 * 100
    out: dict[str, list[float | None]] = {}
    for name, parts in values.items():
        sample = np.concatenate(parts)
        sample = sample[~np.isnan(sample)]
        if sample.size == 0:
            out[name] = [None, None]
        else:
            low, high = np.percentile(sample, [tail, 100 - tail])
            out[name] = [float(low), float(high)]
    return out
