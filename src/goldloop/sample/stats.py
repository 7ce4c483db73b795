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
from goldloop.kb import KB, KBSummary
from goldloop.sample.corpus import CorpusColumns, read_corpus


@dataclass(frozen=True)
class Description:
    """Count, mean, median, extremes and the 5th/95th percentiles of some values (``None``
    but the count when there are none)."""

    n: int
    mean: float | None
    median: float | None
    min: float | None
    max: float | None
    p05: float | None
    p95: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def describe(values: Iterable[float]) -> Description:
    """The values' :class:`Description`."""
    data = np.asarray(list(values), dtype=float)
    if data.size == 0:
        return Description(0, None, None, None, None, None, None)
    p05, median, p95 = np.percentile(data, [5, 50, 95])
    return Description(
        n=int(data.size),
        mean=round(float(data.mean()), 4),
        median=float(median),
        min=float(data.min()),
        max=float(data.max()),
        p05=round(float(p05), 4),
        p95=round(float(p95), 4),
    )


@dataclass(frozen=True)
class Years:
    """Publication years: the first, the last (``None`` without any), and documents per year."""

    min: int | None
    max: int | None
    by_year: dict[str, int]

    @classmethod
    def of(cls, years: Counter[int]) -> Years:
        return cls(
            min(years, default=None),
            max(years, default=None),
            {str(y): n for y, n in sorted(years.items())},
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CorpusStats:
    """The ``corpus`` section: rows, identifiers by kind, lengths and years."""

    path: str
    documents: int
    with_identifier: int
    identifiers: dict[str, int]
    chars: Description
    years: Years
    without_year: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "documents": self.documents,
            "with_identifier": self.with_identifier,
            "identifiers": self.identifiers,
            "chars": self.chars.to_dict(),
            "years": self.years.to_dict(),
            "without_year": self.without_year,
        }


def corpus_stats(path: str | Path, columns: CorpusColumns | None = None) -> CorpusStats:
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
    return CorpusStats(
        path=str(path),
        documents=rows,
        with_identifier=with_id,
        identifiers=dict(sorted(kinds.items())),
        chars=describe(lengths),
        years=Years.of(years),
        without_year=no_year,
    )


@dataclass(frozen=True)
class KBStats:
    """The ``kb`` section: the KB's path, digest and summary."""

    path: str
    sha256: str
    summary: KBSummary

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, **asdict(self.summary)}


def kb_stats(kb: KB) -> KBStats:
    return KBStats(str(kb.path), kb.sha256, kb.summary())


@dataclass(frozen=True)
class DocumentsStats:
    """The ``sample`` section of a plain documents JSONL: documents and their lengths."""

    path: str
    documents: int
    chars: Description

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "documents": self.documents, "chars": self.chars.to_dict()}


@dataclass(frozen=True)
class SampleStats:
    """The ``sample`` section of a sample dir: its manifest described."""

    path: str
    documents: int
    by_batch: dict[str, int]
    by_role: dict[str, int]
    by_stratum: dict[str, int]
    chars: Description
    years: Years
    mentions_per_document: Description
    verb_mentions_per_document: Description
    negative_controls: int
    labels_detected: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "documents": self.documents,
            "by_batch": self.by_batch,
            "by_role": self.by_role,
            "by_stratum": self.by_stratum,
            "chars": self.chars.to_dict(),
            "years": self.years.to_dict(),
            "mentions_per_document": self.mentions_per_document.to_dict(),
            "verb_mentions_per_document": self.verb_mentions_per_document.to_dict(),
            "negative_controls": self.negative_controls,
            "labels_detected": self.labels_detected,
        }


