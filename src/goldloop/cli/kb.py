"""``goldloop kb``: check a pairs KB, or derive one from a merged KB."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Group

from goldloop.cli.common import (
    EquivalencesOption,
    check_outputs,
    console,
    figures_table,
    key_value_table,
    open_kb,
    parsing,
    print_whole,
)
from goldloop.kb.derive import RULES, DeriveReport, derive_kb, pending_review_path
from goldloop.kb.verb_forms import verb_forms

app = typer.Typer(help="Check and derive relation KBs.", no_args_is_help=True)


@app.command("check")
def check(
    kb: Annotated[
        Path | None,
        typer.Argument(help="Pairs KB CSV (default: the bundled KB).", show_default=False),
    ] = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """Validate a pairs KB and print its shape; exit 2 with the reason when it is invalid."""
    loaded = open_kb(kb, equivalences)
    s = loaded.summary()
    console.print(
        key_value_table(
            f"KB {loaded.path}",
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
    # The whole digest, on a line of its own: what a paper cites to name the KB it used.
    print_whole("sha256", loaded.sha256)
    if s.needs_review:
        console.print(f"[yellow]warning:[/] {s.needs_review} rows still need review")


@app.command("derive")
def derive(
    ctx: typer.Context,
    input_csv: Annotated[
        Path,
        typer.Option(
            "--input", help="Merged KB CSV: entity_id, label, optional inverse_entity_id and more."
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output", help="Pairs KB CSV to write; <output>.pending_review.csv goes beside it."
        ),
    ],
    review_csv: Annotated[
        Path | None,
        typer.Option(
            "--review-csv",
            help="Filled review sheet (verdict accept or reject).",
            show_default=False,
        ),
    ] = None,
    symmetric: Annotated[
        list[Path] | None,
        typer.Option(
            "--symmetric",
            help="CSV of symmetric relations (entity_id); repeatable.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Pair converse relations, elect canonical members, and apply a curator's review."""
    inputs = {"--input": input_csv, "--review-csv": review_csv, "--symmetric": symmetric}
    pending = pending_review_path(output)
    check_outputs({"--output": output}, inputs)
    check_outputs({f"--output (its pending sheet {pending.name})": pending}, inputs)
    report = derive_kb(
        input_csv,
        output,
        review_csv=review_csv,
        symmetric_csvs=symmetric or [],
        forms=verb_forms(parsing(ctx).models),
    )
    console.print(derive_table(report))
    console.print(
        key_value_table(
            f"Wrote {report.output}",
            [
                ("rows", report.rows),
                ("canonical", report.canonical),
                ("converse (non-canonical)", report.converse),
                ("symmetric", report.symmetric),
                ("declared inverses dropped", len(report.dropped_declarations)),
                ("proposals skipped: ambiguous", len(report.ambiguous)),
                ("proposals skipped: conflict with a declared inverse", len(report.conflicts)),
            ],
        )
    )
    for line in [*report.dropped_declarations, *report.ambiguous, *report.conflicts]:
        console.print(f"  skipped: {line}", highlight=False)
    if report.pending:
        console.print(
            f"[yellow]warning:[/] {report.pending} pairs await a verdict in "
            f"{report.pending_path}: until reviewed, a wrong pair merges two relations onto one "
            "canonical id silently. Fill in verdict (accept/reject), save the sheet under another "
            "name and pass it as --review-csv.",
            highlight=False,
        )


def derive_table(report: DeriveReport) -> Group:
    return figures_table(
        "Converse pairs by rule",
        ("rule", "pairs", "accepted", "rejected", "pending"),
        [
            [
                rule, report.pairs_by_rule[rule], report.accepted_by_rule[rule],
                report.rejected_by_rule[rule], report.pending_by_rule[rule],
            ]
            for rule in RULES
        ],
    )  # fmt: skip
