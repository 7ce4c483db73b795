"""Offset resolution: a verbatim surface plus a 1-based occurrence index → a character span.

Annotators (LLMs) never give offsets; they quote the surface and say which occurrence they mean.
This module is the one place that turns that quote into ``[a, b)`` code-point offsets.

Rules (the design's "LLM contract"):

- **Verbatim, case-exact.** No normalisation: a non-breaking space does not match a space, "IL-6"
  does not match "il-6".
- **Word boundaries at word-character edges.** At each edge where the surface's character and its
  neighbour in the text are both word characters (letters, digits, underscore, as ``str.isalnum``
  or ``_``), the match would continue a word and is not a match: "reduce" is not found inside
  "reduces" and "IL-6" not inside "IL-60"; "-6" is found in "IL-6" (its first character is not a
  word character, so that edge needs no boundary).
- **Counting.** The occurrence index counts every word-bounded match in text order, claimed or not,
  overlapping matches included: a match may start inside the previous one. In ``"X-X-X"`` the
  surface ``"X-X"`` has two occurrences, ``[0, 3)`` and ``[2, 5)``.
- **Claims.** ``claimed`` holds the ``(a, b)`` spans already given to earlier items of the same
  answer. A match is claimed only when its exact ``(a, b)`` is in ``claimed``; a match that merely
  overlaps a claimed span is not, because a shorter surface nested in a longer one is a separate
  decision (the decoder rejects it as ``nested_in_longer_span``) and must not be moved to another
  place in the text.
- **Fallback.** If the requested occurrence does not exist (beyond the count, or below 1) or is
  claimed, the first unclaimed match is taken and flagged ``occurrence_fallback``. When every match
  is claimed the item is a ``duplicate_occurrence``; when there is none, ``surface_not_found``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Literal

from goldloop.errors import GoldloopError

Reason = Literal["surface_not_found", "duplicate_occurrence"]


@dataclass(frozen=True)
class Resolved:
    """A span ``[a, b)``; ``occurrence_fallback`` when the requested occurrence was not taken."""

    a: int
    b: int
    occurrence_fallback: bool = False


class ResolutionError(GoldloopError):
    """The surface cannot be placed in the text; ``reason`` names why."""

    def __init__(self, reason: Reason, surface: str, occurrence: int | None) -> None:
        what = (
            "does not occur in the text"
            if reason == "surface_not_found"
            else ("has every occurrence claimed already")
        )
        super().__init__(f"{reason}: surface {surface!r} (occurrence {occurrence}) {what}")
        self.reason: Reason = reason
        self.surface = surface
        self.occurrence = occurrence


def is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def find_occurrences(text: str, surface: str) -> Iterator[tuple[int, int]]:
    """Every word-bounded, case-exact match of ``surface`` in text order, overlaps included."""
    if not surface:
        return
    n, size = len(surface), len(text)
    check_start = is_word_char(surface[0])
    check_end = is_word_char(surface[-1])
    start = text.find(surface)
    while start != -1:
        end = start + n
        # is_word_char inlined: this loop runs for every quoted surface and argument.
        before = text[start - 1] if check_start and start > 0 else ""
        after = text[end] if check_end and end < size else ""
        if not (before and (before.isalnum() or before == "_")) and not (
            after and (after.isalnum() or after == "_")
        ):
            yield start, end
        start = text.find(surface, start + 1)


def resolve_occurrence(
    text: str,
    surface: str,
    occurrence: int | None,
    claimed: Collection[tuple[int, int]] = (),
) -> Resolved:
    """Place the ``occurrence``-th (1-based) match of ``surface``, skipping claimed spans.

    See the module docstring for the rules. ``occurrence=None`` (not given) behaves like an index
    that does not exist: the first unclaimed match, flagged. Raises :class:`ResolutionError`.
    """
    first_unclaimed: tuple[int, int] | None = None
    found = False
    for index, span in enumerate(find_occurrences(text, surface), start=1):
        found = True
        if span in claimed:
            continue
        if index == occurrence:
            return Resolved(*span)
        if first_unclaimed is None:
            first_unclaimed = span
            if occurrence is None or occurrence < index:
                break
    if first_unclaimed is not None:
        return Resolved(*first_unclaimed, occurrence_fallback=True)
    reason: Reason = "duplicate_occurrence" if found else "surface_not_found"
    raise ResolutionError(reason, surface, occurrence)
