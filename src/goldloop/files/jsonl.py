"""JSON Lines files: one object per line, read with line numbers (a byte-order mark and any line
ending are fine), written atomically."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_open
from goldloop.heap import paused_gc


class JsonlError(GoldloopError):
    """A JSON Lines file cannot be read; the message names the file and line."""


def loads(text: str | bytes) -> Any:
    """The one reader of JSON that goldloop did not just make: :func:`json.loads`, refusing
    what Python's reader lets through and the rest of goldloop cannot use: ``NaN``,
    ``Infinity`` and numbers too large for a float (``1e400``), and nesting deeper than Python's
    recursion allows. Each refusal is a :class:`json.JSONDecodeError`, like any malformed JSON.
    """
    try:
        with paused_gc():
            return json.loads(text, parse_constant=_not_finite, parse_float=_finite_float)
    except RecursionError:
        raise JsonRefused("nested too deeply", text) from None
    except _NotFinite as exc:
        raise JsonRefused(f"{exc.args[0]} is not a finite number", text) from None


class JsonRefused(json.JSONDecodeError):
    """Valid JSON that :func:`loads` refuses; its message has no position (there is none)."""

    def __init__(self, msg: str, text: str | bytes) -> None:
        doc = text if isinstance(text, str) else text.decode("utf-8", "replace")
        super().__init__(msg, doc, 0)
        self.args = (msg,)


class _NotFinite(ValueError):
    pass


def _not_finite(literal: str) -> float:
    raise _NotFinite(literal)


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _NotFinite(literal)
    return value


def json_lines(
    source: Path, lines: Iterable[str], error: type[GoldloopError] = JsonlError
) -> Iterator[tuple[int, Any]]:
    """(line number, value) per non-blank line, streamed; ``error`` names the file and line."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield number, loads(line)
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
