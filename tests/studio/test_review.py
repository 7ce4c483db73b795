"""The review prediction: one region per distinct span of A ∪ B, values from A first, origin in
words naming the pre-annotators; with A alone, the review prediction is all a task gets."""

from __future__ import annotations

import pytest

from goldloop.formats.gold import Hit
from goldloop.studio.review import build_review_prediction, review_tag, task_predictions

TEXT = "🧬 TNF activates IL-6, which inhibits STAT3 and regulates growth."
ACTIVATES, INHIBITS, REGULATES = "PEL.000000", "PEL.000018", "RO.0002211"


def _hit(
    surface: str, entity_id: str, direction: str | None = "forward", confidence: float | None = None
) -> Hit:
    a = TEXT.index(surface)
    return Hit(
        a=a,
        b=a + len(surface),
        surface=surface,
        entity_id=entity_id,
        direction=direction,
        confidence=confidence,
    )


def _regions(prediction: dict) -> dict[str, dict[str, dict]]:
    out: dict[str, dict[str, dict]] = {}
    for item in prediction["result"]:
        out.setdefault(item["id"], {})[item["from_name"]] = item
    return out


def test_review_regions_origins_and_values(kb) -> None:
    hits_a = [
        _hit("activates", ACTIVATES, confidence=0.9),
        _hit("inhibits", INHIBITS, "forward", 0.8),
    ]
    hits_b = [_hit("activates", ACTIVATES, confidence=0.5), _hit("inhibits", REGULATES, "inverse"),
              _hit("regulates", REGULATES, None)]  # fmt: skip
    prediction = build_review_prediction(TEXT, hits_a, hits_b, "gpt@low", "claude", kb)
    assert prediction["model_version"] == "review:gpt@low+claude"
    regions = _regions(prediction)
    assert len(regions) == 3
    notes = {
        r["mention"]["value"]["text"]: r["mention"].get("meta", {}).get("text")
        for r in regions.values()
    }
    assert notes == {
        "activates": "both pre-annotators agree",
        "inhibits": "gpt@low: inhibits · forward | claude: regulates · inverse",
        "regulates": "only claude proposed this",
    }
    inhibits = next(r for r in regions.values() if r["mention"]["value"]["text"] == "inhibits")
    assert inhibits["relation"]["value"]["taxonomy"] == [
        ["inhibits"]
    ]  # A's values where A proposed it
    assert inhibits["direction"]["value"]["choices"] == ["forward"]
    assert inhibits["mention"]["score"] == 0.8
    regulates = next(r for r in regions.values() if r["mention"]["value"]["text"] == "regulates")
    assert "direction" not in regulates  # B gave no direction: the annotator picks one
    # Label Studio 1.23 counts code points: the emoji before the span is one character.
    a = TEXT.index("activates")
    activates = next(r for r in regions.values() if r["mention"]["value"]["text"] == "activates")
    assert (activates["mention"]["value"]["start"], activates["mention"]["value"]["end"]) == (
        a,
        a + 9,
    )
    assert prediction["score"] == pytest.approx((0.9 + 0.8) / 2)


def test_without_b_the_tag_names_a_only_and_regions_carry_no_note(kb) -> None:
    prediction = build_review_prediction(
        TEXT, [_hit("activates", ACTIVATES)], None, "lexical@73a23cc7", None, kb
    )
    assert (
        prediction["model_version"] == review_tag("lexical@73a23cc7") == "review:lexical@73a23cc7"
    )
    # Nothing to compare: no note beside each region, only the origin pull reads.
    assert [item["meta"] for item in prediction["result"] if "meta" in item] == [{"origin": "A"}]
    assert "score" not in prediction
    # One prediction tab: A's own prediction would repeat the review's regions.
    only = task_predictions(TEXT, [_hit("activates", ACTIVATES)], None, "lexical", None, kb)
    assert [p["model_version"] for p in only] == ["review:lexical"]


def test_task_predictions_validate_against_the_config(kb) -> None:
    pytest.importorskip("label_studio_sdk")
    from goldloop.studio.label_config import label_interface, render_label_config

    interface = label_interface(render_label_config(kb))
    predictions = task_predictions(
        TEXT, [_hit("activates", ACTIVATES)], [_hit("inhibits", INHIBITS)], "a", "b", kb
    )
    assert [p["model_version"] for p in predictions] == ["a", "b", "review:a+b"]
    for prediction in predictions:
        assert interface.validate_prediction(prediction, return_errors=True) == []
