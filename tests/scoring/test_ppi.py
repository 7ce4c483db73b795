"""Prediction-powered precision: the seed's worked example, Wilson against scipy, coverage."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from goldloop.scoring.ppi import is_calibrated, prediction_powered, wilson

# The worked example of ../shared/seeds/003 ("Labels and judges"): 1,000 facts, 850 judged
# supported; 120 labelled at random, on which the judge let 12 false facts through and lost 4.
JUDGED = [True] * 850 + [False] * 150
LABELLED = [(True, True)] * 86 + [(True, False)] * 12 + [(False, True)] * 4 + [(False, False)] * 18


def test_worked_example_holds_exactly() -> None:
    judge, corrected, labels = prediction_powered(JUDGED, LABELLED)
    assert judge.value == 0.85
    assert (judge.low, judge.high) == (None, None)
    assert (round(corrected.value, 3), round(corrected.low, 3), round(corrected.high, 3)) == (
        0.783,
        0.714,
        0.853,
    )
    assert labels.value == 0.75
    assert (round(labels.low, 3), round(labels.high, 3)) == (0.666, 0.819)
    # As the README and the CLI tables print them.
    assert (str(judge), str(corrected), str(labels)) == (
        "0.850",
        "0.783 [0.714, 0.853]",
        "0.750 [0.666, 0.819]",
    )


def test_perfect_agreement_still_leaves_a_range() -> None:
    judged = [True] * 500
    labelled = [(True, True)] * 120
    _, corrected, _ = prediction_powered(judged, labelled)
    assert corrected.value == 1.0
    assert corrected.high == 1.0
    assert corrected.low is not None and corrected.low < 0.99


def test_interval_is_clipped_to_the_unit_range() -> None:
    judged = [False] * 400
    labelled = [(False, False)] * 10
    _, corrected, labels = prediction_powered(judged, labelled)
    assert corrected.value == 0.0
    assert corrected.low == 0.0
    assert corrected.high is not None and 0 < corrected.high < 1
    assert labels.low == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize(
    ("successes", "n"), [(0, 7), (3, 10), (90, 120), (119, 120), (50, 50), (412, 1000)]
)
def test_wilson_matches_scipy(successes: int, n: int) -> None:
    ours = wilson(successes, n)
    ci = binomtest(successes, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert ours.low == pytest.approx(ci.low, abs=1e-12)
    assert ours.high == pytest.approx(ci.high, abs=1e-12)


def test_calibrated_from_one_hundred_labels() -> None:
    assert not is_calibrated(99)
    assert is_calibrated(100)


@pytest.mark.parametrize(
    ("judged", "labelled", "message"),
    [
        ([], [(True, True)], "nothing was judged"),
        ([True], [], "no labelled items"),
        ([True], [(True, True), (True, False)], "must be a sample"),
    ],
)
def test_bad_input_is_refused(
    judged: list[bool], labelled: list[tuple[bool, bool]], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        prediction_powered(judged, labelled)


@pytest.mark.parametrize(
    ("precision", "false_support", "lost_support", "n_judged", "n_labelled"),
    [
        (0.70, 0.30, 0.05, 1000, 120),  # a lenient judge: overstates precision
        (0.60, 0.05, 0.30, 3000, 200),  # a strict judge: understates it
        (0.90, 0.60, 0.02, 500, 100),
    ],
)
def test_interval_covers_the_true_precision_about_95_percent(
    precision: float, false_support: float, lost_support: float, n_judged: int, n_labelled: int
) -> None:
    """Simulated biased judges: the corrected interval covers the truth near 95% of the time,
    while the judge's own share is far off."""
    rng = np.random.default_rng(20231013)
    trials = 1000
    covered = 0
    judge_error = []
    for _ in range(trials):
        truth = rng.random(n_judged) < precision
        verdicts = np.where(
            truth, rng.random(n_judged) >= lost_support, rng.random(n_judged) < false_support
        )
        sample = rng.choice(n_judged, n_labelled, replace=False)
        judge, corrected, _ = prediction_powered(
            verdicts.tolist(),
            list(zip(verdicts[sample].tolist(), truth[sample].tolist(), strict=True)),
        )
        assert corrected.low is not None and corrected.high is not None
        covered += corrected.low <= precision <= corrected.high
        judge_error.append(judge.value - precision)
    assert 0.935 <= covered / trials <= 0.985
    assert abs(float(np.mean(judge_error))) > 0.03
