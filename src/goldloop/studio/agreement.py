"""Agreement from the ``<NAME>-double`` project: the first two completed annotations per task.

Each annotation is turned into hits by pull's own reading (``goldloop.studio.verify.verify``), so
the two annotators' documents are exactly what pull would make of each; then
``goldloop.agreement`` compares them. Tasks with fewer than two completed annotations are not
compared and are counted, as are annotations beyond the second; a task one person annotated twice
is refused (``goldloop.studio.tasks.two_annotators``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from goldloop.agreement import AgreementReport, agreement
from goldloop.kb import KB
from goldloop.studio import project as projects
from goldloop.studio.connection import Connection, StudioError
from goldloop.studio.tasks import Task, completed_annotations, two_annotators
from goldloop.studio.verify import verify


@dataclass(frozen=True)
class DoubleTasks:
    project: str
    tasks: int
    compared: int
    fewer_than_two: int
    extra_annotations: int

    def to_json(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "tasks": self.tasks,
            "compared_tasks": self.compared,
            "tasks_with_fewer_than_two_annotations": self.fewer_than_two,
            "annotations_beyond_the_second": self.extra_annotations,
        }


def split_annotations(tasks: Sequence[Task], where: str) -> tuple[list[Task], list[Task], int, int]:
    """Task copies holding only the first / only the second annotator's completed annotation."""
    first: list[Task] = []
    second: list[Task] = []
    fewer = extra = 0
    for task in tasks:
        pair = two_annotators(task, where)
        if pair is None:
            fewer += 1
            continue
        extra += len(completed_annotations(task)) - 2
        first.append({**task, "annotations": [pair[0]]})
        second.append({**task, "annotations": [pair[1]]})
    return first, second, fewer, extra


def double_agreement(
    tasks: Sequence[Task], kb: KB, where: str
) -> tuple[AgreementReport, DoubleTasks]:
    """κ between the first and second annotator over exported double tasks (``where``: project)."""
    first, second, fewer, extra = split_annotations(tasks, where)
    report = agreement(verify(first, kb).documents, verify(second, kb).documents, kb)
    return report, DoubleTasks(where, len(tasks), len(first), fewer, extra)


def studio_agreement(
    connection: Connection, client: Any, name: str, kb: KB
) -> tuple[AgreementReport, DoubleTasks]:
    """κ between the first and second annotation of every task of ``<name>-double``."""
    title = projects.double_name(name)
    project = projects.find_project(connection, client, title)
    if project is None:
        raise StudioError(f"{connection.url}: no Label Studio project titled {title!r}")
    return double_agreement(projects.export_project(connection, client, project), kb, title)
