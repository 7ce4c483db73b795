"""The parse cache: each text parsed once per spaCy pipeline, whichever command asks for it.

:func:`goldloop.text.nlp.parse_many` reads it, so the sampler's pool, annotate's post-checks, pull's
anchored tags, the baselines and the backend share it without knowing. An entry is keyed by the
pipeline (its name, version, config and the spaCy version), the pipes that ran and the sha256 of
the text. A request is served only with what a fresh parse would give: by an entry whose pipes
begin with the requested ones (one made with ``ner`` at the end serves a request without it).
Anything else is a miss, parsed and stored: a request for more pipes than an entry has, or one
that skips a pipe in the middle (``attribute_ruler`` reads the parser's labels, so a parse
without the parser has other POS than the full one).

Docs are stored without ``tensor`` and ``user_data`` (nothing in goldloop reads them after a
parse, and the tensor is 10× the rest); deserialising adds the doc's strings to the caller's
``nlp.vocab``. Entries live in one SQLite file (WAL journal, busy timeout: safe across processes)
at ``.goldloop/parse-cache.sqlite`` or ``$GOLDLOOP_PARSE_CACHE``; when the stored bytes pass the
bound (``$GOLDLOOP_PARSE_CACHE_MB``, 1 GiB by default) the least recently used entries go.
``GOLDLOOP_PARSE_CACHE=off`` (or ``goldloop --no-parse-cache``: the settings' ``parse_cache`` is
None either way) turns it off for the command: the door's :class:`goldloop.text.nlp.Parsing` has
no cache then.

Beside the docs, the file holds *answers*: bytes a caller derived from a text and its parse,
stored by pipeline, key and a kind the caller names (:meth:`ParseCache.put_answers`; decoded
annotator answers, :mod:`goldloop.llm.decoded_store`). They share the bound and the eviction order.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
import sqlite3
import struct
import threading
import time
import weakref
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np
import spacy
from spacy.language import Language
from spacy.tokens import Doc

from goldloop.errors import GoldloopError
from goldloop.files import jsonl
from goldloop.files.sqlite_file import connect
from goldloop.settings import (
    DEFAULT_PARSE_CACHE_MB,
    PARSE_CACHE_ENV,
    PARSE_CACHE_MB_ENV,
    PARSE_CACHE_OFF,
)
from goldloop.text.parsing import Parsing

ENV_PATH = PARSE_CACHE_ENV
ENV_SIZE_MB = PARSE_CACHE_MB_ENV
OFF = PARSE_CACHE_OFF
DEFAULT_SIZE_MB = DEFAULT_PARSE_CACHE_MB
FORMAT = 1
# Texts looked up per query, and parsed docs written per transaction.
CHUNK = 256
# Most texts read ahead of the caller (hits wait here as stored bytes, ~6 kB per abstract).
WINDOW = 4096
# A hit refreshes an entry's last use only when older than this: most reads stay reads.
TOUCH_AFTER_S = 60.0
# Eviction frees down to this share of the bound, so a full cache does not evict on every write.
LOW_WATER = 0.9
# tensor: 10x the rest and read by nobody after the parse; user_data: arbitrary objects.
_EXCLUDED = ("tensor", "user_data", "user_data_keys", "user_data_values", "sentiment", "spans")

_caches: dict[tuple[str, int], ParseCache] = {}
_caches_lock = threading.Lock()
_pipeline_ids: weakref.WeakKeyDictionary[Language, str] = weakref.WeakKeyDictionary()


def open_cache(parsing: Parsing) -> ParseCache | None:
    """``parsing``'s parse cache (None when it has none): opened once per process, shared by
    every caller that names the same file (its connections are per thread)."""
    if parsing.cache_path is None:
        return None
    key = (str(parsing.cache_path), parsing.cache_bytes)  # no path resolution per parse
    with _caches_lock:
        cache = _caches.get(key)
        if cache is None:
            cache = _caches[key] = ParseCache(parsing.cache_path, max_bytes=parsing.cache_bytes)
        return cache


def pipeline_id(nlp: Language) -> str:
    """What decides a parse besides the text and the pipes: model, version, config, spaCy."""
    known = _pipeline_ids.get(nlp)
    if known is not None:
        return known
    meta = nlp.meta
    config = hashlib.sha256(nlp.config.to_str().encode("utf-8")).hexdigest()[:16]
    ident = (
        f"{meta.get('lang')}_{meta.get('name')}-{meta.get('version')} config-{config} "
        f"spacy-{spacy.__version__} format-{FORMAT}"
    )
    _pipeline_ids[nlp] = ident
    return ident


def text_key(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


def dump_doc(doc: Doc) -> bytes:
    """A doc's tokens and annotations (not its tensor or user data) as bytes."""
    data = doc.to_dict(exclude=_EXCLUDED)
    array = np.ascontiguousarray(data["array_body"], dtype="<u8")
    header = {
        "text": data["text"],
        "strings": data["strings"],
        "attrs": [int(a) for a in data["array_head"]],
        "shape": list(array.shape),
        "cats": data["cats"],
        "unknown_spaces": bool(data["has_unknown_spaces"]),
    }
    head = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    spans = doc.spans.to_bytes() if doc.spans else b""
    body = zlib.compress(array.tobytes(), 1)
    return struct.pack("<III", len(head), len(spans), len(body)) + head + spans + body


