"""``goldloop kb``: check a pairs KB."""

from __future__ import annotations

from pathlib import Path

import typer

from goldloop.cli.common import EQUIVALENCES_OPTION, console, key_value_table, open_kb

app = typer.Typer(help="Check and derive relation KBs.", no_args_is_help=True)


@app.command("check")
def check(
    kb: Path | None = typer.Argument(
        None, help="Pairs KB CSV (default: the bundled KB).", show_default=False
    ),
    equivalences: Path | None = EQUIVALENCES_OPTION,
) -> None:
    """Validate a pairs KB and print its shape; exit 2 with the reason when it is invalid."""
    loaded = open_kb(kb, equivalences)
    s = loaded.summary()
    console.print(
        key_value_table(
            f"KB {loaded.path} (sha256 {loaded.tag})",
            [
                ("rows", s.rows),
                ("canonical", s.canonical),
                ("converse (non-canonical)", s.converse),
                ("converse pairs", s.converse_pairs),
                ("symmetric", s.symmetric),
                ("needs review", s.needs_review),
                ("equivalences", s.equivalences),
            ],
        )
    )
    if s.needs_review:
        console.print(f"[yellow]warning:[/] {s.needs_review} rows still need review")
