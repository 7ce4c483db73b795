"""The one project layer against the real Label Studio: a project's instructions and its first
Data Manager tab, given once and kept as people edit them; an import whose server dies mid-request
is completed exactly once."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.studio import project as projects
from goldloop.studio.connection import Studio, StudioUnreachable
from goldloop.studio.label_config import render_instructions, render_label_config
from goldloop.studio.push import TASKS_VIEW, build_tasks, push
from tests.studio.conftest import doc_ids_in, loop_copies
from tests.studio.loop_data import DOCS


def test_push_gives_a_project_instructions_and_a_tab_once_and_keeps_edits(
    kb: KB, label_studio
) -> None:
    studio = label_studio.studio
    name = f"setup-{uuid.uuid4().hex[:6]}"
    # A project made before push set instructions: none, and no Data Manager tab.
    made = studio.sdk.projects.create(title=name, label_config=render_label_config(kb))
    documents = [Document(**{**d, "role": "primary"}) for d in DOCS]
    push(studio, documents[:4], name, kb)
    project = studio.sdk.projects.get(id=made.id)
    assert (project.expert_instruction, project.show_instruction) == (render_instructions(), True)
    (tab,) = studio.sdk.views.list(project=made.id)
    assert tab.data["title"] == TASKS_VIEW
    assert tab.data["columnsDisplayType"] == {"tasks:data.p_incl": "Number"}
    # Label Studio's own default: columns such as the inner id stay hidden.
    assert "tasks:inner_id" in tab.data["hiddenColumns"]["explore"]
    # Edited in Label Studio, instructions and tabs stay as people left them.
    studio.sdk.projects.update(id=made.id, expert_instruction="<p>Our lab's rules</p>")
    studio.sdk.views.update(id=tab.id, data={**tab.data, "title": "Mine"})
    push(studio, documents, name, kb)
    assert studio.sdk.projects.get(id=made.id).expert_instruction == "<p>Our lab's rules</p>"
    assert [v.data["title"] for v in studio.sdk.views.list(project=made.id)] == ["Mine"]


def test_crash_during_an_import_request(label_studio, tmp_path) -> None:
    """The server dies while a 300-task import is in flight: the re-run completes it exactly once."""
    kb, a, documents, name = loop_copies(tmp_path, "midcrash", 300)
    push(label_studio.studio, documents[:1], name, kb, a=a)
    killer = threading.Timer(1.0, label_studio.crash)
    killer.start()
    try:
        push(label_studio.studio, documents, name, kb, a=a, batch_size=300)
    except StudioUnreachable:
        pass  # the usual outcome; a server that finished first leaves nothing to resume
    finally:
        killer.join()
    label_studio.restart()
    push(label_studio.studio, documents, name, kb, a=a, batch_size=300)
    after = doc_ids_in(label_studio, name)
    assert sorted(after) == sorted(d.doc_id for d in documents) and max(after.values()) == 1


def test_predictions_an_import_dropped_are_added_again(label_studio, tmp_path) -> None:
    """Label Studio 1.23 sometimes stores imported tasks without their predictions (under load,
    answering 201): the import lists its tasks again and gives each the predictions it lacks. The
    drop is made here by deleting two tasks' predictions through the API."""
    studio = label_studio.studio
    kb, a, documents, name = loop_copies(tmp_path, "dropped", 4)
    push(studio, documents, name, kb, a=a)
    project = projects.find_project(studio, name)
    assert project is not None
    tasks = build_tasks(documents, kb, project.label_config, a, None)
    stored = projects.existing_tasks(studio, project)
    for doc in documents[:2]:
        for prediction in studio.sdk.predictions.list(task=stored[doc.doc_id].id):
            studio.sdk.predictions.delete(id=prediction.id)
    assert not projects.existing_tasks(studio, project)[documents[0].doc_id].model_versions
    projects._restore_dropped_predictions(studio, project, tasks, "doc_id")
    after = projects.existing_tasks(studio, project)
    for doc, task in zip(documents, tasks, strict=True):
        listed = studio.sdk.predictions.list(task=after[doc.doc_id].id)
        (sent,) = task["predictions"]
        assert [p.model_version for p in listed] == [sent["model_version"]], doc.doc_id  # no twin
        assert [p.result for p in listed] == [sent["result"]]
    projects.set_model_version(studio, project, sent["model_version"])  # accepted again


def test_an_import_the_server_confirms_is_not_listed_again(
    label_studio, tmp_path, monkeypatch
) -> None:
    """An import's answer counts the tasks and predictions the server stored. When they are all
    there the project is not listed again; when it counts fewer predictions than were sent, the
    tasks are listed and given what they lack. Label Studio drops them only under load, so the
    drop is made here: the first imported task's predictions deleted through the API and the
    answer's count lowered to match, as the server's own answer would be."""
    studio = label_studio.studio
    kb, a, documents, name = loop_copies(tmp_path, "confirmed", 6)
    listings: list[str] = []
    real_listing = projects.existing_tasks

    def listing(*args: Any, **kwargs: Any) -> Any:
        listings.append(name)
        return real_listing(*args, **kwargs)

    monkeypatch.setattr(projects, "existing_tasks", listing)
    push(studio, documents[:3], name, kb, a=a)
    assert listings == [name]  # push's own look at what the project already has; no other

    real_post = Studio.post_json

    def dropping(self: Studio, path: str, body: bytes, **kwargs: Any) -> Any:
        answer = real_post(self, path, body, **kwargs)
        first = answer["task_ids"][0]
        dropped = list(self.sdk.predictions.list(task=first))
        for prediction in dropped:
            self.sdk.predictions.delete(id=prediction.id)
        return {**answer, "prediction_count": answer["prediction_count"] - len(dropped)}

    monkeypatch.setattr(Studio, "post_json", dropping)
    push(studio, documents, name, kb, a=a)
    assert listings == [name] * 3  # push's look, then the tasks listed again to restore
    project = projects.find_project(studio, name)
    assert project is not None
    stored = real_listing(studio, project)
    tasks = build_tasks(documents, kb, project.label_config, a, None)
    for doc, task in zip(documents, tasks, strict=True):
        listed = studio.sdk.predictions.list(task=stored[doc.doc_id].id)
        (sent,) = task["predictions"]
        assert [(p.model_version, p.result) for p in listed] == [
            (sent["model_version"], sent["result"])
        ], doc.doc_id
