"""Where a campaign stands, from the exports of its projects (pure: no network client).

Per project role (``blind``: the blind documents' tasks without candidates): tasks, tasks
annotated (two people for a double task), partly annotated double tasks, skipped tasks and the annotations still needed; per annotator: annotations and the regions
kept, added and deleted against the review prediction; the verdict mix and correction rate of the
gold so far, split anchored / paraphrase; κ on the double tasks and how complete the double
annotations are likely to be (capture–recapture); and an estimated time to finish
from the effort so far (the median minutes per document times the annotations still needed, and
at the pace observed between the first and the last annotation).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from goldloop.formats.labelstudio.tasks import (
    ROLES,
    Campaign,
    cancelled_annotations,
    completed_annotations,
    doc_id_of,
)
from goldloop.formats.labelstudio.verify import Curation, Tally
from goldloop.kb import KB
from goldloop.scoring.completeness import Completeness
from goldloop.studio.campaign import KappaSection, campaign_sections, verified_gold
from goldloop.studio.effort import (
    IDLE_CAP_MINUTES,
    EffortFigures,
    EffortRow,
    effort_rows,
    figures,
)

NEEDED = {"primary": 1, "double": 2, "curate": 1, "blind": 1}


@dataclass(frozen=True)
class RoleCounts:
    """One project role's tasks: all of them, those annotated as often as the role needs, double
    tasks one person annotated, those skipped, the annotations done and still needed, and the
    tasks no pre-annotation reached."""

    tasks: int
    annotated: int
    partly_annotated: int
    skipped: int
    annotations: int
    annotations_needed: int
    without_prediction: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AnnotatorWork:
    """One annotator's tasks, and the regions kept, added and deleted against the review
    prediction."""

    tasks: int = 0
    kept: int = 0
    added: int = 0
    deleted: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Finish:
    """The work left: annotations still needed, and the time they take at the median minutes per
    document and at the pace between the first and the last annotation (None when unknown)."""

    annotations_needed: int
    median_minutes_per_document: float | None
    work_minutes_left: float | None
    annotations_per_hour: float | None
    hours_left_at_this_pace: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Verdicts:
    """The gold's verdicts so far: all of them, then the anchored and the paraphrase slices."""

    all: Tally
    anchored: Tally
    paraphrase: Tally

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.all.to_dict(),
            "anchored": self.anchored.to_dict(),
            "paraphrase": self.paraphrase.to_dict(),
        }


@dataclass(frozen=True)
class StatusCuration:
    """The gold's curation counts, and the disputes not yet pushed to the curate project."""

    curation: Curation
    disputes_not_pushed: int

    def to_dict(self) -> dict[str, Any]:
        return {**self.curation.to_dict(), "disputes_not_pushed": self.disputes_not_pushed}


@dataclass(frozen=True)
class StatusReport:
    """Where a campaign stands (``<project>.status.json``): its projects by role; per role the
    tasks and annotations (``_role``'s counts); per annotator the tasks and regions kept, added
    and deleted; the gold's verdicts (all, anchored, paraphrase); how documents were decided;
    curation; the double tasks' agreement and completeness sections (None without a double
    project); the effort figures; and the work left."""

    projects: dict[str, str]
    roles: dict[str, RoleCounts]
    annotators: dict[str, AnnotatorWork]
    verdicts: Verdicts
    decided: dict[str, int]
    curation: StatusCuration
    # The campaign sidecar's own sections (studio.campaign).
    agreement: KappaSection | None
    completeness: Completeness | None
    effort: EffortFigures
    finish: Finish

    def to_dict(self) -> dict[str, Any]:
        return {
            "projects": self.projects,
            "roles": {role: counts.to_dict() for role, counts in self.roles.items()},
            "annotators": {person: work.to_dict() for person, work in self.annotators.items()},
            "verdicts": self.verdicts.to_dict(),
            "decided": self.decided,
            "curation": self.curation.to_dict(),
            "agreement": None if self.agreement is None else self.agreement.to_dict(),
            "completeness": None if self.completeness is None else self.completeness.to_dict(),
            "effort": self.effort.to_dict(),
            "finish": self.finish.to_dict(),
        }


def campaign_status(
    campaign: Campaign, kb: KB, *, cap_minutes: float = IDLE_CAP_MINUTES
) -> StatusReport:
    """The status report."""
    gold = verified_gold(campaign, kb)
    sections = campaign_sections(campaign, kb, cap_minutes=cap_minutes)
    rows = effort_rows(campaign, kb, cap_minutes=cap_minutes)
    roles = {
        role: _role(campaign.of(role), NEEDED[role]) for role in ROLES if role in campaign.titles
    }
    curating = {doc_id_of(t) for t in campaign.of("curate")}
    not_pushed = [d for d in gold.awaiting_curation if d not in curating]
    remaining = sum(r.annotations_needed for r in roles.values()) + len(not_pushed)
    return StatusReport(
        projects=campaign.titles,
        roles=roles,
        annotators=_annotators(rows),
        verdicts=Verdicts(gold.tally, gold.by_slice["anchored"], gold.by_slice["paraphrase"]),
        decided=gold.decided,
        curation=StatusCuration(gold.curation(), disputes_not_pushed=len(not_pushed)),
        agreement=sections.agreement_before_curation,
        completeness=sections.completeness,
        effort=figures(rows),
        finish=_finish(rows, remaining),
    )


def _role(tasks: Sequence[dict[str, Any]], needed: int) -> RoleCounts:
    done = partly = skipped = annotations = still = 0
    # A task with no prediction at all: pre-annotation never reached it (an ML backend replica
    # died mid-retrieve, while Label Studio reported success), so people would start from nothing.
    unpredicted = sum(not task.get("predictions") for task in tasks)
    for task in tasks:
        completed = len(completed_annotations(task))
        annotations += completed
        if completed >= needed:
            done += 1
        elif not completed and cancelled_annotations(task):
            skipped += 1  # someone chose to skip it: not counted as work left
        else:
            partly += completed > 0
            still += needed - completed
    return RoleCounts(len(tasks), done, partly, skipped, annotations, still, unpredicted)


def _annotators(rows: Sequence[EffortRow]) -> dict[str, AnnotatorWork]:
    people: dict[str, AnnotatorWork] = {}
    for row in rows:
        person = people.setdefault(row.annotator, AnnotatorWork())
        person.tasks += 1
        person.kept += row.kept
        person.added += row.added
        person.deleted += row.deleted
    return dict(sorted(people.items()))


def _finish(rows: Sequence[EffortRow], remaining: int) -> Finish:
    minutes = [r.minutes for r in rows if r.minutes is not None]
    median = statistics.median(minutes) if minutes else None
    stamps = sorted(datetime.fromisoformat(r.created_at) for r in rows if r.created_at)
    hours = (stamps[-1] - stamps[0]).total_seconds() / 3600 if len(stamps) > 1 else 0.0
    pace = (len(stamps) - 1) / hours if hours > 0 else None
    return Finish(
        annotations_needed=remaining,
        median_minutes_per_document=None if median is None else round(median, 4),
        work_minutes_left=None if median is None else round(median * remaining, 2),
        annotations_per_hour=None if pace is None else round(pace, 2),
        hours_left_at_this_pace=None if pace is None else round(remaining / pace, 2),
    )
