"""Auditing a sample dir after each batch (and after annotating it).

Re-checks every drawn document against the gate settings of its batch, measures how strongly
verb-mention density still tracks length, lists documents and negative controls without a gold
hit, measures label concentration, and reports coverage — canonical labels with at least
``min_mentions`` gold hits, out of those the pool can supply — cumulatively per batch. Without a
gold file, label concentration and coverage use the detector's mentions instead.
"""

from __future__ import annotations

import io
import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from goldloop.errors import GoldloopError
from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_bytes, atomic_write_json
from goldloop.formats.gold import read_gold
from goldloop.formats.sampledir import ManifestRow, read_documents, read_manifest
from goldloop.kb import KB
from goldloop.sample.batch_record import report_path
from goldloop.sample.corpus import CorpusRecord, text_sha1
from goldloop.sample.gate import Gate, GateSettings
from goldloop.sample.pool import POOL_FILE, read_pool_rows

TOP_LABELS = 15


@dataclass(frozen=True)
class Eligibility:
    """The drawn documents through their batch's gate again: the documents failing each
    reason (a gate reason, or ``text_changed``), by reason."""

    checked: int
    by_reason: dict[str, list[str]]  # sorted by reason

    @property
    def failing(self) -> int:
        """Documents failing any reason (one may fail several)."""
        return len({d for ids in self.by_reason.values() for d in ids})

    def to_dict(self) -> dict[str, Any]:
        return {
            "checked": self.checked,
            "failing": self.failing,
            "by_reason": {
                reason: {"count": len(ids), "doc_ids": ids}
                for reason, ids in self.by_reason.items()
            },
        }


@dataclass(frozen=True)
class Correlations:
    """Verb mentions against characters over ``n`` documents: Pearson r, Spearman rho (``None``
    when undefined) and the mean density."""

    n: int
    pearson_r: float | None
    spearman_rho: float | None
    verb_mentions_per_1000_chars: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DensityVsLength:
    """How strongly verb-mention density tracks length, in the sample and in the pool."""

    sample: Correlations
    pool: Correlations

    def to_dict(self) -> dict[str, Any]:
        return {"sample": self.sample.to_dict(), "pool": self.pool.to_dict()}


@dataclass(frozen=True)
class TopLabel:
    """One of the most frequent labels: its mentions and their share of all mentions."""

    entity_id: str
    label: str
    mentions: int
    share: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Concentration:
    """Label concentration: mentions, distinct labels, the ``TOP_LABELS`` most frequent, top
    shares, Herfindahl index and normalised entropy (``None`` without mentions)."""

    mentions: int
    distinct_labels: int
    top: list[TopLabel]
    top1_share: float | None
    top5_share: float | None
    herfindahl: float | None
    normalized_entropy: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "mentions": self.mentions,
            "distinct_labels": self.distinct_labels,
            "top": [label.to_dict() for label in self.top],
            "top1_share": self.top1_share,
            "top5_share": self.top5_share,
            "herfindahl": self.herfindahl,
            "normalized_entropy": self.normalized_entropy,
        }


@dataclass(frozen=True)
class CoveragePoint:
    """Coverage after one batch: the documents so far, and the suppliable labels reached."""

    batch: int
    documents: int
    labels_reached: int
    coverage: float | None  # None when the pool can supply no label

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Coverage:
    """Labels reaching ``min_mentions`` hits, of the ``pool_can_supply`` the pool holds that
    often, batch by batch."""

    min_mentions: int
    pool_can_supply: int
    curve: list[CoveragePoint]

    def to_dict(self) -> dict[str, Any]:
        return {
            "min_mentions": self.min_mentions,
            "pool_can_supply": self.pool_can_supply,
            "curve": [point.to_dict() for point in self.curve],
        }


@dataclass(frozen=True)
class GoldGaps:
    """The sample against its gold: documents on each side, documents without a hit, and the
    negative controls (no verb mention detected) with and without hits."""

    path: str
    gold_documents: int
    sample_documents_in_gold: int
    documents_without_hits: list[str]
    negative_controls: int
    negative_controls_without_hits: list[str]
    negative_controls_with_hits: list[str]

    @property
    def gold_documents_not_in_sample(self) -> int:
        return self.gold_documents - self.sample_documents_in_gold

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "gold_documents": self.gold_documents,
            "sample_documents_in_gold": self.sample_documents_in_gold,
            "gold_documents_not_in_sample": self.gold_documents_not_in_sample,
            "documents_without_hits": self.documents_without_hits,
            "negative_controls": self.negative_controls,
            "negative_controls_without_hits": self.negative_controls_without_hits,
            "negative_controls_with_hits": self.negative_controls_with_hits,
        }


