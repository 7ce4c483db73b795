"""The mention pool's cache: valid while the corpus, KB, gate and pipeline are the same."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from goldloop.kb import KB, load_kb
from goldloop.sample.batch_record import SampleSettings
from goldloop.sample.gate import GateSettings
from goldloop.sample.pool import POOL_META
from goldloop.sample.run import run_sample
from goldloop.settings import DEMO_CORPUS
from tests.conftest import KbWriter
from tests.sample.conftest import forbid_parsing

SMALL = SampleSettings(n_primary=3, n_double=1, n_reserve=1, tail_top_k=10, seed=3)


def test_changed_kb_or_gate_invalidates_the_pool_cache(
    tmp_path: Path, kb: KB, monkeypatch: pytest.MonkeyPatch, write_kb: KbWriter
) -> None:
    run_sample(DEMO_CORPUS, tmp_path / "s", kb, SMALL)
    fingerprint = json.loads((tmp_path / "s" / POOL_META).read_text())["fingerprint"]

    def edit(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        rows[0]["description"] += " (edited)"
        return rows

    edited = write_kb(bundled=edit)
    result = run_sample(DEMO_CORPUS, tmp_path / "s", load_kb(edited), SMALL, extend=True)
    assert result.report.to_dict()["pool_cache"]["hit"] is False
    refreshed = json.loads((tmp_path / "s" / POOL_META).read_text())["fingerprint"]
    assert refreshed != fingerprint
    stricter = replace(SMALL, gate=GateSettings(min_chars=350))
    result = run_sample(DEMO_CORPUS, tmp_path / "s", kb, stricter, extend=True)
    assert result.report.to_dict()["pool_cache"]["hit"] is False
    assert result.report.to_dict()["dropped"]["too_short"] == 3
    forbid_parsing(monkeypatch)
    again = run_sample(DEMO_CORPUS, tmp_path / "s", kb, stricter, extend=True)
    assert again.report.to_dict()["pool_cache"]["hit"] is True
