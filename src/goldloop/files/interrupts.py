"""Ctrl-C held back while a step runs that must not stop halfway (a batch job being recorded)."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


@contextmanager
def deferred_interrupt(step: str) -> Iterator[None]:
    """Run the block to its end through a first Ctrl-C, then raise ``KeyboardInterrupt``.

    A second Ctrl-C raises at once. ``step`` names what is finishing, in the line that tells
    the person who pressed it. Outside the main thread (where no handler can be set), or where
    SIGINT is ignored, the block runs as it would without this.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed = False

    def hold(signum: int, frame: FrameType | None) -> None:
        nonlocal pressed
        if pressed:
            raise KeyboardInterrupt
        pressed = True
        print(
            f"\ngoldloop: finishing {step} before stopping; Ctrl-C again stops at once",
            file=sys.stderr,
            flush=True,
        )

    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
    if pressed:
        raise KeyboardInterrupt
