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
5,000), as ``goldloop plan`` makes it: the gold and the system's file read, counts, the plan.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.cli.plan_campaign import hits_of, system_hits
from tests.scoring import plan_replay

from goldloop.formats.gold import Document, write_gold
from goldloop.kb import load_kb
from goldloop.sample.planned import SampleState
from goldloop.scoring.inputs import read_predictions
from goldloop.scoring.plan import Target, gold_contributions, plan_batch
from goldloop.scoring.score_files import read_scored_gold


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


def timing(n_docs: int, workdir: Path) -> None:
    """One plan as ``goldloop plan`` makes it, on ``n_docs`` labelled documents: the gold and the
    system's file read, the counts matched, the plan; against reading the gold alone."""
    rng = random.Random(0)
    sentences = [
        "IL-6 activates STAT3 in hepatocytes.",
        "SOCS3 inhibits JAK2 signalling.",
        "The kinase binds the receptor.",
        "Apoptosis is inhibited by BCL2.",
        "Insulin regulates glucose uptake.",
        "Cells were cultured for two days.",
        "Samples were collected from twelve patients.",
        "The effect was measured by western blot.",
        "These results were confirmed in mice.",
        "Data are shown as mean values.",
        "The study included three cohorts.",
    ]
    strata = ["y0-low-common", "y1-high-tail", "y2-none", "y2-low-tail"]
    documents = []
    for i in range(n_docs):
        text = " ".join(rng.choice(sentences) for _ in range(rng.randint(5, 9)))
        documents.append(
            Document(
                doc_id=f"d{i}", text=text, role="primary", batch=i % 3,
                p_incl=0.05 + 0.05 * (i % 4), stratum=strata[i % 4], ground_truth=hits_of(text),
            )
        )  # fmt: skip
    gold, system = workdir / "gold.json", workdir / "system.jsonl"
    write_gold(gold, documents)
    # The system's output as a linker writes it: one JSONL row per predicted mention.
    system.write_text(
        "".join(
            json.dumps({"doc_id": d.doc_id, "a": h.a, "b": h.b, "entity_id_predicted": h.entity_id,
                        "direction_predicted": h.direction}) + "\n"
            for d in documents
            for h in system_hits(d.doc_id, d.ground_truth)
        ),
        encoding="utf-8",
    )  # fmt: skip
    state = SampleState(
        path=workdir, sample_id="x", batches=3, doc_ids=frozenset(d.doc_id for d in documents),
        remaining={s: 20_000 for s in strata}, group_of={},
    )  # fmt: skip
    kb = load_kb(None)
    started = time.perf_counter()
    read_scored_gold(gold, kb)
    alone = time.perf_counter() - started
    started = time.perf_counter()
    read = read_scored_gold(gold, kb)
    predictions = read_predictions(system, read, name="sys", kb=kb)
    labelled = gold_contributions(read, predictions, kb, "f1", sample=state)
    plan = plan_batch(labelled, state.remaining, [2.0] * len(read), Target(half_width=0.002))
    took = time.perf_counter() - started
    assert plan.next_batch is not None
    print(
        f"plan on {n_docs} labelled documents, {sum(len(d.ground_truth) for d in documents)} "
        f"gold mentions (gold and system read, counts, plan): {took:.2f} s"
        f" (target < 2 s); reading the gold alone {alone:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=plan_replay.SEEDS)
    parser.add_argument("--docs", type=int, default=5000)
    args = parser.parse_args()
    replays(args.seeds)
    with tempfile.TemporaryDirectory() as workdir:
        timing(args.docs, Path(workdir))


if __name__ == "__main__":
    main()
