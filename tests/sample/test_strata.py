"""Strata names, allocation arithmetic (largest remainder, caps, tail weight, negative controls),
roles and the seeded draw — checked against hand-computed values."""

from __future__ import annotations

import random

import pytest

from goldloop.sample.pool import PoolDoc, PoolMention
from goldloop.sample.strata import (
    MERGED,
    allocate,
    boundaries,
    draw,
    largest_remainder,
    plan_draws,
    role_counts,
    stratum_weights,
)


def _doc(n: int, year: int, verbs: int, entity_ids: tuple[str, ...] = ()) -> PoolDoc:
    ids = entity_ids or ("RO.1",) * verbs
    mentions = tuple(
        PoolMention(i, i + 1, eid, "x", "forward", i < verbs) for i, eid in enumerate(ids)
    )
    return PoolDoc(f"pmid:{n}", str(n), {"pmid": str(n)}, year, 400, f"h{n}", mentions)


def test_largest_remainder_gives_leftovers_to_largest_fractions_then_names() -> None:
    assert largest_remainder(10, {"a": 0.2, "b": 0.32, "c": 0.48}) == {"a": 2, "b": 3, "c": 5}
    assert largest_remainder(3, {"b": 1.0, "a": 1.0}) == {"b": 1, "a": 2}
    assert largest_remainder(5, {"a": 0.0, "b": 2.0}) == {"a": 0, "b": 5}
    assert largest_remainder(0, {"a": 1.0}) == {"a": 0}


def test_weights_split_negative_controls_and_overweight_tail() -> None:
    sizes = {"y0-none": 20, "y0-low-tail": 10, "y0-low-common": 30}
    weights = stratum_weights(sizes, tail_weight=2.0, none_fraction=0.2)
    assert weights == pytest.approx({"y0-none": 0.2, "y0-low-tail": 0.32, "y0-low-common": 0.48})
    allocation = allocate(10, sizes, weights)
    assert allocation == {"y0-none": 2, "y0-low-tail": 3, "y0-low-common": 5}
    p_incl = {s: allocation[s] / sizes[s] for s in sizes}
    assert p_incl == pytest.approx({"y0-none": 0.1, "y0-low-tail": 0.3, "y0-low-common": 1 / 6})


def test_capped_stratum_surplus_is_reallocated_by_largest_remainder() -> None:
    sizes = {"y0-high-tail": 2, "y0-low-common": 50, "y1-low-common": 30}
    weights = stratum_weights(sizes, tail_weight=10.0, none_fraction=0.0)
    assert weights == pytest.approx(
        {"y0-high-tail": 0.2, "y0-low-common": 0.5, "y1-low-common": 0.3}
    )
    # quotas 4 / 10 / 6; the tail stratum holds 2, its surplus of 2 splits 1.25 / 0.75 → 1 / 1
    assert allocate(20, sizes, weights) == {
        "y0-high-tail": 2,
        "y0-low-common": 11,
        "y1-low-common": 7,
    }


def test_allocation_never_exceeds_the_pool_and_falls_back_to_unweighted_strata() -> None:
    assert allocate(10, {"a": 3, "b": 2}, {"a": 0.5, "b": 0.5}) == {"a": 3, "b": 2}
    sizes = {"y0-none": 5, "y0-low-common": 2}
    weights = stratum_weights(sizes, tail_weight=2.0, none_fraction=0.0)
    assert allocate(4, sizes, weights) == {"y0-none": 2, "y0-low-common": 2}
    # no negative-control stratum: the whole batch goes to the others
    only = {"y0-low-common": 8, "y0-high-tail": 8}
    assert sum(allocate(6, only, stratum_weights(only, 2.0, 0.5)).values()) == 6


def test_role_counts_keep_proportions_when_the_pool_runs_short() -> None:
    sizes = {"primary": 10, "double": 5, "reserve": 5}
    assert role_counts(20, sizes) == {**sizes, "blind": 0}
    assert role_counts(15, sizes) == {"primary": 7, "double": 4, "reserve": 4, "blind": 0}
    blind = {**sizes, "blind": 5}
    assert role_counts(25, blind) == blind
    # The blind part keeps its size (issue 44): the other roles share what is left.
    assert role_counts(20, blind) == {"primary": 7, "double": 4, "reserve": 4, "blind": 5}
    assert role_counts(3, blind) == {"primary": 0, "double": 0, "reserve": 0, "blind": 3}