def load_doc(vocab: Any, blob: bytes) -> Doc:
    """The doc :func:`dump_doc` stored, its strings added to ``vocab``.

    What ``Doc.from_dict`` does, with the token boundaries worked out by numpy rather than
    element by element: this is most of the cost of a cache hit.
    """
    head_n, spans_n, body_n = struct.unpack_from("<III", blob)
    at = struct.calcsize("<III")
    header = jsonl.loads(blob[at : at + head_n])
    at += head_n
    spans = blob[at : at + spans_n]
    at += spans_n
    array = np.frombuffer(zlib.decompress(blob[at : at + body_n]), dtype="<u8")
    array = array.reshape(header["shape"])
    attrs = header["attrs"]  # Doc.to_dict's order: LENGTH and SPACY first, then the rest
    strings = vocab.strings
    for string in header["strings"]:
        if string not in strings:  # a lookup costs 2/5 of an add: most strings are known
            strings.add(string)
    text = header["text"]
    lengths = array[:, 0].astype(np.int64)
    spaces = array[:, 1].astype(bool)
    ends = np.cumsum(lengths + spaces) - spaces
    words = [text[a:b] for a, b in zip((ends - lengths).tolist(), ends.tolist(), strict=True)]
    doc = Doc(vocab, words=words, spaces=spaces.tolist())
    values: Any = array[:, 2:]
    doc.from_array(attrs[2:], values)
    doc.cats = header["cats"]
    doc.has_unknown_spaces = header["unknown_spaces"]
    if spans:
        doc.spans.from_bytes(spans)
    return doc


