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

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.scoring.bootstrap import document_bootstrap, ratio
from goldloop.scoring.design import CorpusFigures, Design, corpus_figures
from goldloop.scoring.inputs import Prediction, SystemPredictions, per_document
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
    n_malformed: int
    n_found: int
    found_alone: int
    relative_recall: Estimate | None

    def to_dict(self) -> dict[str, Any]:
        recall = self.relative_recall
        return {
            "name": self.name,
            "n_mentions": self.n_mentions,
            "n_abstained": self.n_abstained,
            "n_malformed": self.n_malformed,
            "n_found": self.n_found,
            "found_alone": self.found_alone,
            "relative_recall": None if recall is None else recall.to_dict(),
        }


@dataclass(frozen=True)
class PoolReport:
    n_documents: int
    n_pool: int
    runs: list[RunRecall]
    n_bootstrap: int
    seed: int
    # Design-weighted relative recall per run, by run name (``scoring.design``); None without
    # a design.
    corpus: CorpusFigures | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_documents": self.n_documents,
            "n_pool": self.n_pool,
            "runs": [run.to_dict() for run in self.runs],
            "bootstrap": {"n": self.n_bootstrap, "seed": self.seed, "over": "documents"},
            "corpus": None
            if self.corpus is None
            else {
                "relative_recall": self.corpus.values,
                "intervals": self.corpus.intervals,
                **self.corpus.design(),
            },
            "caveat": CAVEAT,
        }


def pool_items(runs: Sequence[list[Prediction]], kb: KB) -> list[frozenset[int]]:
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
    documents: Sequence[Document],
    runs: Sequence[SystemPredictions],
    kb: KB,
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    design: Design | None = None,
) -> PoolReport:
    """Pool the runs' mentions per document of ``documents``; score each run, and with the
    documents' ``design`` each run's corpus relative recall."""
    n_documents = len(documents)
    # Document -> run -> its predictions there.
    by_run = [per_document(documents, run.predictions) for run in runs]
    per_doc = [[mentions[row] for mentions in by_run] for row in range(n_documents)]
    # Columns: pool size, then what each run found, per document.
    counts = np.zeros((n_documents, 1 + len(runs)), dtype=np.int64)
    alone = np.zeros(len(runs), dtype=np.int64)
    for row, mentions in enumerate(per_doc):
        items = pool_items(mentions, kb)
        counts[row, 0] = len(items)
        for finders in items:
            for k in finders:
                counts[row, 1 + k] += 1
            if len(finders) == 1:
                alone[next(iter(finders))] += 1
    names = [run.name for run in runs]

    def shares(sums: np.ndarray) -> dict[str, np.ndarray]:
        return {name: ratio(sums[:, 1 + k], sums[:, 0]) for k, name in enumerate(names)}

    intervals = document_bootstrap(counts, shares, n_bootstrap, seed, confidence)
    totals = counts.sum(axis=0)
    results = []
    for k, run in enumerate(runs):
        low, high = intervals.get(run.name, [None, None])
        recall = Estimate(float(totals[1 + k] / totals[0]), low, high) if totals[0] else None
        results.append(
            RunRecall(
                name=run.name,
                n_mentions=sum(p.entity_id is not None for p in run.predictions),
                n_abstained=sum(p.entity_id is None for p in run.predictions),
                n_malformed=sum(run.malformed.values()),
                n_found=int(totals[1 + k]),
                found_alone=int(alone[k]),
                relative_recall=recall,
            )
        )
    corpus = (
        None
        if design is None
        else corpus_figures(counts, shares, design, n_bootstrap, seed, confidence)
    )
    return PoolReport(n_documents, int(totals[0]), results, n_bootstrap, seed, corpus)
