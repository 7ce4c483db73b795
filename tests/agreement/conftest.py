"""Run the ``goldloop`` command in-process (a subprocess per call costs seconds here)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.studio.loop_data import run_goldloop


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
    def run(*args: str | int | Path) -> CliResult:
        capsys.readouterr()
        code, out, err = run_goldloop(
            [str(a) for a in args], {"COLUMNS": "200"}, monkeypatch, capsys
        )
        return CliResult(code, out, err)

    return run
