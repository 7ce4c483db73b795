"""Run the ``goldloop`` command in-process (a subprocess per call costs seconds here)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from goldloop.cli import main


@dataclass(frozen=True)
class CliResult:
    returncode: int
    stdout: str
    stderr: str

    @property
    def out(self) -> str:
        """stdout with rich's line wrapping undone."""
        return " ".join(self.stdout.split())

    @property
    def err(self) -> str:
        return " ".join(self.stderr.split())


Cli = Callable[..., CliResult]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Cli:
    monkeypatch.setenv("COLUMNS", "200")

    def run(*args: str | int | Path) -> CliResult:
        monkeypatch.setattr(sys, "argv", ["goldloop", *map(str, args)])
        capsys.readouterr()
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
