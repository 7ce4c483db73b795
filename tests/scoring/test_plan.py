"""The plan for the next batch (``scoring.plan``): its figure equals the design-weighted one, its
standard error the bootstrap's; cost-aware allocation; the refusals; and seeded replays with a
known truth (``plan_replay``): minutes to ±0.03 on corpus F1 and the anytime stop's coverage."""

from __future__ import annotations

import numpy as np
import pytest

from goldloop.formats.gold import Document
from goldloop.scoring.bootstrap import f1, ratio
from goldloop.scoring.design import corpus_figures, read_design
from goldloop.scoring.plan import (
    PlanError,
    Target,
    labelled_from,
    plan_batch,
    ratio_parts,
    standing,
)
from goldloop.scoring.regimes import E2E_COLUMNS
from tests.scoring import plan_replay
from tests.scoring.design_simulation import make_corpus, sample_gold


def _counts(three: np.ndarray) -> np.ndarray:
    """gold, predicted, matched → the seven end-to-end columns (ids as matched)."""
    out = np.zeros((len(three), len(E2E_COLUMNS)), dtype=np.int64)
    out[:, :3] = three
    out[:, 3] = out[:, 4] = three[:, 2]
    return out


@pytest.fixture(scope="module")
def campaign() -> tuple[list[Document], np.ndarray]:
    documents, per_doc = sample_gold(make_corpus(), 3, phase1=None, batches=2, reserve=True)
    return documents, _counts(per_doc)


def test_the_figure_and_its_error_are_the_design_weighted_ones(campaign) -> None:
    documents, counts = campaign
    design = read_design(documents)
    assert design is not None
    now = standing(labelled_from(documents, counts, "f1", design))

    def figures(s: np.ndarray) -> dict[str, np.ndarray]:
        return {"f1": f1(ratio(s[:, 2], s[:, 1]), ratio(s[:, 2], s[:, 0]))}

    reference = corpus_figures(counts[:, :3], figures, design, bootstrap=4000, seed=1)
    assert now.value == pytest.approx(reference.values["f1"], abs=1e-9)
    low, high = reference.intervals["f1"]
    assert now.half_width == pytest.approx((high - low) / 2, rel=0.2)
    assert now.anytime_half_width > now.half_width
    assert now.n_docs == len(documents)


def test_ratio_parts_give_each_figure() -> None:
    counts = np.array([[4, 5, 3, 3, 2, 0, 0], [2, 1, 1, 1, 1, 0, 0]])
    for metric, expected in {
        "f1": 2 * 4 / (6 + 6),
        "precision": 4 / 6,
        "recall": 4 / 6,
        "entity_accuracy": 3 / 4,
    }.items():
        top, bottom = ratio_parts(counts, metric)
        assert top.sum() / bottom.sum() == pytest.approx(expected)
    with pytest.raises(ValueError, match="metric"):
        ratio_parts(counts, "accuracy")


def _plan(campaign, target: Target, minutes=None, **kwargs):
    documents, counts = campaign
    design = read_design(documents)
    assert design is not None
    labelled = labelled_from(documents, counts, "f1", design)
    # Each stratum's size as the design estimates it, less what is drawn.
    strata = np.array(labelled.strata)
    remaining = {
        s: round(float(labelled.weights[strata == s].sum())) - int((strata == s).sum())
        for s in sorted(set(labelled.strata))
    }
    if minutes is None:
        minutes = [2.0] * len(documents)
    return plan_batch(labelled, remaining, minutes, target, **kwargs)


def test_a_budget_goes_where_it_narrows_most_per_minute(campaign) -> None:
    documents, _ = campaign
    strata = [d.stratum for d in documents]
    cheap = "y0-low-tail" if "y0-low-tail" in strata else strata[0]
    # One stratum four times cheaper than the rest: it gets more documents than at equal cost.
    minutes = [0.5 if s == cheap else 2.0 for s in strata]
    equal = _plan(campaign, Target(budget_minutes=600))
    costed = _plan(campaign, Target(budget_minutes=600), minutes=minutes, usd_per_document=0.01)
    assert equal.next_batch is not None and costed.next_batch is not None
    share = lambda b: b.by_stratum[cheap] / b.documents  # noqa: E731
    assert share(costed.next_batch) > share(equal.next_batch)
    assert costed.next_batch.minutes <= 600
    assert min(costed.next_batch.by_stratum.values()) >= 1  # every stratum keeps a chance
    assert costed.next_batch.llm_usd == pytest.approx(costed.next_batch.documents * 0.01)
    assert costed.next_batch.expected_half_width < costed.standing.half_width


def test_a_target_plans_the_least_batch_that_meets_it(campaign) -> None:
    plan = _plan(campaign, Target(half_width=0.03))
    assert plan.next_batch is not None and not plan.reached
    assert plan.next_batch.expected_anytime_half_width <= 0.03
    smaller = _plan(campaign, Target(budget_minutes=plan.next_batch.minutes * 0.9))
    assert smaller.next_batch is not None
    assert smaller.next_batch.expected_anytime_half_width > 0.03


def test_a_target_already_reached_plans_nothing(campaign) -> None:
    plan = _plan(campaign, Target(half_width=0.5))
    assert plan.reached and plan.next_batch is None
    assert plan.to_dict()["next_batch"] is None


def test_refusals(campaign) -> None:
    with pytest.raises(PlanError, match="below one document"):
        _plan(campaign, Target(budget_minutes=1))
    with pytest.raises(PlanError, match="one each"):
        _plan(campaign, Target(budget_minutes=5))
    documents, _ = campaign
    with pytest.raises(PlanError, match="no effort record"):
        _plan(campaign, Target(half_width=0.03), minutes=[None] * len(documents))
    stated = _plan(
        campaign, Target(half_width=0.03), minutes=[None] * len(documents), stated_minutes=3.0
    )
    assert {s.minutes_from for s in stated.strata} == {"stated"}
    with pytest.raises(ValueError, match="exactly one"):
        Target(half_width=0.03, budget_minutes=10)


# --- seeded replays with a known truth (plan_replay: 20,000 documents, 200 seeds) ---


@pytest.fixture(scope="module")
def replays() -> dict[str, plan_replay.Summary]:
    strata = plan_replay.make_pool(plan_replay.HETEROGENEOUS)
    flat = plan_replay.make_pool(plan_replay.HOMOGENEOUS)
    return {
        "a": plan_replay.run(strata, "proportional"),
        "b": plan_replay.run(strata, "plan"),
        "c": plan_replay.run(strata, "plan", "good"),
        "a flat": plan_replay.run(flat, "proportional"),
        "useless": plan_replay.run(flat, "plan", "useless"),
    }


def test_the_plan_reaches_the_target_in_fewer_minutes(replays) -> None:
    """(b) the plan ≥ 20% and (c) with a good surrogate ≥ 35% fewer minutes than (a) today's
    proportional batches to ±0.03 on corpus F1; with no signal (strata alike, a surrogate
    independent of the truth) at most 5% more."""
    a = replays["a"].minutes
    assert replays["b"].minutes <= 0.80 * a
    assert replays["c"].minutes <= 0.65 * a
    assert replays["useless"].minutes <= 1.05 * replays["a flat"].minutes


def test_stopping_at_the_first_narrow_anytime_interval_still_covers(replays) -> None:
    """Looking after every batch: the truth lies in the final anytime-valid interval in ≥ 95%
    of the 200 seeds for every strategy. The fixed-size interval used the same way is computed
    beside it (it stops earlier and is expected to cover less; not asserted, it is reported)."""
    for summary in replays.values():
        assert summary.coverage >= 0.95
