"""The pool's parse on Dask: chunks of texts go to the workers, their mentions come back in order.

Each worker parses through ``goldloop.text.nlp.parse_many`` and detects with ``goldloop.text.detector.detect_mentions``,
exactly as one process does (``mentions.detect_here``), and returns the mentions, never spaCy
``Doc``s. ``local:N`` starts a local cluster of N single-threaded worker processes for the
run; anything else is a scheduler address (``tcp://host:8786``) whose workers have goldloop
and the same spaCy model installed.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import islice
from typing import Any, TypeVar

from goldloop.errors import GoldloopError, ServiceError
from goldloop.kb import KB
from goldloop.sample.pool_mentions import PoolMention, detect_here
from goldloop.text.parsing import Parsing

CHUNK = 32  # texts per task: ~1 s of parsing, against a few ms of scheduling; spreads evenly
IN_FLIGHT_PER_WORKER = 4  # bounds memory on a long stream while keeping workers busy
CONNECT_TIMEOUT = "30s"
_LOCAL = re.compile(r"local:(\d+)")
T = TypeVar("T")


class DaskError(GoldloopError):
    """Dask is not installed, the scheduler cannot be reached, or a worker failed."""


class DaskUnreachable(DaskError, ServiceError):
    """The scheduler does not answer at a well-formed address: a service's failure (exit 4)."""


@contextmanager
def dask_client(scheduler: str) -> Iterator[Any]:
    """A ``distributed.Client`` on ``scheduler`` (``local:N`` or an address), closed afterwards."""
    try:
        from distributed import Client, LocalCluster  # Dask (the dask extra) loads only on --dask
    except ImportError as exc:
        raise DaskError(
            "parsing on Dask needs the dask extra: pip install 'goldloop[dask]'"
        ) from exc
    local = _LOCAL.fullmatch(scheduler.strip())
    cluster = None
    try:
        if local is not None:
            workers = int(local.group(1))
            if workers < 1:
                raise DaskError(f"Dask scheduler {scheduler!r}: local:N needs N >= 1")
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,  # spaCy's parse holds the GIL: one process per core
                processes=True,
                dashboard_address=None,
            )
            client = Client(cluster)
        else:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as exc:
        if cluster is not None:
            cluster.close()
        # A malformed address is the user's to fix (exit 2); one that does not answer is not.
        unreachable = isinstance(exc, OSError | TimeoutError)
        error = DaskUnreachable if unreachable else DaskError
        raise error(f"Dask scheduler {scheduler!r}: cannot connect: {exc}") from exc
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def prepare_worker(kb: KB, parsing: Parsing) -> None:
    """Load the spaCy model and build the KB's label index in this worker, once."""
    detect_chunk(["Warm-up: IL-6 activates STAT3."], kb, 1, parsing)


def detect_chunk(
    texts: list[str], kb: KB, batch_size: int, parsing: Parsing
) -> list[tuple[PoolMention, ...]]:
    """One task: the pool mentions of each text, as one process would find them, parsed as the
    client parses (its spaCy pipeline, its parse cache)."""
    return list(detect_here(texts, kb, parsing, batch_size=batch_size))


def detect_on_dask(
    texts: Iterable[str],
    kb: KB,
    scheduler: str,
    parsing: Parsing = Parsing(),
    *,
    batch_size: int = 64,
) -> Iterator[tuple[PoolMention, ...]]:
    """Pool mentions of each text, in input order, computed by the scheduler's workers."""
    with dask_client(scheduler) as client:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        # Every worker ready before the stream starts: the first chunks are not held up by a
        # worker still loading spaCy while another has finished its share.
        _raising_worker_errors(lambda: client.run(prepare_worker, kb, parsing))
        shared_kb = client.scatter(kb, broadcast=True)
        stream = iter(texts)
        pending: deque[Any] = deque()
        while True:
            while len(pending) < workers * IN_FLIGHT_PER_WORKER:
                chunk = list(islice(stream, CHUNK))
                if not chunk:
                    break
                pending.append(
                    client.submit(detect_chunk, chunk, shared_kb, batch_size, parsing, pure=False)
                )
            if not pending:
                return
            yield from _raising_worker_errors(pending.popleft().result)


def _raising_worker_errors(call: Callable[[], T]) -> T:
    try:
        return call()
    except GoldloopError:
        raise  # the worker's own word (a missing spaCy model ...) is the message
    except Exception as exc:  # a worker's error arrives re-raised as its own type
        raise DaskError(f"a Dask worker failed while parsing: {exc}") from exc
