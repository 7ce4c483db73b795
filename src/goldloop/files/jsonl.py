"""JSON Lines files: one object per line, read with line numbers (a byte-order mark and any line
ending are fine), written atomically."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_open


class JsonlError(GoldloopError):
    """A JSON Lines file cannot be read; the message names the file and line."""


def json_lines(
    source: Path, lines: Iterable[str], error: type[GoldloopError] = JsonlError
) -> Iterator[tuple[int, Any]]:
    """(line number, value) per non-blank line, streamed; ``error`` names the file and line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{source}: line {number}: not valid JSON: {exc.msg}") from exc


def json_object(
    source: Path, number: int, value: Any, error: type[GoldloopError] = JsonlError
) -> dict[str, Any]:
    """``value`` if it is a JSON object, else ``error`` naming the file and line."""
    if not isinstance(value, dict):
        raise error(f"{source}: line {number}: expected an object, got {type(value).__name__}")
    return value


def parse_jsonl(source: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) per non-blank line of ``text`` read from ``source``."""
    return [
        (number, json_object(source, number, value))
        for number, value in json_lines(source, text.splitlines())
    ]


def read_jsonl(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise JsonlError(f"{source}: cannot read: {exc}") from exc
    return parse_jsonl(source, text)


def write_jsonl(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    with atomic_open(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
