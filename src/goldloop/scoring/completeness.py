"""How complete is the gold: capture–recapture over the documents two people annotated.

Each double document gives each annotator's spans; ``m`` counts the spans both marked, paired by
the matcher agreement uses (:func:`goldloop.scoring.agreement.span_pairs`). With ``n1``, ``n2``
and ``m`` summed over the documents, Chapman's estimator N̂ = (n1 + 1)(n2 + 1) / (m + 1) − 1
estimates how many mentions there are, those both missed included; each annotator's recall is
what they found over N̂, and the pair's is the union ``n1 + n2 − m`` over N̂. Intervals are
percentile bootstraps over documents.

With the documents' design (``scoring.design``), a ``corpus`` object gives the same on the corpus
from design-weighted sums, by Lincoln–Petersen (N̂ = n1·n2 / m, recalls m / n2, m / n1): the
Chapman correction is for small integer counts, and without it the recalls do not depend on
the weights' scale. ``mentions_per_document`` is N̂ over Σ w.

It assumes the two find mentions independently. Misses that go together (both skip the same
hard paraphrases) make ``m`` too large for ``n1`` and ``n2``: N̂ comes out too low and every
recall too high, so read the figures as upper bounds on recall.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from goldloop.scoring.agreement import span_pairs
from goldloop.scoring.bootstrap import document_bootstrap, ratio
from goldloop.scoring.design import CorpusFigures, Design, corpus_figures

ASSUMPTION = (
    "Capture-recapture assumes the annotators find mentions independently; misses they share "
    "make the estimated total too low and every recall too high."
)

Interval = tuple[float | None, float | None]
Spans = Collection[tuple[int, int]]


@dataclass(frozen=True)
class Completeness:
    """Chapman's estimate over the double documents, with bootstrap intervals.

    Estimates are None when undefined (a recall when N̂ is 0: no mention marked at all).
    """

    n_docs: int
    n1: int
    n2: int
    m: int
    n_hat: float
    recall_1: float | None
    recall_2: float | None
    recall_both: float | None
    n_hat_ci: Interval
    recall_1_ci: Interval
    recall_2_ci: Interval
    recall_both_ci: Interval
    n_boot: int
    seed: int
    level: float
    corpus: CorpusFigures | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_docs": self.n_docs,
            "n1": self.n1,
            "n2": self.n2,
            "m": self.m,
            "n_hat": self.n_hat,
            "recall_1": self.recall_1,
            "recall_2": self.recall_2,
            "recall_both": self.recall_both,
            "n_hat_ci": list(self.n_hat_ci),
            "recall_1_ci": list(self.recall_1_ci),
            "recall_2_ci": list(self.recall_2_ci),
            "recall_both_ci": list(self.recall_both_ci),
            "bootstrap": {"n": self.n_boot, "seed": self.seed, "level": self.level},
            "corpus": None if self.corpus is None else self.corpus.to_dict(),
            "assumption": ASSUMPTION,
        }


def estimate_completeness(
    docs: Sequence[tuple[Spans, Spans]],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    design: Design | None = None,
) -> Completeness:
    """Chapman's N̂ and the recalls it implies, from ``(annotator 1's spans, annotator 2's
    spans)`` per double document (half-open ``(a, b)`` character offsets); with the documents'
    ``design`` (in ``docs``' order), the corpus figures too."""
    counts = np.zeros((len(docs), 3), dtype=np.int64)
    for row, (first, second) in enumerate(docs):
        pairs = span_pairs(list(first), list(second))
        counts[row] = (
            len(first),
            len(second),
            sum(i is not None and k is not None for i, k in pairs),
        )
    n1, n2, m = (int(v) for v in counts.sum(axis=0))
    point = _estimates(np.array([[n1, n2, m]], dtype=np.int64))
    intervals = document_bootstrap(counts, _estimates, n_boot, seed, level)

    def value(name: str) -> float | None:
        v = float(point[name][0])
        return None if np.isnan(v) else v

    def interval(name: str) -> Interval:
        low, high = intervals.get(name, [None, None])
        return low, high

    return Completeness(
        n_docs=len(docs),
        n1=n1,
        n2=n2,
        m=m,
        n_hat=float(point["n_hat"][0]),
        recall_1=value("recall_1"),
        recall_2=value("recall_2"),
        recall_both=value("recall_both"),
        n_hat_ci=interval("n_hat"),
        recall_1_ci=interval("recall_1"),
        recall_2_ci=interval("recall_2"),
        recall_both_ci=interval("recall_both"),
        n_boot=n_boot,
        seed=seed,
        level=level,
        corpus=None
        if design is None
        else corpus_figures(
            np.column_stack([counts, np.ones(len(docs))]),
            _corpus_estimates,
            design,
            n_boot,
            seed,
            level,
        ),
    )


def _estimates(sums: np.ndarray) -> dict[str, np.ndarray]:
    """Per row of summed ``(n1, n2, m)``: Chapman's N̂ and the three recalls (NaN where N̂ = 0)."""
    n1, n2, m = (sums[:, k].astype(float) for k in range(3))
    n_hat = (n1 + 1) * (n2 + 1) / (m + 1) - 1
    return {
        "n_hat": n_hat,
        "recall_1": ratio(n1, n_hat),
        "recall_2": ratio(n2, n_hat),
        "recall_both": ratio(n1 + n2 - m, n_hat),
    }


def _corpus_estimates(sums: np.ndarray) -> dict[str, np.ndarray]:
    """Per row of weighted ``(n1, n2, m, documents)``: Lincoln–Petersen N̂, the recalls, and N̂
    per document."""
    n1, n2, m, documents = (sums[:, k] for k in range(4))
    n_hat = ratio(n1 * n2, m)
    return {
        "n_mentions": n_hat,
        "mentions_per_document": ratio(n_hat, documents),
        "recall_1": ratio(m, n2),
        "recall_2": ratio(m, n1),
        "recall_both": ratio(n1 + n2 - m, n_hat),
    }
