"""Human effort from Label Studio's ``lead_time``: minutes per document and per verified mention.

Label Studio stores ``lead_time`` (seconds the annotation was open) on every annotation. One row
per completed annotation of a campaign (primary, double and curate projects); figures by
annotator, by pre-annotator tag (the review prediction's tag), by the annotation's correction rate
(``0``, ``<=0.2``, ``>0.2``; ``no candidates`` when there was nothing to correct), by document
length and by project role. A task left open while its annotator was away would dominate every
mean, so each annotation's time is capped at :data:`IDLE_CAP_MINUTES` and the capped annotations
are counted. Annotations without ``lead_time`` are counted and left out of the minutes.
"""

from __future__ import annotations

import io
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from goldloop.formats.labelstudio.tasks import (
    REVIEW_PREFIX,
    ROLES,
    Campaign,
    annotator_of,
    completed_annotations,
    doc_id_of,
    review_seen,
    text_of,
)
from goldloop.kb import KB
from goldloop.scoring.report import NOTHING_ANNOTATED, placeholder_png

IDLE_CAP_MINUTES = 15.0
"""Longer than any abstract takes to verify (a few minutes): beyond this, the task sat idle."""
LENGTH_BUCKETS = ((1000, "<1000 chars"), (2000, "1000-1999 chars"))
LONGEST = ">=2000 chars"
NO_CANDIDATES = "no candidates"


# The pre-annotator of an annotation made over no review prediction (a blind task, or none pushed).
NO_REVIEW = "none"


@dataclass(frozen=True)
class EffortRow:
    """One completed annotation: who, on what, how long, with what outcome."""

    role: str
    task: int
    doc_id: str
    annotator: str
    pre_annotator: str
    seconds: float | None
    minutes: float | None  # capped
    capped: bool
    kept: int  # candidates accepted or fixed
    added: int
    deleted: int  # candidates rejected
    candidates: int
    corrections: int  # fixed or rejected candidates
    length: int
    created_at: str
    # The backend's other-occurrence proposals submitted untouched: gold mentions the person
    # submitted but did not make (neither kept candidates nor added).
    proposed: int = 0

    @property
    def verified_mentions(self) -> int:
        return self.kept + self.added + self.proposed

    @property
    def correction_bucket(self) -> str:
        if not self.candidates:
            return NO_CANDIDATES
        rate = self.corrections / self.candidates
        return "0" if rate == 0 else "<=0.2" if rate <= 0.2 else ">0.2"

    @property
    def length_bucket(self) -> str:
        return next((name for limit, name in LENGTH_BUCKETS if self.length < limit), LONGEST)


def effort_rows(
    campaign: Campaign, kb: KB, *, cap_minutes: float = IDLE_CAP_MINUTES
) -> list[EffortRow]:
    """One row per completed annotation of the campaign, earliest first."""
    # Here, not at the top: `status --help` shows IDLE_CAP_MINUTES, and the gold format under
    # the verification imports pydantic.
    from goldloop.formats.labelstudio.verify import read_annotation

    rows: list[EffortRow] = []
    for role in ROLES:
        for task in campaign.of(role):
            for annotation in completed_annotations(task):
                review = review_seen(task, annotation)
                tag = str(review["model_version"])[len(REVIEW_PREFIX) :] if review else NO_REVIEW
                comparison, _ = read_annotation(task, annotation, kb)
                fixed, rejected = len(comparison.of("fix")), len(comparison.of("reject"))
                seconds = annotation.get("lead_time")
                minutes = None if seconds is None else min(float(seconds) / 60, cap_minutes)
                rows.append(
                    EffortRow(
                        role=role, task=int(task["id"]), doc_id=doc_id_of(task),
                        annotator=annotator_of(annotation), pre_annotator=tag,
                        seconds=None if seconds is None else float(seconds), minutes=minutes,
                        capped=seconds is not None and float(seconds) / 60 > cap_minutes,
                        kept=len(comparison.of("accept")) + fixed, added=len(comparison.of("added")),
                        deleted=rejected, corrections=fixed + rejected,
                        candidates=sum(d.candidate is not None for d in comparison.decisions),
                        length=len(text_of(task)), created_at=str(annotation.get("created_at") or ""),
                        proposed=len(comparison.of("proposed")),
                    )
                )  # fmt: skip
    return sorted(rows, key=lambda r: (r.created_at, r.task))


