"""Intervals over documents: the bootstrap every report's interval comes from."""

from __future__ import annotations

import numpy as np
import pytest

from goldloop.scoring.bootstrap import document_bootstrap, ratio


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
