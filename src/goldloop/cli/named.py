"""``NAME=PATH`` option values (``--system``, ``--id-bridge``, pool's runs): parsed here only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from goldloop.errors import GoldloopError


def parse_named(values: Sequence[str], option: str) -> list[tuple[str | None, Path]]:
    """``(name, path)`` per value: ``NAME=PATH`` splits at the first ``=``; a bare ``PATH`` has
    no name (None)."""
    out: list[tuple[str | None, Path]] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep:
            out.append((None, Path(value)))
            continue
        if not name or not path:
            raise GoldloopError(f"{option} {value!r}: give NAME=PATH, both non-empty")
        out.append((name, Path(path)))
    return out


def named_files(values: Sequence[str], option: str) -> list[tuple[str, Path]]:
    """Like :func:`parse_named`, a bare ``PATH`` named by its file's stem; each name once."""
    out: list[tuple[str, Path]] = []
    for name, path in parse_named(values, option):
        label = name or path.stem
        if any(label == seen for seen, _ in out):
            raise GoldloopError(f"{option}: the name {label!r} is given twice; name them NAME=PATH")
        out.append((label, path))
    return out
