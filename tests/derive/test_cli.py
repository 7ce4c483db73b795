"""``goldloop kb derive`` through the real entry point: tables, warnings, exit 2 on bad input."""

from __future__ import annotations

import sys

from goldloop.cli import main
from goldloop.derive import PENDING_SUFFIX

from .helpers import merged_kb, write_csv


def run(monkeypatch, *args: str) -> int:
    """The exit code ``goldloop kb derive ARGS`` ends with."""
    monkeypatch.setattr(sys, "argv", ["goldloop", "kb", "derive", *args])
    try:
        main()
    except SystemExit as exited:
        return int(exited.code or 0)
    return 0


def test_derive_prints_the_summary_and_warns_while_pending(tmp_path, monkeypatch, capsys):
    source = merged_kb(
        tmp_path / "merged.csv",
        [("X:1", "regulates"), ("X:2", "regulated by"), ("X:3", "overlaps")],
    )
    sym = write_csv(tmp_path / "sym.csv", [{"entity_id": "X:3"}])
    out = tmp_path / "pairs.csv"
    assert (
        run(monkeypatch, "--input", str(source), "--output", str(out), "--symmetric", str(sym)) == 0
    )
    printed = capsys.readouterr().out
    assert "passive_by" in printed and "1 pairs await a verdict" in printed
    assert (tmp_path / f"pairs.csv{PENDING_SUFFIX}").exists()

    review = tmp_path / "review.csv"
    review.write_text(
        (tmp_path / f"pairs.csv{PENDING_SUFFIX}").read_text().replace(",,\n", ",accept,\n")
    )
    code = run(
        monkeypatch, "--input", str(source), "--output", str(out), "--review-csv", str(review)
    )
    assert code == 0
    assert "await a verdict" not in capsys.readouterr().out


def test_bad_review_sheet_exits_2_with_one_line(tmp_path, monkeypatch, capsys):
    source = merged_kb(tmp_path / "merged.csv", [("X:1", "regulates"), ("X:2", "regulated by")])
    review = write_csv(
        tmp_path / "review.csv",
        [{"entity_id": "X:1", "inverse_entity_id": "X:2", "verdict": "yes"}],
    )
    code = run(
        monkeypatch,
        "--input",
        str(source),
        "--output",
        str(tmp_path / "out.csv"),
        "--review-csv",
        str(review),
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "line 2: verdict for X:1 / X:2" in err and "Traceback" not in err
    assert not (tmp_path / "out.csv").exists()


def test_missing_required_option_is_a_usage_error(monkeypatch, capsys):
    assert run(monkeypatch, "--input", "x.csv") == 2
    assert "--output" in capsys.readouterr().err
