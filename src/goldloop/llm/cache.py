"""The response cache: a finished LLM answer keyed on everything that decides it.

The key is the sha256 of a canonical JSON of provider, model, effort, both prompts and the output
schema (and the endpoint, for a server other than the provider's own), so a re-run, a decoder fix or a re-score costs no call. Only complete answers are stored;
the caller never puts a truncated or failed one. The SQLite store is safe across processes (WAL
journal, busy timeout); anything with ``get``/``put`` (e.g. a Redis store) can stand in for it.
Each entry also records the prompt's length and which model answered, so a dry run can turn
characters into tokens the way that model counted them (entries written before stay readable).
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from goldloop.errors import GoldloopError
from goldloop.files import jsonl
from goldloop.files.sqlite_file import connect


@dataclass(frozen=True)
class CachedAnswer:
    """An answer, its usage, and (when known) the prompt's length in characters and its model."""

    text: str
    usage: dict[str, int]
    prompt_chars: int | None = None
    source: str | None = None


@dataclass(frozen=True)
class Calibration:
    """Usage recorded for one model: tokens per prompt character and output tokens per answer."""

    answers: int
    input_tokens_per_char: float
    output_tokens_per_answer: float


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
    api: str | None = None,
) -> str:
    """sha256 of the canonical JSON of what decides an answer (max tokens does not).

    ``endpoint`` is the normalised URL of a server other than the provider's own, ``api`` an API
    other than the provider's first one (OpenAI's Responses API); each is left out of the payload
    when ``None``, so the keys of requests that existed before them never change.
    """
    digest = _before_user(provider, model, effort, system, _encoded(schema), endpoint, api).copy()
    digest.update(b',"user":%s}' % _encoded(user))
    return digest.hexdigest()


@functools.lru_cache(maxsize=64)
def _before_user(
    provider: str,
    model: str,
    effort: str | None,
    system: str,
    schema: bytes,
    endpoint: str | None,
    api: str | None,
) -> Any:
    """The hash of the canonical JSON up to ``user``, its last member by name: the requests of a
    run differ only there, so the long system prompt is hashed once, not once per request."""
    given: dict[str, str | None] = {
        "provider": provider,
        "model": model,
        "effort": effort,
        "system": system,
    }
    if endpoint is not None:
        given["endpoint"] = endpoint
    if api is not None:
        given["api"] = api
    members = {name: _encoded(value) for name, value in given.items()} | {"schema": schema}
    digest = hashlib.sha256(b"{")
    for index, name in enumerate(sorted(members)):
        digest.update(b'%s"%s":%s' % (b"," if index else b"", name.encode(), members[name]))
    return digest


def _encoded(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    usage TEXT NOT NULL,
    created REAL NOT NULL
)
"""
# Columns added after the first release; an older file gains them, its rows keep NULL there.
_ADDED_COLUMNS = {"prompt_chars": "INTEGER", "source": "TEXT"}
# Calibration reads the most recent answers of a model, enough for a stable ratio.
CALIBRATION_SAMPLE = 2000


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
                self._add_columns(conn)
        except (OSError, sqlite3.Error) as exc:
            raise GoldloopError(f"{self.path}: cannot open the response cache: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, self._busy_timeout_s)
            self._local.conn = conn
        return conn

    @staticmethod
    def _add_columns(conn: sqlite3.Connection) -> None:
        have = {row[1] for row in conn.execute("PRAGMA table_info(responses)")}
        for name, kind in _ADDED_COLUMNS.items():
            if name not in have:
                try:
                    conn.execute(f"ALTER TABLE responses ADD COLUMN {name} {kind}")
                except sqlite3.OperationalError as exc:  # another process added it first
                    if "duplicate column" not in str(exc):
                        raise

    def get(self, key: str) -> CachedAnswer | None:
        row = (
            self._connection()
            .execute(
                "SELECT text, usage, prompt_chars, source FROM responses WHERE key = ?", (key,)
            )
            .fetchone()
        )
        return None if row is None else CachedAnswer(row[0], jsonl.loads(row[1]), row[2], row[3])

    def put(self, key: str, answer: CachedAnswer) -> None:
        self._connection().execute(
            "INSERT OR REPLACE INTO responses (key, text, usage, created, prompt_chars, source) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                key,
                answer.text,
                json.dumps(answer.usage, sort_keys=True),
                time.time(),
                answer.prompt_chars,
                answer.source,
            ),
        )

    def calibration(self, source: str) -> Calibration | None:
        """What the recent answers of ``source`` (``provider/model``) used, or ``None`` when
        none recorded its prompt length and input tokens."""
        rows = (
            self._connection()
            .execute(
                "SELECT usage, prompt_chars FROM responses WHERE source = ? "
                "AND prompt_chars > 0 ORDER BY created DESC LIMIT ?",
                (source, CALIBRATION_SAMPLE),
            )
            .fetchall()
        )
        chars = tokens = output = answers = 0
        for usage_text, prompt_chars in rows:
            usage = jsonl.loads(usage_text)
            if usage.get("input_tokens"):
                answers += 1
                chars += prompt_chars
                tokens += usage["input_tokens"]
                output += usage.get("output_tokens", 0)
        if not answers:
            return None
        return Calibration(answers, tokens / chars, output / answers)

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT COUNT(*) FROM responses").fetchone()[0])
