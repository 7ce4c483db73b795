"""The task protocol: what every LLM task is, how any task runs, what came of each answer.

A task (:class:`LLMTask`) builds the request for one item (its prompt and answer schema) and reads
an answer's text into the value it asked for. Its reader raises
:class:`~goldloop.llm.answer.Unparsable` when the text is not the JSON it asked for, and
:class:`Rejected` when it is, but names nothing the task can use (an unknown label or verdict).
:func:`outcome_of` turns one answer into a :class:`TaskResult` in the one vocabulary of
:data:`~goldloop.llm.answer.Outcome`; :func:`stream_task` / :func:`run_task` run any task through
:mod:`goldloop.llm.runner` with :func:`cache_check`, so an unparsable answer is never cached (a
rejected one is: asking again would not change it). :class:`TaskReport` is the one shape a run's
outcomes are counted in; each caller writes it under its report's own keys (the files keep
the keys they always had).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from goldloop.llm.answer import FAILED, OK, REJECTED, TRUNCATED, UNPARSABLE, Outcome, Unparsable
from goldloop.llm.base import LLMError, LLMRequest, LLMResponse, Provider
from goldloop.llm.batch import BatchMode, collect_batch
from goldloop.llm.runner import DEFAULT_CONCURRENCY, Answer, stream_requests

ItemT = TypeVar("ItemT", contravariant=True)
ValueT = TypeVar("ValueT", covariant=True)
V = TypeVar("V")
T = TypeVar("T")


class Rejected(Exception):
    """The answer parsed, but names nothing the task can use; ``reason`` says what."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class LLMTask(Protocol[ItemT, ValueT]):
    """One kind of question to an LLM: its request per item and its reading of an answer."""

    @property
    def name(self) -> str: ...

    def request(self, item: ItemT) -> LLMRequest:
        """The prompt and answer schema for one item."""
        ...

    def read(self, text: str) -> ValueT:
        """The value an answer names; :class:`Unparsable` or :class:`Rejected` when none."""
        ...


@dataclass(frozen=True)
class TaskResult(Generic[V]):
    """What came of one answer: its outcome, the value read (``ok`` only), why not (``detail``:
    the rejection reason, the parse error, the request's error) and the answer itself."""

    outcome: Outcome
    value: V | None = None
    detail: str | None = None
    answer: Answer | None = None

    @property
    def cached(self) -> bool:
        return isinstance(self.answer, LLMResponse) and self.answer.cached

    @property
    def usage(self) -> dict[str, int]:
        return self.answer.usage if isinstance(self.answer, LLMResponse) else {}


def outcome_of(task: LLMTask[Any, V], answer: Answer | None) -> TaskResult[V]:
    """The outcome of one answer: failed, cut off, unparsable, rejected or ok, in that order."""
    if answer is None or isinstance(answer, LLMError):
        return TaskResult(FAILED, detail=str(answer) if answer else "no answer", answer=answer)
    if answer.truncated:
        return TaskResult(TRUNCATED, answer=answer)
    try:
        value = task.read(answer.text)
    except Unparsable as exc:
        return TaskResult(UNPARSABLE, detail=str(exc), answer=answer)
    except Rejected as exc:
        return TaskResult(REJECTED, detail=exc.reason, answer=answer)
    return TaskResult(OK, value, answer=answer)


def cache_check(task: LLMTask[Any, Any]) -> Callable[[str], bool]:
    """The runner's ``usable=`` check for ``task``: only an answer it can parse is cached."""

    def check(text: str) -> bool:
        try:
            task.read(text)
        except Unparsable:
            return False
        except Rejected:
            pass  # parsed: the same question would get the same refusal
        return True

    return check


def stream_answers(
    provider: Provider,
    task: LLMTask[Any, Any],
    requests: Sequence[LLMRequest],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    batch: BatchMode | None = None,
    shared_system: str | None = None,
) -> Iterator[list[tuple[int, Answer]]]:
    """The raw ``(index, answer)`` pairs of a task's requests, in batches as they arrive: online
    through the runner (:func:`goldloop.llm.runner.stream_requests`), or through the provider's
    batch API when ``batch`` is given (:func:`goldloop.llm.batch.collect_batch`). Either way only
    an answer the task can parse is cached. The one way any task's requests are sent:
    :func:`stream_task` reads the answers into outcomes; pre-annotation takes them raw, since an
    answer it decoded before is served from the parse cache without reading it again."""
    if batch is not None:
        yield from collect_batch(
            provider,
            requests,
            state_path=batch.state_path,
            policy=batch.policy,
            usable=cache_check(task),
            on_progress=batch.on_progress,
        )
        return
    yield from stream_requests(
        provider,
        requests,
        concurrency=concurrency,
        usable=cache_check(task),
        shared_system=shared_system,
    )


def stream_task(
    provider: Provider,
    task: LLMTask[T, V],
    items: Sequence[T],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    shared_system: str | None = None,
) -> Iterator[list[tuple[int, TaskResult[V]]]]:
    """``(index, result)`` pairs in batches as the answers arrive (:func:`stream_answers`)."""
    requests = [task.request(item) for item in items]
    for batch in stream_answers(
        provider, task, requests, concurrency=concurrency, shared_system=shared_system
    ):
        yield [(index, outcome_of(task, answer)) for index, answer in batch]


def run_task(
    provider: Provider,
    task: LLMTask[T, V],
    items: Sequence[T],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    on_result: Callable[[int, TaskResult[V]], None] | None = None,
) -> list[TaskResult[V]]:
    """One result per item, in input order; ``on_result`` is called as each arrives."""
    results: list[TaskResult[V] | None] = [None] * len(items)
    for batch in stream_task(provider, task, items, concurrency=concurrency):
        for index, result in batch:
            results[index] = result
            if on_result is not None:
                on_result(index, result)
    return [result for result in results if result is not None]


@dataclass
class TaskReport:
    """A run's outcomes in the one shape: how many of each, why the rejected were, how many came
    from the cache, the token usage of fresh answers and of cached ones, and each failed
    request's error."""

    task: str
    outcomes: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    cached: int = 0
    usage: Counter[str] = field(default_factory=Counter)
    usage_from_cache: Counter[str] = field(default_factory=Counter)
    failed: list[tuple[int, str]] = field(default_factory=list)

    def add(self, index: int, result: TaskResult[Any]) -> None:
        self.count(index, result.outcome, result.detail, result.cached, result.usage)

    def count(
        self,
        index: int,
        outcome: Outcome,
        detail: str | None = None,
        cached: bool = False,
        usage: dict[str, int] | None = None,
    ) -> None:
        """One item's outcome, for a task whose items are more than one answer's result (a
        pre-annotated document: its hits and rejections beside the outcome)."""
        self.outcomes[outcome] += 1
        if outcome == REJECTED and detail is not None:
            self.reasons[detail] += 1
        if outcome == FAILED:
            self.failed.append((index, detail or ""))
        self.cached += cached
        (self.usage_from_cache if cached else self.usage).update(usage or {})

    @classmethod
    def of(cls, task: str, results: Sequence[TaskResult[Any]]) -> TaskReport:
        report = cls(task)
        for index, result in enumerate(results):
            report.add(index, result)
        return report
