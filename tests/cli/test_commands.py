"""The command table: every command is one line of it, its module imported only when it runs
or shows its help, so ``--version`` and every ``--help`` start without the heavy libraries."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import subprocess
import sys

import pytest
import typer

import goldloop.cli
from goldloop.cli.commands import COMMANDS, load
from tests.conftest import Cli

# What a light start must not import: the parser, the numerics, the Label Studio client, the
# provider SDKs and the HTTP stacks under them. (pydantic is not among them: typer imports it.)
HEAVY = frozenset(
    {
        "anthropic",
        "bioc",
        "dask",
        "fastapi",
        "google.genai",
        "httpx",
        "label_studio_sdk",
        "matplotlib",
        "nervaluate",
        "numpy",
        "onnxruntime",
        "openai",
        "pandas",
        "pyarrow",
        "redis",
        "requests",
        "scipy",
        "sklearn",
        "spacy",
        "tenacity",
        "thinc",
        "tokenizers",
        "uvicorn",
    }
)

# Not heavy, but no help needs it: typer imports pydantic only to coerce an option's value, and
# the gold's pydantic models are read where documents are.
LIGHT_HELP = frozenset({"pydantic", "goldloop.formats.gold"})

# Runs each argv of argv[1] (JSON) in a forked child of one interpreter that has imported only
# the entry point, as a fresh `goldloop ...` would; prints the heavy modules each one imported.
_RUNNER = """
import json, os, sys
heavy = set(json.loads(sys.argv[2]))
from goldloop.cli import main
# What every command's help needs, imported once before the children fork (none is heavy: a
# heavy module imported here would be reported by every child).
import typer.rich_utils
for argv in json.loads(sys.argv[1]):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        sys.argv = ["goldloop", *argv]
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        found = sorted(m for m in heavy if m in sys.modules)
        os.write(write, json.dumps([code, found]).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        answer = pipe.read()
    os.waitpid(pid, 0)
    print(json.dumps([argv, *json.loads(answer)]))
"""


def _leaf_commands() -> list[list[str]]:
    """Every command's argv: each table entry, and each sub-command of a group."""
    argvs: list[list[str]] = []
    for entry in COMMANDS:
        argvs.append([entry.name])
        command = load(entry)
        if isinstance(command, typer.core.TyperGroup):
            argvs += [[entry.name, sub] for sub in command.list_commands(typer.Context(command))]
    return argvs


def _run_light(argvs: list[list[str]]) -> dict[tuple[str, ...], tuple[int, list[str]]]:
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, json.dumps(argvs), json.dumps(sorted(HEAVY | LIGHT_HELP))],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return {tuple(argv): (code, found) for argv, code, found in rows}


@pytest.mark.parametrize("argv", [["--version"], ["status", "--help"]])
def test_the_measured_starts_import_not_even_pydantic(argv: list[str]) -> None:
    # A fresh interpreter, as the shell starts it: nothing imported before the entry point. The
    # two starts benchmarks/startup.py holds to 0.3 s go further than every help: typer imports
    # pydantic only to coerce an option's value, and pydantic was a third of `status --help`.
    probe = (
        f"import sys\nfrom goldloop.cli import main\nsys.argv = ['goldloop', *{argv!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {sorted(HEAVY | {'pydantic'})!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    *printed, found = done.stdout.split("\n")[:-1]
    expected = "goldloop " if argv == ["--version"] else "Usage: goldloop status"
    assert any(line.strip().startswith(expected) for line in printed)
    assert found == "[]"


def test_every_help_runs_without_heavy_libraries() -> None:
    argvs = [["--help"], *([*argv, "--help"] for argv in _leaf_commands())]
    ran = _run_light(argvs)
    assert set(ran) == {tuple(argv) for argv in argvs}
    assert {argv: code for argv, (code, _) in ran.items() if code != 0} == {}
    assert {argv: found for argv, (_, found) in ran.items() if found} == {}


def test_a_heavy_import_at_module_level_is_caught() -> None:
    # The check above can fail: a command that imports numpy is reported as such.
    ran = _run_light([["status", "--help"]])
    assert ran[("status", "--help")] == (0, [])
    probe = _RUNNER.replace(
        "from goldloop.cli import main", "from goldloop.cli import main\nimport numpy"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps([["--version"]]), json.dumps(sorted(HEAVY))],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == [["--version"], 0, ["numpy"]]


def test_the_root_help_lists_the_table_in_order(cli: Cli) -> None:
    listed = [
        line.split()[1]
        for line in cli("--help", env={"COLUMNS": "200"}).stdout.splitlines()
        # A command's row starts with its name; a wrapped line of help with spaces.
        if line.startswith("│ ") and line[2] not in " -"
    ]
    assert listed == [entry.name for entry in COMMANDS]


def test_each_line_is_the_first_paragraph_of_its_commands_help() -> None:
    for entry in COMMANDS:
        command = load(entry)
        first = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
        assert entry.help == " ".join(first.split()), entry.name
        assert command.name == entry.name


def test_the_table_names_each_command_group_of_the_cli_once() -> None:
    names = [entry.name for entry in COMMANDS]
    targets = [entry.target for entry in COMMANDS]
    assert len(set(names)) == len(names)
    assert len(set(targets)) == len(targets)
    # Every typer group a cli module defines is served from the table.
    groups = set()
    for module in pkgutil.iter_modules(goldloop.cli.__path__):
        loaded = importlib.import_module(f"goldloop.cli.{module.name}")
        for attr, value in vars(loaded).items():
            if isinstance(value, typer.Typer) and module.name != "__init__":
                groups.add(f"goldloop.cli.{module.name}:{attr}")
    assert groups <= set(targets)


@pytest.mark.parametrize("argv", [["stauts"], ["kb", "chek"]])
def test_a_mistyped_command_is_a_usage_error_with_a_suggestion(cli: Cli, argv: list[str]) -> None:
    result = cli(*argv)
    assert result.returncode == 2
    assert "Did you mean" in result.stderr
