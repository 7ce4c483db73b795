"""Corpus, KB, sample and gold statistics in one ``dataset_stats.json``: each input given adds
its section (documents, lengths, years, mentions per document, relations and directions in
gold, anchored vs paraphrase shares)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from goldloop.formats.gold import read_gold
from goldloop.formats.sampledir import ID_KINDS, is_sample_dir, read_documents, read_manifest
from goldloop.kb import KB
from goldloop.sample.corpus import CorpusColumns, read_corpus


def describe(values: Iterable[float]) -> dict[str, float | int | None]:
    """Count, mean, median, extremes and the 5th/95th percentiles (``None`` when empty)."""
    data = np.asarray(list(values), dtype=float)
    if data.size == 0:
        return {
            "n": 0,
            "mean": None,
            "median": None,
            "min": None,
            "max": None,
            "p05": None,
            "p95": None,
        }
    p05, median, p95 = np.percentile(data, [5, 50, 95])
    return {
        "n": int(data.size),
        "mean": round(float(data.mean()), 4),
        "median": float(median),
        "min": float(data.min()),
        "max": float(data.max()),
        "p05": round(float(p05), 4),
        "p95": round(float(p95), 4),
    }


def corpus_stats(path: str | Path, columns: CorpusColumns | None = None) -> dict[str, Any]:
    """One streaming pass over a corpus: rows, identifiers, lengths and years."""
    rows = with_id = no_year = 0
    lengths: list[int] = []
    years: Counter[int] = Counter()
    kinds: Counter[str] = Counter()
    for record in read_corpus(path, columns or CorpusColumns(), strict=False):
        rows += 1
        with_id += record.doc_id is not None
        lengths.append(len(record.text))
        if record.year is None:
            no_year += 1
        else:
            years[record.year] += 1
        kinds.update(kind for kind in ID_KINDS if record.ids.get(kind))
    return {
        "path": str(path),
        "documents": rows,
        "with_identifier": with_id,
        "identifiers": dict(sorted(kinds.items())),
        "chars": describe(lengths),
        "years": _years(years),
        "without_year": no_year,
    }


def _years(years: Counter[int]) -> dict[str, Any]:
    return {
        "min": min(years, default=None),
        "max": max(years, default=None),
        "by_year": {str(y): n for y, n in sorted(years.items())},
    }


def kb_stats(kb: KB) -> dict[str, Any]:
    return {"path": str(kb.path), "sha256": kb.sha256, **asdict(kb.summary())}


def sample_stats(sample_dir: str | Path) -> dict[str, Any]:
    """A sample dir's manifest described; a plain documents JSONL gives documents and lengths."""
    if not is_sample_dir(Path(sample_dir)):
        documents = read_documents(sample_dir)
        return {
            "path": str(sample_dir),
            "documents": len(documents),
            "chars": describe(len(doc.text) for doc in documents),
        }
    rows = read_manifest(sample_dir)
    labels = Counter(label for r in rows for label in r.labels_detected)
    years = Counter(r.publication_year for r in rows if r.publication_year is not None)
    return {
        "path": str(sample_dir),
        "documents": len(rows),
        "by_batch": {str(b): n for b, n in sorted(Counter(r.batch for r in rows).items())},
        "by_role": dict(sorted(Counter(r.role for r in rows).items())),
        "by_stratum": dict(sorted(Counter(r.stratum for r in rows).items())),
        "chars": describe(r.n_chars for r in rows),
        "years": _years(years),
        "mentions_per_document": describe(r.n_mentions for r in rows),
        "verb_mentions_per_document": describe(r.n_verb_mentions for r in rows),
        "negative_controls": sum(r.n_verb_mentions == 0 for r in rows),
        "labels_detected": dict(labels.most_common()),
    }


def gold_stats(path: str | Path, kb: KB) -> dict[str, Any]:
    gold = read_gold(path, kb)
    hits = [hit for doc in gold.documents for hit in doc.ground_truth]
    relations = Counter(hit.entity_id for hit in hits)
    anchored = Counter(
        "unknown"
        if hit.surface_anchored is None
        else "anchored"
        if hit.surface_anchored
        else "paraphrase"
        for hit in hits
    )
    known = anchored["anchored"] + anchored["paraphrase"]
    return {
        "path": str(path),
        "documents": len(gold.documents),
        "documents_without_hits": sum(not doc.ground_truth for doc in gold.documents),
        "hits": len(hits),
        "hits_per_document": describe(len(doc.ground_truth) for doc in gold.documents),
        "chars": describe(len(doc.text) for doc in gold.documents),
        "relations": {
            eid: {"label": _label(kb, eid), "hits": n} for eid, n in relations.most_common()
        },
        "distinct_relations": len(relations),
        "directions": dict(sorted(Counter(hit.direction or "absent" for hit in hits).items())),
        "sources": dict(sorted(Counter(hit.source or "unknown" for hit in hits).items())),
        "verdicts": dict(sorted(Counter(hit.verdict or "none" for hit in hits).items())),
        "anchoring": dict(sorted(anchored.items())),
        "anchored_share": anchored["anchored"] / known if known else None,
        "paraphrase_share": anchored["paraphrase"] / known if known else None,
        "folded_to_canonical": gold.stats.folded_to_canonical,
        "ids_not_in_kb": dict(gold.stats.not_in_kb),
    }


def _label(kb: KB, entity_id: str) -> str | None:
    relation = kb.get(entity_id)
    return relation.label if relation else None


@dataclass(frozen=True)
class DatasetStats:
    """``dataset_stats.json``: the KB's section, then one per input given (``None``: not
    given, and absent from the JSON)."""

    kb: dict[str, Any]
    corpus: dict[str, Any] | None = None
    sample: dict[str, Any] | None = None
    gold: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        sections = {"corpus": self.corpus, "sample": self.sample, "gold": self.gold}
        return {"kb": self.kb, **{k: v for k, v in sections.items() if v is not None}}


def dataset_stats(
    kb: KB,
    *,
    corpus: str | Path | None = None,
    columns: CorpusColumns | None = None,
    sample: str | Path | None = None,
    gold: str | Path | None = None,
) -> DatasetStats:
    """The sections for the inputs given; the KB section is always there (it folds gold ids)."""
    return DatasetStats(
        kb=kb_stats(kb),
        corpus=None if corpus is None else corpus_stats(corpus, columns),
        sample=None if sample is None else sample_stats(sample),
        gold=None if gold is None else gold_stats(gold, kb),
    )
