"""Reading scoring inputs: JSON Lines recognised by content, not only by suffix; a Label Studio
JSON export read directly as gold and as a system (code-point offsets, astral text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB
from goldloop.scoring.inputs import (
    per_document,
    read_gold_documents,
    read_predictions,
    rows_to_predictions,
)
from goldloop.studio.review import hit_regions

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


# 𝛼 is outside the BMP: one code point (as goldloop and Label Studio 1.23 count), two UTF-16 units.
EXPORT_TEXT = "𝛼-synuclein activates microglia, and 𝛼 binds to TLR2."


def _hit(surface: str, entity_id: str, direction: str) -> Hit:
    a = EXPORT_TEXT.index(surface)
    return Hit(a=a, b=a + len(surface), surface=surface, entity_id=entity_id, direction=direction)


def _export(path: Path, kb: KB, hits: list[Hit]) -> Path:
    result: list[dict[str, Any]] = [item for h in hits for item in hit_regions(EXPORT_TEXT, h, kb)]
    task = {
        "id": 1,
        "data": {"text": EXPORT_TEXT, "doc_id": "pmid:9"},
        "annotations": [
            {"id": 10, "completed_by": {"email": "ann@example.org"}, "result": result,
             "was_cancelled": False, "created_at": "2026-01-01T00:00:00Z"},
        ],
        "predictions": [],
    }  # fmt: skip
    path.write_text(json.dumps([task]), encoding="utf-8")
    return path


def test_export_read_as_gold_and_as_system(tmp_path: Path, kb: KB) -> None:
    gold_hits = [
        _hit("activates", "PEL.000000", "forward"),
        _hit("binds to", "PEL.000003", "symmetric"),
    ]
    documents = read_gold_documents(_export(tmp_path / "gold.json", kb, gold_hits), kb)
    assert [d.doc_id for d in documents] == ["pmid:9"]
    assert [(h.a, h.b, h.entity_id) for h in documents[0].ground_truth] == [
        (h.a, h.b, h.entity_id) for h in gold_hits
    ]
    system_file = _export(tmp_path / "system.json", kb, gold_hits[:1])
    system = read_predictions(system_file, documents, name="second", kb=kb)
    assert system.format == "label-studio-export"
    assert [(p.a, p.b, p.entity_id, p.direction) for p in system.predictions] == [
        (gold_hits[0].a, gold_hits[0].b, "PEL.000000", "forward")
    ]


def test_a_row_placed_by_position_names_its_document() -> None:
    gold = [*GOLD, Document(doc_id="pmid:2", text="IL-6 activates STAT3.")]
    rows = [
        {"itext": 1, "a": 5, "b": 14, "entity_id_predicted": "PEL.000000"},
        {"doc_id": "pmid:1", "a": 4, "b": 13, "entity_id_predicted": None},
        {"itext": 2, "a": 0, "b": 4},
    ]
    read = rows_to_predictions("s", None, "rows", rows, gold)
    assert [(p.doc_id, p.a, p.entity_id) for p in read.predictions] == [
        ("pmid:2", 5, "PEL.000000"),
        ("pmid:1", 4, None),
    ]
    assert dict(read.malformed) == {"unknown_document": 1}
    by_doc = per_document(gold, read.predictions)
    assert [[p.a for p in doc] for doc in by_doc] == [[4], [5]]
