"""``goldloop``'s entry point: every way a command can end is one line and an exit code."""

from __future__ import annotations

import pytest

from goldloop.errors import (
    CheckFailed,
    Interrupted,
    PartialRun,
    Pending,
    ServiceError,
    SettingError,
)
from tests.conftest import Cli


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
    assert (result.returncode, result.stdout.strip(), result.stderr) == (1, "not running", "")
