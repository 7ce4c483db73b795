"""The collector held back inside the block, and given back as it was."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator

import pytest

from goldloop.files import jsonl
from goldloop.heap import paused_gc


@pytest.fixture
def collections() -> Iterator[list[int]]:
    """The generation of every cyclic collection that runs during the test."""
    seen: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(info["generation"])

    gc.callbacks.append(count)
    yield seen
    gc.callbacks.remove(count)


def test_nothing_is_collected_inside_and_the_state_comes_back(collections: list[int]) -> None:
    assert gc.isenabled()
    with paused_gc():
        before = len(collections)
        assert not gc.isenabled()
        built = [{"n": [i]} for i in range(50_000)]
        assert len(collections) == before
    assert gc.isenabled()
    del built
    [{"n": [i]} for i in range(50_000)]
    assert len(collections) > before  # the same building, outside the block, is collected


def test_an_error_inside_gives_the_collector_back() -> None:
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("inside")
    assert gc.isenabled()


def test_a_collector_switched_off_stays_off() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_decoding_a_large_document_runs_no_collection(collections: list[int]) -> None:
    text = json.dumps([{"id": i, "value": {"start": i, "labels": ["x"]}} for i in range(20_000)])
    before = len(collections)
    assert len(jsonl.loads(text)) == 20_000
    paused = len(collections) - before
    json.loads(text)
    unpaused = len(collections) - before - paused
    # At most the one collection that was due when the block ended, at the next allocation.
    assert paused <= 1 and unpaused > 10
