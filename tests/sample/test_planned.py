"""A sample dir as a plan sees it (``sample.planned``): its identity, batches and documents left
per draw stratum; a plan file checked against it; a plan's counts as allocation weights."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from goldloop.sample.planned import (
    PlanRefused,
    describe,
    planned_weights,
    read_planned,
    sample_state,
)
from goldloop.sample.strata import MERGED

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"


def test_the_example_sample_after_its_two_batches() -> None:
    state = sample_state(EXAMPLE)
    report = json.loads((EXAMPLE / "sampling_report.batch1.json").read_text())
    assert state.batches == 2
    assert state.remaining == {
        group: draw["remaining"] - draw["drawn"] for group, draw in report["strata"].items()
    }
    assert len(state.doc_ids) == 15
    # The identity is batch 0's: the same after a copy, another when batch 0 differs.
    assert describe(state)["id"] == state.sample_id and len(state.sample_id) == 16


def test_a_plan_file_is_checked_against_the_sample(tmp_path: Path) -> None:
    state = sample_state(EXAMPLE)
    stratum = sorted(state.remaining)[0]
    plan = {"sample": describe(state), "next_batch": {"by_stratum": {stratum: 2}}}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    assert read_planned(path, state).by_stratum == {stratum: 2}
    for change, message in [
        ({"sample": {**describe(state), "id": "0" * 16}}, "another sample"),
        ({"sample": {**describe(state), "batches": 1}}, "plan again"),
        ({"next_batch": None}, "target was reached"),
        ({"next_batch": {"by_stratum": {"y9-nowhere": 1}}}, "not among"),
        ({"next_batch": {"by_stratum": {stratum: -1}}}, "document counts"),
    ]:
        path.write_text(json.dumps({**plan, **change}))
        with pytest.raises(PlanRefused, match=message):
            read_planned(path, state)
    path.write_text("{")
    with pytest.raises(PlanRefused, match="not a plan"):
        read_planned(path, state)


def test_a_sample_without_its_reports_or_manifest_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PlanRefused, match="holds no sample"):
        sample_state(tmp_path)
    shutil.copytree(EXAMPLE, tmp_path / "s")
    (tmp_path / "s" / "sampling_report.batch1.json").unlink()
    with pytest.raises(PlanRefused, match="strata"):
        sample_state(tmp_path / "s")


def test_planned_counts_become_weights_a_merged_one_shared_by_size() -> None:
    weights = planned_weights({"a": 3, MERGED: 4}, {"a": 10, "b": 1, "c": 3})
    assert weights == {"a": 3.0, "b": 1.0, "c": 3.0}
    assert planned_weights({"a": 2}, {"a": 5, "b": 0}) == {"a": 2.0, "b": 0.0}
