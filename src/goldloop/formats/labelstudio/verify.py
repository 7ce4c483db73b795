"""Verified gold from exported Label Studio tasks: verdicts, hits and the sidecar's counts.

Pure (no network client): ``goldloop pull`` feeds it a fresh export, ``goldloop score`` a Label
Studio JSON export file. Per document the gold takes the curated annotation when there is one,
else the two double annotations when they agree, else the earliest completed annotation (or one
person's, with ``annotator``); a blind document's two annotations (with candidates in ``NAME``,
without in ``NAME-blind``) are settled as a double task's, and one alone counts as any single
annotation (one made without candidates has only added regions: nothing was shown); each hit says how it was decided (``decided``: ``single``,
``agreed`` or ``curated``; curated hits also carry ``kept_by``, the annotators who had them). The
chosen annotation is compared with the task's review prediction (``verdicts``); accepted, fixed and
added regions become hits with the annotator's email and ``source: human``, and so do regions the
backend proposed that were submitted untouched, with ``verdict: proposed`` and ``proposed_by``
(counted apart: ``proposed``, and ``proposals_changed`` for the proposals the annotator edited,
which are ``added``). Skipped and cancelled
annotations, tasks with several annotations, rejected candidates and incomplete regions are
reported in the sidecar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from goldloop.formats.gold import Document, Hit, checked_document
from goldloop.formats.labelstudio.tasks import (
    BLIND_ROLE,
    CURATE_PREFIX,
    Annotation,
    Task,
    annotator_of,
    blind_pair,
    by_doc_id,
    cancelled_annotations,
    completed_annotations,
    doc_id_of,
    latest_prediction,
    review_seen,
    text_of,
    two_annotators,
)
from goldloop.formats.labelstudio.verdicts import (
    Comparison,
    Decision,
    Region,
    compare,
    read_regions,
)
from goldloop.formats.labelstudio.versions import hit_key, kept_by, versions_agree
from goldloop.kb import KB

SLICES = ("anchored", "paraphrase", "unknown")
COUNTS = ("candidates", "accept", "fix", "reject", "added", "proposed", "incomplete")
DECIDED = ("single", "agreed", "curated")
KEPT = ("accept", "fix", "added", "proposed")
DOUBLE_ROLE = "double"


@dataclass
class Tally:
    candidates: int = 0
    accept: int = 0
    fix: int = 0
    reject: int = 0
    added: int = 0
    proposed: int = 0
    incomplete: int = 0
    # Proposals (regions the backend proposed) the annotator edited: among ``added``.
    proposals_changed: int = 0

    def add(self, verdict: str) -> None:
        setattr(self, verdict, getattr(self, verdict) + 1)

    @property
    def correction_rate(self) -> float | None:
        """(fix + reject) / candidates; None without candidates."""
        # Candidates only: proposals are no review candidates, and are counted apart.
        return (self.fix + self.reject) / self.candidates if self.candidates else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in COUNTS}
        out["proposals_changed"] = self.proposals_changed
        out["correction_rate"] = self.correction_rate
        return out


@dataclass(frozen=True)
class Curation:
    """The sidecar's ``curation``: double tasks disputed, curated and awaiting curation, the
    regions the curator changed, and who had each curated hit (both, one or neither annotator)."""

    disputed_tasks: int
    curated_tasks: int
    awaiting_curation: list[str]
    regions_changed_by_curator: int
    curated_hits_kept_by: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SidecarSections(Protocol):
    """What a campaign adds to the sidecar (``studio.campaign.CampaignSections``)."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass
class PullResult:
    """Verified documents and the sidecar's content."""

    documents: list[Document]
    tally: Tally = field(default_factory=Tally)
    by_slice: dict[str, Tally] = field(default_factory=lambda: {s: Tally() for s in SLICES})
    verified_by: set[str] = field(default_factory=set)
    adopted_from_second_annotator: int = 0
    rejected: list[dict[str, Any]] = field(default_factory=list)
    incomplete_regions: list[dict[str, Any]] = field(default_factory=list)
    skipped_tasks: list[dict[str, Any]] = field(default_factory=list)
    multi_annotation_tasks: list[dict[str, Any]] = field(default_factory=list)
    tasks: int = 0
    unannotated_tasks: int = 0
    not_by_annotator: int = 0
    projects: list[str] = field(default_factory=list)
    decided: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DECIDED, 0))
    disputed_tasks: int = 0
    awaiting_curation: list[str] = field(default_factory=list)
    regions_changed_by_curator: int = 0
    curated_hits_kept_by: dict[str, int] = field(
        default_factory=lambda: {"both": 0, "one": 0, "neither": 0}
    )
    sections: SidecarSections | None = None

    def to_dict(self) -> dict[str, Any]:
        """The sidecar (``<gold>.verification.json``): counts, verdicts by slice, what was left out,
        how documents were decided, curation, and the campaign's sections."""
        return {
            "projects": self.projects,
            "verified_by": sorted(self.verified_by),
            **self.tally.to_dict(),
            "by_slice": {name: tally.to_dict() for name, tally in self.by_slice.items()},
            "adopted_from_second_annotator": self.adopted_from_second_annotator,
            "tasks": self.tasks,
            "verified_tasks": len(self.documents),
            "unannotated_tasks": self.unannotated_tasks,
            "tasks_without_the_annotator": self.not_by_annotator,
            "rejected": self.rejected,
            "incomplete_regions": self.incomplete_regions,
            "skipped_tasks": self.skipped_tasks,
            "multi_annotation_tasks": self.multi_annotation_tasks,
            "decided": self.decided,
            "curation": self.curation().to_dict(),
            **({} if self.sections is None else self.sections.to_dict()),
        }

    def curation(self) -> Curation:
        """The curation counts so far."""
        return Curation(
            disputed_tasks=self.disputed_tasks,
            curated_tasks=self.decided["curated"],
            awaiting_curation=self.awaiting_curation,
            regions_changed_by_curator=self.regions_changed_by_curator,
            curated_hits_kept_by=self.curated_hits_kept_by,
        )


def verify(
    tasks: Sequence[Task],
    kb: KB,
    *,
    annotator: str | None = None,
    curated: Sequence[Task] = (),
    where: str = "the double project",
    blind: Sequence[Task] = (),
) -> PullResult:
    """Turn exported tasks into verified documents and the sidecar's counts.

    ``curated`` holds the tasks of the campaign's curate project (by ``doc_id``); with
    ``annotator``, every document is that person's annotation and nothing is agreed or curated.
    ``where`` names the double project in errors (a task one person annotated twice is refused).
    ``blind`` holds the tasks of the blind project: each pairs with the task of its ``doc_id`` in
    ``tasks`` (one with no such task is verified alone).
    """
    result = PullResult([])
    curations = by_doc_id(curated)
    blinds = by_doc_id(blind)
    present = {doc_id_of(t) for t in tasks}
    alone = [t for t in blind if doc_id_of(t) not in present]
    for task in sorted([*tasks, *alone], key=lambda t: int(t["id"])):
        result.tasks += 1
        partner = blinds.get(doc_id_of(task)) if _role(task) == BLIND_ROLE else None
        _verify_task(task, kb, annotator, curations, where, result, partner)
    return result


def _role(task: Task) -> str | None:
    return (task.get("data") or {}).get("role")


def read_annotation(task: Task, annotation: Annotation, kb: KB) -> tuple[Comparison, list[Hit]]:
    """``annotation`` compared with the review prediction it was made over, and the hits it
    keeps."""
    text = text_of(task)
    review = review_seen(task, annotation)
    candidates, _ = read_regions(text, list(review.get("result") or []) if review else [])
    regions, _ = read_regions(text, annotation.get("result") or [])
    return judge(text, candidates, regions, kb, annotator_of(annotation))


