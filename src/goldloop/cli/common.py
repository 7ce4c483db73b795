"""What every command shares: consoles, the ``--kb`` option, table helpers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from goldloop.kb import KB, load_kb

console = Console()
err_console = Console(stderr=True)

KB_OPTION = typer.Option(
    None, "--kb", help="Pairs KB CSV (default: the bundled KB).", show_default=False
)
EQUIVALENCES_OPTION = typer.Option(
    None,
    "--equivalences",
    help="equivalences.csv for the second folding tier (default: the bundled one with the bundled KB).",
    show_default=False,
)


def open_kb(path: Path | None, equivalences: Path | None = None) -> KB:
    return load_kb(path, equivalences)


def key_value_table(title: str, rows: list[tuple[str, Any]]) -> Group:
    """A two-column table under a bold title line (long paths in titles must not wrap the table)."""
    table = Table(show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    for key, value in rows:
        table.add_row(key, str(value))
    return Group(Text(title, style="bold"), table)
