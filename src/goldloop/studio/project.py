"""Label Studio projects by name: find or create one with goldloop's config, list its tasks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from goldloop.studio.connection import Connection, StudioError, call
from goldloop.studio.label_config import check_label_config

DOUBLE_SUFFIX = "-double"
PAGE_SIZE = 1000


@dataclass(frozen=True)
class Project:
    id: int
    title: str
    label_config: str
    model_version: str | None


@dataclass(frozen=True)
class ExistingTask:
    id: int
    doc_id: str
    model_versions: frozenset[str]


def double_name(name: str) -> str:
    """The project that asks for two annotations per task (documents of role ``double``)."""
    return f"{name}{DOUBLE_SUFFIX}"


ConfigCheck = Callable[[str, str], None]
"""Raises when a project's labeling config (first argument, described by the second) won't do."""


def find_project(
    connection: Connection, client: Any, title: str, check: ConfigCheck = check_label_config
) -> Project | None:
    """The project titled exactly ``title``; ``check`` vets its config (default: goldloop's controls)."""
    return find_projects(connection, client, [title], check).get(title)


def find_projects(
    connection: Connection,
    client: Any,
    titles: Sequence[str],
    check: ConfigCheck = check_label_config,
) -> dict[str, Project]:
    """The projects titled exactly as one of ``titles`` (one listing, then one read per match)."""
    pages = call(connection, client.projects.list, include="id,title", page_size=PAGE_SIZE)
    listed: list[Any] = call(connection, list, pages)
    found: dict[str, Project] = {}
    for title in titles:
        matches = [p for p in listed if p.title == title]
        if len(matches) > 1:
            raise StudioError(
                f"{connection.url}: {len(matches)} projects are titled {title!r}; rename all but one"
            )
        if matches:
            full = call(connection, client.projects.get, id=matches[0].id)
            where = f"Label Studio project {title!r} (id {full.id})"
            check(full.label_config or "", where)
            found[title] = Project(full.id, title, full.label_config, full.model_version or None)
    return found


def ensure_project(
    connection: Connection,
    client: Any,
    title: str,
    label_config: str,
    *,
    annotations: int = 1,
    check: ConfigCheck = check_label_config,
) -> Project:
    """Find the project titled ``title`` (its config vetted by ``check``) or create it."""
    found = find_project(connection, client, title, check)
    if found is not None:
        return found
    extra: dict[str, Any] = {}
    if annotations > 1:
        # Overlap is per project: every task of this project asks for ``annotations`` people.
        extra = {"maximum_annotations": annotations, "overlap_cohort_percentage": 100}
    created = call(
        connection, client.projects.create, title=title, label_config=label_config, **extra
    )
    return Project(created.id, title, label_config, None)


def existing_tasks(
    connection: Connection, client: Any, project: Project
) -> dict[str, ExistingTask]:
    """The project's tasks by ``doc_id``, with the model versions of their predictions."""
    pages = call(
        connection, client.tasks.list, project=project.id, page_size=PAGE_SIZE,
        include="id,data,predictions_model_versions",
    )  # fmt: skip
    tasks: dict[str, ExistingTask] = {}
    listed: list[Any] = call(connection, list, pages)
    for task in listed:
        doc_id = str((task.data or {}).get("doc_id", ""))
        if not doc_id:
            continue
        if doc_id in tasks:
            raise StudioError(
                f"Label Studio project {project.title!r}: tasks {tasks[doc_id].id} and {task.id} both hold "
                f"doc_id {doc_id!r}; delete one"
            )
        tasks[doc_id] = ExistingTask(
            task.id, doc_id, _model_versions(task.predictions_model_versions)
        )
    return tasks


def set_model_version(connection: Connection, client: Any, project: Project, version: str) -> None:
    """Pre-fill annotations from ``version``'s predictions (they must be imported first)."""
    if project.model_version != version:
        call(connection, client.projects.update, id=project.id, model_version=version)


def _model_versions(value: object) -> frozenset[str]:
    """The data manager joins a task's prediction model versions with commas."""
    if isinstance(value, str):
        return frozenset(v.strip() for v in value.split(",") if v.strip())
    return frozenset(str(v) for v in value or () if v)  # type: ignore[attr-defined]
