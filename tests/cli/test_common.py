"""What every command shares: consoles that never cut numbers, roles, the output checks."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.table import Table

from goldloop.cli import common
from goldloop.errors import GoldloopError


def _table() -> Table:
    table = Table(title="score")
    for column in ("system", "precision", "recall", "f1", "entity accuracy", "coverage"):
        table.add_column(column, justify="right")
    table.add_row("a-system-with-a-long-name", "0.7512345", "0.9061234", "0.8212345", "0.61", "1.0")
    return table


def test_a_table_printed_to_a_file_keeps_every_digit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr("sys.stdout", io.StringIO())  # not a terminal, as `goldloop score > f`
    console = common._console()
    console.print(_table())
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert "…" not in printed
    for number in ("0.7512345", "0.9061234", "0.8212345"):
        assert number in printed


def test_an_explicit_width_still_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setattr("sys.stdout", io.StringIO())
    console = common._console()
    console.print(_table())
    assert "…" in console.file.getvalue()  # type: ignore[attr-defined]


def test_roles_are_checked() -> None:
    assert common.parse_roles(" primary, double ") == ["primary", "double"]
    with pytest.raises(GoldloopError, match=r"--roles 'primary,bogus': unknown role\(s\) bogus"):
        common.parse_roles("primary,bogus")
    with pytest.raises(GoldloopError, match="no role given"):
        common.parse_roles(" , ")


def test_check_outputs_names_both_options(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("{}\n")
    with pytest.raises(GoldloopError) as err:
        common.check_outputs({"--out": tmp_path / "x" / ".." / "in.jsonl"}, {"--documents": source})
    message = str(err.value)
    assert message.startswith(
        f"--out {tmp_path / 'x' / '..' / 'in.jsonl'} and --documents {source}"
    )
    assert f"({source.resolve()})" in message
    common.check_outputs(
        {"--out": tmp_path / "out.json", "--report": None}, {"--documents": source}
    )
