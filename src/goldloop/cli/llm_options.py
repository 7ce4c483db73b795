"""What every command that calls an LLM shares (annotate, baselines, precision judge): its options,
the rules for writing an output when requests failed, and Ctrl-C."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from goldloop.errors import Interrupted, PartialRun, ServiceError
from goldloop.llm import RetryPolicy
from goldloop.llm.runner import DEFAULT_CONCURRENCY

DEFAULT_TIMEOUT_S = RetryPolicy().timeout_s
DEFAULT_ATTEMPTS = RetryPolicy().attempts

ProviderOption = Annotated[
    str | None,
    typer.Option(
        "--provider",
        help="openai, anthropic, gemini (or lexical where allowed). Default: the provider whose "
        "key is set; openai with --base-url alone.",
        show_default=False,
    ),
]
ModelOption = Annotated[
    str | None,
    typer.Option("--model", help="Model name (default: per provider).", show_default=False),
]
EffortOption = Annotated[
    str | None,
    typer.Option("--effort", help="Reasoning effort (part of the cache key and the tag)."),
]
BaseUrlOption = Annotated[
    str | None,
    typer.Option("--base-url", help="Provider base URL (e.g. an OpenAI-compatible server)."),
]
ConcurrencyOption = Annotated[
    int, typer.Option("--concurrency", min=1, help="Requests in flight at once.")
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout",
        min=0.001,
        help="Seconds each attempt waits for an answer; a request gives up after two timeouts.",
    ),
]
AttemptsOption = Annotated[
    int,
    typer.Option(
        "--attempts", min=1, help="Attempts per request (rate limits, server errors, timeouts)."
    ),
]
ForceOption = Annotated[
    bool,
    typer.Option(
        "--force", help="Replace an existing output even by one that answers fewer items."
    ),
]

__all__ = [
    "DEFAULT_ATTEMPTS",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_TIMEOUT_S",
    "AttemptsOption",
    "BaseUrlOption",
    "ConcurrencyOption",
    "EffortOption",
    "ForceOption",
    "ModelOption",
    "ProviderOption",
    "TimeoutOption",
    "exit_130_on_ctrl_c",
    "retry_policy",
    "settle_output",
]


def retry_policy(timeout_s: float, attempts: int) -> RetryPolicy:
    return RetryPolicy(attempts=attempts, timeout_s=timeout_s)


def settle_output(
    *,
    label: str,
    asked: int,
    errors: Sequence[str],
    answered: int,
    unit: str,
    out: Path,
    answered_before: int | None,
    force: bool,
    write: Callable[[], None],
    report: Path,
    none_usable: str = "every request failed",
) -> None:
    """The rules for an output of LLM answers (``errors``, one per failed item; ``answered``,
    the items the new output answers): every request failed → nothing written, exit 4; an
    existing output answering more (``answered_before`` items) is kept unless ``force``, exit 3,
    whether requests failed or the run asked for fewer (``--limit``, other inputs); otherwise
    ``write()``, then exit 3 when requests failed."""
    if errors and len(errors) == asked:
        raise ServiceError(f"{label}: {none_usable}, nothing written: {errors[0]}")
    if answered_before is not None and answered < answered_before and not force:
        why = f"{len(errors)} of {asked} {unit} failed ({errors[0]}); " if errors else ""
        retry = "re-run to retry the failed ones, or " if errors else ""
        raise PartialRun(
            f"{why}kept {out}, which answers {answered_before} (this run: {answered}): "
            f"{retry}--force to replace it"
        )
    write()
    if errors:
        raise PartialRun(
            f"{len(errors)} of {asked} {unit} failed ({errors[0]}): listed in {report}; "
            "a re-run asks only for those"
        )


@contextmanager
def exit_130_on_ctrl_c(annotator: object) -> Iterator[None]:
    """Ctrl-C: nothing is written, and the one line says that a re-run resumes from the answers
    an LLM ``annotator`` cached (exit 130)."""
    from goldloop.llm import Provider

    try:
        yield
    except KeyboardInterrupt:
        resume = ""
        if isinstance(annotator, Provider) and annotator.cache is not None:
            where = getattr(annotator.cache, "path", None)
            resume = (
                f"; the answers received are in the response cache{f' {where}' if where else ''}, "
                "and a re-run resumes from them"
            )
        raise Interrupted(f"interrupted: nothing written{resume}") from None
