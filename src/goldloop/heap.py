"""Holding the cyclic garbage collector back while many objects are built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic collection inside the block (reference counting still frees everything).

    Decoding or validating a large JSON document creates millions of dicts, lists and models,
    none in a cycle, and the collector's passes over the growing heap cost more than the work:
    decoding a 25 MB Label Studio export took 1.0-1.3 s with them and 0.18 s without; reading a
    gold of 40,000 hits 0.60-0.73 s against 0.40-0.44 s.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
