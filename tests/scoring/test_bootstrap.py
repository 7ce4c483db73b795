"""Intervals over documents: the bootstrap every report's interval comes from."""

from __future__ import annotations

import numpy as np
import pytest

from goldloop.scoring import bootstrap
from goldloop.scoring.bootstrap import document_bootstrap, percentiles, ratio


def test_document_bootstrap_matches_a_plain_loop() -> None:
    counts = np.array([[3, 1], [5, 5], [2, 0], [4, 4], [1, 1]])
    intervals = document_bootstrap(counts, lambda s: {"acc": ratio(s[:, 1], s[:, 0])}, 500, seed=3)
    rng = np.random.default_rng(3)
    values = []
    for _ in range(500):
        weights = np.bincount(rng.integers(0, 5, 5), minlength=5)
        total = weights @ counts
        values.append(total[1] / total[0])
    assert intervals["acc"] == pytest.approx(list(np.percentile(values, [2.5, 97.5])))


@pytest.mark.parametrize("seed", range(20))
def test_percentiles_are_numpys_per_column_floats(seed: int) -> None:
    """All columns at once give exactly (==) the floats of one ``np.percentile`` per column over
    its non-NaN values: NaN at random, an all-NaN column, one valid value, ties, negatives."""
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(1, 60))
    sample = rng.normal(size=(rows, 9)) * 10.0 ** rng.integers(-3, 4)
    sample[rng.random(sample.shape) < rng.random()] = np.nan
    sample[:, 0] = np.nan
    sample[:, 1] = np.nan
    sample[rng.integers(0, rows), 1] = 0.25
    sample[:, 2] = np.round(sample[:, 2])  # ties
    sample[:, 3] = 0.5
    level = float(rng.choice([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]))
    q = [(1 - level) / 2 * 100, 100 - (1 - level) / 2 * 100]
    found = percentiles(sample, q)
    for column in range(sample.shape[1]):
        values = sample[:, column]
        values = values[~np.isnan(values)]
        if values.size == 0:
            assert np.isnan(found[:, column]).all()
        else:
            assert found[:, column].tolist() == np.percentile(values, q).tolist()


@pytest.mark.parametrize("large", [False, True])
def test_sparse_counts_resample_to_the_dense_product(large: bool) -> None:
    """Mostly zero counts (an agreement report's per relation columns) are multiplied as a
    sparse matrix: every resample's sums equal (==) the dense product of the same draws, as
    float32 and, with counts too large for it, as float64; zero columns sum to 0."""
    rng = np.random.default_rng(3)
    counts = rng.integers(1, 9, (40, 60)) * (rng.random((40, 60)) < 0.06)
    counts[:, 5] = 0
    counts[:, 7] = 3  # one dense column among the sparse ones
    if large:
        counts[0, 9] = 5
        counts[:, 9] *= 2**20  # 40 draws of it overflow float32's exact integers
    values: list[np.ndarray] = []

    def metrics(sums: np.ndarray) -> dict[str, np.ndarray]:
        values.append(sums.copy())
        return {"first": sums[:, 0]}

    document_bootstrap(counts, metrics, 50, seed=2)
    draws = np.random.default_rng(2).integers(0, 40, (50, 40))
    times = np.stack([np.bincount(row, minlength=40) for row in draws])
    assert np.count_nonzero(counts) < bootstrap.SPARSE_SHARE * counts.size
    assert values[0].tolist() == (times @ counts).tolist()


