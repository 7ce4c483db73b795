"""The response cache in Redis, so several ML backend replicas reuse each other's answers.

Same contract as ``SQLiteCache`` (``get``/``put`` of a ``CachedAnswer`` under ``cache_key``);
selected by ``REDIS_URL``. A Redis outage after start costs calls, not predictions: reads miss and
writes are skipped. After a failure the cache is left alone for ``retry_after_s`` (no request pays
a socket timeout meanwhile), and the outage is logged once per ``warn_every_s``, not per request.
"""

from __future__ import annotations

import json
import logging
import threading
import time

import redis

from goldloop.errors import GoldloopError, ServiceError, mask_credentials
from goldloop.files import jsonl
from goldloop.llm.cache import CachedAnswer

log = logging.getLogger(__name__)

PREFIX = "goldloop:llm:"


class RedisCache:
    """Answers as JSON under ``goldloop:llm:<key>``; ``ttl_s`` expires them (None: never)."""

    def __init__(
        self,
        url: str,
        *,
        ttl_s: int | None = None,
        timeout_s: float = 2.0,
        retry_after_s: float = 5.0,
        warn_every_s: float = 60.0,
    ) -> None:
        self.url = mask_credentials(url)
        self._ttl_s = ttl_s
        self._retry_after_s = retry_after_s
        self._warn_every_s = warn_every_s
        self._lock = threading.Lock()
        self._down_until = 0.0
        self._next_warning = 0.0
        self._unlogged = 0
        try:
            self._redis = redis.Redis.from_url(
                url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
            )
        except ValueError as exc:  # a malformed URL is the user's to fix, not a service failure
            raise GoldloopError(f"REDIS_URL {self.url}: {exc}") from None
        try:
            self._redis.ping()
        except redis.RedisError as exc:
            raise ServiceError(
                f"REDIS_URL {self.url}: cannot reach the response cache: {exc}"
            ) from exc

    def _available(self) -> bool:
        return time.monotonic() >= self._down_until

    def _unreachable(self, action: str, exc: Exception) -> None:
        """Note an outage: leave Redis alone for a while, and log it once per interval."""
        now = time.monotonic()
        with self._lock:
            self._down_until = now + self._retry_after_s
            if now < self._next_warning:
                self._unlogged += 1
                return
            self._next_warning = now + self._warn_every_s
            unlogged, self._unlogged = self._unlogged, 0
        more = f" ({unlogged} more since the last warning)" if unlogged else ""
        log.warning(
            "response cache %s unreachable on %s: %s; going on without it, retrying every "
            "%.0f s%s",
            self.url, action, exc, self._retry_after_s, more,
        )  # fmt: skip

    def get(self, key: str) -> CachedAnswer | None:
        if not self._available():
            return None
        try:
            raw = self._redis.get(PREFIX + key)
        except redis.RedisError as exc:
            self._unreachable("read (a miss)", exc)
            return None
        if raw is None:
            return None
        try:
            stored = jsonl.loads(raw)
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
        if not self._available():
            return
        try:
            self._redis.set(PREFIX + key, value, ex=self._ttl_s)
        except redis.RedisError as exc:
            self._unreachable("write (answer not cached)", exc)

    def __len__(self) -> int:
        return sum(1 for _ in self._redis.scan_iter(match=PREFIX + "*", count=1000))
