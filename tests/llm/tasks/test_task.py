"""The task protocol: one outcome per answer, the cache check, running a task, its report."""

from __future__ import annotations

from pathlib import Path

from goldloop.llm.answer import OUTCOMES, Unparsable, json_object
from goldloop.llm.base import LLMError, LLMRequest, LLMResponse
from goldloop.llm.tasks.task import (
    Rejected,
    TaskReport,
    TaskResult,
    cache_check,
    outcome_of,
    run_task,
    stream_task,
)
from tests.fakes.llm_server import FakeLLMServer, FakeRequest, Reply
from tests.llm.tasks.conftest import never_caches_the_unparsable


class Echo:
    """A task for the protocol alone: the word asked for, answered as ``{"word": ...}``;
    ``no`` is rejected, anything without a word unparsable."""

    name = "echo"

    def request(self, word: str) -> LLMRequest:
        return LLMRequest("Repeat the word.", f"Word: {word}", {"type": "object"}, 50)

    def read(self, text: str) -> str:
        word = json_object(text).get("word")
        if not isinstance(word, str):
            raise Unparsable("no word")
        if word == "no":
            raise Rejected("refused")
        return word


def test_one_outcome_per_answer_in_the_shared_vocabulary() -> None:
    task = Echo()
    results = [
        outcome_of(task, LLMResponse('{"word": "a"}', False, {"input_tokens": 3}, cached=True)),
        outcome_of(task, LLMResponse('{"word": "no"}', False)),
        outcome_of(task, LLMResponse('{"word": "a"}', True)),  # cut off, however it reads
        outcome_of(task, LLMResponse('{"other": 1}', False)),
        outcome_of(task, LLMError("openai/m: HTTP 500")),
        outcome_of(task, None),
    ]
    got = [(r.outcome, r.value, r.detail) for r in results]
    assert got == [
        ("ok", "a", None),
        ("rejected", None, "refused"),
        ("truncated", None, None),
        ("unparsable", None, "no word"),
        ("failed", None, "openai/m: HTTP 500"),
        ("failed", None, "no answer"),
    ]
    assert {r.outcome for r in results} == set(OUTCOMES)
    assert results[0].cached and results[0].usage == {"input_tokens": 3}
    assert not results[4].cached and results[4].usage == {}


def test_the_cache_check_refuses_only_the_unparsable() -> None:
    check = cache_check(Echo())
    assert check('{"word": "a"}') and check('```json\n{"word": "a"}\n```')
    assert check('{"word": "no"}')  # rejected: asking again would not change it
    assert not check('{"other": 1}') and not check("a") and not check("[1]")


def test_the_report_counts_every_outcome() -> None:
    task = Echo()
    answers: list[LLMResponse | LLMError] = [
        LLMResponse('{"word": "a"}', False, {"input_tokens": 3}, cached=True),
        LLMResponse('{"word": "no"}', False, {"input_tokens": 2}),
        LLMResponse("?", False, {"input_tokens": 1}),
        LLMError("boom"),
    ]
    report = TaskReport.of(task.name, [outcome_of(task, a) for a in answers])
    assert report.outcomes == {"ok": 1, "rejected": 1, "unparsable": 1, "failed": 1}
    assert report.reasons == {"refused": 1}
    assert (report.cached, report.failed) == (1, [(3, "boom")])
    assert (report.usage, report.usage_from_cache) == ({"input_tokens": 3}, {"input_tokens": 3})


def test_run_task_keeps_the_input_order_and_reports_each_result(
    llm_server: FakeLLMServer,
) -> None:
    def answer(request: FakeRequest) -> Reply | str:
        word = request.user.removeprefix("Word: ")
        if word == "fail":
            return Reply("down", status=400)
        return f'{{"word": "{word}"}}'

    llm_server.answer = answer
    provider = llm_server.provider("anthropic", "task-model", cache=None)
    words = ["a", "fail", "b", "no", "c"]
    seen: list[int] = []
    results = run_task(
        provider, Echo(), words, concurrency=3, on_result=lambda i, _: seen.append(i)
    )
    assert sorted(seen) == list(range(5))
    assert [(r.outcome, r.value) for r in results] == [
        ("ok", "a"), ("failed", None), ("ok", "b"), ("rejected", None), ("ok", "c"),
    ]  # fmt: skip
    streamed: dict[int, TaskResult[str]] = {}
    for batch in stream_task(provider, Echo(), words):
        streamed.update(batch)
    assert [streamed[i].outcome for i in range(5)] == [r.outcome for r in results]


def test_an_unparsable_answer_is_never_cached(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    last = never_caches_the_unparsable(
        llm_server, tmp_path / "cache.sqlite", Echo(), ["a", "b", "c"],
        unparsable='{"word": 1}', good='{"word": "no"}',
    )  # fmt: skip
    assert [r.outcome for r in last] == ["rejected"] * 3