def judge(
    text: str, candidates: Sequence[Region], regions: Sequence[Region], kb: KB, email: str
) -> tuple[Comparison, list[Hit]]:
    """The verdicts of ``regions`` (what a person kept) over ``candidates``, and the hits kept:
    every road to verified gold (Label Studio, the review sheet) ends here."""
    comparison = compare(candidates, regions, kb)
    hits = [_hit(text, d, kb, email) for d in comparison.decisions if d.verdict in KEPT]
    return comparison, sorted(hits, key=lambda h: (h.a, h.b))


def shown_hits(task: Task, annotation: Annotation, kb: KB) -> list[Hit] | None:
    """The review prediction ``annotation`` was made over, read as hits (None: none was shown)."""
    review = review_seen(task, annotation)
    return None if review is None else prediction_hits(task, review, kb)


def prediction_hits(task: Task, prediction: dict[str, Any], kb: KB) -> list[Hit]:
    """A prediction's regions on ``task`` as hits, in offset order (regions without a known
    label are left out)."""
    text = text_of(task)
    regions, _ = read_regions(text, list(prediction.get("result") or []))
    out = []
    for region in regions:
        folded = kb.decode_label(region.label, region.direction) if region.label else None
        if folded is not None:
            out.append(
                Hit(
                    a=region.a, b=region.b, surface=text[region.a : region.b],
                    entity_id=folded.entity_id, direction=folded.direction,
                )
            )  # fmt: skip
    return sorted(out, key=lambda h: (h.a, h.b))


def annotator_versions(
    task: Task, kb: KB, where: str
) -> tuple[Annotation, dict[str, list[Hit]]] | None:
    """A double task's first annotation, and each of its two annotators' hits (None with fewer
    than two annotators; one person's two annotations are refused)."""
    pair = two_annotators(task, where)
    if pair is None:
        return None
    return pair[0], {annotator_of(a): read_annotation(task, a, kb)[1] for a in pair}


def blind_versions(
    task: Task, blind: Task | None, kb: KB
) -> tuple[Annotation, dict[str, list[Hit]]] | None:
    """A blind document's annotation with candidates, and both people's hits (with candidates,
    then without), as :func:`annotator_versions` gives a double task's; None without a pair."""
    pair = blind_pair(task, blind)
    if pair is None:
        return None
    return pair.pre, {
        annotator_of(pair.pre): read_annotation(pair.pre_task, pair.pre, kb)[1],
        annotator_of(pair.blind): read_annotation(pair.blind_task, pair.blind, kb)[1],
    }


def annotators(tasks: Sequence[Task]) -> list[str]:
    """Everyone with a completed annotation, for ``--per-annotator``."""
    return sorted({annotator_of(a) for t in tasks for a in completed_annotations(t)})


def _verify_task(
    task: Task,
    kb: KB,
    annotator: str | None,
    curations: dict[str, Task],
    where: str,
    result: PullResult,
    blind: Task | None = None,
) -> None:
    doc_id = doc_id_of(task)
    own = (task,) if blind is None else (task, blind)
    for one in own:
        for skipped in cancelled_annotations(one):
            result.skipped_tasks.append(
                {"doc_id": doc_id, "task": one["id"], "annotator": annotator_of(skipped)}
            )
    if blind is not None and not _completed(task, annotator) and _completed(blind, annotator):
        # Only the annotation without candidates is done: it is the document's, as any single
        # annotation is (push gave both tasks the same data).
        task, blind = blind, None
    data = task.get("data", {})
    completed = completed_annotations(task)
    if annotator is not None:
        mine = _completed(task, annotator)
        if completed and not mine:
            result.not_by_annotator += 1
        completed = mine
    if not completed:
        if not any(one.get("annotations") for one in own):
            result.unannotated_tasks += 1
        return
    chosen = _decide(task, kb, annotator, curations, where, result, blind)
    if chosen is None:
        chosen = completed[0], "single", None
        if len(completed) > 1:
            result.multi_annotation_tasks.append({
                "doc_id": doc_id, "task": task["id"], "used": annotator_of(completed[0]),
                "others": [annotator_of(a) for a in completed[1:]],
            })  # fmt: skip
    annotation, decided, versions = chosen
    comparison, hits = read_annotation(task, annotation, kb)
    result.verified_by.add(annotator_of(annotation))
    if versions is not None:  # an agreed or curated document rests on both annotators' work
        result.verified_by.update(versions)
    add_document(result, data, doc_id, text_of(task), comparison, hits, decided)
    if decided == "curated" and versions is not None:
        _curated(task, curations[doc_id], hits, versions, kb, result)


