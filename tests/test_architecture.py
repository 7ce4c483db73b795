"""docs/architecture.md is true: every module and name its decision table gives exists, its layers
table read upwards is import-linter's ``layers`` contract, and it names every contract.

In the decision table's right column, a backticked dotted name is a module of ``goldloop`` (with
or without the ``goldloop.`` prefix) followed by attributes (``kb.KB.lookup``). A bare name is an
attribute of a module or class the same row names (``make_llm`` beside ``llm.factory...``, also
``KB.fold``); ``name_*`` means some attribute starts with ``name_``. Not code, and not checked:
a name in capitals (an environment variable) and anything else that is no Python name
(``<gold>.tasks.json``).
"""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "architecture.md"
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*\*?")


def _section(title: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def _rows(section: str) -> list[list[str]]:
    """The cells of a Markdown table's body rows (the header and the rule left out)."""
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip().strip("|").split(" | ")] for row in rows[1:]]


def _module(dotted: str) -> tuple[ModuleType, list[str]] | None:
    """The longest importable ``goldloop`` module that ``dotted`` starts with, and the rest."""
    parts = dotted.removeprefix("goldloop.").split(".")
    for end in range(len(parts), 0, -1):
        try:
            return importlib.import_module("goldloop." + ".".join(parts[:end])), parts[end:]
        except ModuleNotFoundError:
            continue
    return None


def _attribute(owner: Any, path: list[str]) -> list[Any] | None:
    """``owner`` and each object along ``path`` (None when one is missing; ``x_*`` a prefix)."""
    found = [owner]
    for name in path:
        if name.endswith("*"):
            if not any(attr.startswith(name[:-1]) for attr in dir(found[-1])):
                return None
            return found
        if not hasattr(found[-1], name):
            return None
        found.append(getattr(found[-1], name))
    return found


def _decisions() -> list[Any]:
    return [
        pytest.param(decision, re.findall(r"`([^`]+)`", place), id=decision[:48])
        for decision, place in _rows(_section("Where each decision lives"))
    ]


def test_the_decision_table_has_rows() -> None:
    assert len(_decisions()) > 30


@pytest.mark.parametrize("decision,names", _decisions())
def test_every_name_in_the_decision_table_exists(decision: str, names: list[str]) -> None:
    scope: list[Any] = []
    bare: list[str] = []
    missing: list[str] = []
    for name in names:
        if not NAME.fullmatch(name) or name.isupper():
            continue  # a file name, an environment variable: not code
        found = _module(name)
        if found is None:
            bare.append(name)
            continue
        module, rest = found
        objects = _attribute(module, rest)
        if objects is None:
            missing.append(name)
        else:
            scope += objects
    for name in bare:
        path = name.split(".")
        if not any(_attribute(owner, path) for owner in scope):
            missing.append(name)
    assert not missing, f"docs/architecture.md, {decision!r}: no such module or name: {missing}"


def _contracts() -> list[dict[str, Any]]:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    return config["tool"]["importlinter"]["contracts"]


def test_the_layers_table_read_upwards_is_the_layers_contract() -> None:
    """Row by row, bottom up, the table's packages are the contract's layers, lowest first: a
    module may import from its own row and the rows above it in the table."""
    (layers,) = [c for c in _contracts() if c["id"] == "layers"]
    in_contract = [
        {name.strip() for name in re.split(r"[|:]", layer)} for layer in layers["layers"]
    ]
    in_table = [
        {name.removesuffix("/*") for name in re.findall(r"`([^`]+)`", row[1])}
        for row in _rows(_section("The layers, bottom up"))
    ]
    assert in_table == in_contract[::-1]
    for layer in in_contract:
        for name in layer:
            importlib.import_module(f"goldloop.{name}")


def test_every_module_a_layers_contract_names_exists() -> None:
    for contract in _contracts():
        if contract["type"] != "layers":
            continue
        for container in contract["containers"]:
            for layer in contract["layers"]:
                for name in re.split(r"[|:]", layer):
                    importlib.import_module(f"{container}.{name.strip()}")


def test_the_page_names_every_contract() -> None:
    page = PAGE.read_text(encoding="utf-8")
    for contract in _contracts():
        assert f"**`{contract['id']}`**" in page, contract["id"]


