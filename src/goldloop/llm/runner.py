"""Sending many LLM requests: the one runner behind annotate, the precision judge, the baselines
and interactive suggestions.

``concurrency`` requests are in flight at once, each retried by its provider; every request ends
in one answer or one :class:`LLMError`, so one failure never ends a run. The workers are daemon
threads: on Ctrl-C (or when the caller stops reading) no new request starts and no backoff is sat
out, and the process can exit without waiting for an answer already on its way. Answers received
so far are in the provider's cache, so a re-run resumes from them. A task runs through here with
:func:`goldloop.llm.tasks.task.stream_task` / ``run_task``, passing its reader as ``usable``
(:func:`~goldloop.llm.tasks.task.cache_check`), so an answer it cannot parse is never cached and a
re-run asks for it again.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable, Iterator, Sequence

from goldloop.llm.base import LLMError, LLMRequest, LLMResponse, Provider

Answer = LLMResponse | LLMError
DEFAULT_CONCURRENCY = 8
# Cached answers are handed over in batches of this size, so a caller parses them together.
CACHED_BATCH = 64


def stream_requests(
    provider: Provider,
    requests: Sequence[LLMRequest],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    usable: Callable[[str], bool] | None = None,
    shared_system: str | None = None,
) -> Iterator[list[tuple[int, Answer]]]:
    """``(index, answer)`` pairs as they finish, in batches of those finished since the last
    batch (so a caller can work on several at once while the next requests are out).

    Answers already in the cache come first, read on this thread in batches of
    ``CACHED_BATCH``; only the others go to the workers (a cached re-run starts no thread).
    ``shared_system``, the system prompt every request shares, puts the requests sent inside
    the provider's prompt cache for it (:meth:`Provider.prompt_cache`).
    """
    cached: list[tuple[int, Answer]] = []
    jobs: queue.SimpleQueue[tuple[int, LLMRequest]] = queue.SimpleQueue()
    for index, request in enumerate(requests):
        hit = provider.cached_response(provider.key(request))
        if hit is None:
            jobs.put((index, request))
        else:
            cached.append((index, hit))
    for start in range(0, len(cached), CACHED_BATCH):
        yield cached[start : start + CACHED_BATCH]
    remaining = len(requests) - len(cached)
    if not remaining:
        return
    done: queue.SimpleQueue[tuple[int, Answer]] = queue.SimpleQueue()
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            try:
                index, request = jobs.get_nowait()
            except queue.Empty:
                return
            done.put((index, _ask(provider, request, usable, stop)))

    prompt_cache = (
        provider.prompt_cache(shared_system, remaining)
        if shared_system is not None
        else contextlib.nullcontext()
    )
    with prompt_cache:
        for _ in range(max(1, min(concurrency, remaining))):
            threading.Thread(target=work, name="goldloop-llm", daemon=True).start()
        try:
            while remaining:
                batch = [done.get()]
                while True:
                    try:
                        batch.append(done.get_nowait())
                    except queue.Empty:
                        break
                remaining -= len(batch)
                yield batch
        finally:
            stop.set()


def run_requests(
    provider: Provider,
    requests: Sequence[LLMRequest],
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    usable: Callable[[str], bool] | None = None,
    on_answer: Callable[[int, Answer], None] | None = None,
) -> list[Answer]:
    """One answer or error per request, in input order; ``on_answer(index, answer)`` is called
    as each finishes (a progress bar, say)."""
    answers: list[Answer | None] = [None] * len(requests)
    for batch in stream_requests(provider, requests, concurrency=concurrency, usable=usable):
        for index, answer in batch:
            answers[index] = answer
            if on_answer is not None:
                on_answer(index, answer)
    return [answer for answer in answers if answer is not None]


def _ask(
    provider: Provider,
    request: LLMRequest,
    usable: Callable[[str], bool] | None,
    stop: threading.Event,
) -> Answer:
    try:
        return provider.complete(request, usable=usable, cancel=stop)
    except LLMError as exc:
        return exc
    except Exception as exc:  # one request's unexpected error must not end the run
        return LLMError(f"{provider.label}: {type(exc).__name__}: {exc}")
