"""``curate``: push the disputed double tasks of ``NAME-double`` to ``NAME-curate``, once each.

A double task whose two annotators (two different people) agree goes to the gold as it is; a task
with any disagreement becomes a curate task with the same labeling config and data, carrying the
double task's review prediction (so verdicts keep their baseline), each annotator's version and
the curation prediction the project pre-fills from (``goldloop.studio.curation``). A blind
document's two annotations (with candidates in ``NAME``, without in ``NAME-blind``) are settled
the same way, so its gold comes from neither condition alone. Idempotent on ``doc_id``: a re-run
pushes only disputes that are new.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from goldloop.formats.gold import Hit
from goldloop.formats.labelstudio.tasks import (
    BLIND_ROLE,
    REVIEW_PREFIX,
    Annotation,
    Task,
    blind_name,
    by_doc_id,
    check_campaign,
    check_campaign_name,
    curate_name,
    doc_id_of,
    double_name,
    latest_prediction,
    text_of,
)
from goldloop.formats.labelstudio.verify import annotator_versions, blind_versions
from goldloop.formats.labelstudio.versions import versions_agree
from goldloop.kb import KB
from goldloop.studio import project as projects
from goldloop.studio.connection import Studio
from goldloop.studio.curation import curate_tag, curation_predictions
from goldloop.studio.label_config import (
    CURATE_INSTRUCTIONS,
    prediction_checker,
    render_instructions,
)


@dataclass
class CurateReport:
    double_project: str
    curate_project: str
    project_id: int | None = None
    double_tasks: int = 0
    fewer_than_two: int = 0
    agreed: int = 0
    disputed: int = 0
    created: int = 0
    already_present: int = 0
    model_version: str | None = None
    model_versions: Counter[str] = field(default_factory=Counter)
    blind_documents: int | None = None  # None: the campaign has no blind project


def curate(studio: Studio, name: str, kb: KB) -> CurateReport:
    """Push every disputed task of ``<name>-double`` (and disputed blind document) that
    ``<name>-curate`` lacks (a campaign pushed without double or blind documents has nothing to
    curate: ``project_id`` stays None)."""
    check_campaign_name(name)
    title, blind_title = double_name(name), blind_name(name)
    found = projects.find_projects(studio, [name, title, blind_title])
    check_campaign(name, found, f"{studio.connection.url}: ")
    double, blind = found.get(title), found.get(blind_title)
    report = CurateReport(title, curate_name(name))
    source = double or blind  # the labeling config the curate project copies
    if source is None:
        return report
    tasks = projects.export_project(studio, double) if double else []
    report.double_tasks = len(tasks)
    # Every task is read (and a double annotation by one person refused) before anything is written.
    disputes = [
        (doc_id_of(task), payload)
        for task in sorted(tasks, key=lambda t: int(t["id"]))
        if (payload := _curate_task(task, annotator_versions(task, kb, title), kb, report))
        is not None
    ]
    if blind is not None:
        disputes += _blind_disputes(studio, found.get(name), blind, kb, report)
    target = projects.ensure_project(
        studio, report.curate_project, source.label_config,
        instructions=render_instructions(CURATE_INSTRUCTIONS),
    )  # fmt: skip
    report.project_id = target.id
    existing = projects.existing_tasks(studio, target)
    check = prediction_checker(target.label_config)
    new: list[dict[str, Any]] = []
    for doc_id, payload in disputes:
        if doc_id in existing:
            report.already_present += 1
            continue
        for prediction in payload["predictions"]:
            check.require(f"document {doc_id!r}", prediction)
        new.append(payload)
    report.created = projects.import_tasks(studio, target, new)
    if report.model_versions:
        # One model version per project: the review tag most disputes carry pre-fills.
        report.model_version = report.model_versions.most_common(1)[0][0]
        if report.created or target.model_version != report.model_version:
            projects.set_model_version(studio, target, report.model_version)
    return report


def _blind_disputes(
    studio: Studio,
    main: projects.Project | None,
    blind: projects.Project,
    kb: KB,
    report: CurateReport,
) -> list[tuple[str, dict[str, Any]]]:
    """The curate tasks of the disputed blind documents (each main task of role blind with its
    task in the blind project)."""
    partners = by_doc_id(projects.export_project(studio, blind))
    report.blind_documents = len(partners)
    tasks = projects.export_project(studio, main) if main is not None else []
    return [
        (doc_id_of(task), payload)
        for task in sorted(tasks, key=lambda t: int(t["id"]))
        if (task.get("data") or {}).get("role") == BLIND_ROLE
        and (
            payload := _curate_task(
                task, blind_versions(task, partners.get(doc_id_of(task)), kb), kb, report
            )
        )
        is not None
    ]


def _curate_task(
    task: Task,
    both: tuple[Annotation, dict[str, list[Hit]]] | None,
    kb: KB,
    report: CurateReport,
) -> dict[str, Any] | None:
    """The curate task for a disputed double task or blind document (``both``: its two
    people's versions); None (counted) for the others."""
    if both is None:
        report.fewer_than_two += 1
        return None
    versions = both[1]
    if versions_agree(*versions.values()):
        report.agreed += 1
        return None
    report.disputed += 1
    review = latest_prediction(task, REVIEW_PREFIX)
    report.model_versions[curate_tag(review["model_version"] if review else None)] += 1
    data = {**(task.get("data") or {}), "double_task": task["id"]}
    return {"data": data, "predictions": curation_predictions(text_of(task), versions, review, kb)}
