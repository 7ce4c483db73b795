"""What every command shares: the consoles, the shared options (``Annotated`` style), the checks
of outputs before any work, and table helpers."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from goldloop.atomic import output_problem, same_file
from goldloop.errors import GoldloopError
from goldloop.kb import KB, load_kb
from goldloop.sample.strata import ROLES

# Output to a file or a pipe has no width to fit: rich would otherwise cut table cells to 80
# columns ("0.7…"). An explicit COLUMNS still wins.
UNCUT_WIDTH = 10_000


def _console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    uncut = not stream.isatty() and "COLUMNS" not in os.environ
    return Console(stderr=stderr, width=UNCUT_WIDTH if uncut else None)


console = _console()
err_console = _console(stderr=True)

KbOption = Annotated[
    Path | None,
    typer.Option("--kb", help="Pairs KB CSV (default: the bundled KB).", show_default=False),
]
EquivalencesOption = Annotated[
    Path | None,
    typer.Option(
        "--equivalences",
        help="equivalences.csv for the second folding tier (default: the bundled one with the "
        "bundled KB).",
        show_default=False,
    ),
]
UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="Label Studio URL (default: $LABEL_STUDIO_URL, else the embedded server); the API "
        "key comes from $LABEL_STUDIO_API_KEY.",
        show_default=False,
    ),
]
RolesOption = Annotated[
    str,
    typer.Option(
        "--roles",
        help=f"Comma-separated roles ({', '.join(ROLES)}); documents without a role are kept.",
    ),
]
DEFAULT_ROLES = "primary,double"


def open_kb(path: Path | None, equivalences: Path | None = None) -> KB:
    return load_kb(path, equivalences)


def parse_roles(value: str, option: str = "--roles") -> list[str]:
    """The roles of a comma-separated option value; an unknown role is refused, naming it."""
    roles = [r.strip() for r in value.split(",") if r.strip()]
    unknown = [r for r in roles if r not in ROLES]
    if unknown or not roles:
        raise GoldloopError(
            f"{option} {value!r}: "
            + (f"unknown role(s) {', '.join(unknown)}" if unknown else "no role given")
            + f" (known: {', '.join(ROLES)})"
        )
    return roles


def check_outputs(
    outputs: Mapping[str, Path | None],
    inputs: Mapping[str, Path | Sequence[Path] | None] | None = None,
    *,
    folders: Sequence[str] = (),
) -> None:
    """Before any work: each output (by its option) can be written, is none of the inputs and
    none of the other outputs.

    ``outputs`` and ``inputs`` map an option (as the user typed it) to its path; an input may
    stand for several files (a sample dir's). Options in ``folders`` name output folders.
    """
    given = {option: path for option, path in outputs.items() if path is not None}
    for option, path in given.items():
        problem = output_problem(path, folder=option in folders)
        if problem is not None:
            raise GoldloopError(f"{option} {path}: {problem}")
    named = list(given.items())
    for at, (option, path) in enumerate(named):
        for other_option, other in named[at + 1 :]:
            if same_file(path, other):
                raise GoldloopError(
                    f"{option} {path} and {other_option} {other} are the same file: one would "
                    f"overwrite the other; choose another {other_option}"
                )
    for option, path in given.items():
        for input_option, sources in (inputs or {}).items():
            for source in [sources] if isinstance(sources, Path) else sources or ():
                if same_file(path, source):
                    raise GoldloopError(
                        f"{option} {path} and {input_option} {source} are the same file "
                        f"({path.resolve()}): an input is never overwritten; choose another "
                        f"{option}"
                    )


def report_path(output: Path) -> Path:
    """Where a command's report goes beside its output: ``<output>.report.json``."""
    return output.with_name(output.name + ".report.json")


def key_value_table(title: str, rows: list[tuple[str, Any]]) -> Group:
    """A two-column table under a bold title line (long paths in titles must not wrap the table)."""
    table = Table(show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for key, value in rows:
        table.add_row(key, str(value))
    return Group(Text(title, style="bold"), table)
