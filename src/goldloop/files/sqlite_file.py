"""Opening goldloop's SQLite files (the answer cache, the parse cache): one way, safe when several
processes open one new file at once."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path

_RETRY_S = 0.01


def connect(path: Path, busy_timeout_s: float, *, first: Sequence[str] = ()) -> sqlite3.Connection:
    """An autocommit connection to ``path`` in WAL mode, ``synchronous = NORMAL``, waiting up to
    ``busy_timeout_s`` for other writers; ``first`` are pragmas to run before the switch to WAL.

    Switching a new file to WAL takes a lock that SQLite does not wait for: processes opening one
    new file at the same moment got "database is locked" from it, so the switch is retried (until
    the busy timeout) like any other write.
    """
    conn = sqlite3.connect(path, timeout=busy_timeout_s, isolation_level=None)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    for pragma in first:
        conn.execute(pragma)
    deadline = time.monotonic() + busy_timeout_s
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            break
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() > deadline:
                conn.close()
                raise
            time.sleep(_RETRY_S)
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn
