"""The ``goldloop`` command, run as a user runs it: tables, one-line errors, exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from goldloop import __version__
from tests.conftest import Cli

LEGACY = Path(__file__).parents[1] / "data" / "legacy" / "sample.0.gt.json"


def test_the_installed_entry_point_runs() -> None:
    script = Path(sys.executable).with_name("goldloop")
    result = subprocess.run([script, "--version"], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout.strip()) == (0, f"goldloop {__version__}")


def test_kb_check_reports_the_bundled_kb(cli: Cli) -> None:
    result = cli("kb", "check")
    assert result.returncode == 0, result.stderr
    lines = {" ".join(line.strip("│ ").split()) for line in result.stdout.splitlines()}
    for expected in ("rows │ 355", "canonical │ 300", "converse (non-canonical) │ 55",
                     "symmetric │ 20", "needs review │ 0"):  # fmt: skip
        assert expected in lines, result.stdout


def test_invalid_kb_exits_2_with_one_line(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "old.csv"
    path.write_text("entity_id,label\nR1,regulates\n")
    result = cli("kb", "check", path)
    assert result.returncode == 2
    assert "predates the converse-pair derivation" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_missing_file_exits_2(cli: Cli, tmp_path: Path) -> None:
    result = cli("gold", "check", tmp_path / "nope.json")
    assert result.returncode == 2
    assert "cannot read" in result.stderr and "Traceback" not in result.stderr


def test_gold_check_on_the_legacy_file_exits_1_naming_an_unknown_id(cli: Cli) -> None:
    result = cli("gold", "check", LEGACY)
    assert result.returncode == 1, result.stderr
    assert "41" in result.stdout and "legacy" in result.stdout
    assert "document 0 (legacy:0): hit 8: 'RO.0015008' is not in the KB" in result.err
    assert "(8 hit(s) in all)" in result.err


def test_version_and_help(cli: Cli) -> None:
    assert cli("--version").stdout.strip() == f"goldloop {__version__}"
    for args in (["--help"], ["kb", "check", "--help"], ["gold", "check", "--help"]):
        result = cli(*args)
        assert result.returncode == 0 and "Usage" in result.stdout


def test_usage_errors_exit_2_on_one_line(cli: Cli) -> None:
    result = cli("kb", "check", "--no-such-option")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: No such option: --no-such-option (see `goldloop kb check --help`)"
    ]


def test_a_group_without_a_command_prints_its_help(cli: Cli) -> None:
    result = cli("kb")
    assert result.returncode == 2
    assert "derive" in result.stdout and result.stderr == ""