@dataclass(frozen=True)
class AuditReport:
    """``audit.json``: the sample's documents and batches, the gate re-checked, density against
    length (sample and pool), where labels came from, their concentration, coverage per batch,
    and with a gold file its gaps (``gold``, absent without one)."""

    sample_dir: str
    documents: int
    batches: list[int]
    eligibility: Eligibility
    density_vs_length: DensityVsLength
    label_source: str
    label_concentration: Concentration
    coverage: Coverage
    gold: GoldGaps | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "sample_dir": self.sample_dir,
            "documents": self.documents,
            "batches": self.batches,
            "eligibility": self.eligibility.to_dict(),
            "density_vs_length": self.density_vs_length.to_dict(),
            "label_source": self.label_source,
            "label_concentration": self.label_concentration.to_dict(),
            "coverage": self.coverage.to_dict(),
        }
        if self.gold is not None:
            out["gold"] = self.gold.to_dict()
        return out


@dataclass
class AuditResult:
    report: AuditReport
    json_path: Path
    png_path: Path


def audit_sample(
    sample_dir: str | Path,
    kb: KB,
    *,
    gold: str | Path | None = None,
    min_mentions: int = 3,
    out_dir: str | Path | None = None,
) -> AuditResult:
    """Audit a sample dir; write ``audit.json`` and ``audit.png`` to ``out_dir`` (default: it)."""
    directory = Path(sample_dir)
    rows = read_manifest(directory)
    texts = {doc.doc_id: doc.text for doc in read_documents(directory)}
    pool_path = directory / POOL_FILE
    if not pool_path.is_file():
        raise GoldloopError(f"{directory}: no pool cache ({POOL_FILE}); re-run goldloop sample")
    pool = read_pool_rows(pool_path)
    detected = {d.doc_id: [m.entity_id for m in d.mentions] for d in pool}
    if gold is not None:
        gold_docs = {doc.doc_id: doc for doc in read_gold(gold, kb).documents}
        hits = {
            i: [h.entity_id for h in d.ground_truth] for i, d in gold_docs.items() if i in texts
        }
        source = "gold"
    else:
        hits = {r.doc_id: detected.get(r.doc_id, []) for r in rows}
        source = "detected"
    report = AuditReport(
        sample_dir=str(directory),
        documents=len(rows),
        batches=sorted({r.batch for r in rows}),
        eligibility=_recheck(directory, rows, texts),
        density_vs_length=DensityVsLength(
            sample=_correlations([r.n_chars for r in rows], [r.n_verb_mentions for r in rows]),
            pool=_correlations([d.n_chars for d in pool], [d.n_verb_mentions for d in pool]),
        ),
        label_source=source,
        label_concentration=_concentration(kb, Counter(e for ids in hits.values() for e in ids)),
        coverage=_coverage(rows, hits, detected, min_mentions),
        gold=None if gold is None else _gold_gaps(rows, hits, gold, len(gold_docs)),
    )
    target = Path(out_dir) if out_dir is not None else directory
    json_path, png_path = target / "audit.json", target / "audit.png"
    atomic_write_json(json_path, report.to_dict())
    atomic_write_bytes(png_path, _plot(report, rows))
    return AuditResult(report, json_path, png_path)


def _batch_gates(directory: Path, batches: set[int]) -> dict[int, GateSettings]:
    gates = {}
    for batch in sorted(batches):
        path = report_path(directory, batch)
        try:
            settings = jsonl.loads(path.read_text(encoding="utf-8"))["settings"]["gate"]
            gates[batch] = GateSettings(**settings)
        except (OSError, KeyError, TypeError, json.JSONDecodeError) as exc:
            raise GoldloopError(f"{path}: cannot read the batch's gate settings: {exc}") from exc
    return gates


def _recheck(directory: Path, rows: list[ManifestRow], texts: dict[str, str]) -> Eligibility:
    """Every drawn document through its batch's gate again, plus text integrity checks."""
    gates = _batch_gates(directory, {r.batch for r in rows})
    gate = Gate(GateSettings())
    failures: dict[str, list[str]] = {}
    for row in rows:
        text = texts[row.doc_id]
        gate.settings = gates[row.batch]
        record = CorpusRecord(
            row.batch, row.doc_id, row.doc_uid, row.ids, row.publication_year, text
        )
        why = gate.reason(record)
        reasons = [] if why is None else [why]
        if why is None:
            gate.admit(record)  # remembers the text and id, so later copies count as duplicates
        if text_sha1(text) != row.text_sha1 or len(text) != row.n_chars:
            reasons.append("text_changed")
        for reason in reasons:
            failures.setdefault(reason, []).append(row.doc_id)
    return Eligibility(len(rows), dict(sorted(failures.items())))


