"""The names of the files written beside an output: after the whole name, in the same folder."""

from __future__ import annotations

from pathlib import Path

from goldloop.files.beside import report_path, verification_path


def test_a_report_and_a_sidecar_sit_beside_their_output_named_after_all_of_it() -> None:
    out = Path("runs") / "gold.v2.json"
    assert report_path(out) == Path("runs") / "gold.v2.json.report.json"
    assert verification_path(out) == Path("runs") / "gold.v2.json.verification.json"


def test_a_name_without_a_suffix_keeps_its_whole_name() -> None:
    assert report_path(Path("verdicts")).name == "verdicts.report.json"
    assert verification_path(Path("/tmp/x/gold")) == Path("/tmp/x/gold.verification.json")
