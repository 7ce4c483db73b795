"""The pending review sheet and the filled sheet passed back with --review-csv."""

from __future__ import annotations

import pytest

from goldloop.kb import load_kb
from goldloop.kb.derive import PENDING_SUFFIX, REVIEW_COLUMNS, DeriveError, derive_kb

from .helpers import derive_rows, merged_kb, pair, read_csv, write_csv

RELATIONS = [
    ("X:1", "regulates"),
    ("X:2", "regulated by"),
    ("X:3", "expresses"),
    ("X:4", "expressed in"),
    ("X:5", "has part"),
    ("X:6", "part of"),
]


def review_sheet(path, verdicts: list[tuple[str, str, str]]):
    rows = [
        {
            "entity_id": a,
            "label": "",
            "inverse_entity_id": b,
            "inverse_label": "",
            "inverse_source": "",
            "verdict": v,
            "note": "",
        }
        for a, b, v in verdicts
    ]
    return write_csv(path, rows, list(REVIEW_COLUMNS))


def test_pending_sheet_has_one_blank_row_per_unordered_pair(tmp_path):
    _, report = derive_rows(tmp_path, RELATIONS)
    pending = read_csv(tmp_path / f"out.csv{PENDING_SUFFIX}")
    assert list(pending[0]) == list(REVIEW_COLUMNS)
    assert [
        (p["entity_id"], p["inverse_entity_id"], p["inverse_source"], p["verdict"]) for p in pending
    ] == [
        ("X:1", "X:2", "passive_by", ""),
        ("X:3", "X:4", "passive_prep", ""),
        ("X:5", "X:6", "has_of", ""),
    ]
    assert report.pending == 3 and report.pending_path == tmp_path / f"out.csv{PENDING_SUFFIX}"


def test_accept_clears_needs_review_and_reject_unlinks_both(tmp_path):
    review = review_sheet(
        tmp_path / "review.csv",
        [("X:2", "X:1", "accept"), ("X:3", "X:4", "reject"), ("X:5", "X:6", "")],
    )
    rows, report = derive_rows(tmp_path, RELATIONS, review_csv=review)
    assert pair(rows, "X:1") == ("X:2", "passive_by", "False", "X:1")
    assert pair(rows, "X:2") == ("X:1", "passive_by", "False", "X:1")
    for entity_id in ("X:3", "X:4"):
        assert pair(rows, entity_id) == ("", "", "False", entity_id)
        assert rows[entity_id]["is_canonical"] == "True"
    assert pair(rows, "X:6") == ("X:5", "has_of", "True", "X:5")
    pending = read_csv(tmp_path / f"out.csv{PENDING_SUFFIX}")
    assert [(p["entity_id"], p["inverse_entity_id"]) for p in pending] == [("X:5", "X:6")]
    assert (report.accepted_by_rule["passive_by"], report.rejected_by_rule["passive_prep"]) == (
        1,
        1,
    )
    assert report.pending_by_rule["has_of"] == 1 and report.pending == 1
    assert load_kb(tmp_path / "out.csv", equivalences=None).summary().needs_review == 2


def test_reject_also_unlinks_a_declared_inverse(tmp_path):
    """The curator has the last word: a rejected pair is not folded, declared or not."""
    review = review_sheet(tmp_path / "review.csv", [("X:2", "X:1", "Reject ")])
    rows, report = derive_rows(
        tmp_path, [("X:1", "regulates", "X:2"), ("X:2", "regulated by")], review_csv=review
    )
    assert pair(rows, "X:1") == ("", "", "False", "X:1")
    assert pair(rows, "X:2") == ("", "", "False", "X:2")
    assert report.rejected_by_rule["passive_by"] == 1
    assert read_csv(tmp_path / f"out.csv{PENDING_SUFFIX}") == []


