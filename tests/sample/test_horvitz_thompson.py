"""Horvitz–Thompson totals from the manifest's ``p_incl`` are unbiased: simulated over many seeds.

A synthetic pool of 600 eligible documents spread over 15 strata (sizes from 3 to 160) is
sampled with the library's own phase-1 order and batch draw, one- and two-phase, with batches
of 12 documents (fewer than the strata) and 40, for batch 0 and an extended batch 1. The
estimate of batch ``b`` is the README's: ``sum(y / p_incl)`` over batch ``b`` plus
``sum(y) / p1_b`` over the documents drawn before it (``p1_b = m_b / N``; 1 in one phase).
Its mean over the seeds must lie within 2 standard errors of the true pool total; the same
check on the pre-fix allocation (some strata never drawn) fails, so the check has power.
"""

from __future__ import annotations

import random
import statistics

import pytest

from goldloop.sample.batch_record import SampleSettings
from goldloop.sample.corpus import CorpusRecord
from goldloop.sample.phase1 import first_in_order, order_key
from goldloop.sample.pool import PoolDoc, PoolMention
from goldloop.sample.run import draw_batch
from goldloop.sample.strata import Plan, allocate

SEEDS = range(300)


def _population() -> list[PoolDoc]:
    rng = random.Random(7)
    docs = []
    for n in range(600):
        year = rng.choice((1995, 2005, 2015))
        # Skewed verb counts and a handful of rare labels make strata of very different sizes.
        verbs = rng.choice((0,) * 2 + (1,) * 5 + (2, 3, 5, 8))
        rare = verbs and rng.random() < 0.08
        labels = [f"RO.{rng.randrange(3)}" for _ in range(verbs)]
        if rare:
            labels[0] = f"RO.rare{rng.randrange(40)}"
        mentions = tuple(
            PoolMention(i, i + 1, eid, "x", "forward", True) for i, eid in enumerate(labels)
        )
        docs.append(
            PoolDoc(f"pmid:{n}", str(n), {"pmid": str(n)}, year, 400 + n, f"h{n}", mentions)
        )
    return docs


POPULATION = _population()
BY_ID = {d.doc_id: d for d in POPULATION}


def value(doc: PoolDoc) -> float:
    """What a gold set would total: mentions, with a length-correlated part."""
    return doc.n_mentions * 3 + doc.n_chars / 100


TRUE_TOTAL = sum(value(d) for d in POPULATION)


def estimates(seed: int, batch_size: int, phase1: int | None) -> tuple[float, float]:
    """Batch-0 and batch-1 (extended) HT estimates of the pool total for one seed."""
    settings = SampleSettings(
        n_primary=batch_size, n_double=0, n_reserve=0, tail_top_k=3, seed=seed
    )
    if phase1 is None:
        order, sizes = POPULATION, (len(POPULATION), len(POPULATION))
    else:
        order = sorted(POPULATION, key=lambda d: order_key(seed, d.doc_id))
        first = phase1
        sizes = (first, max(first, batch_size + phase1))  # m_1 = drawn so far + phase-1 size
    zero = draw_batch(order[: sizes[0]], len(POPULATION), set(), settings, 0)
    estimate0 = sum(value(d.doc) / d.p_incl for d in zero.drawn)
    taken = {d.doc.doc_id for d in zero.drawn}
    one = draw_batch(order[: sizes[1]], len(POPULATION), taken, settings, 1, zero.cuts)
    earlier = sum(value(BY_ID[doc_id]) for doc_id in taken) / one.p_phase1
    estimate1 = earlier + sum(value(d.doc) / d.p_incl for d in one.drawn)
    return estimate0, estimate1


def assert_unbiased(values: list[float]) -> None:
    mean = statistics.fmean(values)
    se = statistics.stdev(values) / len(values) ** 0.5
    assert abs(mean - TRUE_TOTAL) <= 2 * se, (mean, TRUE_TOTAL, se)


def test_the_population_has_more_strata_than_a_small_batch() -> None:
    settings = SampleSettings(n_primary=12, n_double=0, n_reserve=0, tail_top_k=3)
    batch = draw_batch(POPULATION, len(POPULATION), set(), settings, 0)
    assert len(batch.sizes) == 15 and min(batch.sizes.values()) <= 5
    assert "merged" in batch.plan.allocation  # 12 draws over 15 strata merge the smallest
    assert all(k >= 1 for k in batch.plan.allocation.values())


@pytest.mark.parametrize("phase1", [None, 120], ids=["one-phase", "two-phase"])
@pytest.mark.parametrize("batch_size", [12, 40])
def test_horvitz_thompson_totals_are_unbiased(phase1: int | None, batch_size: int) -> None:
    runs = [estimates(seed, batch_size, phase1) for seed in SEEDS]
    assert_unbiased([first for first, _ in runs])
    assert_unbiased([extended for _, extended in runs])


def test_the_check_catches_strata_left_undrawn(monkeypatch: pytest.MonkeyPatch) -> None:
    def without_floor(total: int, sizes: dict[str, int], weights: dict[str, float]) -> Plan:
        return Plan({s: s for s in sizes}, allocate(total, sizes, weights))

    monkeypatch.setattr("goldloop.sample.run.plan_draws", without_floor)
    runs = [estimates(seed, 12, None)[0] for seed in SEEDS]
    with pytest.raises(AssertionError):
        assert_unbiased(runs)


def test_phase1_order_is_a_uniform_random_subsample() -> None:
    # Each document's share of seeds that put it in the first 120 is close to 120/600.
    hits = dict.fromkeys(BY_ID, 0)
    for seed in range(400):
        for doc in sorted(POPULATION, key=lambda d: order_key(seed, d.doc_id))[:120]:
            hits[doc.doc_id] += 1
    shares = [h / 400 for h in hits.values()]
    assert statistics.fmean(shares) == pytest.approx(0.2)
    # Binomial(400, 0.2): sd 0.02; no document far outside 5 sd.
    assert max(abs(s - 0.2) for s in shares) < 0.1


def test_streamed_phase1_is_the_prefix_of_the_order_and_grows_along_it() -> None:
    records = [
        CorpusRecord(row=n, doc_id=d.doc_id, doc_uid=d.doc_uid, ids=d.ids, year=d.year, text="t")
        for n, d in enumerate(POPULATION, start=1)
    ]
    order = [d.doc_id for d in sorted(POPULATION, key=lambda d: order_key(3, d.doc_id))]
    small = first_in_order(iter(records), 3, 60)
    grown = first_in_order(iter(records), 3, 90)
    assert small.eligible == grown.eligible == 600
    assert [r.doc_id for r in small.records] == order[:60]
    assert [r.doc_id for r in grown.records] == order[:90]
    assert [r.doc_id for r in first_in_order(iter(records), 4, 60).records] != order[:60]
