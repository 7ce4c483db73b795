"""The labeling config: generated from the KB, committed in sync, with the controls goldloop needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldloop.kb import load_kb
from goldloop.studio.label_config import (
    CONTROLS,
    LabelConfigError,
    check_label_config,
    label_interface,
    prediction_checker,
    read_relation,
    relation_value,
    render_label_config,
)
from tests.conftest import Cli

REPO = Path(__file__).resolve().parents[2]
pytest.importorskip("label_studio_sdk", reason="the studio extra is not installed")


def test_committed_config_is_in_sync_with_the_bundled_kb() -> None:
    committed = (REPO / "label_config" / "relations.xml").read_text(encoding="utf-8")
    assert committed == render_label_config(load_kb()), (
        "run `goldloop label-config` and commit the result"
    )


def test_relation_picker_holds_every_canonical_label_once() -> None:
    kb = load_kb()
    interface = label_interface(render_label_config(kb))
    relation = interface.get_control("relation")
    assert sorted(relation.labels) == sorted(r.label for r in kb.canonical_relations())
    assert {c.name: c.tag.lower() for c in interface.controls} == CONTROLS
    assert read_relation(relation_value("inhibits")) == "inhibits"


def test_config_without_a_needed_control_is_refused() -> None:
    config = '<View><Text name="text" value="$text"/><Labels name="mention" toName="text"><Label value="P"/></Labels></View>'
    with pytest.raises(
        LabelConfigError,
        match=r"project 'x'.*lacks relation \(taxonomy\), direction \(choices\), note",
    ):
        check_label_config(config, "project 'x'")


def test_cli_writes_the_config(tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "relations.xml"
    result = cli("label-config", "-o", out)
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8") == render_label_config(load_kb())


def test_prediction_verdicts_are_remembered_per_config_not_across_configs() -> None:
    pytest.importorskip("label_studio_sdk")
    config = render_label_config(load_kb())
    renamed = config.replace('<Label value="Predicate"', '<Label value="Relation"')
    assert renamed != config
    prediction = {
        "model_version": "m",
        "result": [
            {
                "id": "r1",
                "from_name": "mention",
                "to_name": "text",
                "type": "labels",
                "value": {"start": 0, "end": 3, "text": "TNF", "labels": ["Predicate"]},
            }
        ],
    }
    assert prediction_checker(config)(prediction) == []
    # The remembered verdict for the first config must not answer for the second one.
    assert prediction_checker(renamed)(prediction) != []
    assert prediction_checker(config)(prediction) == []
    assert prediction_checker(renamed)(prediction) == label_interface(renamed).validate_prediction(
        prediction, return_errors=True
    )


def test_an_item_is_judged_by_its_shape_not_its_span() -> None:
    pytest.importorskip("label_studio_sdk")
    check = prediction_checker(render_label_config(load_kb()))
    region = {"id": "r1", "from_name": "mention", "to_name": "text", "type": "labels"}
    good = {**region, "value": {"start": 0, "end": 3, "text": "TNF", "labels": ["Predicate"]}}
    moved = {
        **region,
        "value": {"start": 40, "end": 52, "text": "up-regulates", "labels": ["Predicate"]},
    }
    unknown = {**region, "value": {"start": 0, "end": 3, "text": "TNF", "labels": ["Nope"]}}
    assert check({"result": [good, moved]}) == []
    errors = check({"result": [good, unknown], "score": 1.5})
    assert len(errors) == 2 and "Score must be between" in errors[0] and "Nope" in errors[1]
    with pytest.raises(LabelConfigError, match=r"^document 'd1': prediction 'm' does not fit"):
        check.require("document 'd1'", {"model_version": "m", "result": [unknown]})


def test_items_differing_in_a_value_type_or_a_missing_span_key_are_judged_apart() -> None:
    pytest.importorskip("label_studio_sdk")
    config = render_label_config(load_kb())
    check = prediction_checker(config)
    region = {"id": "r1", "from_name": "mention", "to_name": "text", "type": "labels"}
    good = {**region, "value": {"start": 0, "end": 3, "text": "TNF", "labels": ["Predicate"]}}
    a_string = {**region, "value": {"start": 0, "end": 3, "text": "TNF", "labels": "Predicate"}}
    no_start = {**region, "value": {"end": 3, "text": "TNF", "labels": ["Predicate"]}}
    assert check({"result": [good]}) == []
    for item in (a_string, no_start):
        expected = label_interface(config).validate_prediction({"result": [item]}, True)
        assert expected and check({"result": [item]}) == [str(e) for e in expected]
