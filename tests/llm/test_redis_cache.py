"""The Redis response cache against a real redis-server started by the tests."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

import pytest
import redis

from goldloop.errors import GoldloopError
from goldloop.llm import CachedAnswer, LLMRequest
from goldloop.llm.redis_cache import PREFIX, RedisCache
from tests.backend.conftest import free_port, running_redis
from tests.fakes.llm_server import FakeLLMServer, Reply, llm_server

__all__ = ["llm_server"]


@pytest.fixture
def cache(redis_url: str) -> RedisCache:
    redis.Redis.from_url(redis_url).flushdb()
    return RedisCache(redis_url)


def test_put_then_get_round_trips_an_answer(cache: RedisCache) -> None:
    answer = CachedAnswer('{"mentions": []}', {"input_tokens": 120, "output_tokens": 7})
    assert cache.get("k1") is None
    cache.put("k1", answer)
    assert cache.get("k1") == answer
    assert len(cache) == 1


def test_two_replicas_share_answers(redis_url: str, cache: RedisCache) -> None:
    other_replica = RedisCache(redis_url)
    cache.put("shared", CachedAnswer("text", {"output_tokens": 1}))
    assert other_replica.get("shared") == CachedAnswer("text", {"output_tokens": 1})


def test_ttl_expires_entries(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    RedisCache(redis_url, ttl_s=60).put("short", CachedAnswer("t", {}))
    assert 0 < client.ttl(PREFIX + "short") <= 60
    RedisCache(redis_url).put("long", CachedAnswer("t", {}))
    assert client.ttl(PREFIX + "long") == -1  # no expiry


def test_a_corrupt_entry_is_a_logged_miss(
    redis_url: str, cache: RedisCache, caplog: pytest.LogCaptureFixture
) -> None:
    redis.Redis.from_url(redis_url).set(PREFIX + "bad", b"\xff not json")
    with caplog.at_level(logging.WARNING):
        assert cache.get("bad") is None
    assert "is not an answer" in caplog.text


def test_provider_answers_from_redis_on_a_repeat(
    cache: RedisCache, llm_server: FakeLLMServer
) -> None:
    llm_server.answer = lambda _: json.dumps({"mentions": []})
    request = LLMRequest("system", "user text", {"type": "object"}, 100)
    first = llm_server.provider("anthropic", "claude-test", cache=cache).complete(request)
    # A second provider object (another replica) gets the answer from Redis, not the server.
    second = llm_server.provider("anthropic", "claude-test", cache=cache).complete(request)
    assert (first.cached, second.cached) == (False, True)
    assert second.text == first.text and second.usage == first.usage
    assert llm_server.request_count == 1


def test_truncated_answers_are_not_stored(cache: RedisCache, llm_server: FakeLLMServer) -> None:
    llm_server.answer = lambda _: Reply('{"mentions": [', truncated=True)
    request = LLMRequest("system", "another text", {"type": "object"}, 100)
    assert llm_server.provider("openai", "gpt-test", cache=cache).complete(request).truncated
    assert len(cache) == 0


def test_unreachable_redis_at_start_is_a_clear_error() -> None:
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    with pytest.raises(GoldloopError, match="cannot reach the response cache") as raised:
        RedisCache(url, timeout_s=0.5)
    assert "hunter2" not in str(raised.value)
    assert raised.value.exit_code == 4  # a service, not bad input


def test_redis_going_away_costs_calls_not_predictions(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with running_redis(tmp_path) as url:
        cache = RedisCache(url, timeout_s=0.5)
        cache.put("k", CachedAnswer("t", {}))
    with caplog.at_level(logging.WARNING):
        assert cache.get("k") is None
        cache.put("k", CachedAnswer("t", {}))
    assert "unreachable on read" in caplog.text


def test_an_outage_is_warned_once_per_interval_not_per_request(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with running_redis(tmp_path) as url:
        cache = RedisCache(url, timeout_s=0.5, retry_after_s=0.0, warn_every_s=3600)
    with caplog.at_level(logging.WARNING, logger="goldloop.llm.redis_cache"):
        for _ in range(20):  # each one reaches the dead server (retry_after_s=0)
            assert cache.get("k") is None
            cache.put("k", CachedAnswer("t", {}))
    assert len(caplog.records) == 1, caplog.text


def test_after_an_outage_redis_is_left_alone_then_tried_again(tmp_path: Path) -> None:
    port = free_port()
    with running_redis(tmp_path, port=port) as url:
        cache = RedisCache(url, timeout_s=0.5, retry_after_s=0.3)
    assert cache.get("k") is None  # the failure starts the pause
    (tmp_path / "again").mkdir()
    with running_redis(tmp_path / "again", port=port):
        cache.put("k", CachedAnswer("t", {}))  # skipped: within the pause
        assert redis.Redis.from_url(url).get(PREFIX + "k") is None
        time.sleep(0.4)
        cache.put("k", CachedAnswer("t", {}))  # after it: Redis is used again
        assert cache.get("k") == CachedAnswer("t", {})
