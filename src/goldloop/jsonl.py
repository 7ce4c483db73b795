"""JSON Lines files: one object per line, read with line numbers, written atomically."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from goldloop.atomic import atomic_open
from goldloop.errors import GoldloopError


class JsonlError(GoldloopError):
    """A JSON Lines file cannot be read; the message names the file and line."""


def parse_jsonl(source: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line of ``text`` read from ``source``."""
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise JsonlError(f"{source}: line {number}: not valid JSON: {exc}") from exc
        if not isinstance(row, dict):
            raise JsonlError(f"{source}: line {number}: expected an object")
        rows.append((number, row))
    return rows


def read_jsonl(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JsonlError(f"{source}: cannot read: {exc}") from exc
    return parse_jsonl(source, text)


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
