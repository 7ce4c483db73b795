"""Code points ↔ UTF-16 code units: exact both ways, astral characters included."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goldloop.studio.offsets import OffsetError, from_label_studio, to_label_studio

TEXT = "𝛼-synuclein 🧬 activates IL-6 in 𝛽 cells"


def _utf16_index(text: str, index: int) -> int:
    """An independent reference: the UTF-16 length of the prefix, as JavaScript counts it."""
    return len(text[:index].encode("utf-16-le")) // 2


def test_astral_characters_shift_label_studio_offsets() -> None:
    a = TEXT.index("activates")
    b = a + len("activates")
    start, end = to_label_studio(TEXT, a, b)
    # 𝛼 and 🧬 precede the word: two extra UTF-16 units.
    assert (start, end) == (a + 2, b + 2)
    assert TEXT.encode("utf-16-le")[2 * start : 2 * end].decode("utf-16-le") == "activates"
    assert from_label_studio(TEXT, start, end) == (a, b)


def test_span_covering_an_astral_character() -> None:
    assert to_label_studio(TEXT, 0, 11) == (0, 12)
    assert from_label_studio(TEXT, 0, 12) == (0, 11)


def test_offset_inside_a_surrogate_pair_is_refused() -> None:
    with pytest.raises(OffsetError, match="surrogate pair"):
        from_label_studio(TEXT, 1, 5)


def test_offsets_outside_the_text_are_refused() -> None:
    with pytest.raises(OffsetError):
        to_label_studio(TEXT, 3, len(TEXT) + 1)
    with pytest.raises(OffsetError, match="beyond"):
        from_label_studio(TEXT, 0, 10_000)


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40), st.data())
def test_round_trip_matches_utf16(text: str, data: st.DataObject) -> None:
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    start, end = to_label_studio(text, a, b)
    assert (start, end) == (_utf16_index(text, a), _utf16_index(text, b))
    assert from_label_studio(text, start, end) == (a, b)
