"""``goldloop sheet export`` / ``import``: the gold review sheet, adjudication without a server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldloop.cli.common import (
    EquivalencesOption,
    KbOption,
    check_outputs,
    console,
    kb_inputs,
    key_value_table,
    open_kb,
    parsing,
    settings,
)
from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_write_text, atomic_write_together
from goldloop.files.beside import verification_path
from goldloop.files.gold_lock import gold_lock

app = typer.Typer(
    help="The review sheet: export candidates to a TSV, fill in verdicts, import verified gold.",
    no_args_is_help=True,
)

Gold = Annotated[Path, typer.Option("--gold", help="The first annotator's gold (origin gold).")]
Other = Annotated[
    Path | None,
    typer.Option("--other", help="The second annotator's gold (origin other).", show_default=False),
]


@app.command("export")
def export(
    gold: Gold,
    output: Annotated[Path, typer.Option("--output", "-o", help="The review sheet (.tsv).")],
    other: Other = None,
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """One row per candidate span, with the other annotator's view and empty verdicts."""
    from goldloop.formats.gold import read_gold
    from goldloop.sheets.review_sheet import has_verdicts, sheet_text

    if output.suffix.lower() != ".tsv":
        raise GoldloopError(f"--output {output}: the review sheet is a .tsv file")
    check_outputs(
        {"--output": output}, {"--gold": gold, "--other": other, **kb_inputs(kb, equivalences)}
    )
    if has_verdicts(output):
        raise GoldloopError(f"--output {output}: holds verdicts already; choose another file")
    knowledge = open_kb(kb, equivalences)
    first = read_gold(gold, knowledge).documents
    second = None if other is None else read_gold(other, knowledge).documents
    try:
        text = sheet_text(first, second, knowledge)
    except GoldloopError as exc:
        raise GoldloopError(f"{gold}: {exc}") from None
    atomic_write_text(output, text)
    console.print(f"review sheet: {output} ({text.count(chr(10)) - 1} rows)")


@app.command("import")
def import_(
    ctx: typer.Context,
    sheet: Annotated[Path, typer.Option("--sheet", help="The filled review sheet (.tsv).")],
    gold: Gold,
    verified_by: Annotated[
        str, typer.Option("--verified-by", help="The reviewer: every kept hit's annotator.")
    ],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="Verified gold (sidecar: <output>.verification.json)."),
    ],
    other: Other = None,
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """Verified gold and its sidecar from the sheet's verdicts, as `pull` writes them."""
    from goldloop.formats.gold import read_gold
    from goldloop.formats.labelstudio.verify import summary_rows
    from goldloop.sheets.review_sheet import read_sheet
    from goldloop.studio.pull import anchor, verified_files

    check_outputs(
        {"--output": output, "--output (its sidecar)": verification_path(output)},
        {"--sheet": sheet, "--gold": gold, "--other": other, **kb_inputs(kb, equivalences)},
    )
    knowledge = open_kb(kb, equivalences)
    first = read_gold(gold, knowledge).documents
    second = None if other is None else read_gold(other, knowledge).documents
    result = read_sheet(sheet, first, second, knowledge, verified_by)
    anchor(result.documents, knowledge, parsing(ctx))
    with gold_lock(output, settings(ctx).redis_url):
        atomic_write_together(verified_files(output, result))
    console.print(
        key_value_table(
            f"sheet import {sheet} → {output} (sidecar {verification_path(output).name})",
            summary_rows(result),
        )
    )
