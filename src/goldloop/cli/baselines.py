"""``goldloop baselines``: the lexical floor, a sentence encoder and an LLM linker, scored on one
gold file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import Progress

from goldloop.cli import llm_options
from goldloop.cli.common import (
    EquivalencesOption,
    KbOption,
    err_console,
    kb_inputs,
    open_kb,
    parsing,
    settings,
)
from goldloop.cli.score import (
    BootstrapOption,
    DesignOption,
    GoldOption,
    MatchOption,
    SeedOption,
    check_report_dir,
    show_results,
)
from goldloop.errors import SettingError
from goldloop.files import jsonl
from goldloop.scoring.modes import BASELINES


# Long only by its signature: typer reads each option from it (the body is under 80 lines).
@llm_options.with_options()
def baselines(
    ctx: typer.Context,
    gold: GoldOption,
    report_dir: Annotated[
        Path, typer.Option("--report-dir", help="Where baseline_results.json, .csv and .png go.")
    ],
    llm: llm_options.LlmChoice,
    systems: Annotated[
        str, typer.Option("--systems", help=f"Comma-separated baselines: {', '.join(BASELINES)}.")
    ] = "lexical",
    encoder: Annotated[
        Path | None,
        typer.Option(
            "--encoder",
            help="Model directory for the encoder baseline: an ONNX export (model.onnx or "
            "onnx/model.onnx) with tokenizer.json; nothing is downloaded.",
            show_default=False,
        ),
    ] = None,
    match: MatchOption = "overlap",
    bootstrap: BootstrapOption = 0,
    seed: SeedOption = 0,
    design: DesignOption = "use",
    kb: KbOption = None,
    equivalences: EquivalencesOption = None,
) -> None:
    """Run baselines on the gold and score them (lexical, encoder: both regimes; llm:
    linking-only)."""
    from goldloop.llm import make_llm
    from goldloop.llm.encoder import Encoder
    from goldloop.scoring.baselines import LlmReport, run_baselines
    from goldloop.scoring.design import read_design
    from goldloop.scoring.score_files import read_scored_gold

    check_report_dir(
        report_dir, "baseline_results", {"--gold": gold, **kb_inputs(kb, equivalences)}
    )
    knowledge = open_kb(kb, equivalences)
    names = [name.strip() for name in systems.split(",") if name.strip()]
    linker = None
    if "llm" in names:
        read = settings(ctx)
        linker = make_llm(llm.annotator(read.environ), retry=llm.retry, settings=read)
    sentence_encoder = None
    if "encoder" in names:
        if encoder is None:
            raise SettingError("encoder", "the encoder baseline needs a model directory")
        sentence_encoder = Encoder(encoder, cache_dir=settings(ctx).home / "encoder")
    documents = read_scored_gold(gold, knowledge)
    the_design = read_design(documents, design, gold)
    with (
        llm_options.exit_130_on_ctrl_c(linker),
        Progress(console=err_console, transient=True) as bars,
    ):

        def progress(system: str, total: int) -> Callable[[], None]:
            task = bars.add_task(f"{system} baseline", total=total)
            return lambda: bars.advance(task)

        results = run_baselines(
            documents,
            names,
            knowledge,
            provider=linker,
            encoder=sentence_encoder,
            match_mode=match,
            bootstrap=bootstrap,
            seed=seed,
            progress=progress,
            concurrency=llm.concurrency,
            design=the_design,
            parsing=parsing(ctx),
        )
    meta = {"gold": str(gold), "kb": str(knowledge.path), "kb_tag": knowledge.tag}
    out = report_dir / "baseline_results.json"
    llm_run = next((r.baseline for r in results if isinstance(r.baseline, LlmReport)), None)
    asked, failed = (0, []) if llm_run is None else (llm_run.requests, llm_run.failed)
    llm_options.settle_output(
        label=f"llm baseline ({linker.tag if linker else 'none'})",
        asked=asked,
        errors=[f"{f.doc_id} {f.a}-{f.b}: {f.error}" for f in failed],
        answered=asked - len(failed),
        unit="spans",
        out=out,
        answered_before=_spans_answered_in(out),
        force=llm.force,
        write=lambda: show_results(results, "baselines", report_dir, "baseline_results", meta),
        report=out,
    )


def _spans_answered_in(results_path: Path) -> int | None:
    """Spans the llm baseline of an existing results file answered (None: absent or no llm)."""
    try:
        results = jsonl.loads(results_path.read_text(encoding="utf-8"))["results"]
        run = next(r["baseline"] for r in results if "requests" in r.get("baseline", {}))
        return int(run["requests"]) - len(run.get("failed", []))
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None
