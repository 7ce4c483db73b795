"""Every public name the README and the pages under docs/ document still imports: each
``goldloop.…`` name in their inline code (a module, or a module and its attributes:
``goldloop.formats.gold.read_gold``, ``goldloop.backend.BackendSettings.from_env``), and each name their
Python examples import."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
PAGES = [README, *sorted((REPO / "docs").glob("*.md"))]
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
DOTTED = re.compile(r"(?<![\w/.-])goldloop(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _documented() -> list[str]:
    text = "\n".join(page.read_text(encoding="utf-8") for page in PAGES)
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


def test_the_readme_links_the_pages_it_moved_to_docs() -> None:
    text = README.read_text(encoding="utf-8")
    for page in PAGES[1:]:
        assert f"docs/{page.name}" in text, page.name


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
