"""Offsets at the Label Studio boundary: exact round trips, astral characters included.

Label Studio 1.23 counts code points like goldloop (the browser test proves where regions land);
these tests pin the boundary's contract: a round trip is exact and the region text Label Studio
shows, ``text[start:end]`` in its own counting, is the surface goldloop meant.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from goldloop.formats.labelstudio.offsets import OffsetError, from_label_studio, to_label_studio

TEXT = "𝛼-synuclein 🧬 activates IL-6 in 𝛽 cells"


def _js_code_point_slice(text: str, start: int, end: int) -> str:
    """What Label Studio's editor highlights: ``[...text].slice(start, end)``, computed independently."""
    code_points = [chr(cp) for cp in memoryview(text.encode("utf-32-le")).cast("I")]
    return "".join(code_points[start:end])


def test_astral_characters_before_a_span() -> None:
    a = TEXT.index("activates")
    start, end = to_label_studio(TEXT, a, a + len("activates"))
    assert _js_code_point_slice(TEXT, start, end) == "activates"
    assert from_label_studio(TEXT, start, end) == (a, a + len("activates"))


def test_span_covering_an_astral_character() -> None:
    start, end = to_label_studio(TEXT, 0, 11)
    assert _js_code_point_slice(TEXT, start, end) == "𝛼-synuclein"


@pytest.mark.parametrize(("a", "b"), [(3, len(TEXT) + 1), (5, 4), (-1, 2)])
def test_spans_outside_the_text_are_refused(a: int, b: int) -> None:
    with pytest.raises(OffsetError):
        to_label_studio(TEXT, a, b)
    with pytest.raises(OffsetError, match="Label Studio span"):
        from_label_studio(TEXT, a, b)


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40), st.data())
def test_round_trip_is_exact(text: str, data: st.DataObject) -> None:
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    start, end = to_label_studio(text, a, b)
    assert _js_code_point_slice(text, start, end) == text[a:b]
    assert from_label_studio(text, start, end) == (a, b)
