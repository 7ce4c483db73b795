"""``goldloop score``: named systems against one gold file."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from goldloop.cli.common import (
    EquivalencesOption,
    Inputs,
    KbOption,
    check_outputs,
    console,
    err_console,
    figures_table,
    kb_inputs,
    open_kb,
)
from goldloop.cli.named import named_files, parse_named
from goldloop.errors import GoldloopError
from goldloop.scoring.matching import MATCH_MODES
from goldloop.scoring.report import (
    NOTHING_ANNOTATED,
    nothing_to_chart,
    report_paths,
    results_tables,
    seed_compatibility_line,
    write_reports,
)
from goldloop.scoring.schemas import ENGINES

if TYPE_CHECKING:
    from goldloop.scoring.score_result import ScoreResult

GoldOption = Annotated[
    Path,
    typer.Option(
        "--gold",
        help="Gold JSON (list of documents), a legacy *.gt.json, or a Label Studio export.",
    ),
]
RegimeOption = Annotated[str, typer.Option("--regime", help="end-to-end, linking-only, or both.")]
MatchOption = Annotated[
    str, typer.Option("--match", help="Span matching: overlap (any shared character) or exact.")
]
BootstrapOption = Annotated[
    int,
    typer.Option(
        "--bootstrap", min=0, help="Document bootstrap resamples, 95% intervals (0: none)."
    ),
]
SeedOption = Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")]
EngineOption = Annotated[
    str, typer.Option("--engine", help=f"Schema counts from: {', '.join(ENGINES)}.")
]
DesignOption = Annotated[
    str,
    typer.Option(
        "--design",
        help="Corpus figures weight documents by 1/p_incl (use), or equally (ignore).",
    ),
]
SurrogateOption = Annotated[
    Path | None,
    typer.Option(
        "--surrogate",
        help="The surrogate part's pre-annotation (annotate over sample --surrogate's dir): adds"
        " prediction-powered corpus figures (corpus_ppi); needs --pre-annotations.",
    ),
]
PreAnnotationsOption = Annotated[
    Path | None,
    typer.Option(
        "--pre-annotations",
        help="The same pre-annotator's output on the gold's documents (with --surrogate).",
    ),
]
ReportDirOption = Annotated[
    Path, typer.Option("--report-dir", help="Where the JSON, CSV and PNG go.")
]


def score(
    gold: GoldOption,
    system: Annotated[
        list[str],
        typer.Option(
            "--system",
            help="NAME=PATH of predictions (JSON/JSONL rows or a gold-format file); repeat.",
        ),
    ],
    regime: RegimeOption = "end-to-end",
    match: MatchOption = "overlap",
    engine: EngineOption = "goldloop",
    id_bridge: Annotated[
        list[str] | None,
        typer.Option(
            "--id-bridge",
            help="CSV mapping minted ids to KB ids: PATH for every system, or NAME=PATH.",
        ),
    ] = None,
    bootstrap: BootstrapOption = 0,
    seed: SeedOption = 0,
    design: DesignOption = "use",
    surrogate: SurrogateOption = None,
    pre_annotations: PreAnnotationsOption = None,
    report_dir: ReportDirOption = Path("score-report"),
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """Score systems on a gold file: detection P/R/F1, entity accuracy, nervaluate schemas,
    linking-only accuracy and coverage, direction, slices and bootstrap intervals; beside
    them, the corpus (design-weighted) figures."""
    from goldloop.scoring.score_files import ScoreOptions, score_files

    options = ScoreOptions(
        _regimes(regime), _match(match), _engine(engine), bootstrap, seed, design_mode(design)
    )
    systems = named_files(system, "--system")
    if not systems:
        raise GoldloopError("give at least one --system NAME=PATH")
    bridges = parse_named(id_bridge or [], "--id-bridge")
    parts = surrogate_files(surrogate, pre_annotations)
    check_report_dir(
        report_dir,
        "score_results",
        {
            "--gold": gold,
            "--system": [path for _, path in systems],
            "--id-bridge": [path for _, path in bridges],
            "--surrogate": surrogate,
            "--pre-annotations": pre_annotations,
            **kb_inputs(kb, equivalences),
        },
    )
    knowledge = open_kb(kb, equivalences)
    _, results = score_files(gold, systems, knowledge, options, bridges, parts)
    meta = {"gold": str(gold), "kb": str(knowledge.path), "kb_tag": knowledge.tag}
    show_results(results, "score", report_dir, "score_results", meta)


def check_report_dir(report_dir: Path, stem: str, inputs: Inputs) -> None:
    """Before any work: the report folder can be written and its files are none of the inputs."""
    check_outputs({"--report-dir": report_dir}, folders=("--report-dir",))
    check_outputs(
        {f"--report-dir ({path.name})": path for path in report_paths(report_dir, stem)}, inputs
    )


def show_results(
    results: list[ScoreResult], title: str, report_dir: Path, stem: str, meta: dict[str, Any]
) -> None:
    """Write JSON, CSV and the chart, then print the table and what was not scored: the files
    come first, so a reader who stops reading (``| head``) or a failing print loses none."""
    from goldloop.scoring.design import NO_DESIGN

    written = write_reports(results, report_dir, stem, meta)
    for table in results_tables(results, title):
        console.print(figures_table(table.title, table.headers, table.rows, legend=table.legend))
    for result in results:
        line = seed_compatibility_line(result)
        if line:
            console.print(line)
    if any(r.corpus is None for r in results):
        err_console.print(NO_DESIGN)
    for result in {r.system: r for r in results}.values():
        malformed = result.inputs.malformed
        if malformed:
            reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(malformed.items()))
            err_console.print(
                f"{result.system}: {sum(malformed.values())} rows not scored ({reasons})"
            )
        unmapped = result.inputs.unmapped_by_id_bridge
        if unmapped:
            err_console.print(f"{result.system}: {unmapped} predicted ids not in the id bridge")
    if nothing_to_chart(results):
        console.print(f"{NOTHING_ANNOTATED}: the gold holds no mentions, so no figure to chart")
    for path in written:
        console.print(f"wrote {path}")


def surrogate_files(
    surrogate: Path | None, pre_annotations: Path | None
) -> tuple[Path, Path] | None:
    """``--surrogate`` and ``--pre-annotations``: both or neither."""
    if (surrogate is None) != (pre_annotations is None):
        given, missing = (
            ("--surrogate", "--pre-annotations") if pre_annotations is None
            else ("--pre-annotations", "--surrogate")
        )  # fmt: skip
        raise GoldloopError(
            f"{given} needs {missing}: the same pre-annotator's output on the gold's documents"
            " and on the surrogate part"
        )
    return None if surrogate is None or pre_annotations is None else (surrogate, pre_annotations)


def _regimes(regime: str) -> tuple[str, ...]:
    from goldloop.scoring.regimes import REGIMES

    if regime == "both":
        return REGIMES
    if regime not in REGIMES:
        raise typer.BadParameter(f"--regime must be one of {', '.join(REGIMES)} or both")
    return (regime,)


def design_mode(design: str) -> str:
    """``--design``'s value, checked."""
    from goldloop.scoring.design import DESIGN_MODES

    if design not in DESIGN_MODES:
        raise typer.BadParameter(f"--design must be one of {', '.join(DESIGN_MODES)}")
    return design


def _engine(engine: str) -> str:
    if engine not in ENGINES:
        raise typer.BadParameter(f"--engine must be one of {', '.join(ENGINES)}")
    return engine


def _match(match: str) -> str:
    if match not in MATCH_MODES:
        raise typer.BadParameter(f"--match must be one of {', '.join(MATCH_MODES)}")
    return match