def sample_stats(sample_dir: str | Path) -> SampleStats | DocumentsStats:
    """A sample dir's manifest described; a plain documents JSONL gives documents and lengths."""
    if not is_sample_dir(Path(sample_dir)):
        documents = read_documents(sample_dir)
        return DocumentsStats(
            str(sample_dir), len(documents), describe(len(doc.text) for doc in documents)
        )
    rows = read_manifest(sample_dir)
    labels = Counter(label for r in rows for label in r.labels_detected)
    years = Counter(r.publication_year for r in rows if r.publication_year is not None)
    return SampleStats(
        path=str(sample_dir),
        documents=len(rows),
        by_batch={str(b): n for b, n in sorted(Counter(r.batch for r in rows).items())},
        by_role=dict(sorted(Counter(r.role for r in rows).items())),
        by_stratum=dict(sorted(Counter(r.stratum for r in rows).items())),
        chars=describe(r.n_chars for r in rows),
        years=Years.of(years),
        mentions_per_document=describe(r.n_mentions for r in rows),
        verb_mentions_per_document=describe(r.n_verb_mentions for r in rows),
        negative_controls=sum(r.n_verb_mentions == 0 for r in rows),
        labels_detected=dict(labels.most_common()),
    )


@dataclass(frozen=True)
class RelationCount:
    """Gold hits of one relation, with its KB label (``None`` for an id not in the KB)."""

    label: str | None
    hits: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class GoldStats:
    """The ``gold`` section: documents, hits, lengths, relations, directions, sources,
    verdicts, anchoring and what reading the gold folded or did not find in the KB."""

    path: str
    documents: int
    documents_without_hits: int
    hits: int
    hits_per_document: Description
    chars: Description
    relations: dict[str, RelationCount]  # most hits first
    directions: dict[str, int]
    sources: dict[str, int]
    verdicts: dict[str, int]
    anchoring: dict[str, int]
    anchored_share: float | None  # of the hits whose anchoring is known
    paraphrase_share: float | None
    folded_to_canonical: int
    ids_not_in_kb: dict[str, int]

    @property
    def distinct_relations(self) -> int:
        return len(self.relations)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "documents": self.documents,
            "documents_without_hits": self.documents_without_hits,
            "hits": self.hits,
            "hits_per_document": self.hits_per_document.to_dict(),
            "chars": self.chars.to_dict(),
            "relations": {eid: count.to_dict() for eid, count in self.relations.items()},
            "distinct_relations": self.distinct_relations,
            "directions": self.directions,
            "sources": self.sources,
            "verdicts": self.verdicts,
            "anchoring": self.anchoring,
            "anchored_share": self.anchored_share,
            "paraphrase_share": self.paraphrase_share,
            "folded_to_canonical": self.folded_to_canonical,
            "ids_not_in_kb": self.ids_not_in_kb,
        }


def gold_stats(path: str | Path, kb: KB) -> GoldStats:
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
    return GoldStats(
        path=str(path),
        documents=len(gold.documents),
        documents_without_hits=sum(not doc.ground_truth for doc in gold.documents),
        hits=len(hits),
        hits_per_document=describe(len(doc.ground_truth) for doc in gold.documents),
        chars=describe(len(doc.text) for doc in gold.documents),
        relations={eid: RelationCount(_label(kb, eid), n) for eid, n in relations.most_common()},
        directions=dict(sorted(Counter(hit.direction or "absent" for hit in hits).items())),
        sources=dict(sorted(Counter(hit.source or "unknown" for hit in hits).items())),
        verdicts=dict(sorted(Counter(hit.verdict or "none" for hit in hits).items())),
        anchoring=dict(sorted(anchored.items())),
        anchored_share=anchored["anchored"] / known if known else None,
        paraphrase_share=anchored["paraphrase"] / known if known else None,
        folded_to_canonical=gold.stats.folded_to_canonical,
        ids_not_in_kb=dict(gold.stats.not_in_kb),
    )


def _label(kb: KB, entity_id: str) -> str | None:
    relation = kb.get(entity_id)
    return relation.label if relation else None


@dataclass(frozen=True)
class DatasetStats:
    """``dataset_stats.json``: the KB's section, then one per input given (``None``: not
    given, and absent from the JSON)."""

    kb: KBStats
    corpus: CorpusStats | None = None
    sample: SampleStats | DocumentsStats | None = None
    gold: GoldStats | None = None

    def to_dict(self) -> dict[str, Any]:
        sections = {"corpus": self.corpus, "sample": self.sample, "gold": self.gold}
        return {
            "kb": self.kb.to_dict(),
            **{k: v.to_dict() for k, v in sections.items() if v is not None},
        }


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
