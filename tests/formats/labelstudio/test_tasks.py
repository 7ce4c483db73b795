"""Which review prediction an annotation is judged against; a blind document's pair and how pull
settles it (no Label Studio needed)."""

from __future__ import annotations

import pytest

from goldloop.formats.labelstudio.tasks import (
    SameAnnotatorError,
    blind_pair,
    completed_annotations,
    latest_prediction,
    review_seen,
    two_annotators,
)
from goldloop.kb import KB
from tests.formats.labelstudio.conftest import TEXT, annotation_by, blind_doc


def prediction(pid: int, version: str, created: str) -> dict:
    return {"id": pid, "model_version": version, "created_at": created, "result": []}


A = prediction(1, "review:a", "2026-11-30T10:00:00.5Z")
AB = prediction(2, "review:a+b", "2026-11-30T12:00:00Z")
OTHER = prediction(3, "a", "2026-11-30T09:00:00Z")
TASK = {"id": 7, "data": {"text": TEXT}, "predictions": [AB, OTHER, A]}


def test_an_annotation_is_judged_against_the_review_it_was_made_over() -> None:
    assert latest_prediction(TASK, "review:") is AB
    # made between the two: the annotator saw A's review, not A+B's added later
    assert review_seen(TASK, {"created_at": "2026-11-30T11:00:00.000001Z"}) is A
    assert review_seen(TASK, {"created_at": "2026-11-30T12:00:00Z"}) is AB
    # before any review: none was shown
    assert review_seen(TASK, {"created_at": "2026-11-30T09:30:00Z"}) is None
    # Label Studio's parent prediction wins; no or an unreadable time: the latest
    assert review_seen(TASK, {"created_at": "2026-11-30T13:00:00Z", "parent_prediction": 1}) is A
    assert review_seen(TASK, {}) is AB
    assert review_seen(TASK, {"created_at": "yesterday"}) is AB
    # the whole second does not sort after its fractions (the export drops ".000000")
    seconds = {"id": 8, "predictions": [prediction(1, "review:a", "2026-11-30T10:00:00Z"),
                                        prediction(2, "review:a+b", "2026-11-30T10:00:00.5Z")]}  # fmt: skip
    assert review_seen(seconds, {"created_at": "2026-11-30T10:00:00.2Z"})["id"] == 1


def _annotation(id_: int, who: int, created: str, cancelled: bool = False) -> dict:
    return {"id": id_, "completed_by": {"id": who, "email": f"u{who}@x"}, "created_at": created,
            "was_cancelled": cancelled, "result": []}  # fmt: skip


def test_completed_annotations_earliest_first_and_one_person_twice_refused() -> None:
    task = {"id": 7, "data": {"doc_id": "pmid:7"}, "annotations": [
        _annotation(3, 2, "2026-01-02"), _annotation(1, 1, "2026-01-01", cancelled=True),
        _annotation(2, 1, "2026-01-02"), _annotation(4, 3, "2026-01-01"),
    ]}  # fmt: skip
    assert [a["id"] for a in completed_annotations(task)] == [4, 2, 3]
    pair = two_annotators(task, "p-double")
    assert pair is not None and [a["id"] for a in pair] == [4, 2]
    task["annotations"].append(_annotation(5, 2, "2026-01-03"))
    with pytest.raises(
        SameAnnotatorError, match=r"task 7 \(pmid:7\) holds two annotations by u2@x \(ids 3 and 5\)"
    ):
        two_annotators(task, "p-double")


def test_a_blind_document_pairs_its_two_tasks_by_two_people(kb: KB) -> None:
    pre, blind, one, two = blind_doc(kb)
    assert blind_pair(pre, blind) is None  # nothing annotated yet
    pre["annotations"] = [annotation_by(1, "a@x", one)]
    assert blind_pair(pre, blind) is None and blind_pair(pre, None) is None
    blind["annotations"] = [annotation_by(2, "a@x", two)]
    assert blind_pair(pre, blind) is None  # one person in both conditions: no comparison
    blind["annotations"] = [annotation_by(3, "b@x", two)]
    pair = blind_pair(pre, blind)
    assert pair is not None and (pair.pre["id"], pair.blind["id"]) == (1, 3)
