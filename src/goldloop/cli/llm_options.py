"""What every command that calls an LLM shares (annotate, baselines, precision judge): its options,
the rules for writing an output when requests failed, and Ctrl-C."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from goldloop.cli.common import choice_option, option_group
from goldloop.errors import Interrupted, PartialRun, ServiceError
from goldloop.llm import LEXICAL, PROVIDERS, RetryPolicy, choose_annotator
from goldloop.llm.runner import DEFAULT_CONCURRENCY

if TYPE_CHECKING:
    from goldloop.llm import AnnotatorSpec

_PANEL = "LLM"

__all__ = ["LlmChoice", "exit_130_on_ctrl_c", "settle_output", "with_options"]


@dataclass(frozen=True)
class LlmChoice:
    """A command's LLM options, read: what names the annotator (``provider`` is ``None`` when
    not named), how many requests are in flight, how each is retried, and ``force`` (an output
    answering fewer items may replace one answering more: :func:`settle_output`)."""

    provider: str | None
    model: str | None
    effort: str | None
    base_url: str | None
    concurrency: int
    retry: RetryPolicy
    force: bool
    # False where the command takes the offline lexical annotator too.
    llm_required: bool

    def annotator(
        self, env: Mapping[str, str], *, key_required: bool = True, api: str | None = None
    ) -> AnnotatorSpec:
        """The annotator the options name, by :func:`goldloop.llm.choose_annotator`'s rule."""
        return choose_annotator(
            self.provider, self.model, self.effort, self.base_url, env=env,
            llm_required=self.llm_required, key_required=key_required, api=api,
        )  # fmt: skip


def _read(
    provider: str | None = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="Model name (default: per provider).",
            show_default=False,
            rich_help_panel=_PANEL,
        ),
    ] = None,
    effort: Annotated[
        str | None,
        typer.Option(
            "--effort",
            help="Reasoning effort (part of the cache key and the tag).",
            rich_help_panel=_PANEL,
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="Provider base URL (e.g. an OpenAI-compatible server).",
            rich_help_panel=_PANEL,
        ),
    ] = None,
    concurrency: Annotated[
        int,
        typer.Option(
            "--concurrency", min=1, help="Requests in flight at once.", rich_help_panel=_PANEL
        ),
    ] = DEFAULT_CONCURRENCY,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0.001,
            rich_help_panel=_PANEL,
            help="Seconds each attempt waits for an answer; a request gives up after two timeouts.",
        ),
    ] = RetryPolicy().timeout_s,
    attempts: Annotated[
        int,
        typer.Option(
            "--attempts",
            min=1,
            rich_help_panel=_PANEL,
            help="Attempts per request (rate limits, server errors, timeouts).",
        ),
    ] = RetryPolicy().attempts,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            rich_help_panel=_PANEL,
            help="Replace an existing output even by one that answers fewer items.",
        ),
    ] = False,
    *,
    llm_required: bool,
) -> LlmChoice:
    retry = RetryPolicy(attempts=attempts, timeout_s=timeout)
    return LlmChoice(provider, model, effort, base_url, concurrency, retry, force, llm_required)


def with_options(*, lexical: bool = False) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """A decorator: the command's parameter ``llm`` becomes the LLM options, in their own help
    panel, and receives them as one :class:`LlmChoice`; ``lexical``: ``--provider`` takes the
    offline lexical annotator too."""
    names = (*PROVIDERS, *([LEXICAL] if lexical else []))
    provider = Annotated[
        str | None,
        choice_option(
            "--provider",
            choices=names,
            fold_case=True,
            show_default=False,
            rich_help_panel=_PANEL,
            help="Default: the provider whose key is set; openai with --base-url alone.",
        ),
    ]
    fields = list(inspect.signature(_read, eval_str=True).parameters.values())
    options = [
        field.replace(annotation=provider) if field.name == "provider" else field
        for field in fields
        if field.name != "llm_required"
    ]
    return option_group("llm", functools.partial(_read, llm_required=not lexical), options)


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
