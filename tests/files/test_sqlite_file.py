"""Opening one new SQLite file from several processes at the same moment."""

from __future__ import annotations

import multiprocessing
import os
import random
import time
from pathlib import Path

from goldloop.files.sqlite_file import connect


def _open_and_write(path: Path, barrier: object, seed: int) -> None:
    barrier.wait()  # type: ignore[attr-defined]
    time.sleep(random.Random(seed).random() * 0.004)
    try:
        conn = connect(path, 30.0)
        conn.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY)")
        for k in range(20):
            conn.execute("INSERT INTO t VALUES (?)", (f"{seed}-{k}",))
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    except Exception:
        os._exit(1)


def test_processes_opening_one_new_file_at_once_all_get_in(tmp_path: Path) -> None:
    # Before the switch to WAL was retried, 5-20 of these 450 opens failed with "database is
    # locked" (SQLite does not wait for the lock the switch takes).
    context = multiprocessing.get_context("fork")
    for round_ in range(150):
        path = tmp_path / f"{round_}.sqlite"
        barrier = context.Barrier(3)
        workers = [
            context.Process(target=_open_and_write, args=(path, barrier, round_ * 3 + i))
            for i in range(3)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(60)
        assert [worker.exitcode for worker in workers] == [0, 0, 0], f"round {round_}"
        assert connect(path, 30.0).execute("SELECT COUNT(*) FROM t").fetchone()[0] == 60
