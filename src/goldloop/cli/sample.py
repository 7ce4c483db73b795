"""``goldloop sample``, ``goldloop audit``, ``goldloop stats``: thin doors onto ``goldloop.sample``
and ``goldloop.sample.stats``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from goldloop.cli.common import (
    KbOption,
    check_outputs,
    console,
    figures_table,
    kb_inputs,
    key_value_table,
    open_kb,
    parsing,
)
from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_write_json
from goldloop.sample.batch_record import SampleSettings
from goldloop.sample.gate import GateSettings
from goldloop.sample.phase1 import AUTO_MULTIPLE

if TYPE_CHECKING:
    from goldloop.sample.batch_record import SampleResult

DEFAULTS = SampleSettings()
GATE = GateSettings()


# Long only by its signature: typer reads each option from it (the body is under 80 lines).
def sample(
    ctx: typer.Context,
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
    plan: Annotated[
        Path | None,
        typer.Option(
            "--plan",
            help="With --extend: draw the batch a plan file (goldloop plan) sets, its documents "
            "per stratum, all primary (the --n-* sizes are then unused).",
        ),
    ] = None,
    exclude_corpus: Annotated[
        list[Path] | None,
        typer.Option(
            "--exclude-corpus",
            help="A corpus whose documents are never drawn (matched on ids and text hash).",
        ),
    ] = None,
    kb: KbOption = None,
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
    min_chars: Annotated[
        int, typer.Option(min=0, help="Shortest text, in characters.")
    ] = GATE.min_chars,
    max_chars: Annotated[
        int, typer.Option(min=1, help="Longest text, in characters.")
    ] = GATE.max_chars,
    min_sentences: Annotated[
        int, typer.Option(min=0, help="Fewest sentences.")
    ] = GATE.min_sentences,
    min_english_share: Annotated[
        float, typer.Option(min=0, max=1, help="Lowest share of English function words.")
    ] = GATE.min_english_share,
    n_primary: Annotated[
        int, typer.Option(min=0, help="Documents with role primary in this batch.")
    ] = DEFAULTS.n_primary,
    n_double: Annotated[
        int, typer.Option(min=0, help="Documents with role double (annotated twice).")
    ] = DEFAULTS.n_double,
    n_reserve: Annotated[
        int, typer.Option(min=0, help="Documents with role reserve (held back).")
    ] = DEFAULTS.n_reserve,
    n_blind: Annotated[
        int,
        typer.Option(
            min=0,
            help="Documents with role blind (annotated once without candidates in NAME-blind and"
            " once with them in NAME, by two people: what pre-annotation saves; see `effect`).",
        ),
    ] = DEFAULTS.n_blind,
    tail_top_k: Annotated[
        int,
        typer.Option(min=0, help="Labels outside the pool's K most frequent mark a tail document."),
    ] = DEFAULTS.tail_top_k,
    tail_weight: Annotated[
        float, typer.Option(help="Over-allocation factor of tail strata.")
    ] = DEFAULTS.tail_weight,
    none_fraction: Annotated[
        float, typer.Option(min=0, max=1, help="Share of negative controls (no verb mention).")
    ] = DEFAULTS.none_fraction,
    seed: Annotated[
        int, typer.Option(help="Random seed of the draw (combined with the batch number).")
    ] = DEFAULTS.seed,
    workers: Annotated[
        int,
        typer.Option(
            min=1, help="Processes parsing the pool (default: one per CPU core this may use)."
        ),
    ] = DEFAULTS.workers,
    batch_size: Annotated[
        int, typer.Option(min=1, help="Documents per nlp.pipe batch.")
    ] = DEFAULTS.batch_size,
    phase1: Annotated[
        str | None,
        typer.Option(
            "--phase1",
            help=f"Two-phase sampling: parse only N eligible documents drawn at random (auto ="
            f" {AUTO_MULTIPLE}× the batch size), then stratify and draw from them.",
        ),
    ] = None,
    dask: Annotated[
        str | None,
        typer.Option(
            "--dask",
            help="Parse on Dask: a scheduler address, or local:N for N local worker processes"
            " (--workers is then unused).",
        ),
    ] = None,
    surrogate: Annotated[
        int,
        typer.Option(
            "--surrogate",
            min=0,
            help="Also draw N documents of the pool into OUT/surrogate, for a pre-annotator only"
            " (never pushed; with --extend, a batch more): prediction-powered corpus figures"
            " (score --surrogate).",
        ),
    ] = 0,
) -> None:
    """Draw a stratified batch of eligible abstracts into a sample dir (manifest, texts, report)."""
    from goldloop.sample.corpus import CorpusColumns
    from goldloop.sample.run import SampleExists, run_sample

    check_outputs(
        {"--out": out}, {"--corpus": corpus, "--plan": plan, **kb_inputs(kb)}, folders=("--out",)
    )
    settings = SampleSettings(
        columns=CorpusColumns(text=text_column, year=year_column, id_column=id_column),
        gate=GateSettings(min_year, min_chars, max_chars, min_sentences, min_english_share),
        n_primary=n_primary,
        n_double=n_double,
        n_reserve=n_reserve,
        n_blind=n_blind,
        tail_top_k=tail_top_k,
        tail_weight=tail_weight,
        none_fraction=none_fraction,
        seed=seed,
        workers=workers,
        batch_size=batch_size,
        phase1=_phase1_option(phase1),
        dask=dask,
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
        try:
            result = run_sample(
                corpus,
                out,
                knowledge,
                settings,
                extend=extend,
                exclude=exclude_corpus or (),
                on_rows=lambda n: progress.advance(task, n),
                parsing=parsing(ctx),
                plan=plan,
                surrogate=surrogate,
            )
        except SampleExists as exc:
            raise GoldloopError(
                f"--out {exc.sample_dir} already holds a sample: choose another --out, or add "
                "--extend to append a batch to it"
            ) from exc
    _print_sample(result)


def _phase1_option(value: str | None) -> int | str | None:
    if value is None or value.strip().casefold() == "auto":
        return None if value is None else "auto"
    try:
        size = int(value)
    except ValueError:
        size = 0
    if size < 1:
        raise typer.BadParameter(f"--phase1 takes a positive number or auto, got {value!r}")
    return size


def _print_sample(result: SampleResult) -> None:
    from goldloop.sample.surrogate import surrogate_dir

    r = result.report
    rows: list[tuple[str, object]] = [
        ("batch", r.batch),
        (
            "pool cache",
            "hit (no parse)"
            if r.pool_cache.hit
            else f"miss ({r.pool_cache.parsed} documents parsed)",
        ),
        ("rows read", r.rows_read),
        ("eligible", r.eligible),
        *(
            [("phase 1 (parsed pool)", f"{r.phase1.size} (p = {r.phase1.p:.6g})")]
            if r.phase1
            else []
        ),
        *((f"dropped: {reason}", n) for reason, n in r.dropped.items() if n),
        ("already drawn", r.already_drawn),
        ("drawn / requested", f"{r.draw.drawn} / {r.draw.requested}"),
        ("negative controls", r.draw.negative_controls),
        *((f"role: {role}", n) for role, n in r.draw.roles.items()),
    ]
    console.print(key_value_table(f"sample {result.sample_dir}", rows))
    strata = [
        [name, s.pool, s.remaining, s.drawn, f"{s.p_incl:.4f}"] for name, s in r.strata.items()
    ]
    console.print(
        figures_table(
            "strata",
            ("stratum", "pool", "remaining", "drawn", "p_incl"),
            strata,
            legend="p_incl: each drawn document's chance of inclusion (weights are 1/p_incl)",
        )
    )
    if r.draw.shortfall:
        console.print(f"[yellow]the pool could not fill the batch: {r.draw.shortfall} short[/]")
    console.print(f"report: {result.report_path}")
    if result.surrogate_docs:
        console.print(
            f"surrogate part: {result.surrogate_docs} documents in"
            f" {surrogate_dir(result.sample_dir)} (pre-annotate it: annotate --sample that dir)"
        )


def audit(
    sample_dir: Annotated[
        Path, typer.Option("--sample", help="Sample dir written by goldloop sample.")
    ],
    gold: Annotated[
        Path | None,
        typer.Option("--gold", help="Gold JSON to audit against (default: detected mentions)."),
    ] = None,
    kb: KbOption = None,
    min_mentions: Annotated[
        int, typer.Option(min=0, help="Hits a canonical label needs to count as covered.")
    ] = 3,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Directory for audit.json and audit.png (default: --sample)."),
    ] = None,
) -> None:
    """Re-check eligibility, density vs length, gold gaps, label concentration and coverage."""
    from goldloop.sample.audit import audit_sample

    check_outputs(
        {"--out": out},
        {"--gold": gold, **kb_inputs(kb)},
        folders=("--out",),
        receives={"--out": ("audit.json", "audit.png")},
    )

    result = audit_sample(
        sample_dir, open_kb(kb), gold=gold, min_mentions=min_mentions, out_dir=out
    )
    r = result.report
    eligibility = r.eligibility
    concentration = r.label_concentration
    rows: list[tuple[str, object]] = [
        ("documents", r.documents),
        ("batches", ", ".join(map(str, r.batches))),
        ("failing the gate again", f"{eligibility.failing} of {eligibility.checked}"),
        *((f"  {reason}", len(ids)) for reason, ids in eligibility.by_reason.items()),
        ("density vs length, sample (rho)", r.density_vs_length.sample.spearman_rho),
        ("density vs length, pool (rho)", r.density_vs_length.pool.spearman_rho),
        ("labels from", r.label_source),
        ("distinct labels", concentration.distinct_labels),
        ("top-1 / top-5 share", f"{concentration.top1_share} / {concentration.top5_share}"),
        ("Herfindahl index", concentration.herfindahl),
    ]
    if r.gold is not None:
        g = r.gold
        rows += [
            ("sample documents in gold", g.sample_documents_in_gold),
            ("documents without a gold hit", len(g.documents_without_hits)),
            ("negative controls without a hit", len(g.negative_controls_without_hits)),
            ("negative controls with hits", len(g.negative_controls_with_hits)),
        ]
    legend = AUDIT_LEGEND + (AUDIT_GOLD_LEGEND if r.gold is not None else "")
    console.print(key_value_table(f"audit {sample_dir}", rows, legend=legend))
    coverage = r.coverage
    console.print(
        figures_table(
            f"coverage: labels with ≥{coverage.min_mentions} {r.label_source} mentions, "
            f"of {coverage.pool_can_supply} the pool can supply",
            ("batch", "documents", "labels reached", "coverage"),
            [[p.batch, p.documents, p.labels_reached, p.coverage] for p in coverage.curve],
            legend="per batch, cumulative: documents drawn so far; labels reached: labels with "
            "enough mentions in them; coverage: labels reached / labels the pool can supply",
        )
    )
    console.print(f"report: {result.json_path}\nplot: {result.png_path}")


AUDIT_LEGEND = (
    "failing the gate again: drawn documents this batch's gate now drops, by reason; rho: "
    "Spearman's rank correlation of verb mentions with length (0: density does not track "
    "length, 1: longer documents always hold more; None: undefined), in the sample and in the "
    "pool; top-1 / top-5 share: the mentions the most frequent label(s) hold; Herfindahl index: "
    "the sum of squared label shares (1: one label)"
)
AUDIT_GOLD_LEGEND = "; negative controls: documents drawn from the none strata"


# What each row the stats table may show means, by the row's key: the legend names those shown.
STATS_LEGEND = {
    "sample mentions / document (mean)": "mentions: KB mentions the detector finds",
    "sample negative controls": "negative controls: documents drawn from the none strata",
    "gold anchored share": "anchored share: gold hits whose surface is a form of their "
    "relation's label",
}


def stats(
    report_dir: Annotated[
        Path, typer.Option("--report-dir", help="Where dataset_stats.json goes.")
    ],
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help="Corpus table to describe.")
    ] = None,
    sample_dir: Annotated[
        Path | None, typer.Option("--sample", help="Sample dir to describe.")
    ] = None,
    gold: Annotated[Path | None, typer.Option("--gold", help="Gold JSON to describe.")] = None,
    kb: KbOption = None,
    text_column: Annotated[str | None, typer.Option(help="Text column of --corpus.")] = None,
    year_column: Annotated[str | None, typer.Option(help="Year column of --corpus.")] = None,
) -> None:
    """Corpus, KB, sample and gold statistics in one dataset_stats.json (a section per input)."""
    from goldloop.sample.corpus import CorpusColumns
    from goldloop.sample.stats import SampleStats, dataset_stats

    check_outputs(
        {"--report-dir": report_dir},
        {"--corpus": corpus, "--gold": gold, **kb_inputs(kb)},
        folders=("--report-dir",),
        receives={"--report-dir": ("dataset_stats.json",)},
    )
    result = dataset_stats(
        open_kb(kb),
        corpus=corpus,
        columns=CorpusColumns(text=text_column, year=year_column),
        sample=sample_dir,
        gold=gold,
    )
    path = report_dir / "dataset_stats.json"
    atomic_write_json(path, result.to_dict())
    rows: list[tuple[str, object]] = [("KB relations", result.kb.summary.rows)]
    if result.corpus is not None:
        c = result.corpus
        rows += [("corpus documents", c.documents), ("corpus median chars", c.chars.median)]
    if result.sample is not None:
        s = result.sample
        rows.append(("sample documents", s.documents))
        if isinstance(s, SampleStats):  # a plain documents file has no manifest to describe
            rows += [
                ("sample mentions / document (mean)", s.mentions_per_document.mean),
                ("sample negative controls", s.negative_controls),
            ]
    if result.gold is not None:
        g = result.gold
        rows += [
            ("gold documents", g.documents),
            ("gold hits", g.hits),
            ("gold distinct relations", g.distinct_relations),
            ("gold anchored share", g.anchored_share),
        ]
    legend = ["figures of the files given, not estimates"]
    legend += [STATS_LEGEND[key] for key, _ in rows if key in STATS_LEGEND]
    legend.append("every figure and more in dataset_stats.json")
    console.print(key_value_table("dataset statistics", rows, legend="; ".join(legend)))
    console.print(f"written: {path}")
