"""``goldloop annotate``: pre-annotate a sample dir or a documents JSONL with an LLM or ``lexical``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from goldloop.annotate import (
    DEFAULT_MAX_TOKENS,
    AnnotationRun,
    DocumentResult,
    DryRun,
    annotate_documents,
    dry_run,
    select_documents,
)
from goldloop.atomic import atomic_write_json
from goldloop.cli.common import KB_OPTION, console, err_console, key_value_table, open_kb
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
from goldloop.errors import EXIT_INTERRUPTED, GoldloopError
from goldloop.gold import Document, write_gold
from goldloop.kb import KB
from goldloop.llm import AnnotatorSpec, SQLiteCache, make_annotator
from goldloop.llm.batch import BatchMode, BatchPolicy, BatchProgress, state_path_for
from goldloop.llm.pricing import PRICES_VARIABLE, PriceTable, load_prices
from goldloop.sample import read_documents
from goldloop.settings import default_cache_path


def annotate(
    sample: Annotated[
        Path | None, typer.Option("--sample", help="Sample dir (manifest.csv + texts.jsonl).")
    ] = None,
    documents_path: Annotated[
        Path | None,
        typer.Option(
            "--documents",
            help="A documents JSONL ({doc_id, text, ...} per line) instead of --sample.",
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="Gold JSON to write; the report goes to <out>.report.json."
        ),
    ] = None,
    provider: ProviderOption = None,
    model: ModelOption = None,
    effort: EffortOption = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Output token limit per document.")
    ] = DEFAULT_MAX_TOKENS,
    roles: Annotated[
        str,
        typer.Option(
            "--roles",
            help="Comma-separated roles to annotate (documents without a role are kept).",
        ),
    ] = "primary,double",
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Annotate only the first N selected documents."),
    ] = None,
    concurrency: ConcurrencyOption = DEFAULT_CONCURRENCY,
    timeout: TimeoutOption = DEFAULT_TIMEOUT_S,
    attempts: AttemptsOption = DEFAULT_ATTEMPTS,
    dry: Annotated[
        bool,
        typer.Option("--dry-run", help="Print request counts and token estimates; call nothing."),
    ] = False,
    base_url: BaseUrlOption = None,
    verbal_only: Annotated[
        bool,
        typer.Option(
            "--verbal-only/--no-verbal-only",
            help="Reject verb-predicate labels on spans without a verb (non_verbal).",
        ),
    ] = True,
    cache: Annotated[
        Path | None,
        typer.Option(
            "--cache",
            help="Response cache (default: .goldloop/cache.sqlite or $GOLDLOOP_CACHE).",
            show_default=False,
        ),
    ] = None,
    input_price: Annotated[
        float | None,
        typer.Option(
            "--input-price", help="USD per million input tokens, for the --dry-run cost estimate."
        ),
    ] = None,
    force: ForceOption = False,
    api: Annotated[
        str | None,
        typer.Option(
            "--api",
            help="OpenAI wire API: responses (default on OpenAI's own endpoint) or chat "
            "(default for an OpenAI-compatible server). Part of the cache key.",
            show_default=False,
        ),
    ] = None,
    batch: Annotated[
        bool,
        typer.Option(
            "--batch",
            help="Send through the provider's batch API (about half the price; answers within "
            "24 h). Job ids are kept in <out>.batch.json; the same command collects them.",
        ),
    ] = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume", help="Collect the batch jobs of <out>.batch.json (implies --batch)."
        ),
    ] = False,
    no_wait: Annotated[
        bool,
        typer.Option(
            "--no-wait", help="With --batch: submit (or poll once) and exit 5 while jobs run."
        ),
    ] = False,
    batch_wait: Annotated[
        float,
        typer.Option(
            "--batch-wait",
            min=0,
            help="With --batch: seconds to poll before exiting 5 (jobs run on).",
        ),
    ] = BatchPolicy().wait_s,
    poll_interval: Annotated[
        float,
        typer.Option(
            "--poll-interval",
            min=0.001,
            help="With --batch: seconds before the first poll; doubles up to 300.",
        ),
    ] = BatchPolicy().poll_initial_s,
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help=f"Price table JSON for costs (default: ${PRICES_VARIABLE} or the shipped one).",
            show_default=False,
        ),
    ] = None,
    kb: Path | None = KB_OPTION,
) -> None:
    """Pre-annotate documents: the model quotes surfaces, goldloop resolves and checks them."""
    if (sample is None) == (documents_path is None):
        raise GoldloopError("give exactly one of --sample DIR or --documents JSONL")
    spec = annotator_spec(provider, model, effort, base_url, key_required=not dry, api=api)
    the_kb = open_kb(kb)
    source = sample or documents_path
    assert source is not None
    documents = select_documents(read_documents(source), _roles(roles), limit)
    cache_path = cache or default_cache_path()
    table = _prices(prices)
    if dry:
        _print_dry_run(documents, the_kb, max_tokens, spec, cache_path, input_price, table)
        return
    if out is None:
        raise GoldloopError("--out is required (except with --dry-run)")
    batch_mode = None
    if batch or resume or no_wait:
        batch_mode = _batch_mode(spec, out, resume, no_wait, batch_wait, poll_interval)
    annotator = make_annotator(
        spec, the_kb, cache=cache_path, retry=retry_policy(timeout, attempts)
    )
    run = _run(
        documents, annotator, the_kb, max_tokens, concurrency, verbal_only, cache_path,
        batch_mode, table,
    )  # fmt: skip
    report_path = out.with_name(out.name + ".report.json")
    failed = [f for f in run.report["failed_documents"] if f["reason"] == "failed"]

    def write() -> None:
        write_gold(out, run.documents)
        atomic_write_json(report_path, {"input": str(source), **run.report})
        _print_summary(run.report, out, report_path)

    settle_output(
        label=f"annotate ({annotator.tag})",
        asked=len(documents),
        errors=[f"{f['doc_id']}: {f['detail']}" for f in failed],
        unit="documents",
        out=out,
        answered_before=_documents_in(out),
        force=force,
        write=write,
        report=report_path,
    )


def _prices(path: Path | None) -> PriceTable:
    try:
        return load_prices(path)
    except GoldloopError as exc:
        where = "--prices" if path is not None else PRICES_VARIABLE
        raise GoldloopError(f"{where}: {exc}") from exc


def _batch_mode(
    spec: AnnotatorSpec,
    out: Path,
    resume: bool,
    no_wait: bool,
    batch_wait: float,
    poll_interval: float,
) -> BatchMode:
    if not spec.is_llm:
        raise GoldloopError("--batch: the lexical pre-annotator sends no requests")
    state = state_path_for(out)
    if resume and not state.exists():
        raise GoldloopError(f"--resume: there is no batch state file {state}: nothing to collect")
    policy = BatchPolicy(wait_s=0.0 if no_wait else batch_wait, poll_initial_s=poll_interval)
    return BatchMode(state, policy)


def _roles(roles: str) -> list[str]:
    return [r.strip() for r in roles.split(",") if r.strip()]


def _documents_in(gold: Path) -> int | None:
    """How many documents an existing gold file holds (0 when unreadable, None when absent)."""
    if not gold.exists():
        return None
    try:
        data = json.loads(gold.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    return len(data) if isinstance(data, list) else 0


def _run(
    documents: list[Document],
    annotator: Any,
    kb: KB,
    max_tokens: int,
    concurrency: int,
    verbal_only: bool,
    cache_path: Path,
    batch_mode: BatchMode | None,
    prices: PriceTable,
) -> AnnotationRun:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    received = 0
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task(f"annotate ({annotator.tag})", total=len(documents))

        def advance(result: DocumentResult) -> None:
            nonlocal received
            received += result.failure is None or result.failure["reason"] != "failed"
            progress.advance(task)

        if batch_mode is not None:
            jobs = progress.add_task("batch jobs", total=None)

            def polled(status: BatchProgress) -> None:
                progress.update(
                    jobs,
                    total=status.total,
                    completed=status.done,
                    description=f"batch: {status.open_jobs} job(s) running, "
                    f"polled for {status.waited_s:.0f} s",
                )

            batch_mode = BatchMode(batch_mode.state_path, batch_mode.policy, polled)
        try:
            return annotate_documents(
                documents, annotator, kb, max_tokens=max_tokens, concurrency=concurrency,
                verbal_only=verbal_only, on_document=advance, batch=batch_mode, prices=prices,
            )  # fmt: skip
        except KeyboardInterrupt:
            progress.stop()
            where = (
                f"the batch jobs run on (listed in {batch_mode.state_path}) and the same command "
                "collects them"
                if batch_mode is not None and batch_mode.state_path.exists()
                else "a re-run resumes from them"
            )
            err_console.print(
                f"interrupted: nothing written; the {received} answer(s) received are in the "
                f"cache {cache_path}; {where}",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(EXIT_INTERRUPTED) from None


def _print_dry_run(
    documents: list[Document],
    kb: KB,
    max_tokens: int,
    spec: AnnotatorSpec,
    cache_path: Path,
    input_price: float | None,
    prices: PriceTable,
) -> None:
    if not spec.is_llm or spec.model is None:
        console.print(f"dry run: {len(documents)} documents, lexical pre-annotator: no requests")
        return
    cache = SQLiteCache(cache_path) if cache_path.exists() else None
    plan = dry_run(
        documents, kb, max_tokens, spec, cache=cache, input_price_per_mtok=input_price,
        prices=prices,
    )  # fmt: skip
    console.print(key_value_table("dry run: nothing was sent", _dry_run_rows(spec, plan)))


def _dry_run_rows(spec: AnnotatorSpec, plan: DryRun) -> list[tuple[str, Any]]:
    estimate = plan.estimate
    usage = estimate.usage
    basis = (
        f"calibrated on {estimate.calibrated_on} cached answer(s)"
        if estimate.calibrated_on
        else "4 characters a token; output at its limit"
    )
    output_label = (
        "output tokens (at most)" if estimate.output_bounded else "output tokens (estimate)"
    )
    rows: list[tuple[str, Any]] = [
        ("annotator", spec.tag),
        ("api", spec.wire_api or spec.provider),
        ("documents", plan.documents),
        ("answered from cache", plan.cached),
        ("requests to send", plan.requests),
        ("input tokens (estimate)", plan.input_tokens),
        ("  of which cached prefix", usage["cached_input_tokens"]),
        (output_label, usage["output_tokens"]),
        ("estimated from", basis),
    ]
    if plan.input_cost is not None:
        rows.append(("input cost (USD, estimate)", f"{plan.input_cost:.4f}"))
    bound = "at most " if estimate.output_bounded else ""
    if estimate.online_usd is not None and estimate.batch_usd is not None:
        rows.append(("cost online (USD)", f"{bound}{estimate.online_usd:.4f}"))
        rows.append(("cost with --batch (USD)", f"{bound}{estimate.batch_usd:.4f}"))
        rows.append(("prices", f"{plan.prices.path} ({plan.prices.date})"))
    else:
        rows.append(("cost", f"{spec.provider}/{spec.model} is not in {plan.prices.path}"))
    return rows


def _print_summary(report: dict[str, Any], out: Path, report_path: Path) -> None:
    counts = report["counts"]
    rows: list[tuple[str, Any]] = [("annotator", report["annotator"]), *counts.items()]
    rows += [
        (f"rejected: {reason}", n) for reason, n in sorted(report["rejections_by_reason"].items())
    ]
    rows += [(f"tokens: {key}", n) for key, n in report["usage"].items()]
    if "cost" in report:
        usd = report["cost"]["usd"]
        rows.append(("mode", report["mode"]))
        rows.append(("cost (USD)", "not in the price table" if usd is None else f"{usd:.4f}"))
    console.print(key_value_table(f"annotate → {out}", rows))
    left_out = counts["truncated"] + counts["unparsable"] + counts["failed"]
    if left_out:
        err_console.print(
            f"[yellow]{left_out} document(s) left out (truncated, unparsable or failed): "
            f"see {report_path}; a re-run retries only those[/]"
        )
    console.print(f"report: {report_path}")
