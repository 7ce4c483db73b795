"""Every public name the README documents still imports: each ``goldloop.…`` name in its inline
code (a module, or a module and its attributes: ``goldloop.formats.gold.read_gold``,
``goldloop.backend.BackendSettings.from_env``), and each name its Python examples import."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
DOTTED = re.compile(r"(?<![\w/.-])goldloop(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _documented() -> list[str]:
    text = README.read_text(encoding="utf-8")
    names: set[str] = set()
    for code in re.findall(r"`([^`]+)`", FENCE.sub("", text)):
        names.update(DOTTED.findall(code))
    for block in FENCE.findall(text):
        for module, imported in re.findall(
            r"^\s*from (goldloop[\w.]*) import ([\w, ]+)", block, re.M
        ):
            names.update(f"{module}.{name.strip()}" for name in imported.split(","))
    return sorted(names)


def test_the_readme_documents_python_names() -> None:
    assert len(_documented()) > 50


@pytest.mark.parametrize("name", _documented())
def test_documented_name_imports(name: str) -> None:
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:end]))
            break
        except ModuleNotFoundError:
            continue
    for attribute in parts[end:]:
        assert hasattr(found, attribute), f"README names {name}: {found!r} has no {attribute}"
        found = getattr(found, attribute)