def test_plain_resamples_are_one_draw_per_document_as_before() -> None:
    """The vectorised draw keeps the per-resample stream: intervals equal (==) a loop of
    ``bincount`` draws and per-figure ``np.percentile`` on an odd number of integer rows."""
    rng = np.random.default_rng(7)
    counts = rng.integers(0, 4, (31, 4))
    counts[:, 2] = 0  # an undefined ratio in every resample

    def metrics(s: np.ndarray) -> dict[str, np.ndarray]:
        return {"a": ratio(s[:, 1], s[:, 0]), "b": ratio(s[:, 3], s[:, 2])}

    intervals = document_bootstrap(counts, metrics, 300, seed=5)
    draws = np.random.default_rng(5)
    times = np.stack([np.bincount(draws.integers(0, 31, 31), minlength=31) for _ in range(300)])
    values = metrics(times @ counts)["a"]
    expected = np.percentile(values[~np.isnan(values)], [2.5, 97.5])
    assert intervals == {"a": [float(expected[0]), float(expected[1])], "b": [None, None]}


@pytest.mark.parametrize("seed", range(10))
def test_ratio_percentiles_are_the_floats_percentiles(seed: int) -> None:
    """Ratios of whole numbers sorted as ranks of their fractions give exactly (==) the
    percentiles of ``ratio``'s floats: small groups (ranks) and large ones (floats) mixed, zero
    denominators (NaN), a group never defined, equal fractions with other terms (1/2, 2/4)."""
    rng = np.random.default_rng(seed)
    groups, k, size = 12, 2, int(rng.integers(1, 400))
    denominators = rng.integers(0, 40, (groups, size)).astype(float)
    numerators = np.floor(rng.random((groups, k, size)) * (denominators[:, None, :] + 1))
    denominators[0] = 0  # undefined throughout
    denominators[1] *= 50  # beyond SMALL: sorted as floats
    numerators[1] *= 50
    denominators[2, : size // 2] = 4
    numerators[2, 0, : size // 2] = 2
    numerators[3, 1] = 0  # 0 throughout: 0 where defined
    q = [2.5, 97.5]
    found = bootstrap.ratio_percentiles(numerators, denominators, q)
    floats = ratio(numerators, denominators[:, None, :]).reshape(-1, size)
    expected = percentiles(floats.T, q)
    assert np.array_equal(found, expected, equal_nan=True)


def test_ratios_give_the_intervals_of_their_floats() -> None:
    """A bootstrap's metrics given as Ratios have the intervals of the same metrics as floats."""
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 5, (60, 6)) * (rng.random((60, 6)) < 0.5)

    def as_floats(sums: np.ndarray) -> dict[str, np.ndarray]:
        return {f"{j}": ratio(sums[:, j], sums[:, 5]) for j in range(5)}

    def as_ratios(sums: np.ndarray) -> bootstrap.Ratios:
        numerators = sums[:, :4].T.reshape(2, 2, len(sums))
        return bootstrap.Ratios(["0", "1", "2", "3"], numerators, sums[:, [5, 5]].T)

    expected = document_bootstrap(counts, as_floats, 300, seed=1)
    found = document_bootstrap(
        counts, lambda s: {"4": as_floats(s)["4"]}, 300, seed=1, ratios=as_ratios
    )
    assert found == expected


def test_float32_sums_are_the_float64_sums_where_exact() -> None:
    """Whole float counts resampled with ``float32`` sum to float32 equal (==) to the float64
    sums where every sum fits (below 2**24); with one column too large, float64 throughout."""
    rng = np.random.default_rng(8)
    counts = (rng.integers(0, 6, (50, 30)) * (rng.random((50, 30)) < 0.3)).astype(float)
    wide = bootstrap._plain_sums(np.random.default_rng(1), counts)(40)
    narrow = bootstrap._plain_sums(np.random.default_rng(1), counts, float32=True)(40)
    assert (wide.dtype, narrow.dtype) == (np.float64, np.float32)
    assert narrow.astype(float).tolist() == wide.tolist()
    counts[0, 3] = 2.0**20  # 50 draws of it pass 2**24
    mixed = bootstrap._plain_sums(np.random.default_rng(1), counts, float32=True)(40)
    assert mixed.dtype == np.float64
    assert mixed.tolist() == bootstrap._plain_sums(np.random.default_rng(1), counts)(40).tolist()
