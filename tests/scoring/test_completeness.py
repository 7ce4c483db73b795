"""goldloop.scoring.completeness: Chapman's capture–recapture estimate over double documents."""

from __future__ import annotations

import numpy as np
import pytest

from goldloop.scoring.completeness import estimate_completeness


def test_counts_use_the_agreement_matcher_and_chapman_by_hand() -> None:
    docs = [
        ({(0, 5), (10, 15)}, {(0, 5)}),
        ({(20, 25)}, {(21, 24), (30, 35)}),  # (21, 24) overlaps (20, 25): the same mention
    ]
    result = estimate_completeness(docs, n_boot=200)
    assert (result.n_docs, result.n1, result.n2, result.m) == (2, 3, 3, 2)
    n_hat = 4 * 4 / 3 - 1
    assert result.n_hat == pytest.approx(n_hat)
    assert result.recall_1 == pytest.approx(3 / n_hat)
    assert result.recall_2 == pytest.approx(3 / n_hat)
    assert result.recall_both == pytest.approx(4 / n_hat)
    low, high = result.n_hat_ci
    assert low is not None and high is not None and low <= n_hat <= high
    data = result.to_dict()
    assert data["n_hat_ci"] == [low, high] and "independently" in data["assumption"]
    assert data["bootstrap"] == {"n": 200, "seed": 0, "level": 0.95}
    assert estimate_completeness(docs, n_boot=200) == result  # seeded


def test_nothing_marked_leaves_recall_undefined() -> None:
    empty = estimate_completeness([(set(), set())], n_boot=50)
    assert (empty.n_hat, empty.recall_1, empty.recall_both) == (0.0, None, None)
    assert empty.recall_1_ci == (None, None)
    none = estimate_completeness([])
    assert (none.n_docs, none.n_hat, none.n_hat_ci) == (0, 0.0, (None, None))


def _campaign(
    rng: np.random.Generator, p1: float, p2: float, shared_difficulty: float = 0.0
) -> tuple[list[tuple[set[tuple[int, int]], set[tuple[int, int]]]], int]:
    """80 documents of 1-8 mentions; each annotator finds a mention with its own probability
    (times the mention's ease when ``shared_difficulty`` > 0, which correlates the misses).
    Annotator 2 marks one character more at the end half the time: still the same mention."""
    docs = []
    total = 0
    for _ in range(80):
        k = int(rng.integers(1, 9))
        total += k
        first: set[tuple[int, int]] = set()
        second: set[tuple[int, int]] = set()
        for j in range(k):
            a, b = 20 * j, 20 * j + 8
            ease = 1.0 - shared_difficulty * rng.random()
            if rng.random() < p1 * ease:
                first.add((a, b))
            if rng.random() < p2 * ease:
                second.add((a, b + int(rng.integers(0, 2))))
        docs.append((first, second))
    return docs, total


def test_the_95_interval_covers_the_true_total_in_at_least_90_percent_of_campaigns() -> None:
    rng = np.random.default_rng(20260601)
    covered = 0
    widths = []
    for campaign in range(200):
        docs, total = _campaign(rng, p1=0.7, p2=0.5)
        low, high = estimate_completeness(docs, seed=campaign).n_hat_ci
        assert low is not None and high is not None
        covered += low <= total <= high
        widths.append((high - low) / total)
    assert covered >= 180, covered
    # Not covering by being useless: about ±13% of the total here (documents vary in how many
    # mentions they hold, and the bootstrap over documents carries that too).
    assert float(np.mean(widths)) < 0.35


def test_correlated_misses_make_the_total_too_low_and_recall_too_high() -> None:
    rng = np.random.default_rng(7)
    ratios = []
    for _ in range(40):
        docs, total = _campaign(rng, p1=0.9, p2=0.9, shared_difficulty=0.9)
        ratios.append(estimate_completeness(docs, n_boot=0).n_hat / total)
    assert float(np.mean(ratios)) < 0.95