def add_document(
    result: PullResult,
    data: dict[str, Any],
    doc_id: str,
    text: str,
    comparison: Comparison,
    hits: list[Hit],
    decided: str,
) -> None:
    """Count one verified document's verdicts and add it (``data``: its role, batch, p_incl and
    stratum: the design the corpus figures weigh and resample it by)."""
    result.decided[decided] += 1
    for hit in hits:
        hit.decided = decided  # type: ignore[attr-defined]  # an extra field of Hit
    _count(doc_id, text, comparison, result)
    result.documents.append(
        checked_document(
            f"task of {doc_id!r}", doc_id=doc_id, text=text, ground_truth=hits,
            **design_fields(data),
        )
    )  # fmt: skip


DESIGN_FIELDS = ("role", "batch", "p_incl", "stratum")


def design_fields(data: dict[str, Any]) -> dict[str, Any]:
    """A task's sampling design as ``push`` sent it (``data``: the task's data): what the corpus
    figures weigh and resample its document by."""
    return {name: data.get(name) for name in DESIGN_FIELDS}


def drawn_documents(tasks: Sequence[Task]) -> list[Document]:
    """The documents ``tasks`` were pushed for, without hits, each with its design
    (:func:`design_fields`), one per ``doc_id`` (``by_doc_id``'s: the first task by id)."""
    return [
        checked_document(
            f"task {task['id']} ({doc_id!r})", doc_id=doc_id, text=text_of(task),
            **design_fields(task.get("data") or {}),
        )
        for doc_id, task in by_doc_id(tasks).items()
    ]  # fmt: skip


def _completed(task: Task, annotator: str | None) -> list[Annotation]:
    """The task's completed annotations (one person's, with ``annotator``)."""
    completed = completed_annotations(task)
    return (
        completed if annotator is None else [a for a in completed if annotator_of(a) == annotator]
    )


Chosen = tuple[Annotation, str, dict[str, list[Hit]] | None]


def _decide(
    task: Task,
    kb: KB,
    annotator: str | None,
    curations: dict[str, Task],
    where: str,
    result: PullResult,
    blind: Task | None = None,
) -> Chosen | None:
    """A double task's (or a blind document's pair's) agreed or curated annotation; None when
    the default rule applies."""
    if annotator is not None:
        return None
    if _role(task) == BLIND_ROLE:
        both = blind_versions(task, blind, kb)
    elif _role(task) == DOUBLE_ROLE:
        both = annotator_versions(task, kb, where)
    else:
        return None
    if both is None:
        return None
    first, versions = both
    if versions_agree(*versions.values()):
        return first, "agreed", versions
    result.disputed_tasks += 1
    curation = curations.get(doc_id_of(task))
    done = completed_annotations(curation) if curation is not None else []
    if not done:
        result.awaiting_curation.append(doc_id_of(task))
        return None
    return done[0], "curated", versions


def _curated(
    task: Task,
    curation: Task,
    hits: list[Hit],
    versions: dict[str, list[Hit]],
    kb: KB,
    result: PullResult,
) -> None:
    """Mark who had each curated hit, drop pre-filled notes, count the curator's changes."""
    prefill: dict[tuple[int, int], tuple[Any, ...]] = {}
    notes: dict[tuple[int, int], str | None] = {}
    start = latest_prediction(curation, CURATE_PREFIX)
    regions, _ = read_regions(text_of(task), (start or {}).get("result") or [])
    for region in regions:
        folded = kb.decode_label(region.label, region.direction) if region.label else None
        prefill[(region.a, region.b)] = (
            (folded.entity_id, folded.direction) if folded else (region.label, region.direction)
        )
        notes[(region.a, region.b)] = region.note
    final = {(h.a, h.b): hit_key(h)[2:] for h in hits}
    result.regions_changed_by_curator += sum(
        prefill.get(span) != final.get(span) for span in prefill.keys() | final.keys()
    )
    for hit in hits:
        who = kept_by(hit, versions)
        hit.kept_by = who  # type: ignore[attr-defined]  # an extra field of Hit
        result.curated_hits_kept_by[
            "neither" if not who else "both" if len(who) == len(versions) else "one"
        ] += 1
        extra = hit.model_extra or {}
        if "note" in extra and extra["note"] == notes.get((hit.a, hit.b)):
            del extra["note"]


