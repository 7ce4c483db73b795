"""Two-phase ``run_sample`` on the demo corpus with real spaCy: only phase 1 is parsed, ``p_incl``
is the product of both phases, ``--extend`` grows phase 1 along the same order with batch 0's
strata, and a two-phase batch never extends a one-phase sample."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import goldloop.text.nlp
from goldloop.errors import GoldloopError
from goldloop.kb import KB
from goldloop.sample import read_manifest
from goldloop.sample.batch_record import SampleSettings
from goldloop.sample.phase1 import order_key
from goldloop.sample.pool import POOL_META, read_pool_rows
from goldloop.sample.run import run_sample
from goldloop.settings import DEMO_CORPUS
from tests.conftest import Cli

SETTINGS = SampleSettings(n_primary=3, n_double=1, n_reserve=1, tail_top_k=10, seed=5, phase1=10)
ELIGIBLE = 26  # the demo corpus: 31 rows, 5 dropped (see test_run)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text handed to the one bulk-parse path during the test (still parsed for real)."""
    seen: list[str] = []

    def tapped(real: Callable[..., Iterator[Any]]) -> Callable[..., Iterator[Any]]:
        def counting(texts: Iterable[str], *args: Any, **kwargs: Any) -> Iterator[Any]:
            def tap() -> Iterator[str]:
                for text in texts:
                    seen.append(text)
                    yield text

            return real(tap(), *args, **kwargs)

        return counting

    for bulk in ("parse_many", "derive_many"):
        monkeypatch.setattr(goldloop.text.nlp, bulk, tapped(getattr(goldloop.text.nlp, bulk)))
    return seen


def _eligible_ids(tmp_path: Path, kb: KB) -> list[str]:
    one_phase = run_sample(DEMO_CORPUS, tmp_path / "all", kb, replace(SETTINGS, phase1=None))
    assert one_phase.report.to_dict()["eligible"] == ELIGIBLE
    return [d.doc_id for d in read_pool_rows(tmp_path / "all" / "pool_mentions.csv.gz")]


def test_only_phase1_is_parsed_and_p_incl_is_the_product(
    tmp_path: Path, kb: KB, parsed: list[str]
) -> None:
    eligible = _eligible_ids(tmp_path, kb)
    parsed.clear()
    result = run_sample(DEMO_CORPUS, tmp_path / "s", kb, SETTINGS)
    r = result.report.to_dict()
    assert len(parsed) == 10 == r["pool_cache"]["parsed"] == r["phase1"]["size"]
    assert r["rows_read"] == 31 and r["eligible"] == ELIGIBLE
    assert r["phase1"]["p"] == pytest.approx(10 / ELIGIBLE)
    expected = sorted(eligible, key=lambda doc_id: order_key(5, doc_id))[:10]
    pool = read_pool_rows(tmp_path / "s" / "pool_mentions.csv.gz")
    assert [d.doc_id for d in pool] == expected
    assert sum(s["pool"] for s in r["strata"].values()) == 10
    rows = read_manifest(tmp_path / "s")
    assert len(rows) == 5 and {row.doc_id for row in rows} <= set(expected)
    for row in rows:
        s = r["strata"][row.stratum]
        assert s["drawn"] >= 1
        assert row.p_incl == pytest.approx(10 / ELIGIBLE * s["drawn"] / s["remaining"])
        assert row.p_incl == pytest.approx(s["p_incl"])


def test_extend_grows_phase1_along_the_same_order_with_fixed_strata(
    tmp_path: Path, kb: KB, parsed: list[str]
) -> None:
    eligible = _eligible_ids(tmp_path, kb)
    order = sorted(eligible, key=lambda doc_id: order_key(5, doc_id))
    first = run_sample(DEMO_CORPUS, tmp_path / "s", kb, SETTINGS)
    parsed.clear()
    # A different --seed for the draw keeps batch 0's phase-1 order and cut points.
    second = run_sample(DEMO_CORPUS, tmp_path / "s", kb, replace(SETTINGS, seed=99), extend=True)
    assert second.report.to_dict()["phase1"]["size"] == 15  # 5 drawn + 10
    assert second.report.to_dict()["phase1"]["seed"] == 5
    assert len(parsed) == 5 == second.report.to_dict()["pool_cache"]["parsed"]  # only the new five
    assert second.report.to_dict()["boundaries"] == first.report.to_dict()["boundaries"]
    assert [d.doc_id for d in read_pool_rows(tmp_path / "s" / "pool_mentions.csv.gz")] == order[:15]
    rows = read_manifest(tmp_path / "s")
    batch1 = [row for row in rows if row.batch == 1]
    assert {row.doc_id for row in batch1} <= set(order[:15]) - {r.doc_id for r in rows[:5]}
    for row in batch1:
        s = second.report.to_dict()["strata"][row.stratum]
        assert row.p_incl == pytest.approx(15 / ELIGIBLE * s["drawn"] / s["remaining"])
    # A third batch asking for a smaller phase 1 never shrinks it.
    parsed.clear()
    third = run_sample(DEMO_CORPUS, tmp_path / "s", kb, replace(SETTINGS, phase1=1), extend=True)
    assert (
        third.report.to_dict()["phase1"]["size"] == 15
        and third.report.to_dict()["pool_cache"]["hit"]
    )
    assert parsed == []


def test_phase1_larger_than_the_pool_takes_every_eligible_document(tmp_path: Path, kb: KB) -> None:
    result = run_sample(DEMO_CORPUS, tmp_path / "s", kb, replace(SETTINGS, phase1="auto"))
    assert result.report.to_dict()["phase1"]["size"] == ELIGIBLE  # auto = 20 × 5 = 100 > 26
    assert result.report.to_dict()["phase1"]["p"] == 1.0


def test_two_phase_cannot_extend_a_one_phase_sample(tmp_path: Path, kb: KB) -> None:
    run_sample(DEMO_CORPUS, tmp_path / "s", kb, replace(SETTINGS, phase1=None))
    with pytest.raises(GoldloopError, match="drawn in one phase"):
        run_sample(DEMO_CORPUS, tmp_path / "s", kb, SETTINGS, extend=True)
    with pytest.raises(GoldloopError, match=r"^phase1: must be a positive number"):
        run_sample(DEMO_CORPUS, tmp_path / "t", kb, replace(SETTINGS, phase1=0))


def test_cli_phase1_option(tmp_path: Path, cli: Cli) -> None:
    base = ["sample", "--corpus", str(DEMO_CORPUS), "--n-primary", "3", "--n-double", "1",
            "--n-reserve", "1"]  # fmt: skip
    result = cli(*base, "--out", tmp_path / "bad", "--phase1", "lots")
    assert result.returncode == 2 and "--phase1" in result.stderr
    assert not (tmp_path / "bad").exists()
    assert cli(*base, "--out", tmp_path / "s", "--phase1", "12").returncode == 0
    report = json.loads((tmp_path / "s" / "sampling_report.batch0.json").read_text())
    assert report["phase1"]["size"] == 12 and report["settings"]["phase1"] == 12
    assert json.loads((tmp_path / "s" / POOL_META).read_text())["eligible"] == ELIGIBLE