def test_blind_documents_come_from_the_same_draw_and_leave_the_others_unchanged() -> None:
    """Blind is the last role: the same seed draws the same documents with the same p_incl, and
    the documents the three first roles get are those they got without blind ones."""
    remaining = {
        "y0-low-common": [_doc(i, 2000, 1) for i in range(10)],
        "y1-none": [_doc(i, 2005, 0) for i in range(10, 14)],
    }
    allocation = {"y0-low-common": 5, "y1-none": 2}
    without = draw(remaining, allocation, {"primary": 4, "double": 2, "reserve": 1},
                   random.Random("7:0"))  # fmt: skip
    with_blind = draw(remaining, allocation, {"primary": 4, "double": 2, "reserve": 0, "blind": 1},
                      random.Random("7:0"))  # fmt: skip
    assert [(d.doc.doc_id, d.p_incl) for d in with_blind] == [
        (d.doc.doc_id, d.p_incl) for d in without
    ]
    assert [d.role for d in with_blind] == [*[d.role for d in without][:-1], "blind"]
    assert {d.p_incl for d in with_blind if d.stratum == "y1-none"} == {0.5}


def test_boundaries_and_stratum_names() -> None:
    docs = [_doc(i, 2000 + i, verbs=v) for i, v in enumerate([0, 1, 2, 3, 4, 1, 1, 5, 0])]
    docs.append(_doc(99, 2008, verbs=1, entity_ids=("RO.rare",)))
    cuts = boundaries(docs, tail_top_k=1)
    assert cuts.year_cuts == pytest.approx((2003.0, 2006.0))
    assert cuts.density_median == 1.5  # median of the positive counts 1,2,3,4,1,1,5,1
    assert cuts.common == frozenset({"RO.1"})
    names = [cuts.stratum(d) for d in docs]
    assert names == [
        "y0-none", "y0-low-common", "y0-high-common", "y0-high-common", "y1-high-common",
        "y1-low-common", "y1-low-common", "y2-high-common", "y2-none", "y2-low-tail",
    ]  # fmt: skip


def test_draw_is_seeded_and_assigns_roles_and_p_incl() -> None:
    remaining = {
        "y0-low-common": [_doc(i, 2000, 1) for i in range(10)],
        "y1-none": [_doc(i, 2005, 0) for i in range(10, 14)],
    }
    allocation = {"y0-low-common": 5, "y1-none": 1}
    roles = {"primary": 3, "double": 2, "reserve": 1}
    first = draw(remaining, allocation, roles, random.Random("7:0"))
    again = draw(remaining, allocation, roles, random.Random("7:0"))
    other = draw(remaining, allocation, roles, random.Random("8:0"))
    assert [d.doc.doc_id for d in first] == [d.doc.doc_id for d in again]
    assert {d.doc.doc_id for d in first} != {d.doc.doc_id for d in other}
    assert sorted(d.role for d in first) == [
        "double",
        "double",
        "primary",
        "primary",
        "primary",
        "reserve",
    ]
    assert {d.stratum: d.p_incl for d in first} == {"y0-low-common": 0.5, "y1-none": 0.25}
    assert len({d.doc.doc_id for d in first}) == 6


def test_plan_gives_every_non_empty_stratum_a_draw() -> None:
    sizes = {"a": 50, "b": 30, "c": 2, "d": 1, "e": 0}
    weights = {"a": 0.6, "b": 0.38, "c": 0.015, "d": 0.005, "e": 0.0}
    # allocate alone leaves the small strata undrawn: their documents could never be sampled
    assert allocate(10, sizes, weights) == {"a": 6, "b": 4, "c": 0, "d": 0, "e": 0}
    plan = plan_draws(10, sizes, weights)
    assert plan.groups == {"a": "a", "b": "b", "c": "c", "d": "d"}  # "e" is empty
    # c then d (by name) each take one draw from the largest allocation, a
    assert plan.allocation == {"a": 4, "b": 4, "c": 1, "d": 1}
    # When allocate already reaches every stratum, the plan is allocate's.
    filled = {"a": 50, "b": 30, "c": 2, "d": 1}
    reached = allocate(83, filled, weights)  # the whole pool
    assert min(reached.values()) == 1
    assert plan_draws(83, sizes, weights).allocation == reached
    even = {"a": 0.5, "b": 0.3, "c": 0.2}
    assert plan_draws(10, {"a": 50, "b": 30, "c": 20}, even).allocation == {"a": 5, "b": 3, "c": 2}


def test_plan_merges_the_lightest_strata_when_the_batch_is_smaller() -> None:
    sizes = {"a": 50, "b": 30, "c": 2, "d": 1}
    weights = {"a": 0.6, "b": 0.38, "c": 0.015, "d": 0.005}
    plan = plan_draws(3, sizes, weights)
    # 4 strata, 3 draws: the two lightest (d, c) become one stratum, drawn once
    assert plan.groups == {"a": "a", "b": "b", "c": MERGED, "d": MERGED}
    assert plan.allocation == {"a": 1, "b": 1, MERGED: 1}
    single = plan_draws(1, sizes, weights)
    assert set(single.groups.values()) == {MERGED} and single.allocation == {MERGED: 1}
