"""Opening one new SQLite file from several processes at the same moment."""

from __future__ import annotations

import multiprocessing
import random
import time
from pathlib import Path

from goldloop.files.sqlite_file import connect

ROUNDS = 150
WORKERS = 3


def _open_and_write(folder: Path, barrier: object, failed: object, worker: int) -> None:
    """Each round, all workers open the same new file at once and write 20 rows to it."""
    jitter = random.Random(worker)
    for round_ in range(ROUNDS):
        barrier.wait(60)  # type: ignore[attr-defined]
        time.sleep(jitter.random() * 0.0005)
        try:
            conn = connect(folder / f"{round_}.sqlite", 30.0)
            conn.execute("CREATE TABLE IF NOT EXISTS t (k TEXT PRIMARY KEY)")
            for k in range(20):
                conn.execute("INSERT INTO t VALUES (?)", (f"{worker}-{k}",))
            assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            conn.close()
        except Exception:
            failed[round_ * WORKERS + worker] = 1  # type: ignore[index]


def test_processes_opening_one_new_file_at_once_all_get_in(tmp_path: Path) -> None:
    # Before the switch to WAL was retried, 5-20 of these 450 opens failed with "database is
    # locked" (SQLite does not wait for the lock the switch takes). The workers are forked once
    # and meet at a barrier before each new file (forking 450 of them took most of a minute);
    # with the retry taken out, 1-6 opens fail here in every run (checked).
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(WORKERS)
    failed = context.Array("b", ROUNDS * WORKERS)
    workers = [
        context.Process(target=_open_and_write, args=(tmp_path, barrier, failed, i))
        for i in range(WORKERS)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(300)
    assert [worker.exitcode for worker in workers] == [0] * WORKERS
    failures = [(i // WORKERS, i % WORKERS) for i, flag in enumerate(failed) if flag]
    assert failures == [], "(round, worker) pairs that could not open or write"
    for round_ in range(ROUNDS):
        rows = connect(tmp_path / f"{round_}.sqlite", 30.0).execute("SELECT COUNT(*) FROM t")
        assert rows.fetchone()[0] == 20 * WORKERS, f"round {round_}"