def minutes_by_document(rows: Sequence[EffortRow]) -> dict[str, float]:
    """Per document, the mean (capped) minutes of its timed primary and double annotations:
    what one more such document is expected to cost (a plan's effort record)."""
    spent: dict[str, list[float]] = {}
    for row in rows:
        if row.minutes is not None and row.role in ("primary", "double"):
            spent.setdefault(row.doc_id, []).append(row.minutes)
    return {doc_id: sum(m) / len(m) for doc_id, m in spent.items()}


@dataclass(frozen=True)
class EffortFigures:
    """Minutes per document (mean and median) and per verified mention over some annotations
    (``None`` where nothing was timed or verified)."""

    annotations: int
    timed: int
    minutes: float
    verified_mentions: int
    minutes_per_document: float | None
    median_minutes_per_document: float | None
    minutes_per_verified_mention: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def figures(rows: Sequence[EffortRow]) -> EffortFigures:
    """The :class:`EffortFigures` over ``rows``."""
    timed = [r for r in rows if r.minutes is not None]
    minutes = [r.minutes for r in timed if r.minutes is not None]
    mentions = sum(r.verified_mentions for r in timed)
    total = sum(minutes)
    return EffortFigures(
        annotations=len(rows),
        timed=len(timed),
        minutes=round(total, 4),
        verified_mentions=mentions,
        minutes_per_document=round(total / len(timed), 4) if timed else None,
        median_minutes_per_document=round(statistics.median(minutes), 4) if minutes else None,
        minutes_per_verified_mention=round(total / mentions, 4) if mentions else None,
    )


GROUPS: dict[str, Callable[[EffortRow], str]] = {
    "by_annotator": lambda r: r.annotator,
    "by_pre_annotator": lambda r: r.pre_annotator,
    "by_correction_rate": lambda r: r.correction_bucket,
    "by_length": lambda r: r.length_bucket,
    "by_role": lambda r: r.role,
}


@dataclass(frozen=True)
class EffortReport:
    """The effort section (``<project>.effort.json``, and the sidecar's ``effort``): the idle cap
    and what it and missing lead times left out, the overall figures, and the figures per group
    (``GROUPS``: by annotator, pre-annotator, correction rate, length, role)."""

    idle_cap_minutes: float
    capped_annotations: int
    annotations_without_lead_time: int
    overall: EffortFigures
    groups: dict[str, dict[str, EffortFigures]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "idle_cap_minutes": self.idle_cap_minutes,
            "capped_annotations": self.capped_annotations,
            "annotations_without_lead_time": self.annotations_without_lead_time,
            "overall": self.overall.to_dict(),
            **{
                name: {group: them.to_dict() for group, them in members.items()}
                for name, members in self.groups.items()
            },
        }


def effort_report(
    rows: Sequence[EffortRow], *, cap_minutes: float = IDLE_CAP_MINUTES
) -> EffortReport:
    """The effort section: overall figures, the groups, and what the cap and gaps left out."""
    groups: dict[str, dict[str, EffortFigures]] = {}
    for name, key in GROUPS.items():
        members: dict[str, list[EffortRow]] = {}
        for row in rows:
            members.setdefault(key(row), []).append(row)
        groups[name] = {group: figures(them) for group, them in sorted(members.items())}
    return EffortReport(
        idle_cap_minutes=cap_minutes,
        capped_annotations=sum(r.capped for r in rows),
        annotations_without_lead_time=sum(r.seconds is None for r in rows),
        overall=figures(rows),
        groups=groups,
    )


def effort_png(rows: Sequence[EffortRow]) -> bytes:
    """Two panels: the distribution of minutes per document, and annotations done over time
    (before anyone annotated: a chart that says so), as PNG bytes."""
    if not rows:
        return placeholder_png(f"{NOTHING_ANNOTATED}: no completed annotation")
    import matplotlib  # matplotlib loads only when a chart is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = [r for r in rows if r.minutes is not None]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.hist([r.minutes for r in timed], bins=20, color="#f0a030")
    left.set_xlabel("minutes per document (capped)")
    left.set_ylabel("annotations")
    left.set_title(f"{len(timed)} timed annotations")
    stamps = sorted(datetime.fromisoformat(r.created_at) for r in rows if r.created_at)
    right.step(stamps, range(1, len(stamps) + 1), where="post", color="#3070b0")
    right.set_xlabel("time")
    right.set_ylabel("annotations done")
    right.set_title("throughput")
    fig.autofmt_xdate()
    fig.tight_layout()
    chart = io.BytesIO()
    fig.savefig(chart, format="png", dpi=100)
    plt.close(fig)
    return chart.getvalue()
