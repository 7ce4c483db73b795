"""Small CSV builders for the derivation tests."""

from __future__ import annotations

import csv
from pathlib import Path

from goldloop.kb.derive import DeriveReport, derive_kb


def write_csv(path: Path, rows: list[dict[str, str]], columns: list[str] | None = None) -> Path:
    columns = columns or list(rows[0])
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def merged_kb(path: Path, relations: list[tuple[str, str] | tuple[str, str, str]]) -> Path:
    """(entity_id, label[, declared inverse]) rows as a merged KB."""
    rows = [
        {
            "entity_id": r[0],
            "label": r[1],
            "description": "",
            "inverse_entity_id": r[2] if len(r) > 2 else "",
        }
        for r in relations
    ]
    return write_csv(path, rows)


def symmetric_sheet(path: Path, ids: list[str]) -> Path:
    return write_csv(
        path,
        [{"entity_id": i, "label": "", "note": ""} for i in ids],
        ["entity_id", "label", "note"],
    )


def derive_rows(
    tmp_path: Path, relations, **kwargs
) -> tuple[dict[str, dict[str, str]], DeriveReport]:
    """Derive from ``relations`` into ``tmp_path/out.csv``; rows keyed by entity_id."""
    source = merged_kb(tmp_path / "merged.csv", relations)
    report = derive_kb(source, tmp_path / "out.csv", **kwargs)
    return {row["entity_id"]: row for row in read_csv(tmp_path / "out.csv")}, report


def pair(rows: dict[str, dict[str, str]], entity_id: str) -> tuple[str, str, str, str]:
    """(inverse_entity_id, inverse_source, needs_review, canonical_entity_id) of one row."""
    row = rows[entity_id]
    return (
        row["inverse_entity_id"],
        row["inverse_source"],
        row["needs_review"],
        row["canonical_entity_id"],
    )
