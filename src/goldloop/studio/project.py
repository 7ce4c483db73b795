"""The Label Studio project layer: every door reads and writes projects through it.

Find or create a project by title (its labeling config checked, its instructions set when it has
none), give it a first Data Manager tab, list its tasks by a key of their ``data``, import tasks
exactly once, export every task with full predictions and annotators, and set the model version
annotations are pre-filled from. ``push``, ``pull``, agreement, curation, status, effort, the
precision sample and the demo all use these functions with the same
:class:`~goldloop.studio.connection.Studio`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from goldloop.files import jsonl
from goldloop.formats.labelstudio.tasks import (
    ROLES,
    Campaign,
    campaign_titles,
    check_campaign,
)
from goldloop.studio.connection import Studio, StudioError, StudioUnreachable
from goldloop.studio.label_config import check_label_config

PAGE_SIZE = 1000
BATCH_SIZE = 500
IMPORT_ATTEMPTS = 4


@dataclass(frozen=True)
class Project:
    id: int
    title: str
    label_config: str
    model_version: str | None
    instructions: str = ""


@dataclass(frozen=True)
class ExistingTask:
    id: int
    key: str
    model_versions: frozenset[str]


ConfigCheck = Callable[[str, str], None]
"""Raises when a project's labeling config (first argument, described by the second) won't do."""


def find_project(
    studio: Studio, title: str, check: ConfigCheck = check_label_config
) -> Project | None:
    """The project titled exactly ``title``; ``check`` vets its config (default: goldloop's controls)."""
    return find_projects(studio, [title], check).get(title)


def find_projects(
    studio: Studio,
    titles: Sequence[str],
    check: ConfigCheck = check_label_config,
) -> dict[str, Project]:
    """The projects titled exactly as one of ``titles`` (one listing, then one read per match)."""
    listed = _read_all(studio, studio.sdk.projects.list, include="id,title", page_size=PAGE_SIZE)
    found: dict[str, Project] = {}
    for title in titles:
        matches = [p for p in listed if p.title == title]
        if len(matches) > 1:
            raise StudioError(
                f"{studio.connection.url}: {len(matches)} projects are titled {title!r}; "
                "rename all but one"
            )
        if matches:
            full = studio.call(studio.sdk.projects.get, id=matches[0].id)
            where = f"Label Studio project {title!r} (id {full.id})"
            check(full.label_config or "", where)
            found[title] = Project(
                stored_id(full.id, where), title, full.label_config or "",
                full.model_version or None, full.expert_instruction or "",
            )  # fmt: skip
    return found


def ensure_project(
    studio: Studio,
    title: str,
    label_config: str,
    *,
    annotations: int = 1,
    check: ConfigCheck = check_label_config,
    instructions: str | None = None,
) -> Project:
    """Find the project titled ``title`` (its config vetted by ``check``) or create it.

    ``instructions`` (HTML) are shown to annotators before their first task; a found project
    gets them only when it has none, so instructions edited in Label Studio are kept.
    """
    shown = {"expert_instruction": instructions, "show_instruction": True} if instructions else {}
    found = find_project(studio, title, check)
    if found is not None:
        if shown and not found.instructions.strip():
            studio.call(studio.sdk.projects.update, id=found.id, **shown)
            found = replace(found, instructions=instructions or "")
        return found
    extra: dict[str, Any] = dict(shown)
    if annotations > 1:
        # Overlap is per project: every task of this project asks for ``annotations`` people.
        extra |= {"maximum_annotations": annotations, "overlap_cohort_percentage": 100}
    created = studio.call_once(
        studio.sdk.projects.create, title=title, label_config=label_config, **extra
    )
    where = f"Label Studio project {title!r}"
    return Project(stored_id(created.id, where), title, label_config, None, instructions or "")


def stored_id(value: int | None, where: str) -> int:
    """The id of something Label Studio stored (its SDK types every id as optional)."""
    if value is None:
        raise StudioError(f"{where}: Label Studio answered without an id")
    return value


def ensure_view(studio: Studio, project: Project, title: str, display: dict[str, str]) -> None:
    """Give a project without Data Manager tabs its first tab: ``title``, the columns Label
    Studio hides by default hidden, and ``display`` (column id, such as ``tasks:data.p_incl``,
    to the type it is shown as). A project that has tabs keeps them as they are.

    Call it after the tasks are imported: a task data key is a column only once a task has it.
    """
    if studio.call(studio.sdk.views.list, project=project.id):
        return
    columns = studio.call(studio.read_json, "api/dm/columns", {"project": project.id})
    # What the Data Manager itself hides in the tab it makes for a project without one; a tab
    # created without this list would show every column.
    hidden: dict[str, list[str]] = {"explore": [], "labeling": []}
    for column in columns.get("columns") or ():
        path = f"{column['parent']}.{column['id']}" if column.get("parent") else column["id"]
        for mode, visible in (column.get("visibility_defaults") or {}).items():
            if not visible:
                hidden.setdefault(mode, []).append(f"{column['target']}:{path}")
    data = {
        "title": title, "type": "list", "target": "tasks", "hiddenColumns": hidden,
        "columnsDisplayType": display,
    }  # fmt: skip
    studio.call_once(studio.sdk.views.create, project=project.id, data=data)


def existing_tasks(
    studio: Studio, project: Project, key: str = "doc_id"
) -> dict[str, ExistingTask]:
    """The project's tasks by ``data[key]``, with the model versions of their predictions."""
    listed = _read_all(
        studio, studio.sdk.tasks.list, project=project.id, page_size=PAGE_SIZE,
        include="id,data,predictions_model_versions",
    )  # fmt: skip
    tasks: dict[str, ExistingTask] = {}
    for task in listed:
        value = str((task.data or {}).get(key, ""))
        if not value:
            continue
        if value in tasks:
            raise StudioError(
                f"Label Studio project {project.title!r}: tasks {tasks[value].id} and {task.id} both hold "
                f"{key} {value!r}; delete one"
            )
        tasks[value] = ExistingTask(task.id, value, model_versions(task.predictions_model_versions))
    return tasks


ProgressFn = Callable[[int], None]


def import_tasks(
    studio: Studio,
    project: Project,
    tasks: Sequence[dict[str, Any]],
    *,
    key: str = "doc_id",
    batch_size: int = BATCH_SIZE,
    progress: ProgressFn | None = None,
) -> int:
    """Import ``tasks`` (each with a unique ``data[key]``) in batches, each task exactly once.

    Label Studio stores a batch in one transaction, but an import is not safe to repeat: a request
    whose answer was lost may have been stored. So each request is sent once; after a lost
    connection the project is listed again and only the tasks whose key did not arrive are sent.
    Callers send only keys the project lacks (``existing_tasks``), so a re-run after a crash
    completes the import without duplicates. ``progress`` gets each batch's size.
    """
    confirmed = True
    for start in range(0, len(tasks), batch_size):
        batch = list(tasks[start : start + batch_size])
        confirmed &= _import_batch(studio, project, batch, key)
        if progress:
            progress(len(batch))
    if not confirmed:
        _restore_dropped_predictions(studio, project, tasks, key)
    return len(tasks)


def _restore_dropped_predictions(
    studio: Studio,
    project: Project,
    tasks: Sequence[dict[str, Any]],
    key: str,
) -> None:
    """Label Studio 1.23 can store an import's tasks without their predictions and answer 201
    (tasks/serializers.py ``add_predictions`` returns early on a prediction it cannot prepare;
    seen under load, after push's and curate's imports alike), and then refuses their model
    version. When an import's answer does not count every prediction sent as stored, the
    imported tasks are listed again and each gets the predictions it lacks, by model version."""
    expected = [task for task in tasks if task.get("predictions")]
    if not expected:
        return
    stored = existing_tasks(studio, project, key)
    rows = []
    for task in expected:
        have = stored[str(task["data"][key])]
        rows += [
            {"task": have.id, **prediction}
            for prediction in task["predictions"]
            if prediction.get("model_version")
            and prediction["model_version"] not in have.model_versions
        ]
    add_predictions(studio, project, rows)


def add_predictions(studio: Studio, project: Project, rows: Sequence[dict[str, Any]]) -> None:
    """Add predictions (each with its ``task`` id) to the project's tasks."""
    for start in range(0, len(rows), BATCH_SIZE * 3):
        # Once: a repeat after a lost answer would give tasks the same prediction twice; a
        # re-run sends only what is still missing.
        studio.call_once(
            studio.sdk.projects.import_predictions,
            id=project.id,
            request=list(rows[start : start + BATCH_SIZE * 3]),
        )


def _import_batch(studio: Studio, project: Project, batch: list[dict[str, Any]], key: str) -> bool:
    """Import ``batch`` once; whether the server's answer confirms every task and prediction
    stored (its ``task_count`` and ``prediction_count``: the rows it created)."""
    pending = batch
    for attempt in range(IMPORT_ATTEMPTS):
        try:
            # ``projects.import_tasks`` walks every task twice in Python before sending (about
            # 2 ms per task with three predictions): the body is encoded once by ``json`` instead.
            # Sent once: a retry could store a batch twice (the except below recovers instead).
            answer = studio.call_once(
                studio.post_json, f"api/projects/{int(project.id)}/import",
                json.dumps(pending, ensure_ascii=False).encode("utf-8"),
                params={"return_task_ids": True},
            )  # fmt: skip
            return pending is batch and _stored_all(answer, batch)
        except StudioUnreachable:
            if attempt == IMPORT_ATTEMPTS - 1:
                raise
            # Give a slow server time to finish (and commit) the request whose answer was lost.
            time.sleep(2.0 * (attempt + 1))
            present = existing_tasks(studio, project, key)
            pending = [t for t in pending if str(t["data"][key]) not in present]
            if not pending:
                return False
    return False


def _stored_all(answer: Any, batch: list[dict[str, Any]]) -> bool:
    sent = sum(len(task.get("predictions") or ()) for task in batch)
    return (
        isinstance(answer, dict)
        and answer.get("task_count") == len(batch)
        and answer.get("prediction_count") == sent
    )


def export_project(
    studio: Studio, project: Project, *, view: int | None = None
) -> list[dict[str, Any]]:
    """Every task of ``project`` (of its Data Manager ``view`` only, when given) with its
    annotations (annotators' emails) and full predictions."""
    filters = {"task_filter_options": {"view": view}} if view is not None else {}
    # Retried like a read: a second snapshot after a lost answer is only a stray export.
    export = studio.call(
        studio.sdk.projects.exports.create, id=project.id, title="goldloop export",
        serialization_options={"predictions": {"only_id": False}, "annotations__completed_by": {"only_id": False}},
        **filters,
    )  # fmt: skip
    chunks = _read_all(
        studio, studio.sdk.projects.exports.download, id=project.id, export_pk=export.id,
        export_type="JSON",
    )  # fmt: skip
    raw = b"".join(studio.call(list, chunks))
    try:
        tasks = jsonl.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        # Seen when the server stops while it streams the export: an empty or cut-off body.
        raise StudioUnreachable(
            f"Label Studio at {studio.connection.url} sent an unreadable export of "
            f"{project.title!r} ({len(raw)} bytes): did it stop or restart? nothing was written"
        ) from None
    if not isinstance(tasks, list):
        raise StudioError(
            f"Label Studio at {studio.connection.url}: the export of {project.title!r} is not a "
            "task list"
        )
    studio.call_delete(studio.sdk.projects.exports.delete, id=project.id, export_pk=export.id)
    return tasks


def _read_all(studio: Studio, fn: Callable[..., Any], **kwargs: Any) -> list[Any]:
    """Every item of a paged listing or streamed download, read in one retried call: the SDK's
    pagers and streams are lazy, so a retry must start the request again, not resume it."""
    return studio.call(lambda: list(fn(**kwargs)))


def export_campaign(
    studio: Studio,
    name: str,
    *,
    roles: Sequence[str] = ROLES,
    need: Sequence[str] | None = None,
) -> Campaign:
    """Every task of the campaign's projects of ``roles`` that exist; those of ``need`` must
    exist (default: a pushed project, primary or double, as :func:`check_campaign`)."""
    titles = {role: title for role, title in campaign_titles(name).items() if role in roles}
    found = find_projects(studio, list(titles.values()))
    if need is None:
        check_campaign(
            name, [t for t in found if t in titles.values()], f"{studio.connection.url}: "
        )
    for role in need or ():
        if titles[role] not in found:
            raise StudioError(
                f"{studio.connection.url}: no Label Studio project titled {titles[role]!r}"
            )
    campaign = Campaign(name)
    for role, title in titles.items():
        if title in found:
            campaign.titles[role] = title
            campaign.tasks[role] = export_project(studio, found[title])
    return campaign


def set_model_version(studio: Studio, project: Project, version: str) -> None:
    """Pre-fill annotations from ``version``'s predictions (they must be imported first)."""
    if project.model_version != version:
        studio.call(studio.sdk.projects.update, id=project.id, model_version=version)


def model_versions(value: object) -> frozenset[str]:
    """The data manager joins a task's prediction model versions with commas."""
    if isinstance(value, str):
        return frozenset(v.strip() for v in value.split(",") if v.strip())
    return frozenset(str(v) for v in value or () if v)  # type: ignore[attr-defined]
