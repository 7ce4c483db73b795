"""``goldloop gold``: validate gold files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldloop.cli.common import EquivalencesOption, KbOption, console, key_value_table, open_kb
from goldloop.errors import CheckFailed

app = typer.Typer(help="Validate and describe gold JSON files.", no_args_is_help=True)


@app.command("check")
def check(
    file: Annotated[
        Path, typer.Argument(help="Gold JSON (list of documents) or a legacy *.gt.json.")
    ],
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """Validate a gold file against its texts and the KB, and print counts; exit 1 when hits
    carry ids the KB does not have."""
    from goldloop.formats.gold import read_gold

    knowledge = open_kb(kb, equivalences)
    gold = read_gold(file, knowledge)
    s = gold.stats
    rows: list[tuple[str, object]] = [
        ("documents", s.documents),
        ("legacy documents", s.legacy_documents),
        ("hits", s.hits),
        ("folded to canonical (direction flipped)", s.folded_to_canonical),
        ("direction coerced to symmetric", s.direction_coerced),
        ("hits with ids not in the KB", sum(s.not_in_kb.values())),
    ]
    rows += [(f"source: {k}", v) for k, v in sorted(s.by_source.items())]
    rows += [(f"direction: {k}", v) for k, v in sorted(s.by_direction.items())]
    rows += [(f"role: {k}", v) for k, v in sorted(s.by_role.items())]
    console.print(key_value_table(f"gold {gold.path}", rows))
    if s.not_in_kb:
        listed = ", ".join(f"{k} ({v})" for k, v in s.not_in_kb.most_common())
        console.print(f"[yellow]ids not in the KB:[/] {listed}", highlight=False)
        raise CheckFailed(
            f"{s.first_not_in_kb} is not in the KB {knowledge.path} "
            f"({sum(s.not_in_kb.values())} hit(s) in all)"
        )
