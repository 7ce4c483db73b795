"""The documentation holds: the README stays a front page, every page under docs/ is reachable
from it, every link and anchor resolves, every ``goldloop`` command and option the pages name
exists in the CLI, docs/reference/cli.md is what ``scripts/cli_reference.py`` generates, and every
public Python name the pages document still imports (each ``goldloop.…`` name in their inline
code, and each name their Python examples import)."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import re
import shlex
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
DOTTED = re.compile(r"(?<![\w/.-])goldloop(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# A command line: `goldloop` as a word (also `.venv/bin/goldloop`), then its arguments.
COMMAND = re.compile(r"(?:^|[\s(/])goldloop((?:[ \t]+[^\s`]+)+)")


def _name(page: Path) -> str:
    return str(page.relative_to(REPO))


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "cli_reference", REPO / "scripts/cli_reference.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_is_a_front_page() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_cli_reference_is_generated_from_the_cli() -> None:
    expected = _generator().render()
    written = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    assert written == expected, "docs/reference/cli.md is stale: run scripts/cli_reference.py"


# --- links and anchors -------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`|\*\*|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    anchors = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        match = re.match(r"#{1,6} (.*)", line)
        if match:
            slug = _slug(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            anchors.add(f"{slug}-{count}" if count else slug)
    return anchors


def _links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_every_link_and_anchor_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"[a-z]+:", target):  # a web address: not fetched
            continue
        path, _, anchor = target.partition("#")
        found = (page.parent / path).resolve() if path else page
        if not found.exists() or (
            anchor and found.suffix == ".md" and anchor not in _anchors(found)
        ):
            broken.append(target)
    assert not broken, f"{_name(page)}: broken links {broken}"


def test_every_docs_page_is_reachable_from_the_readme() -> None:
    reached, todo = {README}, [README]
    while todo:
        page = todo.pop()
        for target in _links(page):
            path = target.partition("#")[0]
            if path and not re.match(r"[a-z]+:", path) and path.endswith(".md"):
                found = (page.parent / path).resolve()
                if found.exists() and found not in reached:
                    reached.add(found)
                    todo.append(found)
    missing = [_name(page) for page in PAGES if page.resolve() not in reached]
    assert not missing, f"not linked from the README or a page it links: {missing}"


# --- commands and options ----------------------------------------------------------------------


def _command_lines() -> list[tuple[str, str]]:
    """Every ``goldloop …`` command line in the pages' code: fenced blocks (continuations
    joined, comments dropped) and inline code."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        snippets = re.findall(r"`([^`\n]+)`", FENCE.sub("", text))
        for block in FENCE.findall(text):
            for line in block.replace("\\\n", " ").splitlines():
                snippets.append(re.sub(r"(^|\s)#.*", "", line))
        for snippet in snippets:
            for match in COMMAND.finditer(snippet):
                found.append((_name(page), match.group(1).strip()))
        # Prose names a command without the program: `agree --studio-project`, `pull --since`.
        inline = re.findall(
            r"`([a-z][a-z-]*(?: [a-z][a-z-]*)? --?[a-z][^`\n]*)`", FENCE.sub("", text)
        )
        found += [(_name(page), words) for words in inline if words.split()[0] in _top_level()]
    return found


@functools.cache
def _top_level() -> set[str]:
    return {path.split()[1] for path, _, _ in _generator().commands() if len(path.split()) == 2}


def _cli() -> dict[str, tuple[set[str], bool]]:
    """Each command path (``score``, ``kb check``) to its options, and whether it is a group."""
    table: dict[str, tuple[set[str], bool]] = {}
    for path, command, ctx in _generator().commands():
        options = {
            opt
            for param in command.get_params(ctx)
            if param.param_type_name == "option"
            for opt in [*param.opts, *param.secondary_opts]
        }
        table[path.removeprefix("goldloop").strip()] = (options, hasattr(command, "list_commands"))
    return table


def _problems(words: list[str], cli: dict[str, tuple[set[str], bool]]) -> list[str]:
    path, problems = "", []
    root_options = cli[""][0]
    for word in words:
        if word in ("...", "…"):
            break
        options, is_group = cli[path]
        if is_group and not word.startswith("-"):
            if word.startswith(("[", "{", "<")) or word.isupper():  # a placeholder: COMMAND
                break
            choices = [f"{path} {choice}".strip() for choice in word.split("|")]
            unknown = [choice for choice in choices if choice not in cli]
            if unknown:
                problems.append(f"no command `goldloop {unknown[0]}`")
                break
            path = choices[0]
            continue
        option = word.strip("[]()|,;").split("=")[0]
        if re.fullmatch(r"--?[a-z][\w-]*", option) and option not in options | root_options:
            problems.append(f"`goldloop {path}` has no {option}")
    return problems


def test_the_pages_name_commands() -> None:
    assert len(_command_lines()) > 100


def test_every_command_and_option_the_docs_name_exists() -> None:
    cli = _cli()
    problems = []
    for page, line in _command_lines():
        try:
            words = shlex.split(line.replace("|", " | ").replace(" | ", "|"))
        except ValueError:
            words = line.split()
        problems += [f"{page}: {line}: {problem}" for problem in _problems(words, cli)]
    assert not problems, "\n".join(problems)


# --- Python names ------------------------------------------------------------------------------


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


def test_the_pages_document_python_names() -> None:
    assert len(_documented()) > 50


@pytest.mark.parametrize("name", _documented())
def test_documented_name_imports(name: str) -> None:
    parts = name.split(".")
    found: Any = None
    for end in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:end]))
            break
        except ModuleNotFoundError:
            continue
    for attribute in parts[end:]:
        assert hasattr(found, attribute), f"the docs name {name}: {found!r} has no {attribute}"
        found = getattr(found, attribute)


# --- files and tests the pages cite ------------------------------------------------------------

# A path the pages cite; not a pattern (`tests/test_<module>.py`) nor the example `tests/a/...`.
CITED = re.compile(
    r"(?<![\w/.-])((?:tests|benchmarks|scripts|src|docker|label_config|docs)/(?!a/)[\w/.-]*\w)"
    r"(?![\w<])(?:::(\w+))?"
)


def _cited() -> list[tuple[str, str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for code in re.findall(r"`([^`]+)`", FENCE.sub("", text)) + FENCE.findall(text):
            found += [(_name(page), path, test) for path, test in CITED.findall(code)]
    return found


def test_every_file_and_test_the_pages_cite_exists() -> None:
    missing = []
    for page, path, test in _cited():
        if not (REPO / path).exists():
            missing.append(f"{page}: {path}")
        elif test and not re.search(rf"def {test}\(", (REPO / path).read_text(encoding="utf-8")):
            missing.append(f"{page}: {path}::{test}")
    assert len(_cited()) > 30
    assert not missing, "\n".join(missing)


def test_every_variable_the_settings_read_is_documented() -> None:
    source = (REPO / "src" / "goldloop" / "settings.py").read_text(encoding="utf-8")
    read = set(
        re.findall(r'"((?:GOLDLOOP|LABEL_STUDIO|BASIC_AUTH)_[A-Z_]+|REDIS_URL|PGPASSWORD)"', source)
    )
    page = (DOCS / "reference" / "settings.md").read_text(encoding="utf-8")
    assert len(read) > 10
    assert sorted(name for name in read if f"`{name}`" not in page) == []
