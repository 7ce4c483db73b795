"""What `goldloop score` runs: every named system under every regime, id bridges by system,
the refusals (a gold of nothing, a bridge for no system)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.errors import GoldloopError
from goldloop.scoring.score_files import ScoreOptions, score_files
from tests.conftest import Cli, shared_kb
from tests.scoring.conftest import row


def test_score_engines_agree_and_the_id_bridge_applies(
    tmp_path: Path, gold_file: Path, cli: Cli
) -> None:
    system = tmp_path / "minted.json"
    system.write_text(
        json.dumps([row(0, "directly regulates", "C7"), row(1, "activates", "C8")]),
        encoding="utf-8",
    )
    bridge = tmp_path / "bridge.csv"
    bridge.write_text("entity_id_predicted,entity_id\nC7,RO.0002022\n", encoding="utf-8")
    reports = {}
    for engine in ("goldloop", "nervaluate"):
        out = tmp_path / engine
        args = [
            "score",
            "--gold",
            gold_file,
            "--system",
            f"m={system}",
            "--id-bridge",
            f"m={bridge}",
        ]
        assert cli(*args, "--engine", engine, "--report-dir", out).returncode == 0
        reports[engine] = json.loads((out / "score_results.json").read_text(encoding="utf-8"))[
            "results"
        ][0]
    assert reports["goldloop"]["schemas"]["overall"] == reports["nervaluate"]["schemas"]["overall"]
    detection = reports["goldloop"]["detection"]
    assert (detection["n_matched"], detection["n_id_comparable"], detection["n_id_correct"]) == (
        2,
        1,
        1,
    )
    assert reports["goldloop"]["inputs"]["unmapped_by_id_bridge"] == 1


def test_each_system_under_each_regime_with_its_own_bridge(tmp_path: Path, gold_file: Path) -> None:
    minted, plain = tmp_path / "minted.json", tmp_path / "plain.json"
    minted.write_text(json.dumps([row(0, "directly regulates", "C7")]), encoding="utf-8")
    plain.write_text(json.dumps([row(0, "directly regulates", "RO.0002578")]), encoding="utf-8")
    bridge = tmp_path / "bridge.csv"
    bridge.write_text("entity_id_predicted,entity_id\nC7,RO.0002578\n", encoding="utf-8")
    options = ScoreOptions(regimes=("end-to-end", "linking-only"))
    systems = [("m", minted), ("p", plain)]
    documents, results = score_files(gold_file, systems, shared_kb(), options, [("m", bridge)])
    assert [d.doc_id for d in documents] == ["pmid:1", "pmid:2"]
    assert [(r.system, r.regime) for r in results] == [
        ("m", "end-to-end"), ("m", "linking-only"), ("p", "end-to-end"), ("p", "linking-only")
    ]  # fmt: skip
    # The bridge maps m's minted id only: both systems are then right on the one span.
    assert [r.to_dict()["detection"]["n_id_correct"] for r in results[::2]] == [1, 1]
    assert all(r.corpus is None for r in results)  # the gold carries no p_incl
    # A bridge for every system (no name) applies to both; p's ids are not in it.
    _, unnamed = score_files(gold_file, systems, shared_kb(), options, [(None, bridge)])
    assert [r.inputs.unmapped_by_id_bridge for r in unnamed[::2]] == [0, 1]


def test_a_bridge_for_no_system_and_a_gold_of_nothing_are_refused(
    tmp_path: Path, gold_file: Path
) -> None:
    bridge = tmp_path / "bridge.csv"
    bridge.write_text("entity_id_predicted,entity_id\nC7,RO.0002578\n", encoding="utf-8")
    with pytest.raises(GoldloopError, match=r"id bridge q=.*: no system is named 'q'"):
        score_files(gold_file, [("s", gold_file)], None, ScoreOptions(), [("q", bridge)])
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    with pytest.raises(GoldloopError, match="the gold holds no documents to score against"):
        score_files(empty, [("s", gold_file)], None, ScoreOptions())
