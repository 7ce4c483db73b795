"""The library raises typed errors and never names a command-line option: the doors word those."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import goldloop

SOURCE = Path(goldloop.__file__).parent
DOORS = ("cli",)  # the command line words its own options
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]+")


def _raised_strings(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for part in ast.walk(node.exc):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    found.append((node.lineno, part.value))
    return found


def test_no_library_error_names_a_command_line_option() -> None:
    offending = [
        f"{path.relative_to(SOURCE)}:{line}: {text!r}"
        for path in sorted(SOURCE.rglob("*.py"))
        if path.relative_to(SOURCE).parts[0] not in DOORS
        for line, text in _raised_strings(ast.parse(path.read_text(encoding="utf-8")))
        if OPTION.search(text)
    ]
    assert offending == []


def test_the_check_can_fail() -> None:
    tree = ast.parse('raise ValueError(f"give --out {x}")')
    assert [OPTION.search(text) is not None for _, text in _raised_strings(tree)] == [True]


def test_every_url_password_in_a_message_is_masked() -> None:
    from goldloop.errors import GoldloopError, SettingError, mask_credentials

    text = "a http://u:p@ss@h/x@y, 'redis://:pw@r:6379/0' and postgresql://me@db/x"
    assert mask_credentials(text) == (
        "a http://u:***@h/x@y, 'redis://:***@r:6379/0' and postgresql://me@db/x"
    )
    assert str(GoldloopError("base ftp://u:k3y@h")) == "base ftp://u:***@h"
    assert SettingError("base_url", "http://u:k3y@h").message == "http://u:***@h"
