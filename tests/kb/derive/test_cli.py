"""``goldloop kb derive`` through the real entry point: tables, warnings, exit 2 on bad input."""

from __future__ import annotations

from pathlib import Path

from goldloop.kb.derive import PENDING_SUFFIX
from tests.conftest import Cli

from .helpers import merged_kb, write_csv


def test_derive_prints_the_summary_and_warns_while_pending(tmp_path: Path, cli: Cli) -> None:
    source = merged_kb(
        tmp_path / "merged.csv",
        [("X:1", "regulates"), ("X:2", "regulated by"), ("X:3", "overlaps")],
    )
    sym = write_csv(tmp_path / "sym.csv", [{"entity_id": "X:3"}])
    out = tmp_path / "pairs.csv"
    result = cli("kb", "derive", "--input", source, "--output", out, "--symmetric", sym)
    assert result.returncode == 0, result.stderr
    assert "passive_by" in result.stdout and "1 pairs await a verdict" in result.out
    assert (tmp_path / f"pairs.csv{PENDING_SUFFIX}").exists()

    review = tmp_path / "review.csv"
    review.write_text(
        (tmp_path / f"pairs.csv{PENDING_SUFFIX}").read_text().replace(",,\n", ",accept,\n")
    )
    result = cli("kb", "derive", "--input", source, "--output", out, "--review-csv", review)
    assert result.returncode == 0, result.stderr
    assert "await a verdict" not in result.out


def test_bad_review_sheet_exits_2_with_one_line(tmp_path: Path, cli: Cli) -> None:
    source = merged_kb(tmp_path / "merged.csv", [("X:1", "regulates"), ("X:2", "regulated by")])
    review = write_csv(
        tmp_path / "review.csv",
        [{"entity_id": "X:1", "inverse_entity_id": "X:2", "verdict": "yes"}],
    )
    out = tmp_path / "out.csv"
    result = cli("kb", "derive", "--input", source, "--output", out, "--review-csv", review)
    assert result.returncode == 2
    assert "line 2: verdict for X:1 / X:2" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_the_pending_sheet_may_not_overwrite_the_review_sheet(tmp_path: Path, cli: Cli) -> None:
    source = merged_kb(tmp_path / "merged.csv", [("X:1", "regulates"), ("X:2", "regulated by")])
    out = tmp_path / "pairs.csv"
    review = write_csv(
        tmp_path / f"pairs.csv{PENDING_SUFFIX}",
        [{"entity_id": "X:1", "inverse_entity_id": "X:2", "verdict": "accept"}],
    )
    before = review.read_text()
    result = cli("kb", "derive", "--input", source, "--output", out, "--review-csv", review)
    assert result.returncode == 2
    assert "--review-csv" in result.stderr and "same file" in result.stderr
    assert review.read_text() == before and not out.exists()


def test_missing_required_option_is_a_usage_error(cli: Cli) -> None:
    result = cli("kb", "derive", "--input", "x.csv")
    assert result.returncode == 2
    assert "--output" in result.stderr
