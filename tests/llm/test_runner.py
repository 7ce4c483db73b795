"""The request runner with a real SDK against the fake provider: order, errors, concurrency, stop."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from goldloop.llm import LLMError, LLMRequest, LLMResponse, RetryPolicy
from goldloop.llm.runner import run_requests, stream_requests
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply

SCHEMA = {"type": "object"}


def requests(n: int) -> list[LLMRequest]:
    return [LLMRequest("sys", f"document {k}", SCHEMA, 50) for k in range(n)]


def echo_or_fail(request: FakeRequest) -> Reply:
    """Echo the document number; document 3 always answers HTTP 500."""
    if request.user == "document 3":
        return Reply(status=500)
    return Reply(f'{{"n": "{request.user}"}}')


def test_one_answer_or_error_per_request_in_input_order(llm_server: FakeLLMServer) -> None:
    llm_server.answer = echo_or_fail
    llm_server.latency_s = 0.02
    provider = llm_server.provider("openai", "m", cache=None)
    seen: list[int] = []
    answers = run_requests(
        provider, requests(8), concurrency=3, on_answer=lambda i, _: seen.append(i)
    )
    assert sorted(seen) == list(range(8))
    assert isinstance(answers[3], LLMError) and "HTTP 500" in str(answers[3])
    for k, answer in enumerate(answers):
        if k != 3:
            assert isinstance(answer, LLMResponse) and answer.text == f'{{"n": "document {k}"}}'
    assert llm_server.max_in_flight <= 3
    assert llm_server.request_count == 7 + 4  # document 3 was tried as often as its policy allows


def test_stopping_early_starts_nothing_more(llm_server: FakeLLMServer) -> None:
    llm_server.latency_s = 0.2
    provider = llm_server.provider("gemini", "m", cache=None)
    stream = stream_requests(provider, requests(20), concurrency=2)
    first = next(stream)
    stream.close()  # as on Ctrl-C: the rest never starts
    time.sleep(0.5)
    assert len(first) >= 1 and llm_server.request_count <= 4


def test_a_stop_cuts_a_backoff_short(llm_server: FakeLLMServer) -> None:
    llm_server.fail(503, times=100)
    retry = RetryPolicy(attempts=5, initial_s=30, max_s=30, timeout_s=5)
    provider = llm_server.provider("anthropic", "m", cache=None, retry=retry)
    cancel = threading.Event()
    outcome: list[BaseException] = []

    def ask() -> None:
        try:
            provider.complete(requests(1)[0], cancel=cancel)
        except LLMError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=ask)
    worker.start()
    time.sleep(0.3)  # the first attempt failed; the request sits in a 30 s backoff
    started = time.perf_counter()
    cancel.set()
    worker.join(10)
    assert time.perf_counter() - started < 2
    assert len(outcome) == 1 and "cancelled" in str(outcome[0])
    assert llm_server.request_count == 1


def test_cached_answers_come_first_and_start_no_thread(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    provider = llm_server.provider("openai", "m", cache=tmp_path / "cache.sqlite")
    run_requests(provider, requests(3), concurrency=3)
    for thread in threading.enumerate():
        if thread.name == "goldloop-llm":
            thread.join(5)  # the first run's workers, done
    llm_server.reset()
    stream = stream_requests(provider, requests(5), concurrency=4)
    first = next(stream)
    assert [index for index, _ in first] == [0, 1, 2]
    assert all(isinstance(a, LLMResponse) and a.cached for _, a in first)
    assert not any(t.name == "goldloop-llm" for t in threading.enumerate())
    rest = [pair for batch in stream for pair in batch]
    assert sorted(index for index, _ in rest) == [3, 4] and llm_server.request_count == 2
