"""Folding an answer and judging its direction against the gold's."""

from __future__ import annotations

from goldloop.kb import KB
from goldloop.scoring.folding import direction_agrees


def test_direction_agreement_rules(kb: KB) -> None:
    assert direction_agrees(kb, "PEL.000003", "symmetric", "forward") is True
    assert direction_agrees(kb, "PEL.000000", "forward", "inverse") is False
    assert direction_agrees(kb, "PEL.000000", "na", "forward") is None
    assert direction_agrees(kb, "PEL.000000", "forward", None) is None
