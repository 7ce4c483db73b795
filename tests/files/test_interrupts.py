"""Ctrl-C held back until a step that must not stop halfway has finished."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from goldloop.files.interrupts import deferred_interrupt


def press_ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)  # delivered to the main thread before kill returns


def test_the_step_finishes_then_the_interrupt_is_raised(capsys: pytest.CaptureFixture) -> None:
    handler = signal.getsignal(signal.SIGINT)
    steps = []
    with pytest.raises(KeyboardInterrupt), deferred_interrupt("recording a job"):
        steps.append("submitted")
        press_ctrl_c()
        steps.append("recorded")
    assert steps == ["submitted", "recorded"]
    assert "finishing recording a job before stopping" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is handler


def test_a_second_ctrl_c_stops_at_once() -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt), deferred_interrupt("recording a job"):
        press_ctrl_c()
        steps.append("after the first")
        press_ctrl_c()
        steps.append("after the second")
    assert steps == ["after the first"]


def test_without_ctrl_c_nothing_changes() -> None:
    with deferred_interrupt("recording a job"):
        pass


def test_outside_the_main_thread_the_block_just_runs() -> None:
    seen: list[object] = []

    def run() -> None:
        with deferred_interrupt("recording a job"):
            seen.append(signal.getsignal(signal.SIGINT))

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    assert seen == [signal.getsignal(signal.SIGINT)]
