"""The one check every LLM task passes: an answer it cannot parse is never cached."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from goldloop.llm.tasks.task import LLMTask, TaskResult, run_task
from tests.fakes.llm_server import FakeLLMServer, FakeRequest


def never_caches_the_unparsable(
    server: FakeLLMServer,
    cache: Path,
    task: LLMTask[Any, Any],
    items: Sequence[Any],
    *,
    unparsable: str,
    good: str,
) -> list[TaskResult[Any]]:
    """Run ``task`` on ``items`` three times through the fake provider with a response cache:
    the first item is answered ``unparsable`` in the first run and ``good`` after; the others
    ``good`` always. Only the unparsable answer is asked for again; the last run's results."""
    provider = server.provider("openai", "task-model", cache=cache)
    first_user = task.request(items[0]).user

    def first(request: FakeRequest) -> str:
        return unparsable if request.user == first_user else good

    server.answer = first
    results = run_task(provider, task, items)
    assert results[0].outcome == "unparsable" and results[0].detail
    assert all(r.outcome != "unparsable" and not r.cached for r in results[1:])
    assert server.request_count == len(items)

    server.answer = lambda _: good
    again = run_task(provider, task, items)
    assert server.request_count == len(items) + 1  # only the unparsable one asked again
    assert [r.cached for r in again] == [False] + [True] * (len(items) - 1)
    assert again[0].outcome != "unparsable"

    last = run_task(provider, task, items)
    assert server.request_count == len(items) + 1 and all(r.cached for r in last)
    return last
