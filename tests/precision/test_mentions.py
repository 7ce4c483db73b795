"""Verdicts and labels files: a bad line is refused with the file and line, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldloop.precision.mentions import PrecisionError, read_labels
from tests.conftest import Cli


def test_bad_files_exit_2_naming_the_line(
    worked_example: tuple[Path, Path], tmp_path: Path, cli: Cli
) -> None:
    verdicts, labels = worked_example
    lines = verdicts.read_text().splitlines()
    lines[4] = lines[4].replace('"supported"', '"yes"')
    verdicts.write_text("\n".join(lines) + "\n")
    result = cli(
        "precision", "report", "--verdicts", verdicts, "--labels", labels, "-o", tmp_path / "p.json"
    )
    assert result.returncode == 2
    assert "verdicts.jsonl: line 5" in result.err
    assert not (tmp_path / "p.json").exists()
    with pytest.raises(PrecisionError, match="line 1: label must be one of"):
        labels.write_text('{"key": "x", "label": "true"}\n')
        read_labels(labels)
