"""A Label Studio JSON export read directly as gold and as a system (UTF-16 offsets, astral text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goldloop.gold import Hit
from goldloop.kb import KB
from goldloop.scoring.inputs import read_gold_documents, read_predictions

pytest.importorskip(
    "label_studio_sdk", reason="reading an export uses goldloop.studio (goldloop[studio])"
)

from goldloop.studio.review import hit_regions

# 𝛼 is outside the BMP: Label Studio counts it as two UTF-16 units, goldloop as one code point.
TEXT = "𝛼-synuclein activates microglia, and 𝛼 binds to TLR2."


def _hit(surface: str, entity_id: str, direction: str) -> Hit:
    a = TEXT.index(surface)
    return Hit(a=a, b=a + len(surface), surface=surface, entity_id=entity_id, direction=direction)


def _export(path: Path, kb: KB, hits: list[Hit]) -> Path:
    result: list[dict[str, Any]] = [item for h in hits for item in hit_regions(TEXT, h, kb)]
    task = {
        "id": 1,
        "data": {"text": TEXT, "doc_id": "pmid:9"},
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
