"""Push is idempotent on doc_id: after a server crash mid-push, a re-run loses and doubles nothing;
a re-run gives the tasks of an existing project the predictions they lack (instructions and the
Data Manager tab: test_project.py)."""

from __future__ import annotations

import uuid

import pytest

from goldloop.formats.gold import Document
from goldloop.kb import KB
from goldloop.studio.connection import StudioUnreachable
from goldloop.studio.project import find_project
from goldloop.studio.push import Candidates, push
from goldloop.studio.review import review_tag
from tests.studio.conftest import doc_ids_in, loop_copies
from tests.studio.loop_data import DOCS, TAG_A, write_inputs


def test_crash_mid_push_then_rerun(label_studio, tmp_path) -> None:
    kb, a, documents, name = loop_copies(tmp_path, "crash", 5 * len(DOCS))
    batches = []

    def crash_after_first_batch(n: int) -> None:
        batches.append(n)
        if len(batches) == 1:
            label_studio.crash()

    with pytest.raises(StudioUnreachable, match="cannot reach Label Studio"):
        push(label_studio.studio, documents, name, kb, a=a, batch_size=10,
             progress=crash_after_first_batch)  # fmt: skip
    label_studio.restart()
    first = doc_ids_in(label_studio, name)
    assert sum(first.values()) == 10 and max(first.values()) == 1
    report = push(label_studio.studio, documents, name, kb, a=a, batch_size=10)
    assert (report.projects[0].created, report.projects[0].already_present) == (30, 10)
    after = doc_ids_in(label_studio, name)
    assert sorted(after) == sorted(d.doc_id for d in documents) and max(after.values()) == 1


def test_later_push_with_candidates_adds_predictions_to_earlier_tasks(
    kb: KB, label_studio, tmp_path
) -> None:
    _, gold_a, gold_b = write_inputs(tmp_path)
    documents = [Document(**{**d, "role": "primary"}) for d in DOCS]
    name = f"late-{uuid.uuid4().hex[:6]}"
    studio = label_studio.studio
    first = push(studio, documents, name, kb)
    assert first.projects[0].created == len(DOCS) and first.projects[0].model_version is None
    a, b = Candidates.from_gold(gold_a, kb), Candidates.from_gold(gold_b, kb)
    second = push(studio, documents, name, kb, a=a, b=b)
    assert second.projects[0].created == 0
    assert second.projects[0].predictions_added_to_existing == 3 * len(DOCS)
    project = find_project(studio, name)
    assert project is not None and project.model_version == review_tag(TAG_A, b.tag)
    third = push(studio, documents, name, kb, a=a, b=b)
    assert third.projects[0].predictions_added_to_existing == 0
