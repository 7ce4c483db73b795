"""``goldloop annotate``: pre-annotate a sample dir or a documents JSONL with an LLM or ``lexical``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from goldloop.cli import llm_options
from goldloop.cli.common import (
    DEFAULT_ROLES,
    KbOption,
    RolesOption,
    check_outputs,
    console,
    err_console,
    kb_inputs,
    key_value_table,
    open_kb,
    parse_roles,
    settings,
)
from goldloop.errors import GoldloopError, Interrupted
from goldloop.files import jsonl
from goldloop.files.atomic import atomic_write_json
from goldloop.files.beside import report_path
from goldloop.kb import KB
from goldloop.llm.answer import FAILED
from goldloop.llm.batch import BatchPolicy
from goldloop.llm.pricing import PRICES_VARIABLE
from goldloop.llm.tasks.preannotate import DEFAULT_MAX_TOKENS
from goldloop.text.parsing import Parsing

if TYPE_CHECKING:
    from goldloop.formats.gold import Document
    from goldloop.llm import AnnotatorSpec
    from goldloop.llm.annotate import AnnotateReport, AnnotationRun, DryRun
    from goldloop.llm.batch import BatchMode
    from goldloop.llm.pricing import PriceTable


# Long only by its signature: typer reads each option from it (the body is under 80 lines).
@llm_options.with_options(lexical=True)
def annotate(
    ctx: typer.Context,
    llm: llm_options.LlmChoice,
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
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Output token limit per document.")
    ] = DEFAULT_MAX_TOKENS,
    roles: RolesOption = DEFAULT_ROLES,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Annotate only the first N selected documents."),
    ] = None,
    dry: Annotated[
        bool,
        typer.Option("--dry-run", help="Print request counts and token estimates; call nothing."),
    ] = False,
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
    kb: KbOption = None,
) -> None:
    """Pre-annotate documents: the model quotes surfaces, goldloop resolves and checks them."""
    from goldloop.formats.documents import input_files
    from goldloop.llm import make_annotator
    from goldloop.llm.annotate import select_documents
    from goldloop.llm.pricing import prices_path
    from goldloop.sample import read_documents

    if (sample is None) == (documents_path is None):
        raise GoldloopError("give exactly one of --sample DIR or --documents JSONL")
    if out is None and not dry:
        raise GoldloopError("--out is required (except with --dry-run)")
    source_option, source = ("--sample", sample) if sample else ("--documents", documents_path)
    assert source is not None
    env = settings(ctx)
    cache_path = cache or env.cache
    if out is not None and not dry:
        check_outputs(
            {"--out": out, "--out (its report)": report_path(out)},
            {
                source_option: input_files(source),
                **kb_inputs(kb),
                "--cache": cache_path,
                "--prices" if prices else PRICES_VARIABLE: prices_path(prices, env.environ),
                "the parse cache": env.parse_cache,  # None when switched off
            },
        )
    spec = llm.annotator(env.environ, key_required=not dry, api=api)
    wanted_roles = parse_roles(roles)
    table = _prices(prices, env.environ)
    batch_mode = None
    if (batch or resume or no_wait) and out is not None and not dry:
        batch_mode = _batch_mode(spec, out, resume, no_wait, batch_wait, poll_interval)
    the_kb = open_kb(kb)
    read = read_documents(source)
    try:
        documents = select_documents(read, wanted_roles, limit)
    except GoldloopError as exc:
        raise GoldloopError(f"{source_option} {source}: {exc}") from exc
    if dry or out is None:
        _print_dry_run(documents, the_kb, max_tokens, spec, cache_path, input_price, table)
        return
    annotator = make_annotator(
        spec,
        the_kb,
        cache=cache_path,
        retry=llm.retry,
        settings=env,
    )
    run = _run(
        documents,
        annotator,
        the_kb,
        max_tokens,
        llm.concurrency,
        verbal_only,
        batch_mode,
        table,
        Parsing.from_settings(env),
    )
    _settle(out, source, run, annotator.tag, len(documents), llm.force)


def _settle(out: Path, source: Path, run: AnnotationRun, tag: str, asked: int, force: bool) -> None:
    """Write the gold and its report, or refuse to, as settle_output rules for failed requests."""
    from goldloop.formats.gold import write_gold

    report_file = report_path(out)
    # A cut-off or unparsable answer leaves its document out as a failed request does: exit 3,
    # or 4 with nothing written when no document was answered (cron must tell it from success).
    failed = run.report.failed_documents

    def write() -> None:
        write_gold(out, run.documents)
        atomic_write_json(report_file, {"input": str(source), **run.report.to_dict()})
        _print_summary(run.report, out, report_file)

    llm_options.settle_output(
        label=f"annotate ({tag})",
        asked=asked,
        errors=[
            f"{f.doc_id}: {'' if f.failure.reason == FAILED else f.failure.reason + ': '}"
            f"{f.failure.detail}"
            for f in failed
        ],
        answered=len(run.documents),
        unit="documents",
        out=out,
        answered_before=_documents_in(out),
        force=force,
        write=write,
        report=report_file,
        # Answers cut off or unparsable count as failed too; then the line does not say that
        # requests failed.
        none_usable=(
            "every request failed"
            if all(f.failure.reason == FAILED for f in failed)
            else "no request gave a usable answer"
        ),
    )


def _prices(path: Path | None, env: Mapping[str, str]) -> PriceTable:
    from goldloop.llm.pricing import load_prices

    try:
        return load_prices(path, env)
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
    from goldloop.llm.batch import BatchMode, state_path_for

    if not spec.is_llm:
        raise GoldloopError("--batch: the lexical pre-annotator sends no requests")
    state = state_path_for(out)
    if resume and not state.exists():
        raise GoldloopError(f"--resume: there is no batch state file {state}: nothing to collect")
    policy = BatchPolicy(wait_s=0.0 if no_wait else batch_wait, poll_initial_s=poll_interval)
    return BatchMode(state, policy)


def _documents_in(gold: Path) -> int | None:
    """How many documents an existing gold file holds (0 when unreadable, None when absent)."""
    if not gold.exists():
        return None
    try:
        data = jsonl.loads(gold.read_text(encoding="utf-8"))
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
    batch_mode: BatchMode | None,
    prices: PriceTable,
    parsing: Parsing,
) -> AnnotationRun:
    from goldloop.llm.annotate import annotate_documents

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with (
        llm_options.exit_130_on_ctrl_c(annotator),
        Progress(*columns, console=err_console, transient=True) as progress,
    ):
        task = progress.add_task(f"annotate ({annotator.tag})", total=len(documents))
        if batch_mode is not None:
            batch_mode = _with_progress(batch_mode, progress)
        try:
            return annotate_documents(
                documents, annotator, kb, max_tokens=max_tokens, concurrency=concurrency,
                verbal_only=verbal_only, on_document=lambda _: progress.advance(task),
                batch=batch_mode, prices=prices, parsing=parsing,
            )  # fmt: skip
        except KeyboardInterrupt:
            if batch_mode is None or not batch_mode.state_path.exists():
                raise
            raise Interrupted(
                "interrupted: nothing written; the batch jobs run on (listed in "
                f"{batch_mode.state_path}) and the same command collects them"
            ) from None


def _with_progress(batch_mode: BatchMode, progress: Progress) -> BatchMode:
    """The batch mode, showing what each poll found on a line of its own."""
    from goldloop.llm.batch import BatchMode, BatchProgress

    jobs = progress.add_task("batch: submitting", total=None)

    def polled(status: BatchProgress) -> None:
        progress.update(
            jobs,
            total=status.total,
            completed=status.done,
            description=f"batch: {status.open_jobs} job(s) running, "
            f"polled for {status.waited_s:.0f} s",
        )

    return BatchMode(batch_mode.state_path, batch_mode.policy, polled)


def _print_dry_run(
    documents: list[Document],
    kb: KB,
    max_tokens: int,
    spec: AnnotatorSpec,
    cache_path: Path,
    input_price: float | None,
    prices: PriceTable,
) -> None:
    from goldloop.llm import SQLiteCache
    from goldloop.llm.annotate import dry_run

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
    output = "output tokens (at most)" if estimate.output_bounded else "output tokens (estimate)"
    rows: list[tuple[str, Any]] = [
        ("annotator", spec.tag),
        ("api", spec.wire_api or f"{spec.provider}'s own"),
        ("documents", plan.documents),
        ("answered from cache", plan.cached),
        ("requests to send", plan.requests),
        ("input tokens (estimate)", plan.input_tokens),
        ("  of which cached prefix", usage["cached_input_tokens"]),
        (output, usage["output_tokens"]),
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


def _print_summary(report: AnnotateReport, out: Path, report_file: Path) -> None:
    counts = report.counts
    rows: list[tuple[str, Any]] = [("annotator", report.annotator), *counts.items()]
    rows += [
        (f"rejected: {reason}", n) for reason, n in sorted(report.rejections_by_reason.items())
    ]
    rows += [(f"tokens: {key}", n) for key, n in report.usage.items()]
    if report.cost is not None:
        usd = report.cost.usd
        rows.append(("mode", report.cost.mode))
        rows.append(("cost (USD)", "not in the price table" if usd is None else f"{usd:.4f}"))
    console.print(key_value_table(f"annotate → {out}", rows))
    left_out = counts["truncated"] + counts["unparsable"] + counts["failed"]
    if left_out:
        err_console.print(
            f"[yellow]{left_out} document(s) left out (truncated, unparsable or failed): "
            f"see {report_file}; a re-run retries only those[/]"
        )
    console.print(f"report: {report_file}")
