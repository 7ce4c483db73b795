"""``goldloop pool``: relative recall of several runs on the same documents."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from goldloop.cli.common import (
    EquivalencesOption,
    KbOption,
    check_outputs,
    console,
    err_console,
    figures_table,
    kb_inputs,
    open_kb,
)
from goldloop.cli.named import named_files
from goldloop.cli.score import DesignOption
from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_write_json

if TYPE_CHECKING:
    from goldloop.scoring.design import CorpusFigures


# Long only by its signature: typer reads each option from it (the body is under 80 lines).
def pool(
    runs: Annotated[
        list[str],
        typer.Argument(
            help="Runs as NAME=PATH or PATH: prediction rows (JSON/JSONL) or gold files."
        ),
    ],
    documents: Annotated[
        Path,
        typer.Option(help="The documents all runs ran on: a sample dir, documents JSONL or gold."),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Report JSON.")] = Path("pool.json"),
    bootstrap: Annotated[int, typer.Option(min=0, help="Bootstrap draws over documents.")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap.")] = 0,
    design: DesignOption = "use",
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """Each run's share of the pool of everything any run found (after KB folding); with the
    documents' p_incl, also on the corpus."""
    from goldloop.formats.documents import input_files, read_documents
    from goldloop.scoring.design import NO_DESIGN, read_design
    from goldloop.scoring.inputs import read_predictions
    from goldloop.scoring.pooled import CAVEAT, relative_recall

    if len(runs) < 2:
        raise GoldloopError("pool needs at least two runs")
    named = named_files(runs, "run")
    check_outputs(
        {"--out": out},
        {
            "run": [path for _, path in named],
            "--documents": input_files(documents),
            **kb_inputs(kb, equivalences),
        },
    )
    the_kb = open_kb(kb, equivalences)
    docs = read_documents(documents, the_kb)
    outputs = [read_predictions(path, docs, name=name, kb=the_kb) for name, path in named]
    weights = read_design(docs, design, documents)
    report = relative_recall(
        docs, outputs, the_kb, n_bootstrap=bootstrap, seed=seed, design=weights
    )
    atomic_write_json(out, report.to_dict())
    corpus = report.corpus
    columns = ["run", "mentions", "found", "relative recall (95%)", "found alone"]
    if corpus is not None:
        columns.insert(4, "corpus (95%)")
    rows = []
    for run in report.runs:
        cells: list[object] = [
            run.name,
            run.n_mentions,
            run.n_found,
            "undefined" if run.relative_recall is None else run.relative_recall,
            run.found_alone,
        ]
        if corpus is not None:
            cells.insert(4, _corpus_cell(corpus, run.name))
        rows.append(cells)
    console.print(
        figures_table(
            f"relative recall over a pool of {report.n_pool} mentions "
            f"in {report.n_documents} documents",
            columns,
            rows,
            legend="relative recall: the pooled mentions (those any run found) this run found; "
            "found alone: those no other run found"
            + ("; corpus: the design-weighted relative recall" if corpus is not None else ""),
        )
    )
    if corpus is None:
        err_console.print(NO_DESIGN)
    abstained = {run.name: run.n_abstained for run in report.runs if run.n_abstained}
    if abstained:
        console.print(f"[yellow]abstentions (no id, not pooled):[/] {abstained}")
    for output in outputs:
        if output.malformed:
            reasons = ", ".join(f"{k} {v}" for k, v in sorted(output.malformed.items()))
            console.print(f"[yellow]{output.name}: rows left out:[/] {reasons}")
    console.print(f"[yellow]caveat:[/] {CAVEAT}")
    console.print(f"report: {out}")


def _corpus_cell(corpus: CorpusFigures, name: str) -> str:
    value = corpus.values[name]
    if value is None:
        return "undefined"
    low, high = corpus.intervals.get(name, [None, None])
    interval = "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"
    return f"{value:.3f}{interval}"
