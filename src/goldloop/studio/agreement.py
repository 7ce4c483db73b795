"""Agreement from the ``<NAME>-double`` project: the first two completed annotations per task.

Each annotation is turned into hits by pull's own reading (``goldloop.studio.pull.verify``), so
the two annotators' documents are exactly what pull would make of each; then
``goldloop.agreement`` compares them. Tasks with fewer than two completed annotations are not
compared and are counted, as are annotations beyond the second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goldloop.agreement import AgreementReport, agreement
from goldloop.kb import KB
from goldloop.studio.connection import Connection
from goldloop.studio.project import double_name
from goldloop.studio.pull import export_tasks, verify


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


def split_annotations(
    tasks: list[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int, int]:
    """Task copies holding only the first / only the second completed annotation."""
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []
    fewer = extra = 0
    for task in tasks:
        completed = sorted(
            (a for a in task.get("annotations") or [] if not a.get("was_cancelled")),
            key=lambda a: (a.get("created_at") or "", a.get("id", 0)),
        )
        if len(completed) < 2:
            fewer += 1
            continue
        extra += len(completed) - 2
        first.append({**task, "annotations": [completed[0]]})
        second.append({**task, "annotations": [completed[1]]})
    return first, second, fewer, extra


def studio_agreement(
    connection: Connection, client: Any, name: str, kb: KB
) -> tuple[AgreementReport, DoubleTasks]:
    """κ between the first and second annotation of every task of ``<name>-double``."""
    title = double_name(name)
    _, tasks = export_tasks(connection, client, title)
    first, second, fewer, extra = split_annotations(tasks)
    report = agreement(verify(first, kb).documents, verify(second, kb).documents, kb)
    return report, DoubleTasks(title, len(tasks), len(first), fewer, extra)
