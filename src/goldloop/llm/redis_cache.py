"""The response cache in Redis, so several ML backend replicas reuse each other's answers.

Same contract as ``SQLiteCache`` (``get``/``put`` of a ``CachedAnswer`` under ``cache_key``);
selected by ``REDIS_URL``. A Redis outage after start costs calls, not predictions: reads miss and
writes are skipped, each logged.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import urlsplit, urlunsplit

import redis

from goldloop.errors import ServiceError
from goldloop.llm.cache import CachedAnswer

log = logging.getLogger(__name__)

PREFIX = "goldloop:llm:"


def redacted(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname}" + (
        f":{parts.port}" if parts.port else ""
    )
    return urlunsplit(parts._replace(netloc=netloc))


class RedisCache:
    """Answers as JSON under ``goldloop:llm:<key>``; ``ttl_s`` expires them (None: never)."""

    def __init__(self, url: str, *, ttl_s: int | None = None, timeout_s: float = 2.0) -> None:
        self.url = redacted(url)
        self._ttl_s = ttl_s
        try:
            self._redis = redis.Redis.from_url(
                url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
            )
            self._redis.ping()
        except (redis.RedisError, ValueError) as exc:
            raise ServiceError(
                f"REDIS_URL {self.url}: cannot reach the response cache: {exc}"
            ) from exc

    def get(self, key: str) -> CachedAnswer | None:
        try:
            raw = self._redis.get(PREFIX + key)
        except redis.RedisError as exc:
            log.warning(
                "response cache %s unreachable on read, treated as a miss: %s", self.url, exc
            )
            return None
        if raw is None:
            return None
        try:
            stored = json.loads(raw)
            return CachedAnswer(
                str(stored["text"]),
                {k: int(v) for k, v in stored["usage"].items()},
                stored.get("prompt_chars"),
                stored.get("source"),
            )
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning(
                "response cache %s: entry %s is not an answer, treated as a miss: %s",
                self.url,
                key,
                exc,
            )
            return None

    def put(self, key: str, answer: CachedAnswer) -> None:
        stored = {
            "text": answer.text,
            "usage": answer.usage,
            "prompt_chars": answer.prompt_chars,
            "source": answer.source,
        }
        value = json.dumps(stored, sort_keys=True)
        try:
            self._redis.set(PREFIX + key, value, ex=self._ttl_s)
        except redis.RedisError as exc:
            log.warning(
                "response cache %s unreachable on write, answer not cached: %s", self.url, exc
            )

    def __len__(self) -> int:
        return sum(1 for _ in self._redis.scan_iter(match=PREFIX + "*", count=1000))
