"""One writer at a time per gold file: ``pull`` and every backend replica take this lock first.

With ``REDIS_URL`` the lock is a Redis key (replicas on several hosts sharing one gold file on
shared storage); otherwise an ``flock`` on ``<gold>.lock`` next to the file (processes and
threads of one host). A Redis lock is a lease of :data:`LEASE_S`, renewed every third of it while
its holder works: a replica that died holding it blocks the others for one lease at most, and a
write that takes longer than a lease keeps it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from goldloop.errors import GoldloopError, ServiceError, mask_credentials

LEASE_S = 600.0
WAIT_S = 900.0
_POLL_S = 0.05


class GoldLockTimeout(GoldloopError):
    """Another writer held the gold file's lock for too long."""


def lock_path(gold: Path) -> Path:
    return gold.with_name(gold.name + ".lock")


def redis_key(gold: Path) -> str:
    """One key per gold file, whatever path spelling reaches it."""
    digest = hashlib.sha256(str(gold.resolve()).encode()).hexdigest()[:32]
    return f"goldloop:gold-lock:{digest}"


@contextmanager
def gold_lock(
    gold: Path, redis_url: str | None = None, *, wait_s: float = WAIT_S
) -> Iterator[None]:
    """Hold the lock of ``gold`` (Redis when ``redis_url``, else a file lock) for the block."""
    if redis_url:
        with _redis_lock(gold, redis_url, wait_s):
            yield
    else:
        with _file_lock(gold, wait_s):
            yield


@contextmanager
def _file_lock(gold: Path, wait_s: float) -> Iterator[None]:
    path = lock_path(gold)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise GoldLockTimeout(
                        f"{gold}: another writer held {path} for {wait_s:g} s"
                    ) from None
                time.sleep(_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def _redis_lock(gold: Path, redis_url: str, wait_s: float) -> Iterator[None]:
    import redis  # redis (optional) loads only with REDIS_URL

    try:
        client = redis.Redis.from_url(redis_url)
    except ValueError as exc:  # a malformed URL is the user's to fix (exit 2), not a service's
        raise GoldloopError(f"REDIS_URL {mask_credentials(redis_url)}: {exc}") from None
    # Not thread-local: the renewing thread needs the holder's token.
    lock = client.lock(
        redis_key(gold), timeout=LEASE_S, blocking_timeout=wait_s, thread_local=False
    )
    try:
        try:
            acquired = lock.acquire()
        except redis.exceptions.ConnectionError as exc:  # the URL may hold a password: not named
            raise ServiceError(
                f"{gold}: cannot reach Redis (REDIS_URL) for its lock: {exc}"
            ) from None
        if not acquired:
            raise GoldLockTimeout(f"{gold}: another writer held its Redis lock for {wait_s:g} s")
        stop = threading.Event()
        renewing = threading.Thread(target=_renew, args=(lock, stop), daemon=True)
        renewing.start()
        try:
            yield
        finally:
            stop.set()
            renewing.join()
            # A lease that ran out was another writer's to take: it recomputed after us.
            with suppress(redis.exceptions.LockError):
                lock.release()
    finally:
        client.close()


def _renew(lock: Any, stop: threading.Event) -> None:
    """Reset the lease to :data:`LEASE_S` every third of it until ``stop``; a renewal that fails
    (Redis away for a moment, the lease already lost) is tried again at the next beat."""
    import redis  # redis (optional) loads only with REDIS_URL

    while not stop.wait(LEASE_S / 3):
        with suppress(redis.exceptions.RedisError):
            lock.reacquire()
