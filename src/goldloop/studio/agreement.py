"""Agreement from the ``<NAME>-double`` project's export: the first two annotators per task.

Each annotation is turned into hits by pull's own reading (``goldloop.studio.verify.verify``), so
the two annotators' documents are exactly what pull would make of each; then
``goldloop.scoring.agreement`` compares them. Tasks with fewer than two completed annotations are not
compared and are counted, as are annotations beyond the second; a task one person annotated twice
is refused (``goldloop.studio.tasks.two_annotators``). Pure: the door exports the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from goldloop.errors import SettingError
from goldloop.formats.gold import Document
from goldloop.formats.labelstudio.tasks import Task, completed_annotations, two_annotators
from goldloop.formats.labelstudio.verify import verify
from goldloop.kb import KB
from goldloop.scoring.completeness import Completeness, estimate_completeness
from goldloop.scoring.design import Design, read_design


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


def double_versions(
    tasks: Sequence[Task], kb: KB, where: str
) -> tuple[list[Document], list[Document], DoubleTasks]:
    """The first and the second annotator's documents over exported double tasks, as pull reads
    each annotation (``where`` names the project in errors)."""
    first, second, fewer, extra = split_annotations(tasks, where)
    return (
        verify(first, kb).documents,
        verify(second, kb).documents,
        DoubleTasks(where, len(tasks), len(first), fewer, extra),
    )


def shared_design(
    first: Sequence[Document], second: Sequence[Document]
) -> tuple[list[Document], Design | None]:
    """The documents both annotated (in ``first``'s order) and their design: none without
    ``p_incl``, nor when only some tasks carry it (the sidecar has no option to ignore it)."""
    ids = {d.doc_id for d in second}
    shared = [d for d in first if d.doc_id in ids]
    try:
        return shared, read_design(shared)
    except SettingError:
        return shared, None


def double_completeness(first: Sequence[Document], second: Sequence[Document]) -> Completeness:
    """Capture–recapture over the documents both annotated (each one's spans), with corpus
    figures when their tasks carry the design."""
    spans = {d.doc_id: {(h.a, h.b) for h in d.ground_truth} for d in second}
    shared, design = shared_design(first, second)
    return estimate_completeness(
        [({(h.a, h.b) for h in d.ground_truth}, spans[d.doc_id]) for d in shared],
        design=design,
    )
