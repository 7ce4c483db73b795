"""The files a command writes beside its output, named after it: one rule for every command."""

from __future__ import annotations

from pathlib import Path


def report_path(output: Path) -> Path:
    """A run's report beside its output: ``<output>.report.json``."""
    return output.with_name(output.name + ".report.json")


def verification_path(gold: Path) -> Path:
    """A verified gold's sidecar (its verification counts): ``<gold>.verification.json``."""
    return gold.with_name(gold.name + ".verification.json")
