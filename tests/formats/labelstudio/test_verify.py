"""Verified gold from exported tasks: which review an annotation is judged against (no Label
Studio needed; the whole pull: tests/studio/test_loop.py)."""

from __future__ import annotations

import re

import pytest

from goldloop.formats.labelstudio.verify import read_annotation, verify
from goldloop.kb import KB
from goldloop.studio.review import build_review_prediction, region_id
from tests.formats.labelstudio.conftest import (
    INHIBITS,
    REGULATES,
    T1,
    T2,
    TEXT,
    annotation_by,
    blind_doc,
    hit,
)


def test_regions_added_after_the_annotation_are_not_counted_as_rejected(kb: KB) -> None:
    only_a = build_review_prediction(TEXT, [hit("inhibits", INHIBITS)], None, "a", None, kb)
    with_b = build_review_prediction(
        TEXT, [hit("inhibits", INHIBITS)], [hit("regulates", REGULATES)], "a", "b", kb
    )
    task = {"id": 7, "data": {"text": TEXT}, "predictions": [
        {**only_a, "id": 1, "created_at": "2026-11-30T10:00:00Z"},
        {**with_b, "id": 2, "created_at": "2026-11-30T12:00:00Z"},
    ]}  # fmt: skip
    accepted = {"id": 5, "created_at": "2026-11-30T11:00:00Z", "result": only_a["result"],
                "completed_by": {"email": "a@x"}}  # fmt: skip
    comparison, hits = read_annotation(task, accepted, kb)
    assert [h.surface for h in hits] == ["inhibits"]
    assert comparison.of("reject") == [] and len(comparison.of("accept")) == 1
    # made after B's regions were shown, leaving out "regulates" rejects it
    later = {**accepted, "created_at": "2026-11-30T13:00:00Z"}
    assert len(read_annotation(task, later, kb)[0].of("reject")) == 1


def test_pull_settles_a_blind_document_as_a_double_task(kb: KB) -> None:
    pre, blind, one, two = blind_doc(kb)
    # Only the annotation without candidates is done: the document's, every region added.
    blind["annotations"] = [annotation_by(3, "b@x", two)]
    alone = verify([pre], kb, blind=[blind])
    (doc,) = alone.documents
    assert (doc.doc_id, doc.role, doc.p_incl) == ("d1", "blind", 0.5)
    assert [(h.surface, h.verdict, h.source, h.decided) for h in doc.ground_truth] == [
        ("inhibits", "added", "human", "single"), ("regulates", "added", "human", "single"),
    ]  # fmt: skip
    assert alone.tally.candidates == 0 and alone.tasks == 1
    # Both done and disputed: awaiting curation, the annotation with candidates stands meanwhile.
    pre["annotations"] = [annotation_by(1, "a@x", one)]
    disputed = verify([pre], kb, blind=[blind])
    assert disputed.awaiting_curation == ["d1"] and disputed.disputed_tasks == 1
    assert [(h.surface, h.verdict) for h in disputed.documents[0].ground_truth] == [
        ("inhibits", "accept")
    ]
    # Curated: the curator's version, each hit saying who had it.
    curation = {"id": 90, "data": pre["data"], "predictions": [],
                "annotations": [annotation_by(9, "c@x", two, T2)]}  # fmt: skip
    curated = verify([pre], kb, blind=[blind], curated=[curation])
    hits = curated.documents[0].ground_truth
    assert [(h.surface, h.decided, sorted(h.kept_by)) for h in hits] == [
        ("inhibits", "curated", ["a@x", "b@x"]), ("regulates", "curated", ["b@x"]),
    ]  # fmt: skip
    assert curated.verified_by == {"a@x", "b@x", "c@x"}
    # Agreed: both people's versions are the same.
    blind["annotations"] = [annotation_by(3, "b@x", one)]
    agreed = verify([pre], kb, blind=[blind])
    assert agreed.decided["agreed"] == 1 and agreed.verified_by == {"a@x", "b@x"}
    # A blind task whose document has no task with candidates is verified alone.
    lone = verify([], kb, blind=[blind])
    assert [d.doc_id for d in lone.documents] == ["d1"] and lone.decided["single"] == 1


def test_a_proposal_submitted_untouched_is_kept_as_proposed_and_counted_apart(kb: KB) -> None:
    review = build_review_prediction(TEXT, [hit("inhibits", INHIBITS)], None, "a", None, kb)
    # What the backend proposed for other occurrences, as the editor submits it: each region's
    # items with its origin, the span's meta saying what proposed it.
    proposals = build_review_prediction(
        TEXT, [hit("regulates", REGULATES), hit("STAT3", REGULATES)], None, "a", None, kb
    )["result"]
    stat3 = hit("STAT3", REGULATES)
    for item in proposals:
        edited = item["id"] == region_id(stat3.a, stat3.b)
        item["origin"] = "prediction-changed" if edited else "prediction"
        if item["from_name"] == "mention":
            item["meta"] = {"source": "kb"}
    task = {"id": 7, "data": {"text": TEXT, "doc_id": "d1"},
            "predictions": [{**review, "id": 1, "created_at": T1}],
            "annotations": [annotation_by(5, "a@x", review["result"] + proposals, T2)]}  # fmt: skip
    result = verify([task], kb)
    (document,) = result.documents
    assert [(h.surface, h.verdict, h.proposed_by, h.annotator) for h in document.ground_truth] == [
        ("inhibits", "accept", None, "a@x"),
        ("STAT3", "added", None, "a@x"),
        ("regulates", "proposed", "kb", "a@x"),
    ]
    sidecar = result.to_dict()
    assert (sidecar["accept"], sidecar["added"], sidecar["proposed"]) == (1, 1, 1)
    assert sidecar["proposals_changed"] == 1
    # Proposals are no candidates: the correction rate is the candidates' alone.
    assert (sidecar["candidates"], sidecar["correction_rate"]) == (1, 0.0)
    assert document.ground_truth[2].to_json()["proposed_by"] == "kb"


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"p_incl": "0.5"}, "p_incl: Input should be a valid number (got '0.5')"),
        ({"batch": True}, "batch: Input should be a valid integer (got True)"),
    ],
)
def test_a_task_design_read_by_the_gold_rule_for_numbers(
    data: dict[str, object], needle: str
) -> None:
    """Issue 44, item 12: a task's p_incl or batch (from a task not pushed by goldloop) is held
    to the gold's rule for numbers, and refused as a typed error, not a validation traceback."""
    from goldloop.formats.gold import GoldError
    from goldloop.formats.labelstudio.verify import drawn_documents

    task = {"id": 3, "data": {"text": TEXT, "doc_id": "d1", **data}}
    with pytest.raises(GoldError, match=re.escape(f"task 3 ('d1'): {needle}")):
        drawn_documents([task])
    (document,) = drawn_documents([{"id": 3, "data": {"text": TEXT, "doc_id": "d1", "p_incl": 1}}])
    assert document.p_incl == 1.0
