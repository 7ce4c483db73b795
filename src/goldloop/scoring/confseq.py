"""Anytime-valid intervals: the asymptotic confidence sequence of Waudby-Smith et al. (2021).

A fixed-size 95% interval ``estimate ± 1.96·se`` covers 95% of the time only when the sample size
was fixed before looking. An operator who looks after every batch and stops at the first narrow
enough interval needs an interval that holds at every size at once. The Gaussian-mixture boundary
of Waudby-Smith, Arbour, Sinha, Kennedy & Ramdas, "Time-uniform central limit theory and
asymptotic confidence sequences" (2021, Theorem 2.2) gives, after ``t`` observations with
standard error ``se``::

    estimate ± se · sqrt((t·ρ² + 1) / (t·ρ²) · 2·log(sqrt(t·ρ² + 1) / α))

which holds for all ``t`` at once with probability ≥ 1 − α (asymptotically). ``ρ`` sets the size
where the boundary is tightest; it is fixed in advance (:data:`TUNED_AT` documents), never chosen
from the data. The ``confseq`` package (MIT) has the same boundary, but it builds only from source
against Boost, which this project's machines lack; the formula is short and tested here against
its closed-form optimum and by simulation.
"""

from __future__ import annotations

import math

from goldloop.scoring.ppi import z_value

TUNED_AT = 500
"""Documents at which the boundary is tightest: a campaign's typical stopping size."""


def rho_squared(tuned_at: float = TUNED_AT, level: float = 0.95) -> float:
    """The ``ρ²`` that makes the boundary (nearly) tightest after ``tuned_at`` observations: the
    closed-form approximation of Howard et al. (2021) that the paper uses."""
    if tuned_at <= 0:
        raise ValueError(f"tuned_at must be > 0, got {tuned_at}")
    alpha = _alpha(level)
    return (-2 * math.log(alpha) + math.log(-2 * math.log(alpha) + 1)) / tuned_at


def anytime_multiplier(t: float, level: float = 0.95, tuned_at: float = TUNED_AT) -> float:
    """What multiplies the standard error after ``t`` observations (in place of 1.96)."""
    if t <= 0:
        raise ValueError(f"a confidence sequence needs at least one observation, got {t}")
    alpha = _alpha(level)
    v = t * rho_squared(tuned_at, level)
    return math.sqrt((v + 1) / v * 2 * math.log(math.sqrt(v + 1) / alpha))


def anytime_half_width(
    se: float, t: float, level: float = 0.95, tuned_at: float = TUNED_AT
) -> float:
    """The anytime-valid half-width for a standard error ``se`` after ``t`` observations."""
    return se * anytime_multiplier(t, level, tuned_at)


def fixed_half_width(se: float, level: float = 0.95) -> float:
    """The fixed-size half-width (valid only at a size fixed before looking)."""
    return se * z_value(level)


def _alpha(level: float) -> float:
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return 1 - level
