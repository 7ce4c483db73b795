"""Write docs/reference/cli.md from the CLI itself, so the reference cannot drift from ``--help``.

    .venv/bin/python scripts/cli_reference.py            # rewrite docs/reference/cli.md
    .venv/bin/python scripts/cli_reference.py --check    # exit 1 when the file is stale

The CLI is read only through click's public objects (``list_commands``, ``get_command``,
``get_params``, ``get_help_record``): a command table that imports its modules lazily reads the
same way as one that registers them all at import. ``tests/test_docs.py`` compares the file with
:func:`render`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

# typer vendors click, and a lazy command table may be plain click: both are read by duck type.
Command = Any
Context = Any

REPO = Path(__file__).resolve().parents[1]
TARGET = REPO / "docs" / "reference" / "cli.md"

INTRO = """\
# Command reference

Every command and option of `goldloop`, with the text of its `--help`. This page is generated
from the CLI by `scripts/cli_reference.py` (do not edit it: run the script after changing a
command or an option; `tests/test_docs.py` fails while the page differs from the CLI).

Every command has `--help` and exits 2 with one line naming the file and row (or the option) on
bad input ([every exit code](errors.md)). Every command that reads relations takes `--kb`
(default: the bundled KB), except `kb check` and `kb derive`, whose input is a KB, and `backend`,
which reads `GOLDLOOP_KB`; `precision report` and `studio install|start|stop|status|users` need
none. Commands that compute figures print a table, with a legend under it, and write the figures
as JSON (`score` and `baselines` into a `--report-dir`, with CSV and a chart beside; `stats`
its `dataset_stats.json` there; `effect` and `effort` a JSON and a PNG); `push`, `curate`, `gold check`, `kb check` and
`studio start|stop|status` write no report: they print what they did or found. The settings read
from the environment: [settings.md](settings.md); the files: [files.md](files.md).
"""


def root_command() -> Command:
    """The ``goldloop`` command as click sees it, whichever way the CLI builds it."""
    from goldloop import cli

    app = cli.app
    return typer.main.get_command(app) if isinstance(app, typer.Typer) else app


def _walk(command: Command, ctx: Context) -> Iterator[tuple[Command, Context]]:
    yield command, ctx
    for name, sub in _subcommands(command, ctx):
        yield from _walk(sub, sub.make_context(name, [], parent=ctx, resilient_parsing=True))


def _subcommands(command: Command, ctx: Context) -> list[tuple[str, Command]]:
    if not hasattr(command, "list_commands"):
        return []
    found = [(name, command.get_command(ctx, name)) for name in command.list_commands(ctx)]
    return [(name, sub) for name, sub in found if sub is not None and not sub.hidden]


def commands() -> list[tuple[str, Command, Context]]:
    """Every command and group, ``goldloop`` first, each with its full path and context."""
    root = root_command()
    top = root.make_context("goldloop", [], resilient_parsing=True)
    return [(ctx.command_path, command, ctx) for command, ctx in _walk(root, top)]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _anchor(path: str) -> str:
    return path.replace(" ", "-")


def _section(path: str, command: Command, ctx: Context) -> list[str]:
    lines = [f"## {path}", ""]
    if command.help:
        lines += [" ".join(command.help.split()), ""]
    usage = " ".join([path, *command.collect_usage_pieces(ctx)])
    lines += [f"Usage: `{usage}`", ""]
    subcommands = _subcommands(command, ctx)
    if subcommands:
        lines += ["| command | what it does |", "|---|---|"]
        for name, sub in subcommands:
            link = _anchor(f"{path} {name}")
            lines.append(f"| [`{name}`](#{link}) | {_cell(sub.get_short_help_str(200))} |")
        lines.append("")
    # One table per kind, and per help panel as --help shows them (the LLM options: "LLM option").
    tables: dict[str, list[str]] = {"argument": [], "option": []}
    for param in command.get_params(ctx):
        record = param.get_help_record(ctx)
        if record:
            panel = getattr(param, "rich_help_panel", None)
            kind = f"{panel} {param.param_type_name}" if panel else param.param_type_name
            tables.setdefault(kind, []).append(f"| `{_cell(record[0])}` | {_cell(record[1])} |")
    for kind, rows in tables.items():
        if rows:
            lines += [f"| {kind} | |", "|---|---|", *rows, ""]
    return lines


def render() -> str:
    """The whole reference page."""
    found = commands()
    lines = [INTRO, "## Commands", ""]
    lines += [f"- [`{path}`](#{_anchor(path)})" for path, _, _ in found[1:]]
    lines.append("")
    for path, command, ctx in found:
        lines += _section(path, command, ctx)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        stale = not TARGET.exists() or TARGET.read_text(encoding="utf-8") != text
        if stale:
            print(f"{TARGET.relative_to(REPO)} is stale: run scripts/cli_reference.py")
        return int(stale)
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
