"""Shared fixtures and helpers of the LLM tests: spaCy, a response cache, scripted answers (the
fake provider and the KB are the root conftest's)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from goldloop.llm import SQLiteCache
from tests.fakes.llm_server import FakeRequest, Reply

PROVIDER_NAMES = ("openai", "anthropic", "gemini")


@pytest.fixture(scope="session")
def nlp() -> Any:
    from goldloop.text.nlp import load_nlp

    return load_nlp()


@pytest.fixture
def cache(tmp_path: Any) -> SQLiteCache:
    return SQLiteCache(tmp_path / "cache.sqlite")


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
