"""Reading system predictions: JSON Lines are recognised by content, not only by suffix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.gold import Document
from goldloop.scoring.inputs import read_predictions

GOLD = [Document(doc_id="pmid:1", text="TNF regulates IL-6 and IL-6 activates STAT3.")]
ROWS = [
    {"doc_id": "pmid:1", "a": 4, "b": 13, "entity_id_predicted": "RO.0002211"},
    {"doc_id": "pmid:1", "a": 28, "b": 37, "entity_id_predicted": "PEL.000000"},
]


@pytest.mark.parametrize("name", ["rows.jsonl", "rows.json", "rows.txt"])
def test_json_lines_are_read_whatever_the_suffix(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("".join(json.dumps(row) + "\n" for row in ROWS), encoding="utf-8")
    read = read_predictions(path, GOLD)
    assert read.format == "jsonl"
    assert [(p.a, p.b, p.entity_id) for p in read.predictions] == [
        (4, 13, "RO.0002211"),
        (28, 37, "PEL.000000"),
    ]


def test_a_pretty_printed_json_list_is_not_mistaken_for_json_lines(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(ROWS, indent=2), encoding="utf-8")
    read = read_predictions(path, GOLD)
    assert read.format == "rows"
    assert len(read.predictions) == 2
