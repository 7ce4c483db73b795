"""One sampling batch, end to end: pool (cached), strata, allocation, draw, append, report."""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldloop.atomic import atomic_write_json
from goldloop.errors import GoldloopError, SettingError
from goldloop.kb import KB
from goldloop.sample.corpus import CorpusColumns, file_sha256, read_corpus, texts_for
from goldloop.sample.gate import Gate, GateSettings, exclusion_sets
from goldloop.sample.pool import (
    Pool,
    PoolDoc,
    build_pool,
    fingerprint,
    load_cached_pool,
    model_identity,
    write_pool,
)
from goldloop.sample.sampledir import MANIFEST, ManifestRow, append_batch, read_manifest
from goldloop.sample.strata import (
    ROLES,
    Boundaries,
    allocate,
    boundaries,
    draw,
    stratum_weights,
)


@dataclass(frozen=True)
class SampleSettings:
    """Everything a batch depends on besides the corpus and the KB."""

    columns: CorpusColumns = field(default_factory=CorpusColumns)
    gate: GateSettings = field(default_factory=GateSettings)
    n_primary: int = 100
    n_double: int = 20
    n_reserve: int = 30
    tail_top_k: int = 50
    tail_weight: float = 2.0
    none_fraction: float = 0.1
    seed: int = 13
    workers: int = 1
    batch_size: int = 64

    def check(self) -> None:
        for role, size in self.role_sizes.items():
            if size < 0:
                raise SettingError(f"n_{role}", f"must not be negative, got {size}")
        if sum(self.role_sizes.values()) == 0:
            raise SettingError("n_primary", "a batch needs at least one document (all roles are 0)")
        if not 0 <= self.none_fraction <= 1:
            raise SettingError("none_fraction", f"must lie in [0, 1], got {self.none_fraction}")
        if self.tail_weight <= 0:
            raise SettingError("tail_weight", f"must be > 0, got {self.tail_weight}")
        if self.tail_top_k < 0:
            raise SettingError("tail_top_k", f"must be >= 0, got {self.tail_top_k}")
        if self.workers < 1 or self.batch_size < 1:
            name = "workers" if self.workers < 1 else "batch_size"
            raise SettingError(name, f"must be >= 1, got {getattr(self, name)}")

    @property
    def role_sizes(self) -> dict[str, int]:
        return {"primary": self.n_primary, "double": self.n_double, "reserve": self.n_reserve}


@dataclass
class SampleResult:
    sample_dir: Path
    batch: int
    rows: list[ManifestRow]
    report: dict[str, Any]
    report_path: Path


def report_path(sample_dir: Path, batch: int) -> Path:
    return sample_dir / f"sampling_report.batch{batch}.json"


def run_sample(
    corpus: str | Path,
    out: str | Path,
    kb: KB,
    settings: SampleSettings = SampleSettings(),
    *,
    extend: bool = False,
    exclude: Sequence[str | Path] = (),
    on_rows: Callable[[int], None] | None = None,
) -> SampleResult:
    """Draw one batch from ``corpus`` into the sample dir ``out`` (a new one, or ``extend``)."""
    settings.check()
    sample_dir, corpus_path = Path(out), Path(corpus)
    existing = _existing(sample_dir, extend)
    batch = max((r.batch for r in existing), default=-1) + 1
    pool, inputs = _pool(corpus_path, sample_dir, kb, settings, exclude, on_rows)
    if not pool.documents:
        dropped = ", ".join(f"{reason} {n}" for reason, n in pool.gate.items() if n) or "none"
        raise GoldloopError(
            f"{corpus_path}: no eligible document ({pool.rows_read} rows read; dropped: {dropped})"
        )
    cuts = boundaries(pool.documents, settings.tail_top_k)
    taken = {r.doc_id for r in existing}
    strata: dict[str, list[PoolDoc]] = defaultdict(list)
    for doc in pool.documents:
        if doc.doc_id not in taken:
            strata[cuts.stratum(doc)].append(doc)
    sizes = {name: len(docs) for name, docs in strata.items()}
    if not sizes:
        raise GoldloopError(
            f"{sample_dir}: the pool is exhausted: all {len(pool.documents)} eligible documents"
            " of the corpus are drawn already"
        )
    weights = stratum_weights(sizes, settings.tail_weight, settings.none_fraction)
    allocation = allocate(sum(settings.role_sizes.values()), sizes, weights)
    drawn = draw(strata, allocation, settings.role_sizes, random.Random(f"{settings.seed}:{batch}"))
    texts = texts_for(corpus_path, settings.columns, {d.doc.doc_id: d.doc.text_sha1 for d in drawn})
    missing = [d.doc.doc_id for d in drawn if d.doc.doc_id not in texts]
    if missing:
        raise GoldloopError(f"{corpus_path}: text of {missing[0]!r} changed while sampling")
    rows = [_manifest_row(d.doc, d.stratum, d.p_incl, batch, d.role, kb) for d in drawn]
    report = {
        "batch": batch,
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "corpus": str(corpus_path),
        "exclude_corpora": [str(p) for p in exclude],
        "settings": asdict(settings),
        "kb": {"path": str(kb.path), "sha256": kb.sha256},
        "pool_cache": {"hit": pool.cache_hit, "fingerprint": pool.fingerprint, "inputs": inputs},
        "rows_read": pool.rows_read,
        "eligible": len(pool.documents),
        "dropped": pool.gate,
        "dropped_total": sum(pool.gate.values()),
        "boundaries": {
            "year_cuts": list(cuts.year_cuts),
            "verb_density_median": cuts.density_median,
            "tail_top_k": settings.tail_top_k,
            "common_labels": sorted(cuts.common),
        },
        "strata": _strata_report(pool, cuts, sizes, allocation),
        "already_drawn": len(taken),
        **_draw_report(rows, settings),
    }
    # The report first: a crash before the manifest append leaves only a report that the
    # retried batch (same number) overwrites; the manifest row is what makes a batch exist.
    path = report_path(sample_dir, batch)
    atomic_write_json(path, report)
    append_batch(sample_dir, rows, texts)
    return SampleResult(sample_dir, batch, rows, report, path)


