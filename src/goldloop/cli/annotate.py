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
    annotate_documents,
    dry_run,
    select_documents,
)
from goldloop.atomic import atomic_write_json
from goldloop.cli import llm_options
from goldloop.cli.common import (
    DEFAULT_ROLES,
    KbOption,
    RolesOption,
    check_outputs,
    console,
    err_console,
    key_value_table,
    open_kb,
    parse_roles,
)
from goldloop.errors import GoldloopError
from goldloop.gold import Document, write_gold
from goldloop.kb import KB
from goldloop.llm import (
    AnnotatorSpec,
    SQLiteCache,
    annotator_tag,
    endpoint_identity,
    make_annotator,
)
from goldloop.sample import read_documents
from goldloop.sample.sampledir import MANIFEST, TEXTS
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
    provider: llm_options.ProviderOption = None,
    model: llm_options.ModelOption = None,
    effort: llm_options.EffortOption = None,
    max_tokens: Annotated[
        int, typer.Option("--max-tokens", min=1, help="Output token limit per document.")
    ] = DEFAULT_MAX_TOKENS,
    roles: RolesOption = DEFAULT_ROLES,
    limit: Annotated[
        int | None,
        typer.Option("--limit", min=1, help="Annotate only the first N selected documents."),
    ] = None,
    concurrency: llm_options.ConcurrencyOption = llm_options.DEFAULT_CONCURRENCY,
    timeout: llm_options.TimeoutOption = llm_options.DEFAULT_TIMEOUT_S,
    attempts: llm_options.AttemptsOption = llm_options.DEFAULT_ATTEMPTS,
    dry: Annotated[
        bool,
        typer.Option("--dry-run", help="Print request counts and token estimates; call nothing."),
    ] = False,
    base_url: llm_options.BaseUrlOption = None,
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
    force: llm_options.ForceOption = False,
    kb: KbOption = None,
) -> None:
    """Pre-annotate documents: the model quotes surfaces, goldloop resolves and checks them."""
    if (sample is None) == (documents_path is None):
        raise GoldloopError("give exactly one of --sample DIR or --documents JSONL")
    if out is None and not dry:
        raise GoldloopError("--out is required (except with --dry-run)")
    spec = llm_options.annotator_spec(provider, model, effort, base_url, key_required=not dry)
    wanted_roles = parse_roles(roles)
    source_option, source = ("--sample", sample) if sample else ("--documents", documents_path)
    assert source is not None
    cache_path = cache or default_cache_path()
    if out is not None and not dry:
        sources = [source / MANIFEST, source / TEXTS] if sample else [source]
        check_outputs(
            {"--out": out, "--out (its report)": _report_path(out)},
            {source_option: sources, "--kb": kb, "--cache": cache_path},
        )
    the_kb = open_kb(kb)
    documents = select_documents(read_documents(source), wanted_roles, limit)
    if dry or out is None:
        _print_dry_run(documents, the_kb, max_tokens, spec, cache_path, input_price)
        return
    annotator = make_annotator(
        spec, the_kb, cache=cache_path, retry=llm_options.retry_policy(timeout, attempts)
    )
    run = _run(documents, annotator, the_kb, max_tokens, concurrency, verbal_only)
    report_path = _report_path(out)
    failed = [f for f in run.report["failed_documents"] if f["reason"] == "failed"]

    def write() -> None:
        write_gold(out, run.documents)
        atomic_write_json(report_path, {"input": str(source), **run.report})
        _print_summary(run.report, out, report_path)

    llm_options.settle_output(
        label=f"annotate ({annotator.tag})",
        asked=len(documents),
        errors=[f"{f['doc_id']}: {f['detail']}" for f in failed],
        answered=len(run.documents),
        unit="documents",
        out=out,
        answered_before=_documents_in(out),
        force=force,
        write=write,
        report=report_path,
    )


def _report_path(out: Path) -> Path:
    return out.with_name(out.name + ".report.json")


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
) -> AnnotationRun:
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
        return annotate_documents(
            documents, annotator, kb, max_tokens=max_tokens, concurrency=concurrency,
            verbal_only=verbal_only, on_document=lambda _: progress.advance(task),
        )  # fmt: skip


def _print_dry_run(
    documents: list[Document],
    kb: KB,
    max_tokens: int,
    spec: AnnotatorSpec,
    cache_path: Path,
    input_price: float | None,
) -> None:
    if not spec.is_llm or spec.model is None:
        console.print(f"dry run: {len(documents)} documents, lexical pre-annotator: no requests")
        return
    cache = SQLiteCache(cache_path) if cache_path.exists() else None
    plan = dry_run(documents, kb, max_tokens, spec, cache=cache, input_price_per_mtok=input_price)
    tag = annotator_tag(spec.model, spec.effort, endpoint_identity(spec.provider, spec.base_url))
    rows: list[tuple[str, Any]] = [
        ("annotator", tag),
        ("documents", plan.documents),
        ("answered from cache", plan.cached),
        ("requests to send", plan.requests),
        ("input tokens (estimate)", plan.input_tokens),
        ("output tokens (at most)", plan.max_output_tokens),
    ]
    if plan.input_cost is not None:
        rows.append(("input cost (USD, estimate)", f"{plan.input_cost:.4f}"))
    console.print(key_value_table("dry run: nothing was sent", rows))


def _print_summary(report: dict[str, Any], out: Path, report_path: Path) -> None:
    counts = report["counts"]
    rows: list[tuple[str, Any]] = [("annotator", report["annotator"]), *counts.items()]
    rows += [
        (f"rejected: {reason}", n) for reason, n in sorted(report["rejections_by_reason"].items())
    ]
    rows += [(f"tokens: {key}", n) for key, n in report["usage"].items()]
    console.print(key_value_table(f"annotate → {out}", rows))
    left_out = counts["truncated"] + counts["unparsable"] + counts["failed"]
    if left_out:
        err_console.print(
            f"[yellow]{left_out} document(s) left out (truncated, unparsable or failed): "
            f"see {report_path}; a re-run retries only those[/]"
        )
    console.print(f"report: {report_path}")
