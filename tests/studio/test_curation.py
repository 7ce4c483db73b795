"""Curation's pure rules: what the curator is shown (no Label Studio needed)."""

from __future__ import annotations

from goldloop.formats.labelstudio.versions import kept_by
from goldloop.kb import KB
from goldloop.studio.curation import (
    curation_prediction,
    curation_predictions,
    dispute_notes,
)
from goldloop.studio.label_config import prediction_checker, render_label_config
from goldloop.studio.review import build_review_prediction, review_tag
from tests.formats.labelstudio.conftest import ACTIVATES, INHIBITS, REGULATES, TEXT, hit


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
