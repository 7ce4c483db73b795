"""One sampling batch, end to end: pool (cached), strata, allocation, draw, append, report.

In two phases (``SampleSettings.phase1``) the pool is phase 1 (``goldloop.sample.phase1``):
batch ``b`` draws from the first ``m_b`` documents of the seeded order, ``m_b`` = the documents
already drawn + the phase-1 size asked for (never fewer than the previous batch's), strata cut
points fixed at batch 0, and each drawn document's ``p_incl = (m_b / N) * (k_h / R_h)``: ``N``
eligible documents, ``k_h`` draws from the ``R_h`` not-yet-drawn phase-1 documents of its stratum.
In one phase ``m_b = N`` and the first factor is 1.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError, SettingError
from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_json
from goldloop.formats.sampledir import MANIFEST, ManifestRow, append_batch, read_manifest
from goldloop.kb import KB
from goldloop.sample.batch_record import (
    DrawCounts,
    KbUsed,
    Phase1Report,
    PoolCacheUse,
    SampleResult,
    SampleSettings,
    SamplingReport,
    StrataBoundaries,
    StratumDraw,
    report_path,
)
from goldloop.sample.corpus import CorpusColumns, file_sha256, read_corpus, texts_for
from goldloop.sample.gate import Gate, exclusion_sets
from goldloop.sample.phase1 import first_in_order, size_for
from goldloop.sample.planned import planned_weights, read_planned, sample_state
from goldloop.sample.pool import (
    Pool,
    PoolDoc,
    admitted,
    fingerprint,
    load_cached_pool,
    model_identity,
    parse_pool,
    write_pool,
)
from goldloop.sample.strata import (
    OPTIONAL_ROLES,
    ROLES,
    Boundaries,
    Drawn,
    Plan,
    boundaries,
    draw,
    plan_draws,
    stratum_weights,
)
from goldloop.sample.surrogate import draw_surrogate, has_surrogate, surrogate_dir
from goldloop.text.parsing import Parsing


@dataclass(frozen=True)
class Phase1Plan:
    """Phase 1 of one batch: the order's seed, the size asked for, how many documents of the
    order this batch draws from, and the strata cut points of batch 0 (``None`` at batch 0)."""

    seed: int
    requested: int | str
    size: int
    cuts: Boundaries | None


def run_sample(
    corpus: str | Path,
    out: str | Path,
    kb: KB,
    settings: SampleSettings = SampleSettings(),
    *,
    extend: bool = False,
    exclude: Sequence[str | Path] = (),
    on_rows: Callable[[int], None] | None = None,
    parsing: Parsing = Parsing(),
    plan: str | Path | None = None,
    surrogate: int = 0,
) -> SampleResult:
    """Draw one batch from ``corpus`` into the sample dir ``out`` (a new one, or ``extend``);
    ``parsing``: how the pool's texts are parsed (the pipeline, the parse cache). With ``plan``
    (a plan file for this sample as it is) the batch is the plan's: its documents per stratum,
    all primary; checked before anything is read or drawn. ``surrogate`` > 0 also draws that
    many documents into the surrogate part (``sample.surrogate``; a batch of it more when it
    exists)."""
    settings.check()
    sample_dir, corpus_path = Path(out), Path(corpus)
    if surrogate < 0:
        raise SettingError("surrogate", f"must not be negative, got {surrogate}")
    earlier = (
        read_manifest(surrogate_dir(sample_dir)) if surrogate and has_surrogate(sample_dir) else []
    )
    if plan is not None:
        settings = _planned(settings, plan, extend, sample_dir)
    existing = _existing(sample_dir, extend)
    batch = max((r.batch for r in existing), default=-1) + 1
    phase1 = _phase1_plan(sample_dir, batch, settings, len(existing))
    pool, inputs = _pool(corpus_path, sample_dir, kb, settings, exclude, on_rows, phase1, parsing)
    documents = pool.documents if phase1 is None else pool.documents[: phase1.size]
    taken = {r.doc_id for r in existing}
    chosen = _draw(corpus_path, sample_dir, pool, documents, taken, settings, batch, phase1)
    drawn, cuts, p_phase1 = chosen.drawn, chosen.cuts, chosen.p_phase1
    texts = _texts(corpus_path, settings.columns, pool, [d.doc for d in drawn])
    rows = [_manifest_row(d.doc, d.stratum, d.p_incl, batch, d.role, kb) for d in drawn]
    part_batch = max((r.batch for r in earlier), default=-1) + 1
    part = (
        _surrogate_part(sample_dir, documents, cuts, surrogate, settings, p_phase1, earlier)
        if surrogate
        else []
    )
    part_texts = _texts(corpus_path, settings.columns, pool, [d.doc for d in part])
    report = SamplingReport(
        batch=batch,
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        corpus=str(corpus_path),
        exclude_corpora=[str(p) for p in exclude],
        settings=settings,
        kb=KbUsed(str(kb.path), kb.sha256),
        pool_cache=PoolCacheUse(pool.cache_hit, pool.parsed, pool.fingerprint, inputs),
        rows_read=pool.rows_read,
        eligible=pool.eligible,
        dropped=pool.gate,
        phase1=None
        if phase1 is None
        else Phase1Report(phase1.seed, phase1.requested, len(documents), p_phase1),
        boundaries=StrataBoundaries(cuts, settings.tail_top_k),
        strata=_strata_report(documents, cuts, chosen.sizes, chosen.plan, p_phase1),
        already_drawn=len(taken),
        draw=_draw_counts(rows, settings),
    )
    # The report first: a crash before the manifest append leaves only a report that the
    # retried batch (same number) overwrites; the manifest row is what makes a batch exist.
    path = report_path(sample_dir, batch)
    atomic_write_json(path, report.to_dict())
    append_batch(sample_dir, rows, texts)
    if part:
        part_rows = [
            _manifest_row(d.doc, d.stratum, d.p_incl, part_batch, d.role, kb) for d in part
        ]
        atomic_write_json(
            report_path(surrogate_dir(sample_dir), part_batch),
            _surrogate_report(report, part_batch, part_rows, surrogate, documents, cuts, earlier),
        )
        append_batch(surrogate_dir(sample_dir), part_rows, part_texts)
    return SampleResult(sample_dir, batch, rows, report, path, len(part))


def _planned(
    settings: SampleSettings, plan: str | Path, extend: bool, sample_dir: Path
) -> SampleSettings:
    """The settings of a batch a plan sets: its documents per stratum, all primary."""
    if not extend:
        raise SettingError("plan", "a plan draws the next batch of a sample: extend it")
    planned = read_planned(plan, sample_state(sample_dir)).by_stratum
    return replace(
        settings, n_primary=sum(planned.values()), n_double=0, n_reserve=0, n_blind=0,
        planned=planned,
    )  # fmt: skip


def _draw(
    corpus_path: Path,
    sample_dir: Path,
    pool: Pool,
    documents: list[PoolDoc],
    taken: set[str],
    settings: SampleSettings,
    batch: int,
    phase1: Phase1Plan | None,
) -> BatchDraw:
    """The batch drawn from ``documents`` (phase 1's, or the whole pool); refused when nothing
    is eligible, nothing is left, or the blind part cannot be drawn whole."""
    if not pool.documents:
        dropped = ", ".join(f"{reason} {n}" for reason, n in pool.gate.items() if n) or "none"
        raise GoldloopError(
            f"{corpus_path}: no eligible document ({pool.rows_read} rows read; dropped: {dropped})"
        )
    cuts = phase1.cuts if phase1 is not None else None
    chosen = draw_batch(documents, pool.eligible, taken, settings, batch, cuts)
    if not chosen.sizes:
        raise GoldloopError(
            f"{sample_dir}: the pool is exhausted: all {len(documents)} documents"
            f" {'of phase 1' if phase1 else 'eligible in the corpus'} are drawn already"
        )
    blind = sum(d.role == "blind" for d in chosen.drawn)
    if blind < settings.n_blind:
        # A short pool shrinks the other roles (the report's shortfall), never the blind part
        # (strata.role_counts): the comparison whose size the study chose, or no study.
        raise SettingError(
            "n_blind",
            f"{settings.n_blind} blind documents asked for, {blind} drawn: the pool holds "
            f"{sum(chosen.sizes.values())} not drawn yet for a batch of {settings.batch_total}",
        )
    return chosen


def _surrogate_part(
    sample_dir: Path,
    documents: list[PoolDoc],
    cuts: Boundaries,
    size: int,
    settings: SampleSettings,
    p_phase1: float,
    earlier: list[ManifestRow],
) -> list[Drawn]:
    """The surrogate part drawn with this batch (its next batch), refused when none is left."""
    part = draw_surrogate(
        documents, cuts, size, settings.seed, p_phase1,
        taken={r.doc_id for r in earlier},
        batch=max((r.batch for r in earlier), default=-1) + 1,
    )  # fmt: skip
    if not part:
        raise GoldloopError(
            f"{surrogate_dir(sample_dir)}: the pool is exhausted: every document is in the"
            " surrogate part already"
        )
    return part


@dataclass(frozen=True)
class BatchDraw:
    """One batch's draw: the documents with their ``p_incl`` (both phases), the cut points, the
    remaining size of each stratum, and the allocation plan."""

    drawn: list[Drawn]
    cuts: Boundaries
    sizes: dict[str, int]
    plan: Plan
    p_phase1: float


def draw_batch(
    documents: list[PoolDoc],
    eligible: int,
    taken: set[str],
    settings: SampleSettings,
    batch: int,
    cuts: Boundaries | None = None,
) -> BatchDraw:
    """Draw batch ``batch`` from ``documents`` (phase 1, or every one of the ``eligible``) minus
    ``taken``; ``cuts`` default to the boundaries of ``documents``. Nothing drawn when nothing
    remains (``sizes`` empty)."""
    p_phase1 = len(documents) / eligible
    cuts = cuts if cuts is not None else boundaries(documents, settings.tail_top_k)
    strata: dict[str, list[PoolDoc]] = defaultdict(list)
    for doc in documents:
        if doc.doc_id not in taken:
            strata[cuts.stratum(doc)].append(doc)
    sizes = {name: len(docs) for name, docs in strata.items()}
    weights = (
        stratum_weights(sizes, settings.tail_weight, settings.none_fraction)
        if settings.planned is None
        else planned_weights(settings.planned, sizes)
    )
    plan = plan_draws(settings.batch_total, sizes, weights)
    groups: dict[str, list[PoolDoc]] = defaultdict(list)
    for name, docs in strata.items():
        groups[plan.groups[name]].extend(docs)
    rng = random.Random(f"{settings.seed}:{batch}")
    drawn = [
        replace(d, p_incl=p_phase1 * d.p_incl)
        for d in draw(groups, plan.allocation, settings.role_sizes, rng)
    ]
    return BatchDraw(drawn, cuts, sizes, plan, p_phase1)


def _texts(
    corpus: Path, columns: CorpusColumns, pool: Pool, drawn: list[PoolDoc]
) -> dict[str, str]:
    """The drawn documents' texts: from this run's parse when it read them, else the corpus."""
    texts = {d.doc_id: pool.texts[d.doc_id] for d in drawn if d.doc_id in pool.texts}
    wanted = {d.doc_id: d.text_sha1 for d in drawn if d.doc_id not in texts}
    if wanted:
        texts.update(texts_for(corpus, columns, wanted))
    missing = [d.doc_id for d in drawn if d.doc_id not in texts]
    if missing:
        raise GoldloopError(f"{corpus}: text of {missing[0]!r} changed while sampling")
    return texts


def _strata_report(
    documents: list[PoolDoc], cuts: Boundaries, sizes: dict[str, int], plan: Plan, p_phase1: float
) -> dict[str, StratumDraw]:
    """Each draw stratum's :class:`StratumDraw`, by name."""
    totals = Counter(cuts.stratum(doc) for doc in documents)
    pool: Counter[str] = Counter()
    remaining: Counter[str] = Counter()
    merged: dict[str, list[str]] = {}
    for name in sorted(totals):
        group = plan.groups.get(name, name)
        pool[group] += totals[name]
        remaining[group] += sizes.get(name, 0)
        if group != name:
            merged.setdefault(group, []).append(name)
    report = {}
    for group in sorted(pool):
        k, left = plan.allocation.get(group, 0), remaining[group]
        p_incl = p_phase1 * k / left if left else 0.0
        report[group] = StratumDraw(pool[group], left, k, p_incl, merged.get(group))
    return report


def _surrogate_report(
    batch: SamplingReport,
    part_batch: int,
    rows: list[ManifestRow],
    requested: int,
    documents: list[PoolDoc],
    cuts: Boundaries,
    earlier: list[ManifestRow],
) -> dict[str, Any]:
    """The surrogate part's report: what it was drawn from (the batch's pool and cut points),
    and per stratum the pool, what earlier batches of the part left, the draws and their
    ``p_incl``."""
    pool = Counter(cuts.stratum(doc) for doc in documents)
    taken = {r.doc_id for r in earlier}
    left = Counter(cuts.stratum(doc) for doc in documents if doc.doc_id not in taken)
    drawn = Counter(r.stratum for r in rows)
    p_incl = {r.stratum: r.p_incl for r in rows}
    return {
        "part": "surrogate",
        "batch": part_batch,
        "with_batch": batch.batch,
        "created": batch.created,
        "corpus": batch.corpus,
        "seed": batch.settings.seed,
        "pool_fingerprint": batch.pool_cache.fingerprint,
        "boundaries": batch.boundaries.to_dict(),
        "requested": requested,
        "drawn": len(rows),
        "strata": {
            name: {
                "pool": pool[name],
                "remaining": left[name],
                "drawn": drawn[name],
                "p_incl": p_incl.get(name, 0.0),
            }
            for name in sorted(pool)
        },
    }


def _draw_counts(rows: list[ManifestRow], settings: SampleSettings) -> DrawCounts:
    return DrawCounts(
        requested=sum(settings.role_sizes.values()),
        drawn=len(rows),
        negative_controls=sum(r.n_verb_mentions == 0 for r in rows),
        roles={
            role: sum(r.role == role for r in rows)
            for role in ROLES
            if role not in OPTIONAL_ROLES or settings.role_sizes[role]
        },
    )


class SampleExists(SettingError):
    """The output folder already holds a sample and no extending was asked for."""

    def __init__(self, sample_dir: Path) -> None:
        super().__init__(
            "out",
            f"{sample_dir} already holds a sample: choose another folder, or extend this sample "
            "to append a batch to it",
        )
        self.sample_dir = sample_dir


def _existing(sample_dir: Path, extend: bool) -> list[ManifestRow]:
    has_sample = (sample_dir / MANIFEST).is_file()
    if extend and not has_sample:
        raise SettingError("extend", f"{sample_dir} holds no sample to extend (no {MANIFEST})")
    if not extend and has_sample:
        raise SampleExists(sample_dir)
    return read_manifest(sample_dir) if has_sample else []


def _phase1_plan(
    sample_dir: Path, batch: int, settings: SampleSettings, taken: int
) -> Phase1Plan | None:
    """Phase 1 of this batch: as asked at batch 0; later batches keep its seed and cut points
    and grow along the same order (never shrinking)."""
    if batch == 0:
        if settings.phase1 is None:
            return None
        size = size_for(settings.phase1, settings.batch_total)
        return Phase1Plan(settings.seed, settings.phase1, size, None)
    first = _read_report(sample_dir, 0, required=settings.phase1 is not None) or {}
    recorded = first.get("phase1")
    if recorded is None:
        if settings.phase1 is not None:
            raise GoldloopError(
                f"{sample_dir}: batch 0 was drawn in one phase; a two-phase batch cannot extend it"
            )
        return None
    previous = _read_report(sample_dir, batch - 1, required=True) or {}
    requested = settings.phase1 if settings.phase1 is not None else recorded["requested"]
    size = max(previous["phase1"]["size"], taken + size_for(requested, settings.batch_total))
    cuts = StrataBoundaries.cuts_of(first["boundaries"])
    return Phase1Plan(int(recorded["seed"]), requested, size, cuts)


def _read_report(sample_dir: Path, batch: int, *, required: bool) -> dict[str, Any] | None:
    path = report_path(sample_dir, batch)
    if not path.is_file():
        if required:
            raise GoldloopError(f"{path}: missing; a two-phase sample needs every batch's report")
        return None
    try:
        report: dict[str, Any] = jsonl.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise GoldloopError(f"{path}: unreadable sampling report: {exc}") from exc
    return report


def _pool(
    corpus: Path,
    sample_dir: Path,
    kb: KB,
    settings: SampleSettings,
    exclude: Sequence[str | Path],
    on_rows: Callable[[int], None] | None,
    phase1: Phase1Plan | None,
    parsing: Parsing,
) -> tuple[Pool, dict[str, Any]]:
    """The cached pool when its fingerprint holds (and, in two phases, it is long enough),
    else a fresh read of the corpus that parses only what the cache lacks (then cached)."""
    from goldloop.text.detector import DETECTOR_VERSION  # spaCy loads only when a pool is read

    if not corpus.is_file():
        raise GoldloopError(f"{corpus}: no such corpus file")
    inputs: dict[str, Any] = {
        "corpus_sha256": file_sha256(corpus),
        "columns": asdict(settings.columns),
        "exclude_sha256": [file_sha256(p) for p in exclude],
        "kb_sha256": kb.sha256,
        "gate": settings.gate.to_dict(),
        "detector_version": DETECTOR_VERSION,
        "spacy_model": model_identity(parsing),
    }
    if phase1 is not None:
        inputs["phase1_seed"] = phase1.seed
    key = fingerprint(inputs)
    cached = load_cached_pool(sample_dir, key)
    if cached is not None and (
        phase1 is None or len(cached.documents) >= min(phase1.size, cached.eligible)
    ):
        return cached, inputs
    excluded_ids, excluded_hashes = exclusion_sets(
        record for path in exclude for record in read_corpus(path, strict=False)
    )
    gate = Gate(settings.gate, excluded_ids, excluded_hashes)
    eligible = admitted(read_corpus(corpus, settings.columns), gate, on_rows)
    parse: dict[str, Any] = {
        "parsing": parsing,
        "workers": settings.workers,
        "batch_size": settings.batch_size,
    }
    texts: dict[str, str] = {}
    if phase1 is None:
        documents = list(parse_pool(eligible, kb, scheduler=settings.dask, **parse))
        n_eligible = parsed = len(documents)
    else:
        chosen = first_in_order(eligible, phase1.seed, phase1.size)
        known = {d.doc_id: d for d in cached.documents} if cached is not None else {}
        fresh = [r for r in chosen.records if r.doc_id not in known]
        known.update((d.doc_id, d) for d in parse_pool(fresh, kb, scheduler=settings.dask, **parse))
        documents = [known[r.doc_id] for r in chosen.records if r.doc_id is not None]
        texts = {r.doc_id: r.text for r in chosen.records if r.doc_id is not None}
        n_eligible, parsed = chosen.eligible, len(fresh)
    pool = Pool(
        documents,
        gate.rows,
        gate.counts(),
        key,
        cache_hit=False,
        eligible=n_eligible,
        parsed=parsed,
        texts=texts,
    )
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
