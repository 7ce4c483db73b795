"""The pool's parse on a real Dask LocalCluster of 2 worker processes: the same pool cache and the
same sample as one process, in one and two phases; clear errors for a bad scheduler."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from goldloop.kb import KB
from goldloop.sample.batch_record import SampleSettings
from goldloop.sample.pool import POOL_FILE, POOL_META
from goldloop.sample.pool_mentions import detect_here
from goldloop.sample.run import run_sample
from goldloop.settings import DEMO_CORPUS

pytest.importorskip("distributed", reason="the dask extra is not installed")

SETTINGS = SampleSettings(n_primary=6, n_double=2, n_reserve=2, tail_top_k=10, seed=3)


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    """One LocalCluster of 2 single-threaded worker processes for the module, by address."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        yield str(cluster.scheduler_address)


@pytest.mark.slow
@pytest.mark.parametrize("phase1", [None, 12], ids=["one-phase", "two-phase"])
def test_dask_gives_the_same_pool_and_sample_as_one_process(
    tmp_path: Path, kb: KB, scheduler: str, phase1: int | None
) -> None:
    settings = replace(SETTINGS, phase1=phase1)
    run_sample(DEMO_CORPUS, tmp_path / "one", kb, settings)
    result = run_sample(DEMO_CORPUS, tmp_path / "dask", kb, replace(settings, dask=scheduler))
    assert result.report.to_dict()["pool_cache"]["hit"] is False
    for name in ("manifest.csv", "texts.jsonl", POOL_FILE):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes()
    # The same pool cache: a one-process batch on the Dask-built cache parses nothing more than
    # what it lacks (nothing in one phase; the 10 documents phase 1 grows by in two).
    assert (tmp_path / "dask" / POOL_META).read_bytes() == (
        tmp_path / "one" / POOL_META
    ).read_bytes()
    again = run_sample(DEMO_CORPUS, tmp_path / "dask", kb, settings, extend=True)
    assert again.report.to_dict()["pool_cache"]["hit"] is (phase1 is None)
    assert again.report.to_dict()["pool_cache"]["parsed"] == (0 if phase1 is None else 10)


@pytest.mark.slow
def test_dask_workers_return_mentions_in_order_across_chunks(kb: KB, scheduler: str) -> None:
    from goldloop.sample import distributed

    texts = [f"Case {i}: IL-6 activates STAT3, and TNF is inhibited by aspirin." for i in range(7)]
    texts[3] = "The weather was fine."
    chunk, distributed.CHUNK = distributed.CHUNK, 2  # 4 tasks over 2 workers
    try:
        found = list(distributed.detect_on_dask(iter(texts), kb, scheduler))
    finally:
        distributed.CHUNK = chunk
    assert found == list(detect_here(texts, kb))
    assert found[3] == () and all(found[i] for i in (0, 1, 2, 4, 5, 6))


def test_unreachable_scheduler_is_a_clear_error(
    tmp_path: Path, kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldloop.sample import distributed
    from goldloop.sample.distributed import DaskError, dask_client

    monkeypatch.setattr(distributed, "CONNECT_TIMEOUT", "2s")  # Dask retries until it runs out
    with (
        pytest.raises(DaskError, match="cannot connect") as unreachable,
        dask_client("tcp://127.0.0.1:9"),
    ):
        pass
    assert unreachable.value.exit_code == 4  # a service that does not answer
    with pytest.raises(DaskError, match="cannot connect") as malformed, dask_client("tcp://[bad"):
        pass
    assert malformed.value.exit_code == 2  # an address the user must fix
    with pytest.raises(DaskError, match="local:N needs N >= 1"), dask_client("local:0"):
        pass
