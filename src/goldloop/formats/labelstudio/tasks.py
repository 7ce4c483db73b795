"""Reading exported Label Studio tasks: their annotations in one order, who made them, the review.

Pure functions of the export's JSON (no network client): ``pull``, agreement, curation, status,
effort and the precision sample all read tasks through them, so "which annotation counts" is
decided here once: completed (not cancelled) annotations, earliest first, by creation time then id.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldloop.errors import SettingError
from goldloop.files import jsonl
from goldloop.formats.labelstudio.studio_error import StudioError

Task = dict[str, Any]
Annotation = dict[str, Any]
_NEVER = datetime.min.replace(tzinfo=UTC)
# The model versions of goldloop's predictions on a task: the review prediction
# (``goldloop.studio.review.review_tag``) and the curation one (``goldloop.studio.curation``).
REVIEW_PREFIX = "review:"
CURATE_PREFIX = "curate:"


def is_label_studio_export(data: Any) -> bool:
    """Whether JSON ``data`` is a Label Studio export: a list of tasks with ``data`` and
    ``annotations`` (judged by its first item)."""
    first = data[0] if isinstance(data, list) and data else None
    return (
        isinstance(first, dict) and isinstance(first.get("data"), dict) and "annotations" in first
    )


def read_export(path: Path) -> list[Task] | None:
    """The tasks when ``path`` is a Label Studio JSON export, else None (read it as gold)."""
    try:
        data = jsonl.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None  # read_gold reports what is wrong with the file
    return data if is_label_studio_export(data) else None


def annotations_in_order(task: Task) -> list[Annotation]:
    """All of ``task``'s annotations, earliest first (creation time, then id)."""
    return sorted(
        task.get("annotations") or [], key=lambda a: (a.get("created_at") or "", a.get("id", 0))
    )


def completed_annotations(task: Task) -> list[Annotation]:
    """``task``'s completed annotations (skipped/cancelled ones left out), earliest first."""
    return [a for a in annotations_in_order(task) if not a.get("was_cancelled")]


def cancelled_annotations(task: Task) -> list[Annotation]:
    """``task``'s skipped or cancelled annotations, earliest first."""
    return [a for a in annotations_in_order(task) if a.get("was_cancelled")]


def annotator_of(annotation: Annotation) -> str:
    """Who made ``annotation``: the email when the export carries users, else ``user:<id>``."""
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        return str(who.get("email") or who.get("id"))
    return f"user:{who}"


def doc_id_of(task: Task) -> str:
    """The task's ``doc_id`` (``task:<id>`` for a task pushed without one)."""
    return str((task.get("data") or {}).get("doc_id") or f"task:{task['id']}")


def text_of(task: Task) -> str:
    return str((task.get("data") or {}).get("text", ""))


def latest_prediction(task: Task, prefix: str) -> dict[str, Any] | None:
    """The latest prediction whose ``model_version`` starts with ``prefix``."""
    return _latest(_predictions(task, prefix))


def review_seen(task: Task, annotation: Annotation) -> dict[str, Any] | None:
    """The review prediction ``annotation`` was made over: the one Label Studio names as its
    parent, else the latest created before it (None when the task had none yet).

    A review prediction added later (a second push, with B) was never shown to the annotator:
    judged against it, B's extra regions would count as rejected.
    """
    reviews = _predictions(task, REVIEW_PREFIX)
    parent = annotation.get("parent_prediction")
    for review in reviews:
        if parent is not None and review.get("id") == parent:
            return review
    made = _created(annotation)
    return _latest([p for p in reviews if made is None or (_created(p) or _NEVER) <= made])


def utc_time(value: object) -> datetime | None:
    """A timestamp of Label Studio's (a datetime from the SDK, an ISO string from an export) in
    UTC; None when missing or unreadable. Compared as times: the export drops ".000000"."""
    if isinstance(value, str) and value:
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _created(item: dict[str, Any]) -> datetime | None:
    return utc_time(item.get("created_at"))


def _predictions(task: Task, prefix: str) -> list[dict[str, Any]]:
    return [
        p for p in task.get("predictions") or []
        if isinstance(p, dict) and str(p.get("model_version", "")).startswith(prefix)
    ]  # fmt: skip


def _latest(predictions: list[dict[str, Any]]) -> dict[str, Any] | None:
    return max(predictions, key=lambda p: (_created(p) or _NEVER, p.get("id", 0)), default=None)


