"""Small real KB files written for the refusal tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.foundation.tiny_kb import HEADER, ROWS


@pytest.fixture
def write_kb(tmp_path: Path) -> Callable[..., Path]:
    """Write a KB CSV from rows (default: the tiny KB) and return its path."""

    def write(rows: list[str] | None = None, header: str = HEADER, name: str = "kb.csv") -> Path:
        path = tmp_path / name
        path.write_text(header + "\n".join(ROWS if rows is None else rows) + "\n", encoding="utf-8")
        return path

    return write


@pytest.fixture
def write_eq(tmp_path: Path) -> Callable[[list[str]], Path]:
    def write(rows: list[str]) -> Path:
        path = tmp_path / "equivalences.csv"
        path.write_text(
            "entity_id,equivalent_to,tier,note\n" + "\n".join(rows) + "\n", encoding="utf-8"
        )
        return path

    return write
