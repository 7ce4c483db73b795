"""The gold file's lock: one writer at a time, by flock or by a Redis key."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from goldloop.errors import ServiceError
from goldloop.files import gold_lock as gold_lock_module
from goldloop.files.gold_lock import GoldLockTimeout, gold_lock, lock_path
from tests.backend.conftest import free_port, running_redis


def overlapping(gold: Path, redis_url: str | None, writers: int = 4) -> int:
    """How many writers were inside the lock at once, at most (each stays 50 ms)."""
    inside = 0
    most = 0
    guard = threading.Lock()

    def write() -> None:
        nonlocal inside, most
        with gold_lock(gold, redis_url):
            with guard:
                inside += 1
                most = max(most, inside)
            time.sleep(0.05)
            with guard:
                inside -= 1

    threads = [threading.Thread(target=write) for _ in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return most


def test_the_file_lock_lets_one_writer_in_at_a_time(tmp_path: Path) -> None:
    gold = tmp_path / "gold.json"
    assert overlapping(gold, None) == 1
    assert lock_path(gold).exists() and not gold.exists()


def test_the_redis_lock_lets_one_writer_in_at_a_time(tmp_path: Path) -> None:
    with running_redis(tmp_path) as url:
        assert overlapping(tmp_path / "gold.json", url) == 1


def test_the_redis_lease_is_renewed_while_its_holder_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gold_lock_module, "LEASE_S", 0.3)
    gold = tmp_path / "gold.json"
    with running_redis(tmp_path) as url:
        with gold_lock(gold, url):
            time.sleep(1.0)  # three leases: the key would have expired without renewal
            with pytest.raises(GoldLockTimeout), gold_lock(gold, url, wait_s=0.2):
                pass
        with gold_lock(gold, url, wait_s=0.2):  # released on leaving, renewals stopped
            pass


def test_a_lock_held_too_long_is_a_timeout(tmp_path: Path) -> None:
    gold = tmp_path / "gold.json"
    # a second open file description: flock refuses it as it would another process's
    with (
        gold_lock(gold),
        pytest.raises(GoldLockTimeout, match=r"gold\.json"),
        gold_lock(gold, wait_s=0.2),
    ):
        pass


def test_redis_down_is_a_service_error_without_the_url(tmp_path: Path) -> None:
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"
    with pytest.raises(ServiceError) as caught, gold_lock(tmp_path / "g.json", url):
        pass
    assert "hunter2" not in str(caught.value) and "REDIS_URL" in str(caught.value)
