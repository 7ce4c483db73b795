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
from goldloop.llm import (
    AnnotatorSpec,
    SQLiteCache,
    annotator_tag,
    endpoint_identity,
    make_annotator,
)
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
    kb: Path | None = KB_OPTION,
) -> None:
    """Pre-annotate documents: the model quotes surfaces, goldloop resolves and checks them."""
    if (sample is None) == (documents_path is None):
        raise GoldloopError("give exactly one of --sample DIR or --documents JSONL")
    spec = annotator_spec(provider, model, effort, base_url, key_required=not dry)
    the_kb = open_kb(kb)
    source = sample or documents_path
    assert source is not None
    documents = select_documents(read_documents(source), _roles(roles), limit)
    cache_path = cache or default_cache_path()
    if dry:
        _print_dry_run(documents, the_kb, max_tokens, spec, cache_path, input_price)
        return
    if out is None:
        raise GoldloopError("--out is required (except with --dry-run)")
    annotator = make_annotator(
        spec, the_kb, cache=cache_path, retry=retry_policy(timeout, attempts)
    )
    run = _run(documents, annotator, the_kb, max_tokens, concurrency, verbal_only, cache_path)
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

        try:
            return annotate_documents(
                documents, annotator, kb, max_tokens=max_tokens, concurrency=concurrency,
                verbal_only=verbal_only, on_document=advance,
            )  # fmt: skip
        except KeyboardInterrupt:
            progress.stop()
            err_console.print(
                f"interrupted: nothing written; the {received} answer(s) received are in the "
                f"cache {cache_path}, and a re-run resumes from them",
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
