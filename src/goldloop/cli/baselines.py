"""``goldloop baselines``: the lexical floor and an LLM linker, scored on one gold file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from goldloop.cli.common import EQUIVALENCES_OPTION, KB_OPTION, err_console, open_kb
from goldloop.cli.score import BootstrapOption, GoldOption, MatchOption, SeedOption, show_results
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
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider", help="LLM provider of the llm baseline: openai, anthropic, gemini."
        ),
    ] = None,
    model: Annotated[str | None, typer.Option("--model", help="Model of the llm baseline.")] = None,
    effort: Annotated[
        str | None, typer.Option("--effort", help="Reasoning effort of the llm baseline.")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option("--base-url", help="Provider base URL (an OpenAI-compatible server)."),
    ] = None,
    match: MatchOption = "overlap",
    bootstrap: BootstrapOption = 0,
    seed: SeedOption = 0,
    kb: Path | None = KB_OPTION,
    equivalences: Path | None = EQUIVALENCES_OPTION,
) -> None:
    """Run baselines on the gold and score them (lexical: both regimes; llm: linking-only)."""
    from goldloop.llm import DEFAULT_MODELS, make_provider

    knowledge = open_kb(kb, equivalences)
    names = [name.strip() for name in systems.split(",") if name.strip()]
    linker = None
    if "llm" in names:
        if provider is None:
            raise typer.BadParameter("the llm baseline needs --provider (and optionally --model)")
        linker = make_provider(
            provider, model or DEFAULT_MODELS.get(provider, ""), effort=effort, base_url=base_url
        )
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
        )
    meta = {"gold": str(gold), "kb": str(knowledge.path), "kb_tag": knowledge.tag}
    show_results(results, "baselines", report_dir, "baseline_results", meta)
