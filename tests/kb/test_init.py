"""The pairs KB: the bundled one, and small real KB files (``write_kb``) for the refusal tests."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from goldloop.kb import KB, KBError, load_kb
from goldloop.settings import BUNDLED_KB
from tests.conftest import TINY_KB_ROWS


@pytest.fixture
def write_eq(tmp_path: Path) -> Callable[[list[str]], Path]:
    def write(rows: list[str]) -> Path:
        path = tmp_path / "equivalences.csv"
        path.write_text(
            "entity_id,equivalent_to,tier,note\n" + "\n".join(rows) + "\n", encoding="utf-8"
        )
        return path

    return write


def test_bundled_kb_shape(kb: KB):
    s = kb.summary()
    assert (s.rows, s.canonical, s.converse, s.symmetric, s.needs_review) == (355, 300, 55, 20, 0)
    assert s.converse_pairs == 55
    assert s.equivalences == 2


def test_lookup_is_over_the_whole_kb_strip_casefold(kb: KB):
    assert kb.lookup("  Regulated BY ").entity_id == "RO.0002334"
    assert kb.lookup("regulates").is_canonical
    assert kb.lookup("no such relation") is None


def test_converse_label_folds_onto_canonical_with_direction_flipped(kb: KB):
    folded = kb.decode_label("regulated by", "forward")
    assert folded.entity_id == kb.lookup("regulates").entity_id
    assert folded.direction == "inverse"
    assert folded.label_canonicalized and not folded.direction_coerced
    assert kb.decode_label("regulated by", "inverse").direction == "forward"
    assert kb.decode_label("regulated by", "na").direction == "na"
    canonical = kb.decode_label("regulates", "forward")
    assert (canonical.direction, canonical.label_canonicalized) == ("forward", False)


def test_symmetric_relation_coerces_oriented_directions(write_kb):
    kb = load_kb(write_kb())
    for direction in ("forward", "inverse"):
        folded = kb.decode_label("interacts with", direction)
        assert (folded.direction, folded.direction_coerced) == ("symmetric", True)
    assert kb.decode_label("interacts with", "symmetric").direction_coerced is False
    assert kb.decode_label("interacts with", "na").direction == "na"
    assert kb.direction_allowed("S1", "symmetric")
    assert not kb.direction_allowed("R1", "symmetric")
    assert kb.direction_allowed("R1", "na")
    assert not kb.direction_allowed("R1", "sideways")


def test_unknown_id_folds_to_itself(kb: KB):
    assert kb.fold("NEW", "forward").entity_id == "NEW"
    assert kb.fold_id("NEW") == "NEW"


def test_bundled_equivalences_fold_in_tier_one(kb: KB):
    assert kb.fold("PEL.000040").entity_id == "PEL.000040"
    assert kb.fold_id("PEL.000040") == "PEL.000002"


def test_equivalence_chains_fold_to_their_end(write_kb, write_eq):
    kb = load_kb(write_kb(), write_eq(["E3,E2,kb_implied,", "E2,E1,kb_implied,"]))
    assert kb.fold_id("E3") == "E1"
    assert kb.fold_id("E2") == "E1"
    assert kb.fold_id("R2") == "R1"


def test_user_kb_has_no_equivalences_unless_beside_it_or_given(write_kb, write_eq, tmp_path):
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    alone = write_kb(name="other/kb.csv")
    assert load_kb(alone).equivalences == {}
    kb_path = write_kb()
    write_eq(["E3,E2,kb_implied,"])  # equivalences.csv beside kb.csv
    assert load_kb(kb_path).equivalences == {"E3": "E2"}
    assert load_kb(alone, tmp_path / "equivalences.csv").equivalences == {"E3": "E2"}


def test_the_bundled_kb_by_its_path_is_the_bundled_kb():
    """``--kb …/relations.pairs.csv`` folds as no ``--kb`` does (its two equivalences kept)."""
    by_default, by_path = load_kb(), load_kb(BUNDLED_KB)
    assert by_path.equivalences == by_default.equivalences
    assert len(by_path.equivalences) == 2
    assert by_path.fold_id("PEL.000040") == by_default.fold_id("PEL.000040") == "PEL.000002"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            ["R1,regulates,,,,,False,False,True,R1,", "R1,controls,,,,,False,False,True,R1,"],
            "duplicate entity_id R1",
        ),
        (
            ["R1,Regulates,,,,,False,False,True,R1,", "R9, regulates ,,,,,False,False,True,R9,"],
            "collides with R1",
        ),
        (["R2,regulated by,,R1,regulates,ro,False,False,False,R1,"], "R1 is not in the KB"),
        (
            [
                "R1,regulates,,,,,False,False,False,R2,",
                "R2,regulated by,,,,,False,False,False,R3,",
                "R3,controls,,,,,False,False,True,R3,",
            ],
            "is not itself canonical",
        ),
        (["S1,interacts with,,S2,interacted by,ro,False,True,True,S1,"], "symmetric but paired"),
        (
            [
                "S1,interacts with,,,,,False,True,True,S1,",
                "S2,interacted by,,,,,False,False,False,S1,",
            ],
            "which is symmetric",
        ),
        (["R1,regulates,,,,,maybe,False,True,R1,"], "needs_review must be True or False"),
        (["R1,regulates,,,,,False,False,True,R9,"], "is_canonical=True but canonical_entity_id=R9"),
    ],
)
def test_invalid_kb_is_refused_naming_the_row(write_kb, rows, message):
    path = write_kb(rows)
    with pytest.raises(KBError) as err:
        load_kb(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)
    assert "line " in str(err.value)


def test_kb_without_derived_columns_predates_derivation(write_kb):
    path = write_kb(["R1,regulates,controls"], header="entity_id,label,description\n")
    with pytest.raises(KBError, match="predates the converse-pair derivation"):
        load_kb(path)


def test_kb_without_label_column_is_refused(write_kb):
    with pytest.raises(KBError, match="missing column"):
        load_kb(write_kb(["R1,True,R1"], header="entity_id,is_canonical,canonical_entity_id\n"))


def test_row_numbers_count_multiline_descriptions(write_kb):
    rows = [
        'R1,regulates,"two\nlines",,,,False,False,True,R1,',
        "R1,again,,,,,False,False,True,R1,",
    ]
    with pytest.raises(KBError, match=r"line 4: duplicate entity_id R1 \(first on line 2\)"):
        load_kb(write_kb(rows))


def test_unquoted_line_separator_stays_inside_its_field(write_kb):
    kb = load_kb(write_kb(["R1,regulates,one\u2028two,,,,False,False,True,R1,"]))
    assert kb.get("R1").description == "one\u2028two"


def test_needs_review_rows_warn(write_kb, caplog):
    rows = [r.replace("passive_by,False", "passive_by,True") for r in TINY_KB_ROWS]
    with caplog.at_level(logging.WARNING):
        kb = load_kb(write_kb(rows))
    assert kb.summary().needs_review == 1
    assert "1 rows still need review" in caplog.text


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["E2,E1,made_up,"], "unknown tier 'made_up'"),
        (["E1,E1,kb_implied,"], "mapped onto itself"),
        (["R2,R1,kb_implied,"], "mapped onto itself"),
        (["E2,E1,kb_implied,", "E2,E3,kb_implied,"], "already maps to E1"),
        (["E2,X9,kb_implied,"], "'X9' is not in the KB"),
        (["E1,E2,kb_implied,", "E2,E3,kb_implied,", "E3,E1,kb_implied,"], "cycle"),
    ],
)
def test_invalid_equivalences_are_refused(write_kb, write_eq, rows, message):
    with pytest.raises(KBError, match=message):
        load_kb(write_kb(), write_eq(rows))
