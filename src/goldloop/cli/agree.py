"""``goldloop agree``: Cohen's κ between two annotators."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from goldloop.cli.common import (
    EquivalencesOption,
    KbOption,
    UrlOption,
    check_outputs,
    console,
    err_console,
    key_value_table,
    open_kb,
)
from goldloop.cli.score import BootstrapOption, DesignOption, SeedOption, design_mode
from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_write_json
from goldloop.formats.gold import read_gold
from goldloop.kb import KB
from goldloop.scoring.agreement import NONE, AgreementReport, agreement, corpus_agreement
from goldloop.scoring.design import NO_DESIGN, read_design
from goldloop.studio.agreement import double_versions
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
    bootstrap: BootstrapOption = 0,
    seed: SeedOption = 0,
    design: DesignOption = "use",
) -> None:
    """κ on relation (raw and KB-folded) and on direction, over documents both annotated, and
    the corpus (design-weighted) κ beside them."""
    files = gold is not None and other is not None
    if files == (studio_project is not None) or (gold is None) != (other is None):
        raise GoldloopError("give --gold A --other B, or --studio-project NAME")
    the_kb = open_kb(kb, equivalences)
    if gold is not None and other is not None:
        target = out or gold.with_name(gold.name + ".agreement.json")
        check_outputs({"--out": target}, {"--gold": gold, "--other": other})
        # Read without folding: the raw κ compares ids as the annotators wrote them.
        documents, others = read_gold(gold).documents, read_gold(other).documents
        report = agreement(documents, others, the_kb)
        data = report.to_json()
        source: Path | str = gold
        title = f"agreement {gold.name} (A) vs {other.name} (B)"
    else:
        target = out or Path(f"{studio_project}.agreement.json")
        check_outputs({"--out": target})
        connection = resolve_connection(url)
        campaign = export_campaign(
            connection, connect(connection), str(studio_project), roles=("double",)
        )
        documents, others, double = double_versions(
            campaign.of("double"), the_kb, campaign.titles["double"]
        )
        report = agreement(documents, others, the_kb)
        data = {**report.to_json(), "label_studio": double.to_json()}
        source = double.project
        title = f"agreement in {double.project}: first vs second annotation per task"
        console.print(
            f"{double.compared} of {double.tasks} task(s) compared; "
            f"{double.fewer_than_two} with fewer than two annotations, "
            f"{double.extra_annotations} annotation(s) beyond the second not used"
        )
    # The design is A's (the first annotation's task data), over the documents both annotated
    # (A's order, as the pairs').
    in_b = {d.doc_id for d in others}
    shared = [d for d in documents if d.doc_id in in_b]
    weights = read_design(shared, design_mode(design), source)
    data["corpus"] = (
        None
        if weights is None
        else corpus_agreement(report, [d.doc_id for d in shared], the_kb, weights, bootstrap, seed)
    )
    atomic_write_json(target, data)
    show_report(report, the_kb, title)
    if data["corpus"] is not None:
        console.print(corpus_line(data["corpus"]))
    else:
        err_console.print(NO_DESIGN)
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
    table = Table(title="most frequent disagreements (folded)", title_justify="left")
    for column in ("A", "B", "spans"):
        table.add_column(column, justify="right" if column == "spans" else "left")
    for count, a, b in sorted(cells, key=lambda c: (-c[0], c[1], c[2]))[:TOP_DISAGREEMENTS]:
        table.add_row(_name(a, kb), _name(b, kb), str(count))
    console.print(table)


def corpus_line(corpus: dict[str, Any]) -> str:
    """The corpus κ figures with their intervals, and what the documents stand for."""
    figures = []
    for key in ("kappa_entity_id_folded", "kappa_entity_id", "kappa_direction"):
        if key in corpus:
            low, high = corpus["intervals"].get(key, [None, None])
            interval = "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"
            figures.append(f"{key} {_fmt(corpus[key])}{interval}")
    return (
        f"corpus ({corpus['n_docs']} documents standing for {corpus['population_docs']:.0f}): "
        + ", ".join(figures)
    )


def _name(entity_id: str, kb: KB) -> str:
    relation = kb.get(entity_id)
    return entity_id if entity_id == NONE or relation is None else f"{relation.label} ({entity_id})"


def _fmt(value: object) -> str:
    if value is None:
        return "undefined"
    return f"{value:.3f}" if isinstance(value, float) else str(value)