_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS docs (
        pipeline TEXT NOT NULL,
        text_key BLOB NOT NULL,
        pipes TEXT NOT NULL,
        doc BLOB NOT NULL,
        size INTEGER NOT NULL,
        used REAL NOT NULL,
        UNIQUE (pipeline, text_key, pipes)
    )""",
    "CREATE INDEX IF NOT EXISTS docs_used ON docs (used)",
    """CREATE TABLE IF NOT EXISTS answers (
        pipeline TEXT NOT NULL,
        text_key BLOB NOT NULL,
        kind TEXT NOT NULL,
        answer BLOB NOT NULL,
        size INTEGER NOT NULL,
        used REAL NOT NULL,
        UNIQUE (pipeline, text_key, kind)
    )""",
    "CREATE INDEX IF NOT EXISTS answers_used ON answers (used)",
    "CREATE TABLE IF NOT EXISTS totals (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    "INSERT OR IGNORE INTO totals (name, value) VALUES ('bytes', 0)",
)


class ParseCache:
    """Parsed docs in one SQLite file, at most ``max_bytes`` of them; one connection per thread."""

    def __init__(
        self,
        path: str | Path,
        *,
        max_bytes: int = DEFAULT_SIZE_MB * 1024 * 1024,
        touch_after_s: float = TOUCH_AFTER_S,
        busy_timeout_s: float = 30.0,
    ) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self.touch_after_s = touch_after_s
        self._busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute("COMMIT")
        except (OSError, sqlite3.Error) as exc:
            raise GoldloopError(f"{self.path}: cannot open the parse cache: {exc}") from exc

    def _connection(self) -> sqlite3.Connection:
        # A connection inherited through fork (gunicorn workers, spaCy's n_process) is never reused.
        if getattr(self._local, "pid", None) != os.getpid():
            # auto_vacuum only takes on a new file.
            fresh = connect(
                self.path, self._busy_timeout_s, first=["PRAGMA auto_vacuum = INCREMENTAL"]
            )
            self._local.conn, self._local.pid = fresh, os.getpid()
        conn: sqlite3.Connection = self._local.conn
        return conn

    def get_many(
        self, pipeline: str, keys: Sequence[bytes]
    ) -> dict[bytes, list[tuple[tuple[str, ...], bytes]]]:
        """Every stored doc of the keys under ``pipeline``, as ``(pipes, dump_doc bytes)``."""
        found: dict[bytes, list[tuple[tuple[str, ...], bytes]]] = {}
        for key, pipes, blob in self._read("docs", "pipes, doc", "", (), pipeline, keys):
            found.setdefault(key, []).append((tuple(pipes.split(",")) if pipes else (), blob))
        return found

    def get_answers(self, pipeline: str, kind: str, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The answers of ``kind`` stored under ``pipeline`` for these keys."""
        rows = self._read("answers", "answer", "AND kind = ?", (kind,), pipeline, keys)
        return {key: answer for key, answer in rows}

    def _read(
        self,
        table: str,
        columns: str,
        where: str,
        params: tuple[str, ...],
        pipeline: str,
        keys: Sequence[bytes],
    ) -> list[tuple[Any, ...]]:
        """``(text_key, *columns)`` of the rows of the keys; rows not used lately are touched."""
        found: list[tuple[Any, ...]] = []
        touch: list[int] = []
        stale = time.time() - self.touch_after_s
        unique = list(dict.fromkeys(keys))
        try:
            conn = self._connection()
            for start in range(0, len(unique), CHUNK):
                part = unique[start : start + CHUNK]
                rows = conn.execute(
                    f"SELECT rowid, used, text_key, {columns} FROM {table} WHERE pipeline = ? "
                    f"{where} AND text_key IN ({','.join('?' * len(part))})",
                    (pipeline, *params, *part),
                )
                for rowid, used, *row in rows.fetchall():
                    found.append(tuple(row))
                    if used <= stale:
                        touch.append(rowid)
            now = time.time()
            for start in range(0, len(touch), CHUNK):
                rowids = touch[start : start + CHUNK]
                conn.execute(
                    f"UPDATE {table} SET used = ? WHERE rowid IN ({','.join('?' * len(rowids))})",
                    (now, *rowids),
                )
        except sqlite3.Error as exc:
            raise GoldloopError(f"{self.path}: cannot read the parse cache: {exc}") from exc
        return found

    def put_many(
        self, pipeline: str, pipes: Sequence[str], entries: Iterable[tuple[bytes, bytes]]
    ) -> None:
        """Store docs (``(text_key, dump_doc(doc))``), then evict down to the bound if past it."""
        self._write("docs", "pipes, doc", pipeline, ",".join(pipes), entries)

    def put_answers(self, pipeline: str, kind: str, entries: Iterable[tuple[bytes, bytes]]) -> None:
        """Store answers of ``kind`` (``(key, answer)``) under the bound, as docs are."""
        self._write("answers", "kind, answer", pipeline, kind, entries)

    def _write(
        self,
        table: str,
        columns: str,
        pipeline: str,
        label: str,
        entries: Iterable[tuple[bytes, bytes]],
    ) -> None:
        """Insert ``(text_key, blob)`` rows with ``label`` (pipes or kind); add up their bytes."""
        now = time.time()
        try:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                added = 0
                for key, blob in entries:
                    cursor = conn.execute(
                        f"INSERT OR IGNORE INTO {table} (pipeline, text_key, {columns}, size, used) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (pipeline, key, label, blob, len(blob), now),
                    )
                    added += len(blob) if cursor.rowcount == 1 else 0
                conn.execute("UPDATE totals SET value = value + ? WHERE name = 'bytes'", (added,))
                evicted = self._evict(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            if evicted:
                conn.execute("PRAGMA incremental_vacuum")
        except sqlite3.Error as exc:
            raise GoldloopError(f"{self.path}: cannot write the parse cache: {exc}") from exc

    def _evict(self, conn: sqlite3.Connection) -> bool:
        """Docs and answers alike, least recently used first (a merge of the two ``used``
        indexes), down to ``LOW_WATER`` of the bound."""
        total = self._total(conn)
        if total <= self.max_bytes:
            return False
        target = int(self.max_bytes * LOW_WATER)
        while total > target:
            rows = conn.execute(
                "SELECT 'docs', rowid, size, used FROM docs UNION ALL "
                "SELECT 'answers', rowid, size, used FROM answers ORDER BY used LIMIT ?",
                (CHUNK,),
            )
            victims: dict[str, list[int]] = {"docs": [], "answers": []}
            for table, rowid, size, _ in rows.fetchall():
                if total <= target:
                    break
                victims[table].append(rowid)
                total -= size
            if not any(victims.values()):
                break
            for table, rowids in victims.items():
                if rowids:
                    conn.execute(
                        f"DELETE FROM {table} WHERE rowid IN ({','.join('?' * len(rowids))})",
                        rowids,
                    )
        conn.execute("UPDATE totals SET value = ? WHERE name = 'bytes'", (max(total, 0),))
        return True

    @staticmethod
    def _total(conn: sqlite3.Connection) -> int:
        return int(conn.execute("SELECT value FROM totals WHERE name = 'bytes'").fetchone()[0])

    def stored_bytes(self) -> int:
        """Bytes of stored docs and answers (what the bound counts; the file adds SQLite's own
        pages)."""
        return self._total(self._connection())

    def __len__(self) -> int:
        """Stored docs (answers not counted)."""
        return int(self._connection().execute("SELECT COUNT(*) FROM docs").fetchone()[0])


def parse_cached(
    cache: ParseCache,
    nlp: Language,
    texts: Iterable[str],
    *,
    disable: Sequence[str] = (),
    n_process: int = 1,
    batch_size: int = 32,
    derive: Callable[[Doc], Any] | None = None,
) -> Iterator[Any]:
    """Docs in input order (or ``derive`` of each): hits read from ``cache``, misses parsed and
    stored.

    The input is read a window at a time (enough misses to keep ``n_process`` processes busy,
    or at most ``WINDOW`` texts), so a stream stays a stream and a mostly cached one is never
    read ahead whole. With ``n_process`` > 1 the misses go to worker processes, started once per
    call, that parse and serialise them; the docs they send back are read like stored ones. A
    ``derive`` runs in those workers on the docs they parse, so those docs are never read back.
    """
    pipes = tuple(name for name in nlp.pipe_names if name not in disable)
    pipeline = pipeline_id(nlp)
    source = iter(texts)
    # Workers idle while the next window is read: give each many batches per window.
    enough_misses = batch_size * (1 if n_process == 1 else 64 * n_process)
    workers: _Workers | None = None
    try:
        while True:
            window: list[tuple[str, bytes, bytes | None]] = []
            missing = 0
            while len(window) < max(WINDOW, enough_misses) and missing < enough_misses:
                chunk = list(islice(source, CHUNK))
                if not chunk:
                    break
                keys = [text_key(text) for text in chunk]
                stored = cache.get_many(pipeline, keys)
                for text, key in zip(chunk, keys, strict=True):
                    found = _serving(pipes, stored.get(key, ()))
                    window.append((text, key, found))
                    missing += found is None
            if not window:
                return
            to_parse = [text for text, _, found in window if found is None]
            processes = n_process if len(to_parse) > batch_size else 1
            if processes > 1 and _Workers.usable():
                workers = workers or _Workers(nlp, disable, processes, derive)
                parsed: Iterator[Any] = workers.parse(to_parse, batch_size)
            else:  # one process, or spaCy's own processes where fork is not available
                parsed = nlp.pipe(
                    to_parse, disable=list(disable), n_process=processes, batch_size=batch_size
                )
            yield from _serve_window(cache, pipeline, pipes, window, parsed, nlp, derive)
    finally:
        if workers is not None:
            workers.close()


def _load_stored(cache: ParseCache, nlp: Language, blob: bytes) -> Doc:
    try:
        return load_doc(nlp.vocab, blob)
    except (struct.error, zlib.error, ValueError, KeyError, IndexError, TypeError) as exc:
        # Only a damaged file (or another program's writes) holds an entry dump_doc did not make.
        raise GoldloopError(
            f"{cache.path}: a damaged entry in the parse cache ({type(exc).__name__}): delete "
            "the file, or switch the cache off"
        ) from None


def _serve_window(
    cache: ParseCache,
    pipeline: str,
    pipes: tuple[str, ...],
    window: list[tuple[str, bytes, bytes | None]],
    parsed: Iterator[Doc | tuple[bytes, Any]],
    nlp: Language,
    derive: Callable[[Doc], Any] | None,
) -> Iterator[Any]:
    """The window's docs (or what ``derive`` makes of them) in order: stored ones loaded, parsed
    ones (docs, or the workers' serialised docs with what they derived) stored in chunks."""
    new: list[tuple[bytes, bytes]] = []
    try:
        for _, key, found in window:
            if found is not None:
                doc = _load_stored(cache, nlp, found)
                yield doc if derive is None else derive(doc)
                continue
            item = next(parsed)
            if isinstance(item, tuple):
                blob, derived = item
                out = load_doc(nlp.vocab, blob) if derive is None else derived
            else:
                blob = dump_doc(item)  # dumped before the caller can change the doc
                out = item if derive is None else derive(item)
            new.append((key, blob))
            if len(new) == CHUNK:
                cache.put_many(pipeline, pipes, new)
                new = []
            yield out
    finally:
        close = getattr(parsed, "close", None)
        if close is not None:
            close()
        if new:
            cache.put_many(pipeline, pipes, new)


# The pipeline a worker process parses with, and what it derives from each doc: set before the
# fork, inherited by the workers (so neither is pickled).
_worker_pipeline: tuple[Language, tuple[str, ...], Callable[[Doc], Any] | None] | None = None


def _worker_start() -> None:
    # Ctrl-C reaches the whole process group: the parent stops the workers, they stay quiet.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker_parse(texts: list[str]) -> list[tuple[bytes, Any]]:
    assert _worker_pipeline is not None
    nlp, disable, derive = _worker_pipeline
    docs = nlp.pipe(texts, disable=list(disable), batch_size=len(texts))
    return [(dump_doc(doc), None if derive is None else derive(doc)) for doc in docs]


class _Workers:
    """Forked processes that parse batches of texts and send back :func:`dump_doc` bytes, each
    with what ``derive`` makes of its doc.

    Cheaper than ``nlp.pipe(n_process=...)``, whose workers send whole docs, tensor included
    (ten times the stored size), back through pickling; forked, they share the loaded model.
    """

    def __init__(
        self,
        nlp: Language,
        disable: Sequence[str],
        processes: int,
        derive: Callable[[Doc], Any] | None = None,
    ) -> None:
        global _worker_pipeline
        _worker_pipeline = (nlp, tuple(disable), derive)
        context = multiprocessing.get_context("fork")
        self._pool = context.Pool(processes, initializer=_worker_start)

    @staticmethod
    def usable() -> bool:
        return "fork" in multiprocessing.get_all_start_methods()

    def parse(self, texts: list[str], batch_size: int) -> Iterator[tuple[bytes, Any]]:
        batches = [texts[i : i + batch_size] for i in range(0, len(texts), batch_size)]
        for blobs in self._pool.imap(_worker_parse, batches):
            yield from blobs

    def close(self) -> None:
        """Stop the workers (at once when the caller stopped early) and reap them."""
        self._pool.terminate()
        self._pool.join()


def _serving(
    wanted: tuple[str, ...], entries: Iterable[tuple[tuple[str, ...], bytes]]
) -> bytes | None:
    """The stored doc that serves a request for ``wanted`` pipes (the one with fewest extra
    pipes), or None."""
    fitting = [(len(pipes), blob) for pipes, blob in entries if pipes[: len(wanted)] == wanted]
    return min(fitting, key=lambda entry: entry[0])[1] if fitting else None


__all__ = [
    "ENV_PATH",
    "ENV_SIZE_MB",
    "ParseCache",
    "dump_doc",
    "load_doc",
    "open_cache",
    "parse_cached",
    "pipeline_id",
    "text_key",
]
