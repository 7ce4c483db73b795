"""The installed ``goldloop`` command, run as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from goldloop import __version__

LEGACY = Path(__file__).parents[1] / "data" / "legacy" / "sample.0.gt.json"


def goldloop(*args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-c", "from goldloop.cli import main; main()", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env={"COLUMNS": "200", "PATH": ""})


def test_kb_check_reports_the_bundled_kb():
    result = goldloop("kb", "check")
    assert result.returncode == 0, result.stderr
    lines = {" ".join(line.strip("│ ").split()) for line in result.stdout.splitlines()}
    for expected in ("rows │ 355", "canonical │ 300", "converse (non-canonical) │ 55",
                     "symmetric │ 20", "needs review │ 0"):  # fmt: skip
        assert expected in lines, result.stdout


def test_invalid_kb_exits_2_with_one_line(tmp_path):
    path = tmp_path / "old.csv"
    path.write_text("entity_id,label\nR1,regulates\n")
    result = goldloop("kb", "check", str(path))
    assert result.returncode == 2
    assert "predates the converse-pair derivation" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 2  # rich may wrap one long line


def test_missing_file_exits_2(tmp_path):
    result = goldloop("gold", "check", str(tmp_path / "nope.json"))
    assert result.returncode == 2
    assert "cannot read" in result.stderr and "Traceback" not in result.stderr


def test_gold_check_on_the_legacy_file():
    result = goldloop("gold", "check", str(LEGACY))
    assert result.returncode == 0, result.stderr
    assert "41" in result.stdout and "legacy" in result.stdout


def test_version_and_help():
    assert goldloop("--version").stdout.strip() == f"goldloop {__version__}"
    for args in (["--help"], ["kb", "check", "--help"], ["gold", "check", "--help"]):
        result = goldloop(*args)
        assert result.returncode == 0 and "Usage" in result.stdout


def test_usage_error_exits_2():
    result = goldloop("kb", "check", "--no-such-option")
    assert result.returncode == 2
