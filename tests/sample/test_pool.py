"""The mention pool's cache: valid while the corpus, KB, gate and pipeline are the same."""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

from goldloop.kb import KB, load_kb
from goldloop.sample.gate import GateSettings
from goldloop.sample.pool import POOL_META
from goldloop.sample.run import SampleSettings, run_sample
from goldloop.settings import BUNDLED_KB, DEMO_CORPUS
from tests.sample.conftest import forbid_parsing

SMALL = SampleSettings(n_primary=3, n_double=1, n_reserve=1, tail_top_k=10, seed=3)


def test_changed_kb_or_gate_invalidates_the_pool_cache(
    tmp_path: Path, kb: KB, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_sample(DEMO_CORPUS, tmp_path / "s", kb, SMALL)
    fingerprint = json.loads((tmp_path / "s" / POOL_META).read_text())["fingerprint"]
    with BUNDLED_KB.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    rows[0]["description"] += " (edited)"
    edited = tmp_path / "kb.csv"
    with edited.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    result = run_sample(DEMO_CORPUS, tmp_path / "s", load_kb(edited), SMALL, extend=True)
    assert result.report["pool_cache"]["hit"] is False
    refreshed = json.loads((tmp_path / "s" / POOL_META).read_text())["fingerprint"]
    assert refreshed != fingerprint
    stricter = replace(SMALL, gate=GateSettings(min_chars=350))
    result = run_sample(DEMO_CORPUS, tmp_path / "s", kb, stricter, extend=True)
    assert result.report["pool_cache"]["hit"] is False
    assert result.report["dropped"]["too_short"] == 3
    forbid_parsing(monkeypatch)
    again = run_sample(DEMO_CORPUS, tmp_path / "s", kb, stricter, extend=True)
    assert again.report["pool_cache"]["hit"] is True
