"""The response cache: a finished LLM answer keyed on everything that decides it.

The key is the sha256 of a canonical JSON of provider, model, effort, both prompts and the output
schema (and the endpoint, for a server other than the provider's own), so a re-run, a decoder fix or a re-score costs no call. Only complete answers are stored;
the caller never puts a truncated or failed one. The SQLite store is safe across processes (WAL
journal, busy timeout); anything with ``get``/``put`` (e.g. a Redis store) can stand in for it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from goldloop.errors import GoldloopError


@dataclass(frozen=True)
class CachedAnswer:
    text: str
    usage: dict[str, int]


class ResponseCache(Protocol):
    """What a provider needs from a cache."""

    def get(self, key: str) -> CachedAnswer | None: ...

    def put(self, key: str, answer: CachedAnswer) -> None: ...


def cache_key(
    provider: str,
    model: str,
    effort: str | None,
    system: str,
    user: str,
    schema: dict[str, Any],
    endpoint: str | None = None,
) -> str:
    """sha256 of the canonical JSON of what decides an answer (max tokens does not).

    ``endpoint`` is the normalised URL of a server other than the provider's own; it is left
    out of the payload for the official endpoints, so their keys never change.
    """
    payload: dict[str, Any] = {
        "provider": provider,
        "model": model,
        "effort": effort,
        "system": system,
        "user": user,
        "schema": schema,
    }
    if endpoint is not None:
        payload["endpoint"] = endpoint
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    usage TEXT NOT NULL,
    created REAL NOT NULL
)
"""


class SQLiteCache:
    """Answers in one SQLite file; one connection per thread."""

    def __init__(self, path: str | Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self._busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._connection() as conn:
                conn.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise GoldloopError(f"{self.path}: cannot open the response cache: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout_s, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_s * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> CachedAnswer | None:
        row = (
            self._connection()
            .execute("SELECT text, usage FROM responses WHERE key = ?", (key,))
            .fetchone()
        )
        return None if row is None else CachedAnswer(row[0], json.loads(row[1]))

    def put(self, key: str, answer: CachedAnswer) -> None:
        self._connection().execute(
            "INSERT OR REPLACE INTO responses (key, text, usage, created) VALUES (?, ?, ?, ?)",
            (key, answer.text, json.dumps(answer.usage, sort_keys=True), time.time()),
        )

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0])
