"""``goldloop``'s entry point, run as a user runs it: tables, help, and every way a command can
end is one line and an exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from goldloop import __version__
from goldloop.errors import (
    CheckFailed,
    Interrupted,
    PartialRun,
    Pending,
    ServiceError,
    SettingError,
)
from tests.conftest import LEGACY, Cli, KbWriter


def _kb_check_raising(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    def fail(*args: object) -> None:
        raise exc

    monkeypatch.setattr("goldloop.cli.kb.open_kb", fail)


@pytest.mark.parametrize(
    ("exc", "code", "line"),
    [
        (KeyboardInterrupt(), 130, "error: interrupted"),
        (Interrupted("interrupted: nothing written"), 130, "error: interrupted: nothing written"),
        (SettingError("n_primary", "must not be negative"), 2, "error: --n-primary: must not be negative"),
        (CheckFailed("f: 2 problems"), 1, "error: f: 2 problems"),
        (PartialRun("3 of 10 failed; see r.json"), 3, "error: 3 of 10 failed; see r.json"),
        (ServiceError("cannot reach Redis at r:6379"), 4, "error: cannot reach Redis at r:6379"),
        (Pending("batch b-1 still running"), 5, "error: batch b-1 still running"),
        (PermissionError(13, "Permission denied", "/x/y.json"), 2, "error: /x/y.json: Permission denied"),
        (OSError(28, "No space left on device"), 2, "error: No space left on device"),
    ],
)  # fmt: skip
def test_each_ending_has_its_code_and_one_line(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, exc: BaseException, code: int, line: str
) -> None:
    _kb_check_raising(monkeypatch, exc)
    result = cli("kb", "check")
    assert result.returncode == code
    assert result.stderr.strip().splitlines() == [line]


def test_a_bracket_in_a_message_is_printed_as_written(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _kb_check_raising(monkeypatch, CheckFailed("span [5, 14) of [bold]x[/bold]"))
    assert cli("kb", "check").stderr.strip() == "error: span [5, 14) of [bold]x[/bold]"


def test_a_check_that_exits_1_stays_1(cli: Cli, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("GOLDLOOP_HOME", str(tmp_path))
    result = cli("studio", "status")
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.strip() == f"not running (home {tmp_path.resolve()}, $GOLDLOOP_HOME)"


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


def test_invalid_kb_exits_2_with_one_line(cli: Cli, write_kb: KbWriter) -> None:
    path = write_kb(["R1,regulates"], header="entity_id,label\n", name="old.csv")
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
