"""The SQLite response cache: entries record the prompt's length and model, older files stay
readable, and the recorded usage calibrates token estimates."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from goldloop.llm import CachedAnswer, SQLiteCache


def test_a_cache_written_before_the_prompt_length_was_recorded_stays_readable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the first release's table, with one answer
        conn.execute(
            "CREATE TABLE responses (key TEXT PRIMARY KEY, text TEXT NOT NULL, "
            "usage TEXT NOT NULL, created REAL NOT NULL)"
        )
        conn.execute(
            "INSERT INTO responses VALUES ('k1', 'old answer', ?, 1.0)",
            (json.dumps({"input_tokens": 100}),),
        )
    cache = SQLiteCache(path)
    assert cache.get("k1") == CachedAnswer("old answer", {"input_tokens": 100}, None, None)
    assert cache.calibration("openai/m") is None
    cache.put("k2", CachedAnswer("new", {"input_tokens": 50}, 200, "openai/m"))
    assert cache.get("k2") == CachedAnswer("new", {"input_tokens": 50}, 200, "openai/m")
    assert SQLiteCache(path).get("k1") is not None  # opening it again changes nothing
    assert len(cache) == 2


def test_calibration_reads_the_models_own_usage(tmp_path: Path) -> None:
    cache = SQLiteCache(tmp_path / "c.sqlite")
    cache.put("a", CachedAnswer("x", {"input_tokens": 300, "output_tokens": 40}, 1000, "gemini/m"))
    cache.put("b", CachedAnswer("x", {"input_tokens": 100, "output_tokens": 20}, 1000, "gemini/m"))
    cache.put("c", CachedAnswer("x", {"input_tokens": 9, "output_tokens": 9}, 10, "gemini/other"))
    cache.put("d", CachedAnswer("x", {"output_tokens": 9}, 10, "gemini/m"))  # no input count
    calibration = cache.calibration("gemini/m")
    assert calibration is not None and calibration.answers == 2
    assert calibration.input_tokens_per_char == pytest.approx(400 / 2000)
    assert calibration.output_tokens_per_answer == pytest.approx(30)
    assert cache.calibration("anthropic/m") is None


def test_a_provider_records_the_prompt_length_and_model(
    llm_server: object, cache: SQLiteCache
) -> None:
    from goldloop.llm import LLMRequest
    from tests.fakes.llm_server import FakeLLMServer

    assert isinstance(llm_server, FakeLLMServer)
    provider = llm_server.provider("anthropic", "m", cache=cache)
    request = LLMRequest("You annotate.", "Abstract:\nTNF.", {"type": "object"}, 100)
    provider.complete(request)
    stored = cache.get(provider.key(request))
    assert stored is not None and stored.source == "anthropic/m"
    assert stored.prompt_chars == len(request.system) + len(request.user)
