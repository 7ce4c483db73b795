"""Benchmark: annotator-minutes to ±0.03 on corpus F1, and how long a plan takes.

    .venv/bin/python benchmarks/plan.py              # 200 seeds, 20,000-document pool
    .venv/bin/python benchmarks/plan.py --seeds 50

Seeded replays with a known truth (``tests/scoring/plan_replay.py``): a proportional pilot, then
batches of equal minutes until the anytime-valid half-width is within 0.03, with (a) today's
proportional batches, (b) the plan (``scoring.plan.plan_batch``), (c) the plan with a good
surrogate; and, on a pool whose strata are alike, the plan with a useless surrogate against (a)
on that pool. Reported: mean minutes and documents, the ratios to (a) (targets (b) ≤ 0.8,
(c) ≤ 0.65, useless ≤ 1.05), the anytime stop's coverage and the fixed-size interval's used the
same way. Then one plan's time on a campaign of ``--docs`` labelled documents (target < 2 s for
5,000), from per-document counts to the plan, against computing the figure alone.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from tests.scoring import plan_replay

from goldloop.scoring.plan import Labelled, Target, plan_batch, ratio_parts, standing


def replays(seeds: int) -> None:
    strata = plan_replay.make_pool(plan_replay.HETEROGENEOUS)
    flat = plan_replay.make_pool(plan_replay.HOMOGENEOUS)
    rows = {
        "(a) proportional": plan_replay.run(strata, "proportional", seeds=seeds),
        "(b) plan": plan_replay.run(strata, "plan", seeds=seeds),
        "(c) plan + good surrogate": plan_replay.run(strata, "plan", "good", seeds=seeds),
        "alike strata: proportional": plan_replay.run(flat, "proportional", seeds=seeds),
        "alike strata: plan + useless surrogate": plan_replay.run(
            flat, "plan", "useless", seeds=seeds
        ),
    }
    base = {
        True: rows["alike strata: proportional"].minutes,
        False: rows["(a) proportional"].minutes,
    }
    print(
        f"{plan_replay.POOL_DOCS} documents, {seeds} seeds, target ±{plan_replay.TARGET} (anytime)"
    )
    print(
        f"{'strategy':40} {'minutes':>9} {'docs':>7} {'× (a)':>7} {'covered':>8} {'fixed-size':>10}"
    )
    for name, s in rows.items():
        ratio = s.minutes / base[name.startswith("alike")]
        print(
            f"{name:40} {s.minutes:9.1f} {s.documents:7.1f} {ratio:7.3f} "
            f"{s.coverage:8.3f} {s.fixed_coverage:10.3f}"
        )


def timing(n_docs: int) -> None:
    pool = plan_replay.make_pool(plan_replay.HETEROGENEOUS)
    rng = np.random.default_rng(0)
    rows = rng.choice(len(pool.strata), n_docs, replace=False)
    numerator, denominator = ratio_parts(pool.counts[rows], "f1")
    strata = pool.strata[rows]
    batches = rng.integers(0, 4, n_docs)
    labelled = Labelled(
        numerator, denominator, np.full(n_docs, n_docs / len(pool.strata)), batches,
        plan_replay._cells(strata, batches), [pool.names[h] for h in strata],
    )  # fmt: skip
    remaining = {
        name: int((pool.strata == h).sum() - (strata == h).sum())
        for h, name in enumerate(pool.names)
    }
    minutes = list(pool.minutes[rows])
    started = time.perf_counter()
    standing(labelled)
    alone = time.perf_counter() - started
    started = time.perf_counter()
    plan = plan_batch(labelled, remaining, minutes, Target(half_width=0.02))
    took = time.perf_counter() - started
    assert plan.next_batch is not None
    print(
        f"plan on {n_docs} labelled documents: {took:.3f} s (the figure alone {alone:.4f} s; "
        f"next batch {plan.next_batch.documents} documents)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=plan_replay.SEEDS)
    parser.add_argument("--docs", type=int, default=5000)
    args = parser.parse_args()
    replays(args.seeds)
    timing(args.docs)


if __name__ == "__main__":
    main()
