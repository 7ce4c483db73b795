"""The campaign's tasks as last read from Label Studio, kept beside the gold file.

``pull`` writes ``<gold>.tasks.json`` with every exported task of the campaign's projects; the
live gold (the backend's webhook) and ``pull --since`` then re-read only the tasks that changed
and recompute the gold from the whole mirror with pull's own rules, so their gold equals a full
pull's. A changed task is re-read through the same export as a full pull (a Data Manager view
holding its id), so the mirror holds exactly what an export would, less the task counters
(:data:`COUNTERS`) and clock-relative fields. The annotation -> task index
that maps a deletion (Label Studio sends only annotation ids) to its task is read off the mirror.
A task has changed when its ``updated_at``, its annotation ids or its predictions' model versions
differ from the mirror's: Label Studio bumps ``updated_at`` when an annotation is created, updated
or deleted, but imports predictions (a later ``push`` adding B's review prediction) without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldloop.files import jsonl
from goldloop.files.atomic import json_text
from goldloop.formats.labelstudio.tasks import Campaign, campaign_titles, utc_time
from goldloop.studio import project as projects
from goldloop.studio.connection import Studio

FORMAT = 2
VOLATILE = ("created_ago",)  # "3 minutes" ago: the export renders the clock into it
# A task's counters, which Label Studio updates after (or without) bumping ``updated_at``: a read
# between a deletion and its counter update would be kept, as the task's stamp does not change.
# goldloop reads the annotations themselves, never these.
COUNTERS = (
    "total_annotations",
    "cancelled_annotations",
    "total_predictions",
    "comment_count",
    "unresolved_comment_count",
    "last_comment_updated_at",
    "comment_authors",
)
VIEW_IDS = 200  # task ids per filtered export: a view's filter list stays small
Task = dict[str, Any]


@dataclass
class ProjectTasks:
    """One project of the campaign: its id and its tasks by id."""

    id: int
    tasks: dict[int, Task] = field(default_factory=dict)


@dataclass
class Mirror:
    """The campaign ``name``'s projects by title (in the campaign's order) and their tasks."""

    name: str
    projects: dict[str, ProjectTasks] = field(default_factory=dict)

    def campaign(self) -> Campaign:
        """The mirrored tasks as an export of the campaign: by role, in task id order."""
        campaign = Campaign(self.name)
        for role, title in campaign_titles(self.name).items():
            if title in self.projects:
                tasks = self.projects[title].tasks
                campaign.titles[role] = title
                campaign.tasks[role] = [tasks[i] for i in sorted(tasks)]
        return campaign

    def task_of_annotation(self, annotation_id: int) -> tuple[str, int] | None:
        """The (project title, task id) holding ``annotation_id``, as last read."""
        for title, project in self.projects.items():
            for task_id, task in project.tasks.items():
                if any(a.get("id") == annotation_id for a in task.get("annotations") or ()):
                    return title, task_id
        return None

    def title_of(self, project_id: int) -> str | None:
        return next((t for t, p in self.projects.items() if p.id == project_id), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "campaign": self.name,
            "projects": [
                {"title": t, "id": p.id, "tasks": [p.tasks[i] for i in sorted(p.tasks)]}
                for t, p in self.projects.items()
            ],
        }


def mirror_path(gold: Path) -> Path:
    return gold.with_name(gold.name + ".tasks.json")


def read_mirror(path: Path, name: str) -> Mirror | None:
    """The mirror at ``path`` when it is one of campaign ``name`` (else None: read everything)."""
    try:
        data = jsonl.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("campaign") != name:
        return None
    mirror = Mirror(name)
    try:
        for item in data.get("projects") or ():
            tasks = item.get("tasks") or ()
            if not _is_id(item["id"]) or not all(_as_written(t) for t in tasks):
                return None
            mirror.projects[str(item["title"])] = ProjectTasks(
                item["id"], {t["id"]: t for t in tasks}
            )
    except (KeyError, TypeError, AttributeError):
        return None  # not a mirror goldloop wrote: read everything again
    return mirror


def _is_id(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _as_written(task: Any) -> bool:
    """Whether a stored task has the shape an export gives (integer ids, its annotations too):
    anything else was not written by goldloop, and the mirror is read again in full."""
    annotations = task.get("annotations") or [] if isinstance(task, dict) else None
    return (
        isinstance(task, dict)
        and _is_id(task.get("id"))
        and isinstance(annotations, list)
        and all(isinstance(a, dict) and _is_id(a.get("id")) for a in annotations)
    )


def mirror_text(mirror: Mirror) -> str:
    """The mirror file's text (one line: it is rewritten on every pull)."""
    return json_text(mirror.to_json(), indent=None)


def read_campaign(studio: Studio, name: str, titles: Sequence[str]) -> Mirror:
    """Every task of the projects titled ``titles`` that exist (one export each)."""
    found = projects.find_projects(studio, list(titles))
    mirror = Mirror(name)
    for title, project in found.items():
        exported = projects.export_project(studio, project)
        mirror.projects[title] = ProjectTasks(project.id, _by_id(exported))
    return mirror


