"""A system's output read as mentions per document: prediction rows or a gold-format file.

Rows are ``{doc_id, a, b, entity_id_predicted, direction_predicted?, score?}`` in a JSON list or
JSONL (``entity_id``/``direction`` are accepted as the gold-style names). A null id is an
abstention: kept, and counted by whoever reads it. A row that cannot be read is an error naming
the file and row, never skipped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.gold import read_gold
from goldloop.jsonl import parse_jsonl


class PredictionsError(GoldloopError):
    """A system output file cannot be read; the message names the file and row."""


@dataclass(frozen=True)
class Predicted:
    doc_id: str
    a: int
    b: int
    entity_id: str | None
    direction: str | None = None


@dataclass
class SystemOutput:
    path: Path
    mentions: list[Predicted]
    doc_ids: set[str] = field(default_factory=set)

    def by_doc(self) -> dict[str, list[Predicted]]:
        out: dict[str, list[Predicted]] = {doc_id: [] for doc_id in sorted(self.doc_ids)}
        for mention in self.mentions:
            out.setdefault(mention.doc_id, []).append(mention)
        return out


def read_system_output(path: str | Path) -> SystemOutput:
    """Read prediction rows (JSON list or JSONL) or a gold-format file into mentions."""
    source = Path(path)
    rows = _load_rows(source)
    if rows and isinstance(rows[0], dict) and "text" in rows[0]:
        documents = read_gold(source).documents
        mentions = [
            Predicted(doc.doc_id, hit.a, hit.b, hit.entity_id, hit.direction)
            for doc in documents
            for hit in doc.ground_truth
        ]
        return SystemOutput(source, mentions, {doc.doc_id for doc in documents})
    mentions = [_read_row(source, index, row) for index, row in enumerate(rows, start=1)]
    return SystemOutput(source, mentions, {m.doc_id for m in mentions})


def _load_rows(source: Path) -> list[Any]:
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionsError(f"{source}: cannot read: {exc}") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return [row for _, row in parse_jsonl(source, text)]
    if not isinstance(data, list):
        raise PredictionsError(f"{source}: expected a JSON list or JSONL rows")
    return data


def _read_row(source: Path, index: int, row: Any) -> Predicted:
    where = f"{source}: row {index}"
    if not isinstance(row, dict):
        raise PredictionsError(f"{where}: expected an object")
    doc_id = row.get("doc_id")
    if not isinstance(doc_id, str) or not doc_id:
        raise PredictionsError(f"{where}: needs a doc_id string")
    a, b = row.get("a"), row.get("b")
    if not isinstance(a, int) or not isinstance(b, int) or not 0 <= a < b:
        raise PredictionsError(f"{where}: a and b must be integers with 0 <= a < b")
    entity_id = row.get("entity_id_predicted", row.get("entity_id"))
    direction = row.get("direction_predicted", row.get("direction"))
    if entity_id is not None and not isinstance(entity_id, str):
        raise PredictionsError(f"{where}: entity_id_predicted must be a string or null")
    if direction is not None and not isinstance(direction, str):
        raise PredictionsError(f"{where}: direction_predicted must be a string or null")
    return Predicted(doc_id, a, b, entity_id, direction)
