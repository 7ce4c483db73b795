"""The SQLite response cache: entries record the prompt's length and model, older files stay
readable, and the recorded usage calibrates token estimates."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import string
from pathlib import Path

import pytest

from goldloop.llm import CachedAnswer, SQLiteCache
from goldloop.llm.cache import cache_key


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


def test_the_key_is_the_sha256_of_the_payloads_canonical_json() -> None:
    # The key is built member by member (the system prompt encoded once per run); it must stay
    # byte for byte the digest of one json.dumps of the payload, or every stored answer is lost.
    def plain(provider, model, effort, system, user, schema, endpoint=None, api=None) -> str:
        payload = {"provider": provider, "model": model, "effort": effort, "system": system,
                   "user": user, "schema": schema}  # fmt: skip
        payload |= {k: v for k, v in (("endpoint", endpoint), ("api", api)) if v is not None}
        text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    rng = random.Random(0)
    alphabet = string.printable + 'éαβ𝛼\u2028"\\'

    def text(n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, n)))

    for _ in range(500):
        schema = {"type": "object", "b": [1, {"z": text(5), "a": None}], text(4): rng.random()}
        args = ("openai", text(10), rng.choice([None, "low"]), text(200), text(200), schema,
                rng.choice([None, "http://127.0.0.1:8000/v1"]), rng.choice([None, "responses"]))  # fmt: skip
        assert cache_key(*args) == plain(*args)