def _ranks(values: Sequence[float]) -> np.ndarray:
    """Ranks with ties averaged (for Spearman's rho)."""
    data = np.asarray(values, dtype=float)
    order = data.argsort(kind="mergesort")
    ranks = np.empty(len(data))
    ranks[order] = np.arange(1, len(data) + 1)
    for value in np.unique(data):
        tied = data == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def _correlations(lengths: list[int], counts: list[int]) -> Correlations:
    """Pearson r and Spearman rho of verb mentions against characters (``None`` when undefined)."""

    def pearson(x: np.ndarray, y: np.ndarray) -> float | None:
        if len(x) < 3 or x.std() == 0 or y.std() == 0:
            return None
        return round(float(np.corrcoef(x, y)[0, 1]), 4)

    x, y = np.asarray(lengths, dtype=float), np.asarray(counts, dtype=float)
    per_k = (y / x * 1000) if len(x) else np.array([])
    return Correlations(
        n=len(x),
        pearson_r=pearson(x, y),
        spearman_rho=pearson(_ranks(lengths), _ranks(counts)) if len(x) else None,
        verb_mentions_per_1000_chars=round(float(per_k.mean()), 4) if len(x) else None,
    )


def _concentration(kb: KB, counts: Counter[str]) -> Concentration:
    """Distinct labels, top shares, Herfindahl index and normalised entropy of label counts."""
    total = sum(counts.values())
    if not total:
        return Concentration(0, 0, [], None, None, None, None)
    shares = np.array([n / total for n in counts.values()])
    entropy = float(-(shares * np.log(shares)).sum())
    ranked = counts.most_common()
    return Concentration(
        mentions=total,
        distinct_labels=len(counts),
        top=[
            TopLabel(eid, _label(kb, eid), n, round(n / total, 4)) for eid, n in ranked[:TOP_LABELS]
        ],
        top1_share=round(ranked[0][1] / total, 4),
        top5_share=round(sum(n for _, n in ranked[:5]) / total, 4),
        herfindahl=round(float((shares**2).sum()), 4),
        normalized_entropy=round(entropy / math.log(len(counts)), 4) if len(counts) > 1 else 0.0,
    )


def _label(kb: KB, entity_id: str) -> str:
    relation = kb.get(entity_id)
    return relation.label if relation else entity_id


def _coverage(
    rows: list[ManifestRow],
    hits: dict[str, list[str]],
    detected: dict[str, list[str]],
    min_mentions: int,
) -> Coverage:
    """Labels reaching ``min_mentions`` hits among those the pool holds that often, per batch."""
    supply_counts = Counter(e for ids in detected.values() for e in ids)
    supply = {e for e, n in supply_counts.items() if n >= min_mentions}
    curve = []
    running: Counter[str] = Counter()
    for batch in sorted({r.batch for r in rows}):
        for row in rows:
            if row.batch == batch:
                running.update(hits.get(row.doc_id, []))
        reached = {e for e, n in running.items() if n >= min_mentions}
        curve.append(
            CoveragePoint(
                batch=batch,
                documents=sum(r.batch <= batch for r in rows),
                labels_reached=len(reached & supply),
                coverage=round(len(reached & supply) / len(supply), 4) if supply else None,
            )
        )
    return Coverage(min_mentions, len(supply), curve)


def _gold_gaps(
    rows: list[ManifestRow], hits: dict[str, list[str]], gold: str | Path, n_gold: int
) -> GoldGaps:
    annotated = [r for r in rows if r.doc_id in hits]
    empty = [r.doc_id for r in annotated if not hits[r.doc_id]]
    controls = [r for r in annotated if r.n_verb_mentions == 0]
    return GoldGaps(
        path=str(gold),
        gold_documents=n_gold,
        sample_documents_in_gold=len(annotated),
        documents_without_hits=empty,
        negative_controls=len(controls),
        negative_controls_without_hits=[r.doc_id for r in controls if not hits[r.doc_id]],
        negative_controls_with_hits=[r.doc_id for r in controls if hits[r.doc_id]],
    )


def _plot(report: AuditReport, rows: list[ManifestRow]) -> bytes:
    """Coverage per batch, density against length, and the most frequent labels, as PNG bytes."""
    import matplotlib  # matplotlib loads only when a chart is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.5))
    curve = report.coverage.curve
    left.plot([p.documents for p in curve], [p.coverage or 0 for p in curve], marker="o")
    for point in curve:
        left.annotate(f"b{point.batch}", (point.documents, point.coverage or 0))
    least = report.coverage.min_mentions
    left.set(
        title=f"coverage ({report.label_source}, ≥{least} mentions)",
        xlabel="documents (cumulative)", ylabel="share of suppliable labels", ylim=(0, 1.05),
    )  # fmt: skip
    middle.scatter([r.n_chars for r in rows], [r.n_verb_mentions for r in rows], s=12, alpha=0.6)
    rho = report.density_vs_length.sample.spearman_rho
    middle.set(
        title=f"verb mentions vs length (rho={rho})", xlabel="characters", ylabel="verb mentions"
    )
    top = report.label_concentration.top
    right.barh([t.label for t in top][::-1], [t.share for t in top][::-1])
    right.set(title=f"label concentration ({report.label_source})", xlabel="share of mentions")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return buffer.getvalue()
