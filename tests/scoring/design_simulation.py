"""The seeded simulation the corpus-figure tests share: a synthetic corpus of unequal strata,
sampled by the sampler's own draw (``goldloop.sample.run.draw_batch``)."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, replace

import numpy as np

from goldloop.formats.gold import Document
from goldloop.sample.batch_record import SampleSettings
from goldloop.sample.pool import PoolDoc
from goldloop.sample.pool_mentions import PoolMention
from goldloop.sample.run import draw_batch

REPLICATES = 200
N_DOCS = 3000


@dataclass(frozen=True)
class Corpus:
    docs: list[PoolDoc]
    counts: dict[str, np.ndarray]  # doc_id -> (gold, predicted, matched)


def make_corpus(seed: int = 7) -> Corpus:
    """Strata of unequal size; the system finds common relations well and tail ones badly, and
    invents mentions in documents with none (so each stratum has its own precision and recall)."""
    rng = np.random.default_rng(seed)
    ids = [f"E{k}" for k in range(60)]
    popularity = 1 / np.arange(1, 61) ** 1.3
    popularity /= popularity.sum()
    docs, counts = [], {}
    for i in range(N_DOCS):
        year = int(rng.integers(1990, 2024))
        n_verbs = int(rng.choice([0, 1, 2, 3, 5, 8], p=[0.25, 0.25, 0.2, 0.15, 0.1, 0.05]))
        chosen = rng.choice(ids, size=n_verbs, p=popularity)
        mentions = tuple(
            PoolMention(k, k + 1, str(e), "x", None, True) for k, e in enumerate(chosen)
        )
        doc_id = f"d{i}"
        docs.append(
            PoolDoc(
                doc_id, doc_id, {}, year, 100, hashlib.sha1(doc_id.encode()).hexdigest(), mentions
            )
        )
        tail = any(ids.index(str(e)) >= 10 for e in chosen)
        gold = n_verbs + int(rng.poisson(1.0 if year < 2005 else 0.3))
        recall, precision = (0.35, 0.5) if tail else (0.9, 0.92)
        matched = int(rng.binomial(gold, recall))
        invented = int(rng.poisson(2.0 if n_verbs == 0 else matched * (1 / precision - 1)))
        counts[doc_id] = np.array([gold, matched + invented, matched])
    return Corpus(docs, counts)


SETTINGS = SampleSettings(n_primary=70, n_double=20, n_reserve=30, tail_top_k=10, tail_weight=4.0)


def sample_gold(corpus: Corpus, rep: int, *, phase1: int | None, batches: int, reserve: bool):
    """The gold of one seeded sample drawn by ``draw_batch`` (as ``goldloop sample`` draws):
    per document its counts and a ``Document`` carrying the design. Later batches draw from
    what earlier ones left (``--extend``); in two phases from a longer prefix of one order."""
    settings = replace(SETTINGS, seed=rep)
    order = list(corpus.docs)
    random.Random(f"order:{rep}").shuffle(order)
    taken: set[str] = set()
    cuts = None
    size = 0
    documents: list[Document] = []
    for batch in range(batches):
        pool = order
        if phase1 is not None:
            size = max(size, len(taken) + phase1)
            pool = order[:size]
        chosen = draw_batch(pool, len(order), taken, settings, batch, cuts)
        cuts = chosen.cuts
        for d in chosen.drawn:
            taken.add(d.doc.doc_id)
            if d.role == "reserve" and not reserve:
                continue
            documents.append(
                Document(
                    doc_id=d.doc.doc_id, text="x", p_incl=d.p_incl, stratum=d.stratum, batch=batch
                )
            )
    per_doc = np.array([corpus.counts[d.doc_id] for d in documents])
    return documents, per_doc
