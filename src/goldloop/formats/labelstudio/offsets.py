"""Offsets at the Label Studio boundary: goldloop's code points ↔ Label Studio's region offsets.

goldloop indexes text by Python code points, half-open ``[a, b)``. Label Studio 1.23's text
editor also counts code points: it measures DOM text with ``[...text].length`` both when it
renders a region and when it records a selection (checked in a real browser by
``tests/studio/test_browser.py``: a prediction at UTF-16 offsets lands one character late per
astral character before it, e.g. 𝛼 or 🧬). Older Label Studio releases counted UTF-16 code units
(issue #4988); this module is the only place offsets cross the boundary, so a change in Label
Studio's counting is a change here alone. Both directions check that the span lies in the text.
"""

from __future__ import annotations

from goldloop.errors import GoldloopError


class OffsetError(GoldloopError):
    """A span lies outside the text or is not ordered."""


def to_label_studio(text: str, a: int, b: int) -> tuple[int, int]:
    """Code-point span ``[a, b)`` of ``text`` → Label Studio's ``(start, end)``."""
    _check(text, a, b, "span")
    return a, b


def from_label_studio(text: str, start: int, end: int) -> tuple[int, int]:
    """Label Studio's ``(start, end)`` in ``text`` → the code-point span ``[a, b)``."""
    _check(text, start, end, "Label Studio span")
    return start, end


def _check(text: str, start: int, end: int, what: str) -> None:
    if not 0 <= start <= end <= len(text):
        raise OffsetError(
            f"{what} [{start}, {end}) lies outside the text ({len(text)} characters) or is not ordered"
        )
