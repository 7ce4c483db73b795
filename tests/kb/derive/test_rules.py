"""The four pairing rules, canonical election, and symmetric relations never paired."""

from __future__ import annotations

import pytest

from goldloop.kb import load_kb
from goldloop.kb.derive import PENDING_SUFFIX

from .helpers import derive_rows, pair, read_csv, symmetric_sheet, write_csv


def test_declared_inverse_is_a_fact_on_both_rows(tmp_path):
    rows, report = derive_rows(
        tmp_path, [("X:2", "has participant"), ("X:1", "participates in", "X:2")]
    )
    assert pair(rows, "X:1") == ("X:2", "ro", "False", "X:1")
    # The partner did not declare it and no surface rule matches: the declaration covers it.
    assert pair(rows, "X:2") == ("X:1", "ro", "False", "X:1")
    assert rows["X:2"]["is_canonical"] == "False"
    assert rows["X:2"]["inverse_label"] == "participates in"
    assert report.pairs_by_rule["ro"] == 1 and report.pending == 0


def test_has_of(tmp_path):
    rows, report = derive_rows(tmp_path, [("X:1", "part of"), ("X:2", "has part")])
    assert pair(rows, "X:1") == ("X:2", "has_of", "True", "X:2")
    assert pair(rows, "X:2") == ("X:1", "has_of", "True", "X:2")
    assert report.pairs_by_rule["has_of"] == 1 and report.pending == 1


@pytest.mark.parametrize(
    ("active", "passive"),
    [
        ("regulates", "regulated by"),
        ("negatively regulates", "negatively regulated by"),
        ("controls", "controlled by"),  # doubled consonant
        ("carries", "carried by"),
        ("binds", "bound by"),  # irregular participles
        ("binds to", "bound by"),
        ("eats", "is eaten by"),
        ("leads", "led by"),
        ("holds", "held by"),
    ],
)
def test_passive_by_pairs_active_and_participle(tmp_path, active, passive):
    rows, _ = derive_rows(tmp_path, [("X:2", passive), ("X:1", active)])
    assert pair(rows, "X:2") == ("X:1", "passive_by", "True", "X:1")
    assert pair(rows, "X:1") == ("X:2", "passive_by", "True", "X:1")


@pytest.mark.parametrize(
    ("active", "passive"),
    [("expresses", "expressed in"), ("realizes", "realized in"), ("derives", "derived from")],
)
def test_passive_prep(tmp_path, active, passive):
    rows, _ = derive_rows(tmp_path, [("X:1", passive), ("X:2", active)])
    assert pair(rows, "X:1") == ("X:2", "passive_prep", "True", "X:2")
    assert pair(rows, "X:2") == ("X:1", "passive_prep", "True", "X:2")


def test_unrelated_verbs_are_not_paired(tmp_path):
    rows, report = derive_rows(
        tmp_path,
        [("X:1", "inhibits"), ("X:2", "activated by"), ("X:3", "located in"), ("X:4", "has role")],
    )
    assert all(
        row["inverse_entity_id"] == "" and row["is_canonical"] == "True" for row in rows.values()
    )
    assert sum(report.pairs_by_rule.values()) == 0


def test_canonical_tie_goes_to_the_smaller_id(tmp_path):
    rows, _ = derive_rows(tmp_path, [("X:9", "develops from", "X:3"), ("X:3", "develops into")])
    assert rows["X:9"]["canonical_entity_id"] == rows["X:3"]["canonical_entity_id"] == "X:3"
    rows, _ = derive_rows(tmp_path, [("X:1", "preceded by", "X:2"), ("X:2", "succeeded by")])
    assert rows["X:2"]["canonical_entity_id"] == "X:1"


def test_declaring_row_keeps_ro_and_partner_keeps_its_proposal(tmp_path):
    """As upstream: the partner's surface match is still shown to the curator."""
    rows, report = derive_rows(tmp_path, [("X:1", "regulates", "X:2"), ("X:2", "regulated by")])
    assert pair(rows, "X:1") == ("X:2", "ro", "False", "X:1")
    assert pair(rows, "X:2") == ("X:1", "passive_by", "True", "X:1")
    pending = read_csv(tmp_path / f"out.csv{PENDING_SUFFIX}")
    assert [(p["entity_id"], p["inverse_entity_id"], p["inverse_source"]) for p in pending] == [
        ("X:2", "X:1", "passive_by")
    ]
    assert report.pairs_by_rule["passive_by"] == 1 and report.pairs_by_rule["ro"] == 0


