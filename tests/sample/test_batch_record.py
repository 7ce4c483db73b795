"""A sampling batch as recorded: its settings refuse what cannot be drawn, naming the setting;
its report's parts write what a later batch reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldloop.errors import SettingError
from goldloop.sample.batch_record import (
    DrawCounts,
    SampleSettings,
    StrataBoundaries,
    report_path,
)
from goldloop.sample.strata import Boundaries


@pytest.mark.parametrize(
    "changes,setting",
    [
        ({"n_primary": -1}, "n_primary"),
        ({"n_primary": 0, "n_double": 0, "n_reserve": 0}, "n_primary"),
        ({"none_fraction": 1.5}, "none_fraction"),
        ({"tail_weight": 0.0}, "tail_weight"),
        ({"tail_top_k": -1}, "tail_top_k"),
        ({"workers": 0}, "workers"),
        ({"batch_size": 0}, "batch_size"),
        ({"phase1": 0}, "phase1"),
        ({"phase1": "most"}, "phase1"),
    ],
)
def test_settings_that_cannot_be_drawn_are_refused_by_name(
    changes: dict[str, object], setting: str
) -> None:
    with pytest.raises(SettingError) as refused:
        SampleSettings(**changes).check()  # type: ignore[arg-type]
    assert refused.value.setting == setting


def test_default_settings_and_both_phase1_forms_pass() -> None:
    for phase1 in (None, 40, "auto"):
        SampleSettings(phase1=phase1).check()
    assert SampleSettings().batch_total == 100 + 20 + 30


def test_the_boundaries_written_are_the_boundaries_read_back() -> None:
    cuts = Boundaries(year_cuts=(2001.0, 2012.5), density_median=0.25, common=frozenset({"b", "a"}))
    written = StrataBoundaries(cuts, tail_top_k=7).to_dict()
    assert written["common_labels"] == ["a", "b"] and written["tail_top_k"] == 7
    assert StrataBoundaries.cuts_of(written) == cuts


def test_the_shortfall_is_what_was_asked_and_not_drawn() -> None:
    counts = DrawCounts(requested=10, drawn=7, negative_controls=1, roles={"primary": 7})
    assert counts.to_dict()["shortfall"] == 3


def test_each_batch_has_its_own_report_file() -> None:
    assert report_path(Path("s"), 0) == Path("s") / "sampling_report.batch0.json"
    assert report_path(Path("s"), 3).name == "sampling_report.batch3.json"
