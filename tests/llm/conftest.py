"""Shared fixtures and helpers of the LLM tests: a response cache, a Redis, scripted answers (the
fake provider, spaCy and the KB are the root conftest's)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from goldloop.llm import SQLiteCache
from tests.backend.conftest import running_redis
from tests.fakes.llm_server import FakeRequest, Reply

PROVIDER_NAMES = ("openai", "anthropic", "gemini")


@pytest.fixture
def cache(tmp_path: Any) -> SQLiteCache:
    return SQLiteCache(tmp_path / "cache.sqlite")


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of the tests' own (tests/llm/test_redis_cache.py)."""
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url


def mentions_json(items: list[dict[str, Any]]) -> str:
    return json.dumps({"mentions": items})


def answers_by_text(
    answers: dict[str, str | Reply], default: str = '{"mentions": []}'
) -> Callable[[FakeRequest], str | Reply]:
    """Script the fake: the answer whose key (a document text) is in the request's user prompt."""

    def answer(request: FakeRequest) -> str | Reply:
        for text, reply in answers.items():
            if text in request.user:
                return reply
        return default

    return answer
