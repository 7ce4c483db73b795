"""A small corpus with two annotators' candidates, written as the files push reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

ACTIVATES, INHIBITS, REGULATES = "PEL.000000", "PEL.000018", "RO.0002211"
BINDS, STIMULATES, REDUCES, PHOSPHORYLATES = "PEL.000003", "PEL.000034", "PEL.000029", "PEL.000025"
INDUCES, SUPPRESSES = "PEL.000017", "PEL.000035"
TAG_A, TAG_B = "gpt-test@low", "claude-test"

DOCS: list[dict[str, Any]] = [
    {"doc_id": "pmid:1", "text": "IL-6 activates STAT3 in hepatocytes.", "role": "primary", "batch": 0, "p_incl": 0.5},
    {"doc_id": "pmid:2", "text": "SOCS3 inhibits STAT3 and regulates growth.", "role": "primary", "batch": 0, "p_incl": 0.5},
    {"doc_id": "pmid:3", "text": "𝛼-synuclein binds to lipids and activates microglia 🧬.", "role": "primary", "batch": 0, "p_incl": 0.25},
    {"doc_id": "pmid:4", "text": "TNF activates NF-kB, which is inhibited by IkB.", "role": "primary", "batch": 0, "p_incl": 0.25},
    {"doc_id": "pmid:5", "text": "Insulin stimulates glucose uptake.", "role": "primary", "batch": 1, "p_incl": 0.1},
    {"doc_id": "pmid:6", "text": "Metformin reduces hepatic glucose output and induces AMPK.", "role": "primary", "batch": 1, "p_incl": 0.1},
    {"doc_id": "pmid:7", "text": "🧬 AMPK phosphorylates ULK1 at two sites.", "role": "double", "batch": 1, "p_incl": 0.1},
    {"doc_id": "pmid:8", "text": "Leptin suppresses appetite.", "role": "primary", "batch": 1, "p_incl": 0.1},
]  # fmt: skip

# (doc_id, surface, entity_id, direction, anchored)
HITS_A = [
    ("pmid:1", "activates", ACTIVATES, "forward", True),
    ("pmid:2", "inhibits", INHIBITS, "forward", True),
    ("pmid:2", "regulates", REGULATES, "forward", False),
    ("pmid:3", "binds to", BINDS, "symmetric", True),
    ("pmid:3", "activates", ACTIVATES, "forward", True),
    ("pmid:4", "activates", ACTIVATES, "forward", True),
    ("pmid:5", "stimulates", STIMULATES, "forward", True),
    ("pmid:6", "reduces", REDUCES, "forward", True),
    ("pmid:7", "phosphorylates", PHOSPHORYLATES, "forward", True),
    ("pmid:8", "suppresses", SUPPRESSES, "forward", True),
]
HITS_B = [
    ("pmid:1", "activates", ACTIVATES, "forward", True),
    ("pmid:2", "inhibits", INHIBITS, "inverse", True),
    ("pmid:4", "inhibited by", INHIBITS, "inverse", True),
]


def text_of(doc_id: str) -> str:
    return next(d["text"] for d in DOCS if d["doc_id"] == doc_id)


def span(doc_id: str, surface: str) -> tuple[int, int]:
    a = text_of(doc_id).index(surface)
    return a, a + len(surface)


def _gold(hits: list[tuple[str, str, str, str, bool]], tag: str) -> list[dict[str, Any]]:
    docs = []
    for doc in DOCS:
        rows = []
        for doc_id, surface, entity_id, direction, anchored in hits:
            if doc_id == doc["doc_id"]:
                a, b = span(doc_id, surface)
                rows.append({
                    "a": a, "b": b, "surface": surface, "entity_id": entity_id, "direction": direction,
                    "annotator": tag, "source": "llm", "surface_anchored": anchored, "confidence": 0.9,
                })  # fmt: skip
        docs.append({**doc, "ground_truth": rows})
    return docs


def write_inputs(
    directory: Path, docs: list[dict[str, Any]] | None = None
) -> tuple[Path, Path, Path]:
    """documents.jsonl, gold.a.json and gold.b.json under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    documents = directory / "documents.jsonl"
    documents.write_text(
        "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs or DOCS), encoding="utf-8"
    )
    gold_a, gold_b = directory / "gold.a.json", directory / "gold.b.json"
    gold_a.write_text(json.dumps(_gold(HITS_A, TAG_A), ensure_ascii=False), encoding="utf-8")
    gold_b.write_text(json.dumps(_gold(HITS_B, TAG_B), ensure_ascii=False), encoding="utf-8")
    return documents, gold_a, gold_b
