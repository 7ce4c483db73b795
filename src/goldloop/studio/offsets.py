"""Offsets at the Label Studio boundary: goldloop's code points ↔ Label Studio's UTF-16 code units.

goldloop indexes text by Python code points; Label Studio counts JavaScript string positions, in
UTF-16 code units, so every character outside the Basic Multilingual Plane (𝛼, emoji) counts
twice there. This module is the only place the two meet; both conversions are exact inverses on
positions that fall between characters.
"""

from __future__ import annotations

from goldloop.errors import GoldloopError


class OffsetError(GoldloopError):
    """A Label Studio offset falls outside the text or inside a surrogate pair."""


def _units_before(text: str, index: int) -> int:
    return index + sum(1 for ch in text[:index] if ord(ch) > 0xFFFF)


def to_label_studio(text: str, a: int, b: int) -> tuple[int, int]:
    """Code-point span ``[a, b)`` of ``text`` → Label Studio's UTF-16 ``(start, end)``."""
    if not 0 <= a <= b <= len(text):
        raise OffsetError(f"span [{a}, {b}) lies outside the text (length {len(text)})")
    start = _units_before(text, a)
    return start, start + _units_before(text[a:b], b - a)


def from_label_studio(text: str, start: int, end: int) -> tuple[int, int]:
    """Label Studio's UTF-16 ``(start, end)`` in ``text`` → the code-point span ``[a, b)``."""
    if not 0 <= start <= end:
        raise OffsetError(f"Label Studio span ({start}, {end}) is not ordered")
    a = _code_point_at(text, start)
    return a, a + _code_point_at(text[a:], end - start)


def _code_point_at(text: str, unit: int) -> int:
    units = 0
    for index, ch in enumerate(text):
        if units == unit:
            return index
        units += 2 if ord(ch) > 0xFFFF else 1
        if units > unit:
            raise OffsetError(f"UTF-16 offset {unit} falls inside the surrogate pair of {ch!r} at character {index}")
    if units == unit:
        return len(text)
    raise OffsetError(f"UTF-16 offset {unit} lies beyond the text ({units} units)")
