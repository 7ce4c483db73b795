"""Small gold files for the scoring tests, written from code so every number is visible here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

TEXTS = [
    "IL-6 directly regulates TNF, and STAT3 binds to JAK1 in cells.",
    "TNF activates NF-kB; the kinase associates with the receptor.",
]


def hit(
    text: str, surface: str, entity_id: str, direction: str | None = None, **extra: Any
) -> dict[str, Any]:
    a = text.index(surface)
    out: dict[str, Any] = {
        "a": a,
        "b": a + len(surface),
        "surface": surface,
        "entity_id": entity_id,
    }
    if direction is not None:
        out["direction"] = direction
    return out | extra


@pytest.fixture
def gold_file(tmp_path: Path) -> Path:
    return write_gold_file(tmp_path / "gold.json")


def write_gold_file(path: Path) -> Path:
    """Two documents with two hits each (the scoring tests' gold, also tests/cli/test_score.py's)."""
    t0, t1 = TEXTS
    documents = [
        {
            "doc_id": "pmid:1",
            "text": t0,
            "role": "primary",
            "ground_truth": [
                hit(t0, "directly regulates", "RO.0002578", "forward", surface_anchored=True),
                hit(t0, "binds to", "PEL.000003", "symmetric", surface_anchored=False),
            ],
        },
        {
            "doc_id": "pmid:2",
            "text": t1,
            "role": "double",
            "ground_truth": [
                hit(t1, "activates", "PEL.000000", "forward", surface_anchored=True),
                hit(t1, "associates with", "PEL.000002", "symmetric"),
            ],
        },
    ]
    path.write_text(json.dumps(documents), encoding="utf-8")
    return path


def span(doc: int, surface: str) -> tuple[int, int]:
    a = TEXTS[doc].index(surface)
    return a, a + len(surface)


def row(
    doc: int, surface: str, entity_id: str | None, direction: str | None = None
) -> dict[str, Any]:
    a, b = span(doc, surface)
    return {
        "doc_id": f"pmid:{doc + 1}",
        "a": a,
        "b": b,
        "entity_id_predicted": entity_id,
        "direction_predicted": direction,
    }