@pytest.mark.parametrize(
    ("verdicts", "message"),
    [
        (
            [("X:1", "X:2", "maybe")],
            "line 2: verdict for X:1 / X:2 must be accept, reject or blank",
        ),
        ([("X:1", "X:4", "accept")], "line 2: X:1 / X:4 is not a proposed pair"),
        ([("X:1", "X:9", "reject")], "line 2: X:1 / X:9 is not a proposed pair"),
        (
            [("X:1", "X:2", "accept"), ("X:2", "X:1", "accept")],
            "line 3: pair X:2 / X:1 repeats line 2",
        ),
    ],
)
def test_review_sheet_errors_name_the_row_and_write_nothing(tmp_path, verdicts, message):
    source = merged_kb(tmp_path / "merged.csv", RELATIONS)
    review = review_sheet(tmp_path / "review.csv", verdicts)
    with pytest.raises(DeriveError) as raised:
        derive_kb(source, tmp_path / "out.csv", review_csv=review)
    assert str(raised.value) == f"{review}: {message}" or str(raised.value).startswith(
        f"{review}: {message}"
    )
    assert not (tmp_path / "out.csv").exists()
    assert not (tmp_path / f"out.csv{PENDING_SUFFIX}").exists()


def test_review_sheet_needs_its_columns(tmp_path):
    source = merged_kb(tmp_path / "merged.csv", RELATIONS)
    review = write_csv(tmp_path / "review.csv", [{"entity_id": "X:1", "verdict": "accept"}])
    with pytest.raises(DeriveError, match="missing column"):
        derive_kb(source, tmp_path / "out.csv", review_csv=review)


def test_filled_pending_sheet_is_never_overwritten(tmp_path):
    source = merged_kb(tmp_path / "merged.csv", RELATIONS)
    derive_kb(source, tmp_path / "out.csv")
    pending = tmp_path / f"out.csv{PENDING_SUFFIX}"
    before = pending.read_bytes()
    with pytest.raises(DeriveError, match="would be overwritten"):
        derive_kb(source, tmp_path / "out.csv", review_csv=pending)
    assert pending.read_bytes() == before


def test_invalid_output_keeps_the_previous_file(tmp_path):
    source = merged_kb(tmp_path / "merged.csv", RELATIONS)
    derive_kb(source, tmp_path / "out.csv")
    before = (tmp_path / "out.csv").read_bytes()
    broken = merged_kb(tmp_path / "broken.csv", [*RELATIONS, ("X:1", "again")])
    with pytest.raises(DeriveError, match=r"line 8: duplicate entity_id X:1 \(first on line 2\)"):
        derive_kb(broken, tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_bytes() == before


@pytest.mark.parametrize(
    ("relations", "message"),
    [
        ([("X:1", "a"), ("X:2", " A ")], "line 3: label 'A' repeats the label on line 2"),
        ([("X:1", "a", "X:1")], "line 2: X:1 declares itself as its inverse"),
        (
            [("X:1", "a", "X:2"), ("X:2", "b", "X:3"), ("X:3", "c")],
            "line 3: X:2 declares X:3 as its inverse, but X:2",
        ),
        ([("X:1", "")], "line 2: entity_id and label must not be empty"),
    ],
)
def test_bad_merged_kb_rows_are_named(tmp_path, relations, message):
    source = merged_kb(tmp_path / "merged.csv", relations)
    with pytest.raises(DeriveError) as raised:
        derive_kb(source, tmp_path / "out.csv")
    assert str(raised.value).startswith(f"{source}: {message}")


def test_symmetric_sheet_ids_must_be_in_the_kb(tmp_path):
    source = merged_kb(tmp_path / "merged.csv", RELATIONS)
    sheet = write_csv(tmp_path / "sym.csv", [{"entity_id": "X:1"}, {"entity_id": "X:7"}])
    with pytest.raises(DeriveError, match=r"sym.csv: line 3: X:7 is not in the KB"):
        derive_kb(source, tmp_path / "out.csv", symmetric_csvs=[sheet])
