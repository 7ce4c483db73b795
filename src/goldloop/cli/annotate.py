"""``goldloop annotate``: pre-annotate a sample dir or a documents JSONL with an LLM or ``lexical``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from goldloop.annotate import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_TOKENS,
    DocumentResult,
    annotate_documents,
    dry_run,
    select_documents,
)
from goldloop.atomic import atomic_write_json
from goldloop.cli.common import KB_OPTION, console, err_console, key_value_table, open_kb
from goldloop.errors import GoldloopError
from goldloop.gold import write_gold
from goldloop.kb import KB
from goldloop.lexical import LexicalAnnotator
from goldloop.llm import (
    DEFAULT_MODELS,
    PROVIDERS,
    Provider,
    SQLiteCache,
    credentials_set,
    make_provider,
)
from goldloop.sample import read_documents
from goldloop.settings import default_cache_path


def annotate(
    sample: Path | None = typer.Option(
        None, "--sample", help="Sample dir (manifest.csv + texts.jsonl)."
    ),
    documents_path: Path | None = typer.Option(
        None,
        "--documents",
        help="A documents JSONL ({doc_id, text, ...} per line) instead of --sample.",
    ),
    out: Path | None = typer.Option(
        None, "--out", "-o", help="Gold JSON to write; the report goes to <out>.report.json."
    ),
    provider: str | None = typer.Option(
        None,
        "--provider",
        help="openai, anthropic, gemini or lexical (default: the first provider whose key is set, else lexical).",
        show_default=False,
    ),
    model: str | None = typer.Option(
        None, "--model", help="Model name (default: per provider).", show_default=False
    ),
    effort: str | None = typer.Option(
        None, "--effort", help="Reasoning effort (part of the cache key and the tag)."
    ),
    max_tokens: int = typer.Option(
        DEFAULT_MAX_TOKENS, "--max-tokens", min=1, help="Output token limit per document."
    ),
    roles: str = typer.Option(
        "primary,double",
        "--roles",
        help="Comma-separated roles to annotate (documents without a role are kept).",
    ),
    limit: int | None = typer.Option(
        None, "--limit", min=1, help="Annotate only the first N selected documents."
    ),
    concurrency: int = typer.Option(
        DEFAULT_CONCURRENCY, "--concurrency", min=1, help="Requests in flight at once."
    ),
    dry: bool = typer.Option(
        False, "--dry-run", help="Print request counts and token estimates; call nothing."
    ),
    base_url: str | None = typer.Option(
        None, "--base-url", help="Provider base URL (e.g. an OpenAI-compatible server)."
    ),
    verbal_only: bool = typer.Option(
        True,
        "--verbal-only/--no-verbal-only",
        help="Reject verb-predicate labels on spans without a verb (non_verbal).",
    ),
    cache: Path | None = typer.Option(
        None,
        "--cache",
        help="Response cache (default: .goldloop/cache.sqlite or $GOLDLOOP_CACHE).",
        show_default=False,
    ),
    input_price: float | None = typer.Option(
        None, "--input-price", help="USD per million input tokens, for the --dry-run cost estimate."
    ),
    kb: Path | None = KB_OPTION,
) -> None:
    """Pre-annotate documents: the model quotes surfaces, goldloop resolves and checks them."""
    if (sample is None) == (documents_path is None):
        raise GoldloopError("give exactly one of --sample DIR or --documents JSONL")
    the_kb = open_kb(kb)
    source = sample or documents_path
    assert source is not None
    documents = select_documents(read_documents(source), _roles(roles), limit)
    name = _provider_name(provider, base_url)
    model = model or DEFAULT_MODELS.get(name)
    cache_path = cache or default_cache_path()
    if dry:
        _print_dry_run(documents, the_kb, max_tokens, name, model, effort, cache_path, input_price)
        return
    if out is None:
        raise GoldloopError("--out is required (except with --dry-run)")
    annotator: Provider | LexicalAnnotator
    if name == "lexical":
        annotator = LexicalAnnotator(the_kb)
    else:
        assert model is not None
        annotator = make_provider(name, model, effort=effort, base_url=base_url, cache=cache_path)
    run = _run(documents, annotator, the_kb, max_tokens, concurrency, verbal_only)
    write_gold(out, run.documents)
    report_path = out.with_name(out.name + ".report.json")
    atomic_write_json(report_path, {"input": str(source), **run.report})
    _print_summary(run.report, out, report_path)


def _roles(roles: str) -> list[str]:
    return [r.strip() for r in roles.split(",") if r.strip()]


def _provider_name(provider: str | None, base_url: str | None) -> str:
    """The provider asked for, else the first whose key is set (openai with a base URL), else lexical."""
    if provider is None:
        available = ["openai"] if base_url else credentials_set()
        return available[0] if available else "lexical"
    if provider != "lexical" and provider not in PROVIDERS:
        raise GoldloopError(
            f"unknown provider {provider!r} (known: lexical, {', '.join(PROVIDERS)})"
        )
    return provider


def _run(
    documents: list[Any],
    annotator: Provider | LexicalAnnotator,
    kb: KB,
    max_tokens: int,
    concurrency: int,
    verbal_only: bool,
) -> Any:
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err_console, transient=True) as progress:
        task = progress.add_task(f"annotate ({annotator.tag})", total=len(documents))

        def advance(_: DocumentResult) -> None:
            progress.advance(task)

        return annotate_documents(
            documents, annotator, kb, max_tokens=max_tokens, concurrency=concurrency,
            verbal_only=verbal_only, on_document=advance,
        )  # fmt: skip


def _print_dry_run(
    documents: list[Any],
    kb: KB,
    max_tokens: int,
    name: str,
    model: str | None,
    effort: str | None,
    cache_path: Path,
    input_price: float | None,
) -> None:
    if name == "lexical" or model is None:
        console.print(f"dry run: {len(documents)} documents, lexical pre-annotator: no requests")
        return
    cache = SQLiteCache(cache_path) if cache_path.exists() else None
    plan = dry_run(
        documents, kb, max_tokens, provider=name, model=model, effort=effort, cache=cache,
        input_price_per_mtok=input_price,
    )  # fmt: skip
    rows: list[tuple[str, Any]] = [
        ("annotator", f"{model}@{effort}" if effort else model),
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
