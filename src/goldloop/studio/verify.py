"""Verified gold from exported Label Studio tasks: verdicts, hits and the sidecar's counts.

Pure (no network client): ``goldloop pull`` feeds it a fresh export, ``goldloop score`` a Label
Studio JSON export file. Each task's chosen annotation (the earliest completed one, or one
person's) is compared with the task's review prediction (``verdicts``); accepted, fixed and added
regions become hits with the annotator's email and ``source: human``. Skipped and cancelled
annotations, tasks with several annotations, rejected candidates and incomplete regions are
reported in the sidecar.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from goldloop.gold import Document, Hit
from goldloop.kb import KB
from goldloop.studio.tasks import (
    annotator_of,
    cancelled_annotations,
    completed_annotations,
    doc_id_of,
    review_result,
    text_of,
)
from goldloop.studio.verdicts import Comparison, Decision, Region, compare, read_regions

SLICES = ("anchored", "paraphrase", "unknown")
COUNTS = ("candidates", "accept", "fix", "reject", "added", "incomplete")


@dataclass
class Tally:
    candidates: int = 0
    accept: int = 0
    fix: int = 0
    reject: int = 0
    added: int = 0
    incomplete: int = 0

    def add(self, verdict: str) -> None:
        setattr(self, verdict, getattr(self, verdict) + 1)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {name: getattr(self, name) for name in COUNTS}
        out["correction_rate"] = (
            (self.fix + self.reject) / self.candidates if self.candidates else None
        )
        return out


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

    def sidecar(self) -> dict[str, Any]:
        return {
            "projects": self.projects,
            "verified_by": sorted(self.verified_by),
            **self.tally.as_dict(),
            "by_slice": {name: tally.as_dict() for name, tally in self.by_slice.items()},
            "adopted_from_second_annotator": self.adopted_from_second_annotator,
            "tasks": self.tasks,
            "verified_tasks": len(self.documents),
            "unannotated_tasks": self.unannotated_tasks,
            "tasks_without_the_annotator": self.not_by_annotator,
            "rejected": self.rejected,
            "incomplete_regions": self.incomplete_regions,
            "skipped_tasks": self.skipped_tasks,
            "multi_annotation_tasks": self.multi_annotation_tasks,
        }


def verify(tasks: list[dict[str, Any]], kb: KB, *, annotator: str | None = None) -> PullResult:
    """Turn exported tasks into verified documents and the sidecar's counts."""
    result = PullResult([])
    for task in sorted(tasks, key=lambda t: int(t["id"])):
        result.tasks += 1
        _verify_task(task, kb, annotator, result)
    return result


def annotators(tasks: list[dict[str, Any]]) -> list[str]:
    """Everyone with a completed annotation, for ``--per-annotator``."""
    return sorted({annotator_of(a) for t in tasks for a in completed_annotations(t)})


def _verify_task(task: dict[str, Any], kb: KB, annotator: str | None, result: PullResult) -> None:
    data = task.get("data", {})
    doc_id, text = doc_id_of(task), text_of(task)
    completed = completed_annotations(task)
    for skipped in cancelled_annotations(task):
        result.skipped_tasks.append(
            {"doc_id": doc_id, "task": task["id"], "annotator": annotator_of(skipped)}
        )
    if annotator is not None:
        mine = [a for a in completed if annotator_of(a) == annotator]
        if completed and not mine:
            result.not_by_annotator += 1
        completed = mine
    if not completed:
        if not task.get("annotations"):
            result.unannotated_tasks += 1
        return
    chosen = completed[0]
    if len(completed) > 1:
        result.multi_annotation_tasks.append({
            "doc_id": doc_id, "task": task["id"], "used": annotator_of(chosen),
            "others": [annotator_of(a) for a in completed[1:]],
        })  # fmt: skip
    candidates, _ = read_regions(text, review_result(task))
    regions, _ = read_regions(text, chosen.get("result", []))
    email = annotator_of(chosen)
    result.verified_by.add(email)
    comparison = compare(candidates, regions, kb)
    hits = [
        _hit(text, d, kb, email)
        for d in comparison.decisions
        if d.verdict in ("accept", "fix", "added")
    ]
    _count(doc_id, text, comparison, result)
    result.documents.append(
        Document(
            doc_id=doc_id, text=text, role=data.get("role"), batch=data.get("batch"), p_incl=data.get("p_incl"),
            ground_truth=sorted(hits, key=lambda h: (h.a, h.b)),
        )
    )  # fmt: skip


def _count(doc_id: str, text: str, comparison: Comparison, result: PullResult) -> None:
    for decision in comparison.decisions:
        candidate = decision.candidate
        slice_tally = result.by_slice[_slice(candidate or decision.region)]
        if candidate is not None:
            result.tally.candidates += 1
            slice_tally.candidates += 1
        result.tally.add(decision.verdict)
        slice_tally.add(decision.verdict)
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
    return Hit(
        a=region.a, b=region.b, surface=text[region.a : region.b], entity_id=folded.entity_id,
        label=region.label, direction=folded.direction, annotator=email, source="human",
        verdict=decision.verdict, label_canonicalized=folded.label_canonicalized,
        direction_coerced=folded.direction_coerced, **extra,
    )  # fmt: skip


def summary_rows(result: PullResult) -> list[tuple[str, Any]]:
    """The sidecar's headline numbers, for the CLI table."""
    sidecar = result.sidecar()
    rate = sidecar["correction_rate"]
    return [
        ("tasks", result.tasks),
        ("verified tasks", len(result.documents)),
        ("unannotated tasks", result.unannotated_tasks),
        ("skipped/cancelled annotations", len(result.skipped_tasks)),
        ("tasks with several annotations", len(result.multi_annotation_tasks)),
        *((name, sidecar[name]) for name in COUNTS),
        ("correction rate", "n/a" if rate is None else f"{rate:.3f}"),
        ("B-only candidates kept", result.adopted_from_second_annotator),
        ("verified by", ", ".join(sorted(result.verified_by)) or "nobody yet"),
    ]