def two_annotators(task: Task, where: str) -> tuple[Annotation, Annotation] | None:
    """The first two completed annotations of a double task, by two different people.

    None when fewer than two are complete. One person with two completed annotations on the task
    is refused: agreement and curation need two people (``where`` names the project).
    """
    completed = completed_annotations(task)
    seen: dict[str, int] = {}
    for annotation in completed:
        person = annotator_of(annotation)
        if person in seen:
            raise SameAnnotatorError(
                f"Label Studio project {where!r}: task {task['id']} ({doc_id_of(task)}) holds two "
                f"annotations by {person} (ids {seen[person]} and {annotation.get('id')}); "
                "a double task needs two people: delete one"
            )
        seen[person] = annotation.get("id", 0)
    if len(completed) < 2:
        return None
    return completed[0], completed[1]


def by_doc_id(tasks: Sequence[Task]) -> dict[str, Task]:
    """Tasks by ``doc_id`` (the first task wins when a project holds a doc_id twice)."""
    out: dict[str, Task] = {}
    for task in sorted(tasks, key=lambda t: int(t["id"])):
        out.setdefault(doc_id_of(task), task)
    return out


class SameAnnotatorError(StudioError):
    """One person annotated a double task twice."""


ROLES = ("primary", "double", "curate", "blind")
"""The projects of a campaign ``NAME``: ``NAME``, ``NAME-double``, ``NAME-curate`` and
``NAME-blind``."""
DOUBLE_SUFFIX = "-double"
CURATE_SUFFIX = "-curate"
BLIND_SUFFIX = "-blind"
BLIND_ROLE = "blind"


def double_name(name: str) -> str:
    """The project that asks for two annotations per task (documents of role ``double``)."""
    return f"{name}{DOUBLE_SUFFIX}"


def curate_name(name: str) -> str:
    """The project where a curator resolves the double tasks whose two annotations disagree."""
    return f"{name}{CURATE_SUFFIX}"


def blind_name(name: str) -> str:
    """The project of the blind documents without candidates (each is also in ``name`` with
    them, for another person)."""
    return f"{name}{BLIND_SUFFIX}"


def campaign_titles(name: str) -> dict[str, str]:
    """The titles of a campaign's projects by role (:data:`ROLES`)."""
    return {
        "primary": name,
        "double": double_name(name),
        "curate": curate_name(name),
        "blind": blind_name(name),
    }


@dataclass(frozen=True)
class BlindPair:
    """A blind document's two annotations: with candidates (``NAME``) and without
    (``NAME-blind``), each with its task."""

    pre_task: Task
    pre: Annotation
    blind_task: Task
    blind: Annotation


def blind_pair(pre_task: Task | None, blind_task: Task | None) -> BlindPair | None:
    """The first completed annotation of each of a blind document's tasks, when two different
    people made them (None otherwise: one person's two conditions are not a comparison of
    conditions, and one annotation is no pair)."""
    if pre_task is None or blind_task is None:
        return None
    pre, blind = completed_annotations(pre_task), completed_annotations(blind_task)
    if not pre or not blind or annotator_of(pre[0]) == annotator_of(blind[0]):
        return None
    return BlindPair(pre_task, pre[0], blind_task, blind[0])


PUSHED_ROLES = ("primary", "double")
"""The projects ``push`` creates: a campaign exists when either does (``--roles double`` makes
only ``NAME-double``)."""


def check_campaign(name: str, found: Collection[str], where: str = "") -> None:
    """Refuse a campaign none of whose pushed projects (titles in ``found``) exists."""
    titles = campaign_titles(name)
    if not any(titles[role] in found for role in PUSHED_ROLES):
        raise StudioError(
            f"{where}no Label Studio project titled {name!r} or {double_name(name)!r}"
        )


# Label Studio 1.23 refuses a project title outside this range (PROJECT_TITLE_MIN/MAX_LEN).
TITLE_LENGTHS = (3, 50)


def check_campaign_name(name: str) -> None:
    """Refuse (``setting`` ``project``) a campaign name any of whose titles Label Studio would
    refuse, before a command creates the first of its projects."""
    low, high = TITLE_LENGTHS
    for title in campaign_titles(name).values():
        if not low <= len(title) <= high:
            longest = high - max(len(DOUBLE_SUFFIX), len(CURATE_SUFFIX))
            raise SettingError(
                "project",
                f"{name!r} ({len(name)} characters) gives the project title {title!r} "
                f"({len(title)}); Label Studio takes {low} to {high} characters, so a campaign "
                f"name has {low} to {longest}",
            )


@dataclass
class Campaign:
    """The exported tasks of a campaign's projects, by project role (absent projects: no tasks)."""

    name: str
    titles: dict[str, str] = field(default_factory=dict)
    tasks: dict[str, list[Task]] = field(default_factory=dict)

    def of(self, role: str) -> list[Task]:
        return self.tasks.get(role, [])