def test_label_studio_is_reached_through_one_typed_studio() -> None:
    """Label Studio is reached through one object, ``studio.connection.Studio`` (the connection
    and the SDK client, typed, so mypy checks every SDK call): every ``studio`` parameter or
    field is typed ``Studio``, a ``client`` is never untyped or ``Any``, no function takes a
    ``Connection`` beside a ``Studio`` (the pair the one object replaced), and no module but
    ``studio.connection`` names the SDK's client class."""
    wrong = []
    for path in sorted((REPO / "src" / "goldloop").rglob("*.py")):
        where = path.relative_to(REPO)
        text = path.read_text(encoding="utf-8")
        if where != CONNECTION and re.search(r"\bLabelStudio\b", text):
            wrong.append(f"{where}: names the SDK's LabelStudio")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                typed = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                named = [(arg.arg, arg.annotation) for arg in typed]
                if {"Connection", "Studio"} <= {n for _, a in named for n in _names(a)}:
                    wrong.append(f"{where}:{node.lineno} {node.name} takes Connection and Studio")
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                named = [(node.target.id, node.annotation)]
            else:
                continue
            for name, annotation in named:
                if name.lstrip("_") == "studio" and "Studio" not in _names(annotation):
                    wrong.append(f"{where}:{node.lineno} {name} is not typed Studio")
                if name == "client" and (annotation is None or "Any" in _names(annotation)):
                    wrong.append(f"{where}:{node.lineno} {name} is untyped")
    assert not wrong


CONNECTION = Path("src/goldloop/studio/connection.py")


def _names(annotation: ast.expr | None) -> set[str]:
    """The names an annotation spells, a string one (``"Studio | None"``) too."""
    if annotation is None:
        return set()
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return set(re.findall(r"[A-Za-z_]\w*", annotation.value))
    return {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}


LONG = 80
SIGNATURE_ONLY = "# Long only by its signature"


def test_a_function_over_80_lines_says_why() -> None:
    """A function over 80 lines has a comment right above it saying why; one that says it is long
    only by its signature (a command's options) keeps its body within 80 lines."""
    unexplained = []
    for path in sorted((REPO / "src" / "goldloop").rglob("*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if node.end_lineno is None or node.end_lineno - node.lineno + 1 <= LONG:
                continue
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            above = lines[first - 2].strip()
            body = node.body[1:] if ast.get_docstring(node) is not None else node.body
            if not above.startswith("#") or (
                above.startswith(SIGNATURE_ONLY) and node.end_lineno - body[0].lineno + 1 > LONG
            ):
                unexplained.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}")
    assert not unexplained


LONGEST_FILE = 600


def test_no_module_is_over_600_lines() -> None:
    """A module past 600 lines holds more than one idea: split it by idea, as regimes' result
    sections went to ``scoring.score_result``."""
    long = [
        f"{path.relative_to(REPO)}: {n} lines"
        for path in sorted((REPO / "src" / "goldloop").rglob("*.py"))
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > LONGEST_FILE
    ]
    assert not long


# The CLI's modules that are no command's door: what the doors share.
CLI_SHARED = {"__init__", "commands", "common", "llm_options", "named"}


def test_no_two_library_modules_share_a_name() -> None:
    """A module's name says what it is in one place only: a newcomer who reads ``agreement``
    knows which one is meant, and no module is named like a layer's package (``precision``). The
    CLI's doors are left out, each named after its command (``cli/status.py`` is
    ``goldloop status``) beside the library module it calls."""
    package = REPO / "src" / "goldloop"
    homes: dict[str, list[str]] = {
        path.parent.name: [f"{path.parent.name}/"] for path in package.glob("*/__init__.py")
    }
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).with_suffix("").parts
        if parts[0] != "cli" and parts[-1] != "__init__":
            homes.setdefault(parts[-1], []).append("/".join(parts))
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


def test_every_cli_module_is_a_door_or_shared() -> None:
    """A module in ``goldloop.cli`` is a command's door (a target of ``cli.commands.COMMANDS``)
    or one the doors share (:data:`CLI_SHARED`): so the doors' names stay their commands'."""
    from goldloop.cli.commands import COMMANDS

    doors = {entry.target.split(":")[0].removeprefix("goldloop.cli.") for entry in COMMANDS}
    modules = {path.stem for path in (REPO / "src" / "goldloop" / "cli").glob("*.py")}
    assert modules - doors - CLI_SHARED == set()
    assert CLI_SHARED - modules == set()