def _strata_report(
    pool: Pool, cuts: Boundaries, sizes: dict[str, int], allocation: dict[str, int]
) -> dict[str, dict[str, Any]]:
    totals = Counter(cuts.stratum(doc) for doc in pool.documents)
    return {
        name: {
            "pool": totals[name],
            "remaining": sizes.get(name, 0),
            "drawn": allocation.get(name, 0),
            "p_incl": allocation.get(name, 0) / sizes[name] if sizes.get(name) else 0.0,
        }
        for name in sorted(totals)
    }


def _draw_report(rows: list[ManifestRow], settings: SampleSettings) -> dict[str, Any]:
    requested = sum(settings.role_sizes.values())
    return {
        "requested": requested,
        "drawn": len(rows),
        "shortfall": requested - len(rows),
        "negative_controls": sum(r.n_verb_mentions == 0 for r in rows),
        "roles": {role: sum(r.role == role for r in rows) for role in ROLES},
    }


def _existing(sample_dir: Path, extend: bool) -> list[ManifestRow]:
    has_sample = (sample_dir / MANIFEST).is_file()
    if extend and not has_sample:
        raise SettingError("extend", f"{sample_dir} holds no sample to extend (no {MANIFEST})")
    if not extend and has_sample:
        raise SettingError(
            "extend", f"{sample_dir} already holds a sample: extend it to append a batch"
        )
    return read_manifest(sample_dir) if has_sample else []


def _pool(
    corpus: Path,
    sample_dir: Path,
    kb: KB,
    settings: SampleSettings,
    exclude: Sequence[str | Path],
    on_rows: Callable[[int], None] | None,
) -> tuple[Pool, dict[str, Any]]:
    """The cached pool when its fingerprint still holds, else a fresh parse (then cached)."""
    from goldloop.nlp import DETECTOR_VERSION

    if not corpus.is_file():
        raise GoldloopError(f"{corpus}: no such corpus file")
    inputs = {
        "corpus_sha256": file_sha256(corpus),
        "columns": asdict(settings.columns),
        "exclude_sha256": [file_sha256(p) for p in exclude],
        "kb_sha256": kb.sha256,
        "gate": settings.gate.as_dict(),
        "detector_version": DETECTOR_VERSION,
        "spacy_model": model_identity(),
    }
    key = fingerprint(inputs)
    cached = load_cached_pool(sample_dir, key)
    if cached is not None:
        return cached, inputs
    excluded_ids, excluded_hashes = exclusion_sets(
        record for path in exclude for record in read_corpus(path, strict=False)
    )
    gate = Gate(settings.gate, excluded_ids, excluded_hashes)
    documents, rows = build_pool(
        read_corpus(corpus, settings.columns),
        gate,
        kb,
        workers=settings.workers,
        batch_size=settings.batch_size,
        on_rows=on_rows,
    )
    pool = Pool(documents, rows, gate.counts(), key, cache_hit=False)
    write_pool(sample_dir, pool, inputs)
    return pool, inputs


def _manifest_row(
    doc: PoolDoc, stratum: str, p_incl: float, batch: int, role: str, kb: KB
) -> ManifestRow:
    labels = sorted({_canonical_label(kb, m.entity_id) for m in doc.mentions})
    return ManifestRow(
        doc_id=doc.doc_id,
        doc_uid=doc.doc_uid,
        ids=dict(doc.ids),
        publication_year=doc.year,
        n_chars=doc.n_chars,
        n_mentions=doc.n_mentions,
        n_verb_mentions=doc.n_verb_mentions,
        labels_detected=tuple(labels),
        stratum=stratum,
        p_incl=p_incl,
        batch=batch,
        role=role,
        text_sha1=doc.text_sha1,
    )


def _canonical_label(kb: KB, entity_id: str) -> str:
    relation = kb.get(entity_id)
    return relation.label if relation is not None else entity_id
