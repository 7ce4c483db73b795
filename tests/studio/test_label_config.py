"""The labeling config: generated from the KB, committed in sync, with the controls goldloop needs,
a relation picker that finds a relation by the forms a text uses, and per-region relation and
direction required."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from goldloop.kb import KB
from goldloop.kb.verb_forms import verb_forms
from goldloop.studio.label_config import (
    CONTROLS,
    LabelConfigError,
    check_label_config,
    label_interface,
    picker_forms,
    prediction_checker,
    read_relation,
    relation_value,
    render_label_config,
)
from tests.conftest import Cli

REPO = Path(__file__).resolve().parents[2]
pytest.importorskip("label_studio_sdk", reason="the studio extra is not installed")


def test_committed_config_is_in_sync_with_the_bundled_kb(kb: KB) -> None:
    committed = (REPO / "label_config" / "relations.xml").read_text(encoding="utf-8")
    assert committed == render_label_config(kb), "run `goldloop label-config` and commit the result"


def test_relation_picker_holds_every_canonical_label_once(kb: KB) -> None:
    interface = label_interface(render_label_config(kb))
    relation = interface.get_control("relation")
    assert sorted(relation.labels) == sorted(r.label for r in kb.canonical_relations())
    assert {c.name: c.tag.lower() for c in interface.controls} == CONTROLS
    assert read_relation(relation_value("inhibits")) == "inhibits"


@pytest.mark.parametrize(
    ("label", "forms"),
    [
        ("inhibits", ["inhibited by", "inhibiting"]),  # "inhibited" is inside "inhibited by"
        ("secretes", ["secreted by", "secreting"]),
        ("binds to", ["bound", "binding"]),  # irregular participle, no converse (symmetric)
        ("eats", ["is eaten by", "eating"]),
        ("supplies", ["supplied", "supplying"]),
        ("shuts", ["shutting"]),  # "shut" is inside "shuts"; never "shutted"
        ("has part", []),  # an auxiliary head names no verb
        ("is agonist of", []),
        ("directly regulates", ["directly regulated by"]),
        # A split prefix: the participle as abstracts write it, hyphenated and apart too.
        ("upregulates", ["upregulated by", "up-regulated", "up regulated"]),
        ("downregulates", ["downregulated by", "down-regulated", "down regulated"]),
    ],
)
def test_picker_forms_are_the_converse_label_and_the_head_verbs_forms(
    kb: KB, label: str, forms: list[str]
) -> None:
    relation = kb.lookup(label)
    assert relation is not None and relation.is_canonical
    assert picker_forms(relation, kb, verb_forms()) == forms


def test_each_choice_shows_its_forms_and_stores_the_canonical_label(kb: KB) -> None:
    """Label Studio's Taxonomy search matches the shown text (the choice's ``value``) and stores
    the ``alias``: typing "secreted" finds secretes, and the region still says "secretes"."""
    taxonomy = ET.fromstring(render_label_config(kb)).find(".//Taxonomy[@name='relation']")
    assert taxonomy is not None
    stored = {c.get("alias") or c.get("value"): c.get("value") for c in taxonomy.iter("Choice")}
    assert sorted(stored) == sorted(r.label for r in kb.canonical_relations())
    assert stored["secretes"] == "secretes (secreted by, secreting)"
    assert stored["inhibits"] == "inhibits (inhibited by, inhibiting)"
    assert stored["has part"] == "has part"  # no other form: no alias
    assert [shown for shown in stored.values() if "secreted" in shown] == [stored["secretes"]]


def _search(config: str, typed: str) -> list[str]:
    """What Label Studio 1.23.2's Taxonomy search lists for ``typed`` (``TaxonomySearch.tsx``:
    the shown text, lower-cased, holds the typed text; the config's order kept)."""
    taxonomy = ET.fromstring(config).find(".//Taxonomy[@name='relation']")
    assert taxonomy is not None
    shown = [str(c.get("value")) for c in taxonomy.iter("Choice")]
    return [value for value in shown if typed.lower() in value.lower()]


@pytest.mark.parametrize("typed", ["upregulated", "up regulated", "up-regulated", "Up-regulated"])
def test_the_picker_finds_a_prefixed_verb_however_the_text_spells_it(kb: KB, typed: str) -> None:
    assert _search(render_label_config(kb), typed) == [
        "upregulates (upregulated by, up-regulated, up regulated)"
    ]


