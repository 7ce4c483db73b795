"""Greedy one-to-one span matching within one document: the matcher every scorer shares.

Predictions are taken in the order given; each one takes the first gold span, in gold order, that
it matches and that no earlier prediction took. Each gold span is taken at most once, so a second
prediction over the same annotation stays unmatched (a false positive rather than inflated
recall), while two gold spans at the same offsets (two relations on one phrase) can both be found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

MatchMode = Literal["overlap", "exact"]
MATCH_MODES: tuple[str, ...] = ("overlap", "exact")


def overlaps(a1: int, b1: int, a2: int, b2: int) -> bool:
    """Whether half-open ``[a1, b1)`` and ``[a2, b2)`` share at least one character."""
    return a1 < b2 and a2 < b1


def check_match_mode(match_mode: str) -> None:
    if match_mode not in MATCH_MODES:
        raise ValueError(f"match_mode must be one of {MATCH_MODES}, got {match_mode!r}")


def match_spans(
    predicted: Sequence[tuple[int, int]],
    gold: Sequence[tuple[int, int]],
    match_mode: str = "overlap",
) -> list[int | None]:
    """For each predicted ``(a, b)`` of one document, the index of the gold span it took, or None.

    ``overlap`` accepts any shared character; ``exact`` needs identical boundaries.
    """
    check_match_mode(match_mode)
    exact = match_mode == "exact"
    taken_gold: set[int] = set()
    taken: list[int | None] = []
    for a, b in predicted:
        hit: int | None = None
        for index, (ga, gb) in enumerate(gold):
            if index in taken_gold:
                continue
            if (ga == a and gb == b) if exact else (a < gb and ga < b):
                hit = index
                taken_gold.add(index)
                break
        taken.append(hit)
    return taken
