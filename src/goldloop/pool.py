"""Relative recall of several systems on the same documents, against the pool of what all found.

A pool item is one relation (folded through the KB) at one place in a document: the mentions
of that relation whose spans overlap, chained across every run, count once. Direction is not
part of an item. Each run's relative recall is the share of pool items it found, with a
document bootstrap interval; "found alone" counts the items no other run found. The pool misses
what every run missed, so relative recall overstates true recall (Zobel, SIGIR 1998).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from goldloop.kb import KB
from goldloop.predictions import Predicted, SystemOutput
from goldloop.scoring.ppi import Estimate

CAVEAT = (
    "Relative recall overstates true recall: the pool holds only what some run found, "
    "and misses every mention all runs missed."
)


@dataclass(frozen=True)
class RunRecall:
    name: str
    n_mentions: int
    n_abstained: int
    n_found: int
    found_alone: int
    relative_recall: Estimate | None

    def to_json(self) -> dict[str, Any]:
        recall = self.relative_recall
        return {
            "name": self.name,
            "n_mentions": self.n_mentions,
            "n_abstained": self.n_abstained,
            "n_found": self.n_found,
            "found_alone": self.found_alone,
            "relative_recall": None if recall is None else recall.to_json(),
        }


@dataclass(frozen=True)
class PoolReport:
    n_documents: int
    n_pool: int
    runs: list[RunRecall]
    n_bootstrap: int
    seed: int

    def to_json(self) -> dict[str, Any]:
        return {
            "n_documents": self.n_documents,
            "n_pool": self.n_pool,
            "runs": [run.to_json() for run in self.runs],
            "bootstrap": {"n": self.n_bootstrap, "seed": self.seed, "over": "documents"},
            "caveat": CAVEAT,
        }


def pool_items(runs: Sequence[list[Predicted]], kb: KB) -> list[frozenset[int]]:
    """The pool items of one document, each as the set of run indices that found it."""
    by_relation: dict[str, list[tuple[int, int, int]]] = {}
    for run_index, mentions in enumerate(runs):
        for m in mentions:
            if m.entity_id is not None:
                by_relation.setdefault(kb.fold_id(m.entity_id), []).append((m.a, m.b, run_index))
    items: list[frozenset[int]] = []
    for spans in by_relation.values():
        spans.sort()
        end, finders = -1, set[int]()
        for a, b, run_index in spans:
            if a >= end and finders:
                items.append(frozenset(finders))
                finders = set()
            finders.add(run_index)
            end = max(end, b) if a < end else b
        items.append(frozenset(finders))
    return items


def relative_recall(
    outputs: Sequence[tuple[str, SystemOutput]],
    kb: KB,
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PoolReport:
    """Pool the runs' mentions per document and score each run against the pool."""
    per_run = [output.by_doc() for _, output in outputs]
    doc_ids = sorted(set().union(*(set(d) for d in per_run)))
    n_runs = len(outputs)
    found = np.zeros((len(doc_ids), n_runs), dtype=np.int64)
    alone = np.zeros(n_runs, dtype=np.int64)
    pool = np.zeros(len(doc_ids), dtype=np.int64)
    for row, doc_id in enumerate(doc_ids):
        items = pool_items([runs.get(doc_id, []) for runs in per_run], kb)
        pool[row] = len(items)
        for finders in items:
            for run_index in finders:
                found[row, run_index] += 1
            if len(finders) == 1:
                alone[next(iter(finders))] += 1
    intervals = _bootstrap(found, pool, n_bootstrap, seed, confidence)
    runs = []
    for k, (name, output) in enumerate(outputs):
        total = int(pool.sum())
        recall = None
        if total:
            recall = Estimate(float(found[:, k].sum() / total), *intervals[k])
        runs.append(
            RunRecall(
                name=name,
                n_mentions=sum(m.entity_id is not None for m in output.mentions),
                n_abstained=sum(m.entity_id is None for m in output.mentions),
                n_found=int(found[:, k].sum()),
                found_alone=int(alone[k]),
                relative_recall=recall,
            )
        )
    return PoolReport(len(doc_ids), int(pool.sum()), runs, n_bootstrap, seed)


def _bootstrap(
    found: np.ndarray, pool: np.ndarray, n: int, seed: int, confidence: float
) -> list[tuple[float | None, float | None]]:
    """Percentile interval per run of Σfound/Σpool over documents drawn with replacement."""
    n_docs, n_runs = found.shape
    if n_docs == 0 or n <= 0:
        return [(None, None)] * n_runs
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n_docs, np.full(n_docs, 1 / n_docs), size=n)
    pooled = weights @ pool
    keep = pooled > 0
    shares = (weights @ found)[keep] / pooled[keep, None]
    if not len(shares):
        return [(None, None)] * n_runs
    tail = (1 - confidence) / 2 * 100
    low = np.percentile(shares, tail, axis=0)
    high = np.percentile(shares, 100 - tail, axis=0)
    return [(float(lo), float(hi)) for lo, hi in zip(low, high, strict=True)]