@pytest.mark.parametrize(
    ("typed", "first", "also"),
    [
        ("regulated", "regulates", ["directly regulates", "downregulates", "upregulates"]),
        ("regulating", "regulates", ["capable of regulating"]),
        ("induced", "induces", ["developmentally induces"]),
        ("produced", "produces", ["overproduces"]),
        ("activated", "activates", ["inactivates"]),
    ],
)
def test_the_relation_whose_verb_forms_match_exactly_is_listed_first(
    kb: KB, typed: str, first: str, also: list[str]
) -> None:
    """Labels holding the typed form inside a longer phrase or word follow it (the search keeps
    the config's order: alphabetically, "regulates" was sixth for "regulated")."""
    listed = [value.split(" (")[0] for value in _search(render_label_config(kb), typed)]
    assert listed[0] == first
    assert set(also) <= set(listed[1:])


def test_the_picker_lists_families_alphabetically_each_head_first(kb: KB) -> None:
    taxonomy = ET.fromstring(render_label_config(kb)).find(".//Taxonomy[@name='relation']")
    assert taxonomy is not None
    stored = [c.get("alias") or c.get("value") for c in taxonomy.iter("Choice")]
    assert sorted(stored) == sorted(r.label for r in kb.canonical_relations())
    at = stored.index
    for member in ("capable of regulating", "directly regulates", "regulates activity of"):
        assert at("regulates") < at(member) < at("upregulates")
    # A relation whose label is of no other's family stays where the alphabet puts it.
    assert stored.index("activates") < stored.index("binds to") < stored.index("secretes")


def test_relation_and_direction_are_required_per_region_with_a_reason(kb: KB) -> None:
    """Label Studio 1.23.2 checks a required perRegion control on every region at Submit, selects
    the first region without a value and shows ``requiredMessage`` (label_config/README.md)."""
    root = ET.fromstring(render_label_config(kb))
    for name, says in (("relation", "needs a relation"), ("direction", "needs a direction")):
        (control,) = [c for c in root.iter() if c.get("name") == name]
        assert (control.get("perRegion"), control.get("required")) == ("true", "true")
        assert says in (control.get("requiredMessage") or "")
    (note,) = [c for c in root.iter() if c.get("name") == "note"]
    assert note.get("required") is None  # the note stays optional


def test_config_without_a_needed_control_is_refused() -> None:
    config = '<View><Text name="text" value="$text"/><Labels name="mention" toName="text"><Label value="P"/></Labels></View>'
    with pytest.raises(
        LabelConfigError,
        match=r"project 'x'.*lacks relation \(taxonomy\), direction \(choices\), note",
    ):
        check_label_config(config, "project 'x'")


def test_cli_writes_the_config(kb: KB, tmp_path: Path, cli: Cli) -> None:
    out = tmp_path / "relations.xml"
    result = cli("label-config", "-o", out)
    assert result.returncode == 0, result.stderr
    assert out.read_text(encoding="utf-8") == render_label_config(kb)


def test_prediction_verdicts_are_remembered_per_config_not_across_configs(kb: KB) -> None:
    pytest.importorskip("label_studio_sdk")
    config = render_label_config(kb)
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


def test_an_item_is_judged_by_its_shape_not_its_span(kb: KB) -> None:
    pytest.importorskip("label_studio_sdk")
    check = prediction_checker(render_label_config(kb))
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


def test_items_differing_in_a_value_type_or_a_missing_span_key_are_judged_apart(kb: KB) -> None:
    pytest.importorskip("label_studio_sdk")
    config = render_label_config(kb)
    check = prediction_checker(config)
    region = {"id": "r1", "from_name": "mention", "to_name": "text", "type": "labels"}
    good = {**region, "value": {"start": 0, "end": 3, "text": "TNF", "labels": ["Predicate"]}}
    a_string = {**region, "value": {"start": 0, "end": 3, "text": "TNF", "labels": "Predicate"}}
    no_start = {**region, "value": {"end": 3, "text": "TNF", "labels": ["Predicate"]}}
    assert check({"result": [good]}) == []
    for item in (a_string, no_start):
        expected = label_interface(config).validate_prediction({"result": [item]}, True)
        assert expected and check({"result": [item]}) == [str(e) for e in expected]
