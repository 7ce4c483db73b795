"""Benchmark: goldloop's span scorer and one-pass schemas against nervaluate on the same data.

    .venv/bin/python benchmarks/score.py               # 2,000 documents: about a minute
    .venv/bin/python benchmarks/score.py --docs 10000  # the issue's size: 100,000 gold spans
    .venv/bin/python benchmarks/score.py --bootstrap-only  # the corpus bootstrap alone

nervaluate's time grows with documents x labels, so the full size takes minutes (353 s for
nervaluate against 1.9 s for goldloop's schemas, 187x, on the shared 2-core machine).

Synthetic documents carry ``--spans`` gold spans each over ``--labels`` relation labels;
predictions copy, nudge, relabel, drop and add spans. Each engine runs in a forked child so its
time and peak memory (growth of the resident set over the child's start) are its own. The schema
counts of goldloop and nervaluate are asserted equal, overall and per label.

First, the corpus figures' stratified bootstrap (``scoring.design.corpus_figures``: weights,
Rao–Wu resampling within stratum × batch cells) against the plain document bootstrap
(``document_bootstrap``) at the same size: ``--bootstrap-docs`` documents (10,000) in 40 strata
over 2 batches, ``--systems`` systems (5), 1,000 replicates each; target ≤ 2×.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import numpy as np

from goldloop.scoring.bootstrap import document_bootstrap, f1, ratio
from goldloop.scoring.design import Design, batch_weights, corpus_figures
from goldloop.scoring.detection import GtSpan, score_predictions_against_ground_truth
from goldloop.scoring.matching import match_spans
from goldloop.scoring.schemas import evaluate

Docs = list[list[dict[str, Any]]]


def make_data(n_docs: int, spans_per_doc: int, n_labels: int, seed: int) -> tuple[Docs, Docs]:
    rng = random.Random(seed)
    labels = [f"REL.{i:04d}" for i in range(n_labels)]
    gold: Docs = []
    predicted: Docs = []
    for _ in range(n_docs):
        doc: list[dict[str, Any]] = []
        position = 0
        for _ in range(spans_per_doc):
            position += rng.randint(5, 60)
            length = rng.randint(3, 25)
            doc.append({"label": rng.choice(labels), "start": position, "end": position + length})
            position += length
        guesses: list[dict[str, Any]] = []
        for span in doc:
            roll = rng.random()
            if roll < 0.1:
                continue  # missed
            label = span["label"] if rng.random() < 0.8 else rng.choice(labels)
            start, end = span["start"], span["end"]
            if roll > 0.6:  # boundary off by a few characters
                start += rng.randint(-3, 3)
                end = max(start + 1, end + rng.randint(-3, 3))
            guesses.append({"label": label, "start": start, "end": end})
        for _ in range(rng.randint(0, 2)):  # spurious
            start = rng.randint(0, position)
            guesses.append(
                {"label": rng.choice(labels), "start": start, "end": start + rng.randint(3, 20)}
            )
        gold.append(doc)
        predicted.append(guesses)
    return gold, predicted


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _child(task: Callable[[], Any], pipe: Any) -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")  # reset the peak resident set (VmHWM)
    before = _status("VmRSS")
    started = time.perf_counter()
    result = task()
    elapsed = time.perf_counter() - started
    pipe.send((elapsed, max(0, _status("VmHWM") - before), result))
    pipe.close()


def measure(task: Callable[[], Any]) -> tuple[float, int, Any]:
    """Run ``task`` in a forked child: (seconds, peak bytes above the child's start, result)."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(task, sender))
    process.start()
    outcome = receiver.recv()
    process.join()
    return outcome


def _detection(s: np.ndarray) -> dict[str, np.ndarray]:
    precision, recall = ratio(s[:, 2], s[:, 1]), ratio(s[:, 2], s[:, 0])
    return {"precision": precision, "recall": recall, "f1": f1(precision, recall)}


def bootstrap_benchmark(n_docs: int, n_systems: int, replicates: int, seed: int) -> float:
    """Seconds of the stratified (corpus) bootstrap over the plain one, for every system."""
    rng = np.random.default_rng(seed)
    strata = rng.integers(0, 40, n_docs)
    batches = rng.integers(0, 2, n_docs)
    p_incl = np.array([0.02, 0.05, 0.1, 0.3])[strata % 4]
    design = Design(batch_weights(p_incl, batches), strata * 2 + batches, 40, "1/p_incl")
    systems = []
    for _ in range(n_systems):
        gold = rng.poisson(4, n_docs)
        matched = rng.binomial(gold, 0.7)
        systems.append(np.column_stack([gold, matched + rng.poisson(1, n_docs), matched]))

    def plain() -> list[Any]:
        return [document_bootstrap(c, _detection, replicates, seed) for c in systems]

    def corpus() -> list[Any]:
        return [corpus_figures(c, _detection, design, replicates, seed) for c in systems]

    base, _, _ = measure(plain)
    ours, _, figures = measure(corpus)
    print(
        f"bootstrap, {n_docs:,} documents x {n_systems} systems x {replicates:,} replicates:"
        f" document {base:.2f} s, stratified corpus {ours:.2f} s"
    )
    print(f"corpus F1 of system 1: {figures[0].values['f1']:.3f} {figures[0].intervals['f1']}")
    print(f"stratified vs document bootstrap: {ours / base:.2f}x the time (target <= 2x)")
    return ours / base


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=2_000)
    parser.add_argument("--spans", type=int, default=10, help="gold spans per document")
    parser.add_argument("--labels", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--bootstrap-docs", type=int, default=10_000)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--replicates", type=int, default=1_000)
    parser.add_argument("--bootstrap-only", action="store_true")
    args = parser.parse_args()

    bootstrap_benchmark(args.bootstrap_docs, args.systems, args.replicates, args.seed)
    if args.bootstrap_only:
        return

    gold, predicted = make_data(args.docs, args.spans, args.labels, args.seed)
    n_gold = sum(map(len, gold))
    n_pred = sum(map(len, predicted))
    print(
        f"{args.docs:,} documents, {n_gold:,} gold spans, {n_pred:,} predicted spans,"
        f" {args.labels} labels"
    )

    gt_spans = [
        GtSpan(i, s["start"], s["end"], s["label"]) for i, doc in enumerate(gold) for s in doc
    ]
    rows = [
        {"itext": i, "a": s["start"], "b": s["end"], "entity_id_predicted": s["label"]}
        for i, doc in enumerate(predicted)
        for s in doc
    ]
    # nervaluate's end is inclusive: convert once, outside the timed call.
    labels = sorted({s["label"] for docs in (gold, predicted) for doc in docs for s in doc})
    true_inclusive = [[{**s, "end": s["end"] - 1} for s in doc] for doc in gold]
    pred_inclusive = [[{**s, "end": s["end"] - 1} for s in doc] for doc in predicted]

    def nervaluate_direct() -> dict[str, Any]:
        from nervaluate import Evaluator

        raw = Evaluator(true_inclusive, pred_inclusive, tags=labels, loader="dict").evaluate()
        keys = (
            "correct",
            "incorrect",
            "partial",
            "missed",
            "spurious",
            "precision",
            "recall",
            "f1",
        )

        def plain(results: dict[str, Any]) -> dict[str, Any]:
            return {schema: {k: getattr(r, k) for k in keys} for schema, r in results.items()}

        return {
            "overall": plain(raw["overall"]),
            "by_label": {label: plain(raw["entities"][label]) for label in sorted(raw["entities"])},
        }

    def per_document() -> int:
        return sum(
            j is not None
            for g, p in zip(gold, predicted, strict=True)
            for j in match_spans(
                [(x["start"], x["end"]) for x in p], [(x["start"], x["end"]) for x in g]
            )
        )

    runs = {
        "score's matcher": per_document,
        "ground_truth scorer": lambda: score_predictions_against_ground_truth(
            rows, gt_spans
        ).to_dict(),
        "goldloop schemas": lambda: evaluate(gold, predicted),
        "nervaluate 1.2.x": nervaluate_direct,
    }
    measured = {}
    for name, task in runs.items():
        seconds, peak, result = measure(task)
        measured[name] = (seconds, peak, result)
        print(f"{name:<22} {seconds:9.3f} s   peak +{peak / 2**20:8.1f} MiB")

    ours, theirs = measured["goldloop schemas"][2], measured["nervaluate 1.2.x"][2]
    assert ours["overall"] == theirs["overall"], "overall counts differ from nervaluate"
    assert ours["by_label"] == theirs["by_label"], "per-label counts differ from nervaluate"
    print(f"schema counts equal to nervaluate's: overall and {len(ours['by_label'])} labels")
    seed = measured["ground_truth scorer"][2]
    matched = measured["score's matcher"][2]
    print(
        f"detection, per document: P {matched / seed['n_predicted']:.3f} "
        f"R {matched / seed['n_gold']:.3f}; seed-compatible (across documents): "
        f"P {seed['precision']:.3f} R {seed['recall']:.3f}"
    )
    ratio = measured["nervaluate 1.2.x"][0] / measured["goldloop schemas"][0]
    print(f"schemas vs nervaluate: {ratio:.1f}x faster (target >= 20x)")


if __name__ == "__main__":
    main()