def catch_up(studio: Studio, mirror: Mirror, titles: Sequence[str]) -> int:
    """Bring the mirror up to date with Label Studio: projects that appeared are read whole, those
    gone are dropped, and in the others only the changed tasks are re-read; returns how many
    tasks were re-read."""
    found = projects.find_projects(studio, list(titles))
    before = mirror.projects
    mirror.projects = {}
    read = 0
    for title, project in found.items():
        known = before.get(title)
        if known is None or known.id != project.id:
            exported = projects.export_project(studio, project)
            mirror.projects[title] = ProjectTasks(project.id, _by_id(exported))
            read += len(exported)
        else:
            mirror.projects[title] = known
    for title, ids in changed_tasks(studio, mirror, only=set(before)).items():
        refresh_tasks(studio, mirror, title, ids)
        read += len(ids)
    return read


def refresh_tasks(studio: Studio, mirror: Mirror, title: str, task_ids: Iterable[int]) -> None:
    """Re-read ``task_ids`` of project ``title`` into the mirror; a task gone is dropped."""
    project = mirror.projects[title]
    wanted = sorted(set(task_ids))
    fresh: dict[int, Task] = {}
    for start in range(0, len(wanted), VIEW_IDS):
        chunk = wanted[start : start + VIEW_IDS]
        fresh.update(_by_id(export_some(studio, project.id, chunk)))
    for task_id in wanted:
        if task_id in fresh:
            project.tasks[task_id] = fresh[task_id]
        else:
            project.tasks.pop(task_id, None)


def changed_tasks(
    studio: Studio, mirror: Mirror, *, only: set[str] | None = None
) -> dict[str, set[int]]:
    """By project title (those in ``only``, default all), the tasks that are new, gone, or
    changed since the mirror was read."""
    changed: dict[str, set[int]] = {}
    for title, project in mirror.projects.items():
        if only is not None and title not in only:
            continue
        pages: Iterable[Any] = studio.call(
            studio.sdk.tasks.list, project=project.id, page_size=projects.PAGE_SIZE,
            include="id,updated_at,annotations_ids,predictions_model_versions",
        )  # fmt: skip
        listed: list[Any] = studio.call(list, pages)
        seen: set[int] = set()
        for row in listed:
            seen.add(int(row.id))
            old = project.tasks.get(int(row.id))
            stamp = (
                _iso(row.updated_at),
                _ids(row.annotations_ids),
                projects.model_versions(row.predictions_model_versions),
            )
            if old is None or _stamp(old) != stamp:
                changed.setdefault(title, set()).add(int(row.id))
        gone = set(project.tasks) - seen
        if gone:
            changed.setdefault(title, set()).update(gone)
    return changed


def export_some(studio: Studio, project_id: int, task_ids: Sequence[int]) -> list[Task]:
    """``task_ids`` of one project through the export a full pull uses, filtered by a view."""
    items = [
        {"filter": "filter:tasks:id", "operator": "equal", "type": "Number", "value": task_id}
        for task_id in task_ids
    ]
    view = studio.call_once(
        studio.sdk.views.create, project=project_id,
        data={"title": "goldloop live gold (temporary)", "filters": {"conjunction": "or", "items": items}},
    )  # fmt: skip
    try:
        return projects.export_project(
            studio, projects.Project(project_id, "", "", None), view=view.id
        )
    finally:
        studio.call_delete(studio.sdk.views.delete, id=view.id)


def _by_id(exported: Iterable[Task]) -> dict[int, Task]:
    """Tasks by id, without the export's clock-relative fields and the task counters: a task not
    re-read stays as a fresh export would give it."""
    tasks = {}
    for task in exported:
        for name in COUNTERS:
            task.pop(name, None)
        for kind in ("annotations", "predictions"):
            for item in task.get(kind) or ():
                for name in VOLATILE:
                    item.pop(name, None)
        tasks[int(task["id"])] = task
    return tasks


def _stamp(task: Task) -> tuple[str, frozenset[int], frozenset[str]]:
    ids = frozenset(int(a["id"]) for a in task.get("annotations") or () if "id" in a)
    versions = projects.model_versions(
        p.get("model_version") for p in task.get("predictions") or ()
    )
    return _iso(task.get("updated_at")), ids, versions


def _iso(value: object) -> str:
    """A timestamp as one comparable string (the listing gives datetimes, the export strings)."""
    moment = utc_time(value)
    return moment.isoformat() if moment is not None else ""


def _ids(value: object) -> frozenset[int]:
    """The listing's ``annotations_ids``: a comma-joined string (or a list)."""
    if isinstance(value, str):
        return frozenset(int(v) for v in value.split(",") if v.strip())
    return frozenset(int(v) for v in value or ())  # type: ignore[attr-defined]
