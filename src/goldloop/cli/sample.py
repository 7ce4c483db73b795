"""``goldloop sample``, ``goldloop audit``, ``goldloop stats``: thin doors onto ``goldloop.sample``
and ``goldloop.stats``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from goldloop.cli.common import KB_OPTION, console, key_value_table, open_kb
from goldloop.sample.corpus import CorpusColumns
from goldloop.sample.gate import GateSettings
from goldloop.sample.run import SampleResult, SampleSettings, run_sample

DEFAULTS = SampleSettings()
GATE = GateSettings()


def sample(
    corpus: Annotated[
        Path,
        typer.Option("--corpus", help="Corpus table: .tsv, .tsv.gz, .csv, .jsonl or .parquet."),
    ],
    out: Annotated[
        Path, typer.Option("--out", help="Sample dir to create (or to extend with --extend).")
    ],
    extend: Annotated[
        bool, typer.Option("--extend", help="Append a batch to the existing sample in --out.")
    ] = False,
    exclude_corpus: Annotated[
        list[Path] | None,
        typer.Option(
            "--exclude-corpus",
            help="A corpus whose documents are never drawn (matched on ids and text hash).",
        ),
    ] = None,
    kb: Path | None = KB_OPTION,
    text_column: Annotated[
        str | None, typer.Option(help="Text column (default: abstract, summary or text).")
    ] = None,
    year_column: Annotated[
        str | None, typer.Option(help="Year column (default: publication_year, year, ...).")
    ] = None,
    id_column: Annotated[
        str | None,
        typer.Option(
            help="Declared id column, after pmid, doi, openalex, mag, pmcid (default: doc_id, id).",
        ),
    ] = None,
    min_year: Annotated[int, typer.Option(help="Earliest publication year.")] = GATE.min_year,
    min_chars: Annotated[int, typer.Option(help="Shortest text, in characters.")] = GATE.min_chars,
    max_chars: Annotated[int, typer.Option(help="Longest text, in characters.")] = GATE.max_chars,
    min_sentences: Annotated[int, typer.Option(help="Fewest sentences.")] = GATE.min_sentences,
    min_english_share: Annotated[
        float, typer.Option(help="Lowest share of English function words.")
    ] = GATE.min_english_share,
    n_primary: Annotated[
        int, typer.Option(help="Documents with role primary in this batch.")
    ] = DEFAULTS.n_primary,
    n_double: Annotated[
        int, typer.Option(help="Documents with role double (annotated twice).")
    ] = DEFAULTS.n_double,
    n_reserve: Annotated[
        int, typer.Option(help="Documents with role reserve (held back).")
    ] = DEFAULTS.n_reserve,
    tail_top_k: Annotated[
        int, typer.Option(help="Labels outside the pool's K most frequent mark a tail document.")
    ] = DEFAULTS.tail_top_k,
    tail_weight: Annotated[
        float, typer.Option(help="Over-allocation factor of tail strata.")
    ] = DEFAULTS.tail_weight,
    none_fraction: Annotated[
        float, typer.Option(help="Share of negative controls (no verb mention).")
    ] = DEFAULTS.none_fraction,
    seed: Annotated[
        int, typer.Option(help="Random seed of the draw (combined with the batch number).")
    ] = DEFAULTS.seed,
    workers: Annotated[
        int, typer.Option(help="spaCy processes for parsing (nlp.pipe n_process).")
    ] = DEFAULTS.workers,
    batch_size: Annotated[
        int, typer.Option(help="Documents per nlp.pipe batch.")
    ] = DEFAULTS.batch_size,
) -> None:
    """Draw a stratified batch of eligible abstracts into a sample dir (manifest, texts, report)."""
    settings = SampleSettings(
        columns=CorpusColumns(text=text_column, year=year_column, id_column=id_column),
        gate=GateSettings(min_year, min_chars, max_chars, min_sentences, min_english_share),
        n_primary=n_primary,
        n_double=n_double,
        n_reserve=n_reserve,
        tail_top_k=tail_top_k,
        tail_weight=tail_weight,
        none_fraction=none_fraction,
        seed=seed,
        workers=workers,
        batch_size=batch_size,
    )
    knowledge = open_kb(kb)
    with Progress(
        TextColumn("[bold]reading and parsing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("rows"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as progress:
        task = progress.add_task("parse", total=None)
        result = run_sample(
            corpus,
            out,
            knowledge,
            settings,
            extend=extend,
            exclude=exclude_corpus or (),
            on_rows=lambda n: progress.advance(task, n),
        )
    _print_sample(result)


def _print_sample(result: SampleResult) -> None:
    r = result.report
    rows: list[tuple[str, object]] = [
        ("batch", r["batch"]),
        ("pool cache", "hit (no parse)" if r["pool_cache"]["hit"] else "miss (parsed)"),
        ("rows read", r["rows_read"]),
        ("eligible (pool)", r["eligible"]),
        *((f"dropped: {reason}", n) for reason, n in r["dropped"].items() if n),
        ("already drawn", r["already_drawn"]),
        ("drawn / requested", f"{r['drawn']} / {r['requested']}"),
        ("negative controls", r["negative_controls"]),
        *((f"role: {role}", n) for role, n in r["roles"].items()),
    ]
    console.print(key_value_table(f"sample {result.sample_dir}", rows))
    table = Table(title="strata", title_justify="left")
    for column in ("stratum", "pool", "remaining", "drawn", "p_incl"):
        table.add_column(column, justify="left" if column == "stratum" else "right")
    for name, s in r["strata"].items():
        table.add_row(
            name, str(s["pool"]), str(s["remaining"]), str(s["drawn"]), f"{s['p_incl']:.4f}"
        )
    console.print(table)
    if r["shortfall"]:
        console.print(f"[yellow]the pool could not fill the batch: {r['shortfall']} short[/]")
    console.print(f"report: {result.report_path}")
