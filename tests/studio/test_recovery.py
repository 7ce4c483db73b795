"""Push is idempotent on doc_id: after a server crash mid-push, a re-run loses and doubles nothing;
a re-run gives an existing project what it lacks (predictions, instructions, a Data Manager tab)
and keeps what people changed there."""

from __future__ import annotations

import threading
import uuid
from collections import Counter

import pytest

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.studio.connection import StudioUnreachable
from goldloop.studio.label_config import render_instructions, render_label_config
from goldloop.studio.project import find_project
from goldloop.studio.push import TASKS_VIEW, Candidates, push
from goldloop.studio.review import review_tag
from tests.conftest import shared_kb
from tests.studio.loop_data import DOCS, TAG_A, write_inputs


def _doc_ids(label_studio, title: str) -> Counter[str]:
    project = find_project(label_studio.connection, label_studio.client, title)
    assert project is not None
    return Counter(
        t.data["doc_id"] for t in label_studio.client.tasks.list(project=project.id, page_size=1000)
    )


def _copies(tmp_path, prefix: str, n: int) -> tuple[KB, Candidates, list[Document], str]:
    """KB, A's candidates, ``n`` documents (copies of the loop corpus) and a fresh project name."""
    kb = shared_kb()
    _, gold_a, _ = write_inputs(tmp_path)
    copies = [
        Document(**{**d, "doc_id": f"{prefix}{i}:{d['doc_id']}", "role": "primary"})
        for i in range(n // len(DOCS) + 1)
        for d in DOCS
    ]
    return kb, Candidates.from_gold(gold_a, kb), copies[:n], f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_crash_mid_push_then_rerun(label_studio, tmp_path) -> None:
    kb, a, documents, name = _copies(tmp_path, "crash", 5 * len(DOCS))
    batches = []

    def crash_after_first_batch(n: int) -> None:
        batches.append(n)
        if len(batches) == 1:
            label_studio.crash()

    with pytest.raises(StudioUnreachable, match="cannot reach Label Studio"):
        push(label_studio.connection, label_studio.client, documents, name, kb, a=a, batch_size=10,
             progress=crash_after_first_batch)  # fmt: skip
    label_studio.restart()
    first = _doc_ids(label_studio, name)
    assert sum(first.values()) == 10 and max(first.values()) == 1
    report = push(
        label_studio.connection, label_studio.client, documents, name, kb, a=a, batch_size=10
    )
    assert (report.projects[0].created, report.projects[0].already_present) == (30, 10)
    after = _doc_ids(label_studio, name)
    assert sorted(after) == sorted(d.doc_id for d in documents) and max(after.values()) == 1


def test_later_push_with_candidates_adds_predictions_to_earlier_tasks(
    kb: KB, label_studio, tmp_path
) -> None:
    _, gold_a, gold_b = write_inputs(tmp_path)
    documents = [Document(**{**d, "role": "primary"}) for d in DOCS]
    name = f"late-{uuid.uuid4().hex[:6]}"
    conn, client = label_studio.connection, label_studio.client
    first = push(conn, client, documents, name, kb)
    assert first.projects[0].created == len(DOCS) and first.projects[0].model_version is None
    a, b = Candidates.from_gold(gold_a, kb), Candidates.from_gold(gold_b, kb)
    second = push(conn, client, documents, name, kb, a=a, b=b)
    assert second.projects[0].created == 0
    assert second.projects[0].predictions_added_to_existing == 3 * len(DOCS)
    project = find_project(conn, client, name)
    assert project is not None and project.model_version == review_tag(TAG_A, b.tag)
    third = push(conn, client, documents, name, kb, a=a, b=b)
    assert third.projects[0].predictions_added_to_existing == 0


def test_push_gives_a_project_instructions_and_a_tab_once_and_keeps_edits(
    kb: KB, label_studio
) -> None:
    conn, client = label_studio.connection, label_studio.client
    name = f"setup-{uuid.uuid4().hex[:6]}"
    # A project made before push set instructions: none, and no Data Manager tab.
    made = client.projects.create(title=name, label_config=render_label_config(kb))
    documents = [Document(**{**d, "role": "primary"}) for d in DOCS]
    push(conn, client, documents[:4], name, kb)
    project = client.projects.get(id=made.id)
    assert (project.expert_instruction, project.show_instruction) == (render_instructions(), True)
    (tab,) = client.views.list(project=made.id)
    assert tab.data["title"] == TASKS_VIEW
    assert tab.data["columnsDisplayType"] == {"tasks:data.p_incl": "Number"}
    # Label Studio's own default: columns such as the inner id stay hidden.
    assert "tasks:inner_id" in tab.data["hiddenColumns"]["explore"]
    # Edited in Label Studio, instructions and tabs stay as people left them.
    client.projects.update(id=made.id, expert_instruction="<p>Our lab's rules</p>")
    client.views.update(id=tab.id, data={**tab.data, "title": "Mine"})
    push(conn, client, documents, name, kb)
    assert client.projects.get(id=made.id).expert_instruction == "<p>Our lab's rules</p>"
    assert [v.data["title"] for v in client.views.list(project=made.id)] == ["Mine"]


def test_crash_during_an_import_request(label_studio, tmp_path) -> None:
    """The server dies while a 300-task import is in flight: the re-run completes it exactly once."""
    kb, a, documents, name = _copies(tmp_path, "midcrash", 300)
    push(label_studio.connection, label_studio.client, documents[:1], name, kb, a=a)
    killer = threading.Timer(1.0, label_studio.crash)
    killer.start()
    try:
        push(label_studio.connection, label_studio.client, documents, name, kb, a=a, batch_size=300)
    except StudioUnreachable:
        pass  # the usual outcome; a server that finished first leaves nothing to resume
    finally:
        killer.join()
    label_studio.restart()
    push(label_studio.connection, label_studio.client, documents, name, kb, a=a, batch_size=300)
    after = _doc_ids(label_studio, name)
    assert sorted(after) == sorted(d.doc_id for d in documents) and max(after.values()) == 1
