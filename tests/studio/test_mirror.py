"""The task mirror beside a gold file: read back as written, as an export of the campaign."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pytest

from goldloop.files.beside import verification_path
from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.studio.mirror import (
    COUNTERS,
    Mirror,
    ProjectTasks,
    _by_id,
    _ids,
    _iso,
    _stamp,
    mirror_path,
    mirror_text,
    read_mirror,
)
from goldloop.studio.project import find_project, model_versions
from goldloop.studio.pull import pull
from goldloop.studio.push import Candidates, push
from tests.studio.loop_data import DOCS, write_inputs


def task(task_id: int, *annotations: int) -> dict:
    return {"id": task_id, "updated_at": "2026-11-30T12:28:43.802259Z",
            "annotations": [{"id": a} for a in annotations],
            "predictions": [{"model_version": "A"}, {"model_version": "A+B"}]}  # fmt: skip


def test_a_mirror_reads_back_as_written_and_as_the_campaigns_export(tmp_path: Path) -> None:
    mirror = Mirror("camp", {
        "camp-double": ProjectTasks(2, {9: task(9, 4, 5)}),
        "camp": ProjectTasks(1, {3: task(3, 1), 1: task(1)}),
    })  # fmt: skip
    path = mirror_path(tmp_path / "gold.json")
    assert path.name == "gold.json.tasks.json"
    path.write_text(mirror_text(mirror))
    again = read_mirror(path, "camp")
    assert again == Mirror("camp", {
        "camp-double": ProjectTasks(2, {9: task(9, 4, 5)}),
        "camp": ProjectTasks(1, {1: task(1), 3: task(3, 1)}),
    })  # fmt: skip
    campaign = again.campaign()
    assert campaign.titles == {"primary": "camp", "double": "camp-double"}
    assert [t["id"] for t in campaign.of("primary")] == [1, 3] and campaign.of("curate") == []
    assert again.task_of_annotation(5) == ("camp-double", 9)
    assert again.task_of_annotation(1) == ("camp", 3) and again.task_of_annotation(77) is None
    assert again.title_of(2) == "camp-double" and again.title_of(5) is None
    assert read_mirror(path, "another-campaign") is None


@pytest.mark.parametrize(
    "content", ["", "not json", "[]", '{"format": 2, "campaign": "camp", "projects": [{"id": 1}]}',
                '{"format": 99, "campaign": "camp", "projects": []}',
                *(f'{{"format": 2, "campaign": "camp", "projects": [{{"title": "camp", "id": 1, '
                  f'"tasks": [{task}]}}]}}' for task in (
                      '{"id": "x"}', '{"id": 1.5}', '{"id": true}', '{"id": 1e400}',
                      '{"id": 1, "annotations": [{"id": "abc"}]}', '{"id": 1, "annotations": 7}',
                      '[' * 5000 + ']' * 5000)),
                '{"format": 2, "campaign": "camp", "projects": [{"title": "camp", "id": NaN}]}'],
)  # fmt: skip
def test_anything_else_is_no_mirror_and_everything_is_read_again(
    tmp_path: Path, content: str
) -> None:
    path = tmp_path / "gold.json.tasks.json"
    path.write_text(content)
    assert read_mirror(path, "camp") is None
    assert read_mirror(tmp_path / "missing.json", "camp") is None


def test_the_listing_and_the_export_stamp_a_task_alike() -> None:
    # the task listing gives a datetime and "1,2"; the export a string and annotation objects
    listed = datetime(2026, 11, 30, 12, 28, 43, 802259, tzinfo=UTC)
    assert _stamp(task(3, 1, 2)) == (_iso(listed), _ids("1,2"), model_versions("A,A+B"))
    assert _ids("") == frozenset() and _ids([3, 4]) == frozenset({3, 4})
    assert _iso(None) == ""


def test_the_mirror_keeps_a_task_without_its_counters_and_relative_clock() -> None:
    # A read between a deletion and Label Studio's counter update must leave no trace.
    exported = {**task(3, 1), **dict.fromkeys(COUNTERS, 1), "data": {"text": "x"},
                "predictions": [{"id": 8, "created_ago": "3 minutes"}]}  # fmt: skip
    kept = _by_id([exported])[3]
    assert kept == {**task(3, 1), "data": {"text": "x"}, "predictions": [{"id": 8}]}


@pytest.mark.studio
def test_predictions_added_to_mirrored_tasks_are_read_again(
    kb: KB, label_studio, tmp_path: Path
) -> None:
    # Label Studio imports predictions without touching the task's updated_at: a later push that
    # adds B's review prediction to annotated tasks must still reach `pull --since`.
    _, gold_a, gold_b = write_inputs(tmp_path)
    documents = [Document(**{**d, "role": "primary"}) for d in DOCS]
    name = f"mirror-{uuid.uuid4().hex[:6]}"
    studio = label_studio.studio
    a, b = Candidates.from_gold(gold_a, kb), Candidates.from_gold(gold_b, kb)
    push(studio, documents, name, kb, a=a)
    project = find_project(studio, name)
    assert project is not None
    for listed in studio.sdk.tasks.list(project=project.id, fields="all"):
        studio.sdk.annotations.create(id=listed.id, result=listed.predictions[0].result)
    since, full = tmp_path / "since.json", tmp_path / "full.json"
    pull(studio, name, kb, since)
    before = {t.id: t.updated_at for t in studio.sdk.tasks.list(project=project.id)}
    push(studio, documents, name, kb, a=a, b=b)
    after = {t.id: t.updated_at for t in studio.sdk.tasks.list(project=project.id)}
    assert after == before  # what makes the stamp need the predictions' model versions
    pull(studio, name, kb, since, since=True)
    pull(studio, name, kb, full)
    for path in (since, verification_path(since), mirror_path(since)):
        twin = full.with_name(path.name.replace("since", "full"))
        assert json.loads(path.read_text()) == json.loads(twin.read_text()), path.name
