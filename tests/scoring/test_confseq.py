"""The anytime-valid half-width: tightest near where it is tuned, never narrower than the
fixed-size one, and covering at every look at once in a simulation with a known mean."""

from __future__ import annotations

import math

import numpy as np
import pytest

from goldloop.scoring.confseq import (
    anytime_half_width,
    anytime_multiplier,
    fixed_half_width,
    rho_squared,
)


def test_the_boundary_per_observation_is_tightest_near_where_it_is_tuned() -> None:
    # The paper's margin per unit of sd is multiplier / sqrt(t); ρ is tuned so that the
    # multiplier is least, relative to sqrt(t)·(its value), around tuned_at: checked against a
    # grid search of the closed form's own ρ.
    tuned = 400
    best = min(
        np.geomspace(1e-4, 1e-1, 400),
        key=lambda r2: math.sqrt(
            2 * (tuned * r2 + 1) / (tuned**2 * r2) * math.log(math.sqrt(tuned * r2 + 1) / 0.05)
        ),
    )
    assert rho_squared(tuned) == pytest.approx(best, rel=0.15)


def test_it_is_wider_than_the_fixed_size_interval_at_every_size() -> None:
    for t in (1, 10, 100, 500, 10_000, 10**7):
        assert anytime_multiplier(t) > 1.96
        assert anytime_half_width(0.01, t) > fixed_half_width(0.01)
    assert fixed_half_width(1.0) == pytest.approx(1.959964, abs=1e-6)


def test_it_covers_at_every_look_at_once() -> None:
    """Known mean 0, unit-variance draws, a look after every 10 of 2,000: the running mean's
    anytime interval holds at all 200 looks in ≥ 95% of 400 seeds; the fixed-size interval
    fails at some look far more often (the reason the anytime one exists)."""
    rng = np.random.default_rng(3)
    draws = rng.standard_normal((400, 2000))
    t = np.arange(10, 2001, 10)
    means = np.cumsum(draws, axis=1)[:, t - 1] / t
    sds = np.array([[draws[k, :n].std(ddof=1) for n in t] for k in range(len(draws))])
    se = sds / np.sqrt(t)
    multiplier = np.array([anytime_multiplier(n) for n in t])
    anytime = (np.abs(means) <= se * multiplier).all(axis=1).mean()
    fixed = (np.abs(means) <= se * 1.96).all(axis=1).mean()
    assert anytime >= 0.95
    assert fixed < 0.8


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one observation"):
        anytime_multiplier(0)
    with pytest.raises(ValueError, match="level"):
        anytime_multiplier(10, level=1.0)
