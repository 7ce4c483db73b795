"""``goldloop agree``: Cohen's κ between two annotators."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from goldloop.atomic import atomic_write_json
from goldloop.cli.common import (
    EquivalencesOption,
    KbOption,
    UrlOption,
    check_outputs,
    console,
    figures_table,
    key_value_table,
    open_kb,
)
from goldloop.errors import GoldloopError
from goldloop.gold import read_gold
from goldloop.kb import KB
from goldloop.scoring.agreement import NONE, AgreementReport, agreement
from goldloop.studio.agreement import double_agreement
from goldloop.studio.connection import connect, resolve_connection
from goldloop.studio.project import export_campaign

TOP_DISAGREEMENTS = 15


def agree(
    gold: Annotated[Path | None, typer.Option("--gold", help="Annotator A's gold JSON.")] = None,
    other: Annotated[Path | None, typer.Option("--other", help="Annotator B's gold JSON.")] = None,
    studio_project: Annotated[
        str | None,
        typer.Option(
            "--studio-project",
            help="Compare the two annotations per task of the Label Studio project NAME-double.",
        ),
    ] = None,
    url: UrlOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Report JSON (default: <gold>.agreement.json or <NAME>.agreement.json).",
        ),
    ] = None,
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """κ on relation (raw and KB-folded) and on direction, over documents both annotated."""
    files = gold is not None and other is not None
    if files == (studio_project is not None) or (gold is None) != (other is None):
        raise GoldloopError("give --gold A --other B, or --studio-project NAME")
    the_kb = open_kb(kb, equivalences)
    if gold is not None and other is not None:
        target = out or gold.with_name(gold.name + ".agreement.json")
        check_outputs({"--out": target}, {"--gold": gold, "--other": other})
        # Read without folding: the raw κ compares ids as the annotators wrote them.
        report = agreement(read_gold(gold).documents, read_gold(other).documents, the_kb)
        data = report.to_json()
        title = f"agreement {gold.name} (A) vs {other.name} (B)"
    else:
        target = out or Path(f"{studio_project}.agreement.json")
        check_outputs({"--out": target})
        connection = resolve_connection(url)
        campaign = export_campaign(
            connection,
            connect(connection),
            str(studio_project),
            roles=("double",),
            need=("double",),
        )
        report, double = double_agreement(campaign.of("double"), the_kb, campaign.titles["double"])
        data = {**report.to_json(), "label_studio": double.to_json()}
        title = f"agreement in {double.project}: first vs second annotation per task"
        console.print(
            f"{double.compared} of {double.tasks} task(s) compared; "
            f"{double.fewer_than_two} with fewer than two annotations, "
            f"{double.extra_annotations} annotation(s) beyond the second not used"
        )
    atomic_write_json(target, data)
    show_report(report, the_kb, title)
    console.print(f"report: {target}")


def show_report(report: AgreementReport, kb: KB, title: str) -> None:
    data = report.to_json()
    rows = [(key, _fmt(value)) for key, value in data.items() if key != "confusion"]
    console.print(key_value_table(title, rows))
    if report.n_docs_only_a or report.n_docs_only_b:
        console.print(
            f"[yellow]not compared:[/] {report.n_docs_only_a} document(s) only A annotated, "
            f"{report.n_docs_only_b} only B annotated"
        )
    cells = [
        (count, a, b) for a, row in report.confusion.items() for b, count in row.items() if a != b
    ]
    if not cells:
        return
    top = sorted(cells, key=lambda c: (-c[0], c[1], c[2]))[:TOP_DISAGREEMENTS]
    console.print(
        figures_table(
            "most frequent disagreements (folded)",
            ("A", "B", "spans"),
            [[_name(a, kb), _name(b, kb), count] for count, a, b in top],
            names=2,
        )
    )


def _name(entity_id: str, kb: KB) -> str:
    relation = kb.get(entity_id)
    return entity_id if entity_id == NONE or relation is None else f"{relation.label} ({entity_id})"


def _fmt(value: object) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
