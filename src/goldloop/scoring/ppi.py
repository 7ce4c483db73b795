"""Precision without gold: a judge's verdicts corrected by a small labelled sample.

Prediction-powered inference (Angelopoulos et al., Science 382, 2023): the judge's supported
share over all N judged items, plus the mean gap between human labels and the judge on the n
labelled ones. The labelled items are among the judged ones, hence the variance
``Var(y)/N + Var(y - f) * (1/n - 1/N)``. Both variances use plus-two counts so that a sample
where labels and judge agree everywhere still leaves a range.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from math import sqrt
from statistics import NormalDist

# Below this many labels the normal approximation is not trusted: the estimate is uncalibrated.
MIN_CALIBRATED_LABELS = 100


@dataclass(frozen=True)
class Estimate:
    """A share with its interval; ``low``/``high`` are ``None`` where there is no range."""

    value: float
    low: float | None = None
    high: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return asdict(self)

    def __str__(self) -> str:
        """``0.750 [0.666, 0.819]``, or the value alone when there is no range."""
        if self.low is None or self.high is None:
            return f"{self.value:.3f}"
        return f"{self.value:.3f} [{self.low:.3f}, {self.high:.3f}]"


def z_value(confidence: float) -> float:
    """Two-sided normal quantile for a confidence level (1.95996... for 0.95)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(successes: int, n: int, confidence: float = 0.95) -> Estimate:
    """The share with its Wilson score interval."""
    if n <= 0:
        raise ValueError("the Wilson interval needs at least one observation")
    z = z_value(confidence)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return Estimate(p, max(0.0, centre - half), min(1.0, centre + half))


def prediction_powered(
    judged: Sequence[bool],
    labelled: Sequence[tuple[bool, bool]],
    confidence: float = 0.95,
) -> tuple[Estimate, Estimate, Estimate]:
    """(judge only, PPI-corrected, labels only) precision.

    ``judged`` holds the judge's verdict (supported or not) on every item; ``labelled`` holds
    ``(judge_verdict, human_label)`` for a random sample of those items.
    """
    n_judged, n_labelled = len(judged), len(labelled)
    if n_judged == 0:
        raise ValueError("nothing was judged")
    if n_labelled == 0:
        raise ValueError("no labelled items: the judge cannot be corrected")
    if n_labelled > n_judged:
        raise ValueError(
            f"{n_labelled} labelled but {n_judged} judged: labels must be a sample of them"
        )
    judge_share = sum(map(bool, judged)) / n_judged
    label_sum = sum(bool(y) for _, y in labelled)
    gap = (label_sum - sum(bool(f) for f, _ in labelled)) / n_labelled
    disagreements = sum(bool(f) != bool(y) for f, y in labelled)
    smoothed = (label_sum + 2) / (n_labelled + 4)
    var_labels = smoothed * (1 - smoothed)
    # y - f lies in {-1, 0, 1}: its variance is at most its second moment, the disagreement share.
    var_gap = (disagreements + 2) / (n_labelled + 4)
    variance = var_labels / n_judged + var_gap * (1 / n_labelled - 1 / n_judged)
    half = z_value(confidence) * sqrt(variance)
    value = judge_share + gap
    corrected = Estimate(_clip(value), _clip(value - half), _clip(value + half))
    return Estimate(judge_share), corrected, wilson(label_sum, n_labelled, confidence)


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


def is_calibrated(n_labelled: int) -> bool:
    """Whether the corrected interval rests on enough labels to be read as a 95% interval."""
    return n_labelled >= MIN_CALIBRATED_LABELS