def _count(doc_id: str, text: str, comparison: Comparison, result: PullResult) -> None:
    for decision in comparison.decisions:
        candidate = decision.candidate
        slice_tally = result.by_slice[_slice(candidate or decision.region)]
        if candidate is not None:
            result.tally.candidates += 1
            slice_tally.candidates += 1
        result.tally.add(decision.verdict)
        slice_tally.add(decision.verdict)
        if decision.verdict == "added" and decision.region and decision.region.changed_proposal:
            result.tally.proposals_changed += 1
            slice_tally.proposals_changed += 1
        if (
            decision.verdict in ("accept", "fix")
            and candidate is not None
            and candidate.origin == "B"
        ):
            result.adopted_from_second_annotator += 1
        if decision.verdict == "reject" and candidate is not None:
            result.rejected.append(_describe(doc_id, text, candidate, decision.reason))
        if decision.verdict == "incomplete" and decision.region is not None:
            result.incomplete_regions.append(
                _describe(doc_id, text, decision.region, decision.reason)
            )


def _slice(region: Region | None) -> str:
    if region is None or region.anchored is None:
        return "unknown"
    return "anchored" if region.anchored else "paraphrase"


def _describe(doc_id: str, text: str, region: Region, reason: str | None) -> dict[str, Any]:
    return {
        "doc_id": doc_id, "a": region.a, "b": region.b, "surface": text[region.a : region.b],
        "label": region.label, "direction": region.direction, "origin": region.origin, "reason": reason,
    }  # fmt: skip


def _hit(text: str, decision: Decision, kb: KB, email: str) -> Hit:
    region = decision.region
    assert region is not None and region.label is not None
    folded = kb.decode_label(region.label, region.direction)
    assert folded is not None  # incomplete regions (unknown labels) never reach here
    extra: dict[str, Any] = {}
    if decision.fixed_boundary:
        extra["fixed_boundary"] = True
    if region.note:
        extra["note"] = region.note
    if decision.verdict == "proposed" and region.proposed_by:
        extra["proposed_by"] = region.proposed_by
    return Hit(
        a=region.a, b=region.b, surface=text[region.a : region.b], entity_id=folded.entity_id,
        label=region.label, direction=folded.direction, annotator=email, source="human",
        verdict=decision.verdict, label_canonicalized=folded.label_canonicalized,
        direction_coerced=folded.direction_coerced, **extra,
    )  # fmt: skip


def summary_rows(result: PullResult) -> list[tuple[str, Any]]:
    """The sidecar's headline numbers, for the CLI table."""
    tally = result.tally
    rate = tally.correction_rate
    return [
        ("tasks", result.tasks),
        ("verified tasks", len(result.documents)),
        ("unannotated tasks", result.unannotated_tasks),
        ("skipped/cancelled annotations", len(result.skipped_tasks)),
        ("tasks with several annotations", len(result.multi_annotation_tasks)),
        *((name, getattr(tally, name)) for name in COUNTS),
        ("proposals changed (among added)", tally.proposals_changed),
        ("correction rate: (fix + reject) / candidates", "n/a" if rate is None else f"{rate:.3f}"),
        ("B-only candidates kept", result.adopted_from_second_annotator),
        ("verified by", ", ".join(sorted(result.verified_by)) or "nobody yet"),
    ]