def test_symmetric_relations_are_never_paired(tmp_path):
    symmetric = symmetric_sheet(tmp_path / "sym.csv", ["X:1", "X:2", "X:5"])
    rows, report = derive_rows(
        tmp_path,
        [
            ("X:1", "binds to"),
            ("X:2", "bound by"),
            ("X:3", "associates"),
            ("X:4", "associated with"),
            ("X:5", "connects", "X:6"),
            ("X:6", "connected to"),
        ],
        symmetric_csvs=[symmetric],
    )
    for entity_id in ("X:1", "X:2", "X:5"):
        assert pair(rows, entity_id) == ("", "", "False", entity_id)
        assert rows[entity_id]["is_symmetric"] == "True"
    # A symmetric member also keeps its would-be partner unpaired.
    assert pair(rows, "X:6") == ("", "", "False", "X:6")
    assert pair(rows, "X:3") == ("X:4", "passive_prep", "True", "X:3")
    assert report.symmetric == 3
    assert report.dropped_declarations == ["X:5 → X:6: a symmetric relation is never paired"]
    load_kb(tmp_path / "out.csv", equivalences=None)


def test_is_symmetric_column_is_the_ontology_flag(tmp_path):
    source = write_csv(
        tmp_path / "merged.csv",
        [
            {"entity_id": "X:1", "label": "interacts with", "is_symmetric": "True"},
            {"entity_id": "X:2", "label": "interacts", "is_symmetric": "False"},
            {"entity_id": "X:3", "label": "binds", "is_symmetric": ""},
            {"entity_id": "X:4", "label": "bound by", "is_symmetric": ""},
        ],
    )
    symmetric = symmetric_sheet(tmp_path / "sym.csv", ["X:4"])
    from goldloop.kb.derive import derive_kb

    report = derive_kb(source, tmp_path / "out.csv", symmetric_csvs=[symmetric])
    rows = {r["entity_id"]: r for r in read_csv(tmp_path / "out.csv")}
    assert [rows[i]["is_symmetric"] for i in ("X:1", "X:2", "X:3", "X:4")] == [
        "True",
        "False",
        "False",
        "True",
    ]
    assert all(r["inverse_entity_id"] == "" for r in rows.values())
    assert report.symmetric == 2


def test_ambiguous_proposals_are_skipped_and_reported(tmp_path):
    rows, report = derive_rows(
        tmp_path, [("X:1", "regulates"), ("X:2", "regulated by"), ("X:3", "regulated in")]
    )
    assert all(row["inverse_entity_id"] == "" for row in rows.values())
    assert len(report.ambiguous) == 2


def test_proposal_against_a_declared_partner_is_a_reported_conflict(tmp_path):
    rows, report = derive_rows(
        tmp_path, [("X:1", "activates", "X:3"), ("X:2", "activated by"), ("X:3", "deactivated by")]
    )
    assert pair(rows, "X:1")[0] == "X:3" and pair(rows, "X:3")[0] == "X:1"
    assert pair(rows, "X:2") == ("", "", "False", "X:2")
    assert report.conflicts == ["X:1 / X:2 (passive_by): X:1 is declared the inverse of X:3"]


def test_declared_inverse_outside_the_kb_is_dropped_and_reported(tmp_path):
    rows, report = derive_rows(tmp_path, [("X:1", "occurs in", "X:99")])
    assert pair(rows, "X:1") == ("", "", "False", "X:1")
    assert report.dropped_declarations == ["X:1 → X:99: not in the KB"]


def test_output_keeps_input_order_values_and_extra_columns(tmp_path):
    source = write_csv(
        tmp_path / "merged.csv",
        [
            {
                "entity_id": "X:2",
                "label": "regulated by",
                "description": " two\nlines ",
                "source": "GO",
            },
            {"entity_id": "X:1", "label": "regulates", "description": "", "source": "RO"},
        ],
    )
    from goldloop.kb.derive import KB_COLUMNS, derive_kb

    derive_kb(source, tmp_path / "out.csv")
    rows = read_csv(tmp_path / "out.csv")
    assert list(rows[0]) == [*KB_COLUMNS, "source"]
    assert [(r["entity_id"], r["description"], r["source"]) for r in rows] == [
        ("X:2", " two\nlines ", "GO"),
        ("X:1", "", "RO"),
    ]
    kb = load_kb(tmp_path / "out.csv", equivalences=None)
    assert kb.fold("X:2", "forward").entity_id == "X:1"
    assert kb.summary().needs_review == 2
