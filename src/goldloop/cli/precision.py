"""``goldloop precision``: judge a system's mentions, draw a sample to label, report precision."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import Progress

from goldloop.cli import llm_options
from goldloop.cli.common import (
    EquivalencesOption,
    KbOption,
    UrlOption,
    check_outputs,
    console,
    err_console,
    kb_inputs,
    key_value_table,
    open_kb,
    parsing,
    settings,
)
from goldloop.cli.score import BootstrapOption, DesignOption, SeedOption
from goldloop.errors import GoldloopError
from goldloop.files.atomic import atomic_write_files, atomic_write_json
from goldloop.files.beside import report_path
from goldloop.files.jsonl import write_jsonl
from goldloop.scoring.ppi import MIN_CALIBRATED_LABELS

if TYPE_CHECKING:
    from goldloop.precision.study import PrecisionReport
    from goldloop.scoring.design import CorpusFigures

app = typer.Typer(
    help="Precision without gold: an LLM judge corrected by a labelled sample (PPI).",
    no_args_is_help=True,
)

StudioProjectOption = Annotated[
    str | None,
    typer.Option(
        "--studio-project", help="A Label Studio project of the sample (created when missing)."
    ),
]
DocumentsOption = Annotated[
    Path,
    typer.Option(
        "--documents", help="The texts: a sample dir, a documents JSONL or a gold JSON file."
    ),
]

# A labelling sheet's items: one sitting.
PER_SHEET = 50


@app.command("judge")
@llm_options.with_options()
def judge(
    ctx: typer.Context,
    system: Annotated[Path, typer.Option("--system", help="The system's output to judge.")],
    documents: DocumentsOption,
    out: Annotated[Path, typer.Option("--out", "-o", help="Verdicts JSONL.")],
    llm: llm_options.LlmChoice,
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """Ask an LLM judge about every mention; write one verdict per mention (a failed request
    leaves its mention unchecked, reason ``failed``)."""
    from goldloop.formats.documents import input_files, read_documents
    from goldloop.llm import make_llm
    from goldloop.precision.llm_judge import JudgeReport, judge_mentions
    from goldloop.precision.mentions import system_mentions, write_verdicts
    from goldloop.scoring.inputs import read_predictions

    check_outputs(
        {"--out": out, "--out (its report)": report_path(out)},
        {
            "--system": system,
            "--documents": input_files(documents),
            **kb_inputs(kb, equivalences),
        },
    )
    read = settings(ctx)
    spec = llm.annotator(read.environ)
    the_kb = open_kb(kb, equivalences)
    docs = read_documents(documents, the_kb)
    texts = {doc.doc_id: doc for doc in docs}
    predictions = read_predictions(system, docs, kb=the_kb)
    mentions, abstained = system_mentions(predictions, docs, the_kb)
    judge_provider = make_llm(spec, retry=llm.retry, settings=read)
    with (
        llm_options.exit_130_on_ctrl_c(judge_provider),
        Progress(console=console, transient=True) as progress,
    ):
        task = progress.add_task("judging", total=len(mentions))
        run = judge_mentions(
            mentions, texts, the_kb, judge_provider, lambda: progress.advance(task), llm.concurrency
        )
    malformed = dict(sorted(predictions.malformed.items()))
    report = JudgeReport(run, abstained, malformed, str(system))

    def write() -> None:
        write_verdicts(out, run.mentions)
        atomic_write_json(report_path(out), report.to_dict())
        rows = [
            ("judge", run.judge),
            ("mentions", len(run.mentions)),
            ("abstained rows", abstained),
        ]
        rows += [(f"rows left out: {k}", v) for k, v in malformed.items()]
        rows += [(f"verdict: {k}", v) for k, v in sorted(run.counts.items())]
        rows += [(f"unchecked: {k}", v) for k, v in sorted(run.unchecked_reasons.items())]
        console.print(key_value_table(f"judged {system.name}", rows))
        console.print(f"verdicts: {out}")

    llm_options.settle_output(
        label=f"precision judge ({run.judge})",
        asked=len(mentions),
        errors=[f"{f['key']}: {f['error']}" for f in run.failed],
        answered=len(mentions) - len(run.failed),
        unit="mentions",
        out=out,
        answered_before=_verdicts_in(out),
        force=llm.force,
        write=write,
        report=report_path(out),
    )


def _verdicts_in(path: Path) -> int | None:
    """How many mentions an existing verdicts file judged (0 when unreadable, None when absent)."""
    from goldloop.llm.answer import FAILED
    from goldloop.precision.mentions import read_verdicts

    if not path.exists():
        return None
    try:
        return sum(m.reason != FAILED for m in read_verdicts(path))
    except GoldloopError:
        return 0


@app.command("sample")
def sample(
    ctx: typer.Context,
    verdicts: Annotated[Path, typer.Option("--verdicts", help="Verdicts JSONL.")],
    documents: DocumentsOption,
    out: Annotated[Path, typer.Option("--out", "-o", help="Rows to label (JSONL).")],
    n: Annotated[int, typer.Option("--n", min=1, help="How many mentions to draw.")] = 150,
    seed: Annotated[int, typer.Option(help="Seed of the draw.")] = 0,
    by_relation: Annotated[
        bool, typer.Option("--by-relation", help="Give each relation its proportional share.")
    ] = False,
    studio_project: StudioProjectOption = None,
    sheets: Annotated[
        Path | None,
        typer.Option("--sheets", help="Also write markdown labelling sheets into this folder."),
    ] = None,
    per_sheet: Annotated[
        int, typer.Option("--per-sheet", min=1, help="Items per sheet (one sitting).")
    ] = PER_SHEET,
    url: UrlOption = None,
    kb: KbOption = None,
) -> None:
    """Draw a random sample of judged mentions to label: a JSONL, and a Label Studio project or
    markdown sheets."""
    from goldloop.formats.documents import input_files, read_documents
    from goldloop.precision.mentions import read_verdicts
    from goldloop.precision.study import check_fit, draw_sample, labelling_rows
    from goldloop.sheets.labelling import SHEET_GLOB, row_sentences, sheet_files
    from goldloop.studio.connection import connect, resolve_connection
    from goldloop.studio.precision_project import push_sample

    check_outputs(
        {"--out": out, "--sheets": sheets},
        {"--verdicts": verdicts, "--documents": input_files(documents), **kb_inputs(kb)},
        folders=("--sheets",),
    )
    if sheets is not None and sheets.is_dir() and any(sheets.glob(SHEET_GLOB)):
        # Sheets there may hold a person's ticks: never written over.
        raise GoldloopError(
            f"--sheets {sheets}: holds labelling sheets already; choose another folder"
        )
    judged = read_verdicts(verdicts, open_kb(kb))
    drawn = draw_sample(judged, n, seed, by_relation=by_relation)
    texts = {doc.doc_id: doc for doc in read_documents(documents)}
    check_fit(judged, texts, str(verdicts))  # every verdict, not only the drawn ones
    drawn = draw_sample(judged, n, seed, by_relation=by_relation)
    rows = labelling_rows(drawn, texts, str(verdicts))
    files = None
    if sheets is not None:
        sentences = row_sentences(rows, {k: doc.text for k, doc in texts.items()}, parsing(ctx))
        files = sheet_files(rows, sentences, per_sheet)
    write_jsonl(out, rows)
    if sheets is not None and files is not None:
        atomic_write_files(sheets, files)
        console.print(f"{len(files)} labelling sheet(s) in {sheets}: tick one box per item")
    console.print(
        f"drew {len(drawn)} of {len(judged)} judged mentions (seed {seed}) → {out}; "
        "label each row supported, contradicted or not_found"
    )
    if studio_project:
        studio = connect(resolve_connection(url, settings=settings(ctx)))
        pushed = push_sample(
            studio, studio_project, rows,
            {k: doc.text for k, doc in texts.items()},
        )  # fmt: skip
        console.print(
            f"Label Studio project {studio_project!r} at {studio.connection.url}: "
            f"{pushed.imported} task(s) imported, {pushed.already_there} already there"
        )
    if len(drawn) < MIN_CALIBRATED_LABELS:
        console.print(
            f"[yellow]under {MIN_CALIBRATED_LABELS} labels the corrected precision is uncalibrated"
        )


@app.command("labels")
def labels_command(
    sheets: Annotated[
        Path, typer.Option("--sheets", help="The folder of ticked sheets, or one sheet.")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Labels JSONL for `precision report --labels`.")
    ],
) -> None:
    """Read ticked labelling sheets into labels: one tick is a label, none leaves the item
    unlabelled."""
    from goldloop.sheets.labelling import SHEET_GLOB, read_sheets

    paths = sorted(sheets.glob(SHEET_GLOB)) if sheets.is_dir() else [sheets]
    if not paths:
        raise GoldloopError(f"--sheets {sheets}: no {SHEET_GLOB} files")
    check_outputs({"--out": out}, {"--sheets": paths})
    found, notes = read_sheets(paths)
    write_jsonl(
        out,
        (
            {
                "key": label.key,
                "label": label.label,
                **({"note": notes[label.key]} if label.key in notes else {}),
            }
            for label in found
        ),
    )
    labelled = sum(label.label is not None for label in found)
    console.print(
        f"{labelled} of {len(found)} items labelled ({len(found) - labelled} unlabelled) → {out}"
    )


@app.command("report")
def report(
    ctx: typer.Context,
    verdicts: Annotated[Path, typer.Option("--verdicts", help="Verdicts JSONL.")],
    labels: Annotated[Path | None, typer.Option("--labels", help="Labelled rows (JSONL).")] = None,
    studio_project: StudioProjectOption = None,
    url: UrlOption = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Report JSON.")] = Path("precision.json"),
    documents: Annotated[
        Path | None,
        typer.Option(
            "--documents",
            help="The judged documents with their p_incl (a sample dir, documents JSONL or gold):"
            " corpus figures weigh each mention by its document's 1/p_incl.",
        ),
    ] = None,
    design: DesignOption = "use",
    bootstrap: BootstrapOption = 0,
    seed: SeedOption = 0,
) -> None:
    """Judge-only, PPI-corrected and labels-only precision, with the judge on the sample; with
    --documents, the corpus (design-weighted) figures too."""
    from goldloop.formats.documents import input_files, read_documents
    from goldloop.precision.mentions import read_labels, read_verdicts
    from goldloop.precision.study import LabelStudioLabels, corpus_precision, precision_report
    from goldloop.scoring.design import NO_DESIGN, read_design
    from goldloop.studio.connection import connect, resolve_connection
    from goldloop.studio.precision_project import pull_labels

    if (labels is None) == (studio_project is None):
        raise GoldloopError("give either --labels FILE or --studio-project NAME")
    check_outputs(
        {"--out": out},
        {
            "--verdicts": verdicts,
            "--labels": labels,
            "--documents": None if documents is None else input_files(documents),
        },
    )
    weights = None
    if documents is not None:
        docs = read_documents(documents)
        weights = read_design(docs, design, documents)
    pulled = None
    if labels is not None:
        hand_labels = read_labels(labels)
    else:
        studio = connect(resolve_connection(url, settings=settings(ctx)))
        pulled = pull_labels(studio, str(studio_project))
        hand_labels = pulled.labels
    judged = read_verdicts(verdicts)
    result = precision_report(judged, hand_labels)
    if weights is not None:
        result.corpus = corpus_precision(judged, result, docs, weights, bootstrap, seed)
    if pulled is not None:
        result.label_studio = LabelStudioLabels(
            project=str(studio_project),
            tasks=pulled.tasks,
            labelled=pulled.labelled,
            unlabelled=pulled.unlabelled,
            cancelled_annotations=pulled.cancelled,
            extra_annotations=pulled.extra_annotations,
        )
    atomic_write_json(out, result.to_dict())
    show_precision(result)
    if result.corpus is not None:
        console.print(_corpus_line(result.corpus))
    elif documents is None:
        err_console.print("no corpus figures: --documents gives the mentions' p_incl")
    else:
        err_console.print(NO_DESIGN)
    console.print(f"report: {out}")


def _corpus_line(corpus: CorpusFigures) -> str:
    figures = []
    for key in ("corrected", "judge", "labels"):
        low, high = corpus.intervals.get(key, [None, None])
        found = corpus.values[key]
        value = "undefined" if found is None else f"{found:.3f}"
        interval = "" if low is None or high is None else f" [{low:.3f}, {high:.3f}]"
        figures.append(f"{key} {value}{interval}")
    return (
        f"corpus ({corpus.n_docs} documents standing for {corpus.population_docs:.0f}): "
        + ", ".join(figures)
    )


def show_precision(result: PrecisionReport) -> None:
    title = (
        f"precision without gold ({result.n_judged} mentions judged, {result.n_labelled} labels)"
    )
    rows = [
        ("judge only", str(result.judge)),
        ("corrected (PPI, 95%)", str(result.corrected)),
        ("labels only (Wilson, 95%)", str(result.labels)),
        ("calibrated", result.calibrated),
        ("judge on the sample: false support", result.false_support),
        ("judge on the sample: lost support", result.lost_support),
    ]
    console.print(key_value_table(title, rows))
    left_out = result.unlabelled + result.unknown_keys + result.repeated
    if left_out:
        console.print(
            f"[yellow]labels left out:[/] {result.unlabelled} unlabelled, "
            f"{result.unknown_keys} naming no judged mention, {result.repeated} repeated"
        )
    if not result.calibrated:
        console.print(
            f"[yellow]under {MIN_CALIBRATED_LABELS} labels the corrected interval is uncalibrated"
        )
