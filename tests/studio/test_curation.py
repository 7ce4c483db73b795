"""Curation's pure rules: when two versions agree, what the curator is shown, and which
annotations of an exported task count (no Label Studio needed)."""

from __future__ import annotations

import pytest

from goldloop.formats.gold import Hit
from goldloop.formats.labelstudio.tasks import (
    SameAnnotatorError,
    completed_annotations,
    two_annotators,
)
from goldloop.formats.labelstudio.versions import kept_by, versions_agree
from goldloop.kb import KB
from goldloop.studio.curation import (
    curation_prediction,
    curation_predictions,
    dispute_notes,
)
from goldloop.studio.label_config import prediction_checker, render_label_config
from goldloop.studio.review import build_review_prediction, review_tag

TEXT = "SOCS3 inhibits STAT3 and regulates growth."
INHIBITS, REGULATES, ACTIVATES = "PEL.000018", "RO.0002211", "PEL.000000"


def hit(surface: str, entity_id: str, direction: str = "forward") -> Hit:
    a = TEXT.index(surface)
    return Hit(a=a, b=a + len(surface), surface=surface, entity_id=entity_id, direction=direction)


def test_versions_agree_on_span_relation_and_direction_only() -> None:
    one = [hit("inhibits", INHIBITS), hit("regulates", REGULATES)]
    assert versions_agree(one, list(reversed(one)))
    assert not versions_agree(
        one, [hit("inhibits", INHIBITS), hit("regulates", REGULATES, "inverse")]
    )
    assert not versions_agree(one, [hit("inhibits", INHIBITS), hit("regulates", ACTIVATES)])
    assert not versions_agree(one, [hit("inhibits STAT3", INHIBITS), hit("regulates", REGULATES)])
    assert not versions_agree(one, one[:1])


def test_dispute_notes_name_who_kept_what(kb: KB) -> None:
    versions = {
        "a@x": [hit("inhibits", INHIBITS), hit("regulates", REGULATES), hit("growth", ACTIVATES)],
        "b@x": [hit("inhibits STAT3", INHIBITS), hit("regulates", REGULATES, "inverse"), hit("growth", ACTIVATES)],
    }  # fmt: skip
    notes = dispute_notes(TEXT, versions, kb)
    assert {TEXT[a:b]: note for (a, b), note in notes.items()} == {
        "inhibits": "only a@x: inhibits · forward",
        "inhibits STAT3": "only b@x: inhibits · forward",
        "regulates": "a@x: regulates · forward | b@x: regulates · inverse",
        "growth": "both",
    }
    assert kept_by(hit("growth", ACTIVATES), versions) == ["a@x", "b@x"]
    assert kept_by(hit("regulates", REGULATES, "inverse"), versions) == ["b@x"]
    assert kept_by(hit("regulates", INHIBITS), versions) == []


def test_curation_predictions_fit_the_labeling_config(kb: KB) -> None:
    versions = {"a@x": [hit("inhibits", INHIBITS)], "b@x": [hit("inhibits", REGULATES)]}
    review = build_review_prediction(TEXT, [hit("inhibits", INHIBITS)], None, "m", None, kb)
    predictions = curation_predictions(TEXT, versions, review, kb)
    assert [p["model_version"] for p in predictions] == [
        review_tag("m"), "annotator:a@x", "annotator:b@x", f"curate:{review_tag('m')}",
    ]  # fmt: skip
    check = prediction_checker(render_label_config(kb))
    assert all(check(p) == [] for p in predictions)
    curated = curation_prediction(TEXT, versions, None, kb)
    assert curated["model_version"] == "curate:"
    note = next(i for i in curated["result"] if i["from_name"] == "note")
    assert note["value"]["text"] == ["a@x: inhibits · forward | b@x: regulates · forward"]


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
