"""``goldloop score``: named systems against one gold file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from goldloop.cli.common import EQUIVALENCES_OPTION, KB_OPTION, console, err_console, open_kb
from goldloop.scoring.regimes import ENGINES
from goldloop.scoring.report import results_tables, write_reports
from goldloop.scoring.runner import ScoreOptions, regimes_for, score_files

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
    engine: Annotated[
        str, typer.Option("--engine", help=f"Schema counts from: {', '.join(ENGINES)}.")
    ] = "goldloop",
    id_bridge: Annotated[
        list[str] | None,
        typer.Option(
            "--id-bridge",
            help="CSV mapping minted ids to KB ids: PATH for every system, or NAME=PATH.",
        ),
    ] = None,
    bootstrap: BootstrapOption = 0,
    seed: SeedOption = 0,
    report_dir: ReportDirOption = Path("score-report"),
    kb: Path | None = KB_OPTION,
    equivalences: Path | None = EQUIVALENCES_OPTION,
) -> None:
    """Score systems on a gold file: detection P/R/F1, entity accuracy, nervaluate schemas,
    linking-only accuracy and coverage, direction, slices and bootstrap intervals."""
    knowledge = open_kb(kb, equivalences)
    options = ScoreOptions(regimes_for(regime), match, _engine(engine), bootstrap, seed)
    _check_match(match)
    _, results = score_files(gold, system, knowledge, options, id_bridge or [])
    meta = {"gold": str(gold), "kb": str(knowledge.path), "kb_tag": knowledge.tag}
    show_results(results, "score", report_dir, "score_results", meta)


def show_results(
    results: list[dict[str, Any]], title: str, report_dir: Path, stem: str, meta: dict[str, Any]
) -> None:
    """Print the table and what was not scored, then write JSON, CSV and the chart."""
    for table in results_tables(results, title):
        console.print(table)
    for result in {r["system"]: r for r in results}.values():
        malformed = result["inputs"]["malformed"]
        if malformed:
            reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(malformed.items()))
            err_console.print(
                f"{result['system']}: {sum(malformed.values())} rows not scored ({reasons})"
            )
        unmapped = result["inputs"]["unmapped_by_id_bridge"]
        if unmapped:
            err_console.print(f"{result['system']}: {unmapped} predicted ids not in the id bridge")
    for path in write_reports(results, report_dir, stem, meta):
        console.print(f"wrote {path}")


def _engine(engine: str) -> str:
    if engine not in ENGINES:
        raise typer.BadParameter(f"--engine must be one of {', '.join(ENGINES)}")
    return engine


def _check_match(match: str) -> None:
    if match not in ("overlap", "exact"):
        raise typer.BadParameter("--match must be overlap or exact")
