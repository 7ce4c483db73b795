"""``goldloop baselines``: the lexical floor and an LLM linker, scored on one gold file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from goldloop.cli.common import EQUIVALENCES_OPTION, KB_OPTION, err_console, open_kb
from goldloop.cli.llm import (
    DEFAULT_ATTEMPTS,
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    AttemptsOption,
    BaseUrlOption,
    ConcurrencyOption,
    EffortOption,
    ForceOption,
    ModelOption,
    ProviderOption,
    TimeoutOption,
    annotator_spec,
    retry_policy,
    settle_output,
)
from goldloop.cli.score import BootstrapOption, GoldOption, MatchOption, SeedOption, show_results
from goldloop.llm import make_llm
from goldloop.scoring.baselines import BASELINES, run_baselines
from goldloop.scoring.inputs import read_gold_documents


def baselines(
    gold: GoldOption,
    report_dir: Annotated[
        Path, typer.Option("--report-dir", help="Where baseline_results.json, .csv and .png go.")
    ],
    systems: Annotated[
        str, typer.Option("--systems", help=f"Comma-separated baselines: {', '.join(BASELINES)}.")
    ] = "lexical",
    provider: ProviderOption = None,
    model: ModelOption = None,
    effort: EffortOption = None,
    base_url: BaseUrlOption = None,
    concurrency: ConcurrencyOption = DEFAULT_CONCURRENCY,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    attempts: AttemptsOption = DEFAULT_ATTEMPTS,
    force: ForceOption = False,
    match: MatchOption = "overlap",
    bootstrap: BootstrapOption = 0,
    seed: SeedOption = 0,
    kb: Path | None = KB_OPTION,
    equivalences: Path | None = EQUIVALENCES_OPTION,
) -> None:
    """Run baselines on the gold and score them (lexical: both regimes; llm: linking-only)."""
    knowledge = open_kb(kb, equivalences)
    names = [name.strip() for name in systems.split(",") if name.strip()]
    linker = None
    if "llm" in names:
        spec = annotator_spec(provider, model, effort, base_url, llm_required=True)
        linker = make_llm(spec, retry=retry_policy(timeout, attempts))
    documents = read_gold_documents(gold, knowledge)
    with Progress(console=err_console, transient=True) as bars:

        def progress(system: str, total: int) -> Callable[[], None]:
            task = bars.add_task(f"{system} baseline", total=total)
            return lambda: bars.advance(task)

        results = run_baselines(
            documents,
            names,
            knowledge,
            provider=linker,
            match_mode=match,
            bootstrap=bootstrap,
            seed=seed,
            progress=progress,
            concurrency=concurrency,
        )
    meta = {"gold": str(gold), "kb": str(knowledge.path), "kb_tag": knowledge.tag}
    out = report_dir / "baseline_results.json"
    llm_runs = [r["baseline"] for r in results if "failed" in r["baseline"]][:1]
    settle_output(
        label=f"llm baseline ({linker.tag if linker else ''})",
        asked=sum(run["requests"] for run in llm_runs),
        errors=[
            f"{f['doc_id']} {f['a']}-{f['b']}: {f['error']}"
            for run in llm_runs
            for f in run["failed"]
        ],
        unit="spans",
        out=out,
        answered_before=_spans_answered_in(out),
        force=force,
        write=lambda: show_results(results, "baselines", report_dir, "baseline_results", meta),
        report=out,
    )


def _spans_answered_in(results_path: Path) -> int | None:
    """Spans the llm baseline of an existing results file answered (None: absent or no llm)."""
    try:
        results = json.loads(results_path.read_text(encoding="utf-8"))["results"]
        run = next(r["baseline"] for r in results if "requests" in r.get("baseline", {}))
        return int(run["requests"]) - len(run.get("failed", []))
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
