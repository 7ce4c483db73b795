"""Offset resolution: verbatim surface + 1-based occurrence → [a, b), per the LLM contract."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldloop.errors import GoldloopError
from goldloop.text.resolve import ResolutionError, Resolved, find_occurrences, resolve_occurrence

TEXT = "IL-6 activates STAT3. TNF activates NF-kB, and IL-6 activates JAK1."


def reference_occurrences(text: str, surface: str) -> list[tuple[int, int]]:
    """An independent reading of the rule with ``re``: lookarounds at word-character edges only,
    and a zero-width lookahead so that overlapping matches are all found."""
    left = r"(?<!\w)" if re.match(r"\w", surface[0]) else ""
    right = r"(?!\w)" if re.match(r"\w", surface[-1]) else ""
    pattern = re.compile(left + "(?=(" + re.escape(surface) + ")" + right + ")")
    return [(m.start(1), m.end(1)) for m in pattern.finditer(text)]


def test_first_occurrence_is_the_first_match() -> None:
    assert resolve_occurrence(TEXT, "activates", 1) == Resolved(5, 14)


def test_repeated_surface_takes_the_requested_occurrence() -> None:
    third = resolve_occurrence(TEXT, "activates", 3)
    assert (third.a, third.b, third.occurrence_fallback) == (52, 61, False)
    assert TEXT[third.a : third.b] == "activates"
    assert TEXT[: third.a].count("activates") == 2


def test_occurrence_beyond_the_count_falls_back_to_the_first_unclaimed() -> None:
    assert resolve_occurrence(TEXT, "activates", 4) == Resolved(5, 14, occurrence_fallback=True)
    assert resolve_occurrence(TEXT, "activates", 9, claimed={(5, 14)}) == Resolved(
        26, 35, occurrence_fallback=True
    )


@pytest.mark.parametrize("occurrence", [0, -1, None])
def test_missing_or_invalid_occurrence_falls_back_and_is_flagged(occurrence: int | None) -> None:
    assert resolve_occurrence(TEXT, "IL-6", occurrence) == Resolved(0, 4, occurrence_fallback=True)


def test_claimed_matches_still_count_toward_the_index() -> None:
    # Occurrence 2 means the second match in the text, whether or not the first is claimed.
    assert resolve_occurrence(TEXT, "activates", 2, claimed={(5, 14)}) == Resolved(26, 35)


def test_claimed_requested_match_falls_back_to_the_first_unclaimed() -> None:
    got = resolve_occurrence(TEXT, "activates", 2, claimed={(26, 35), (5, 14)})
    assert got == Resolved(52, 61, occurrence_fallback=True)
    earlier = resolve_occurrence(TEXT, "activates", 3, claimed={(52, 61)})
    assert earlier == Resolved(5, 14, occurrence_fallback=True)


def test_every_match_claimed_is_a_duplicate_occurrence() -> None:
    claimed = [(5, 14), (26, 35), (52, 61)]
    with pytest.raises(ResolutionError) as caught:
        resolve_occurrence(TEXT, "activates", 1, claimed=claimed)
    assert caught.value.reason == "duplicate_occurrence"
    assert isinstance(caught.value, GoldloopError)
    assert "'activates'" in str(caught.value)


def test_claiming_one_by_one_yields_each_match_once_then_duplicate() -> None:
    claimed: set[tuple[int, int]] = set()
    for _ in range(3):
        got = resolve_occurrence(TEXT, "activates", 1, claimed=claimed)
        claimed.add((got.a, got.b))
    assert claimed == {(5, 14), (26, 35), (52, 61)}
    with pytest.raises(ResolutionError, match="duplicate_occurrence"):
        resolve_occurrence(TEXT, "activates", 1, claimed=claimed)


def test_overlap_with_a_claimed_span_is_not_a_claim() -> None:
    # "activates STAT3" was claimed; "activates" nested in it is a separate decision for the
    # decoder (nested_in_longer_span), so it is not moved to another occurrence.
    assert resolve_occurrence(TEXT, "activates", 1, claimed={(5, 20)}) == Resolved(5, 14)


@pytest.mark.parametrize("surface", ["inhibits", "Activates", "activate s", ""])
def test_absent_surface_is_not_found(surface: str) -> None:
    with pytest.raises(ResolutionError) as caught:
        resolve_occurrence(TEXT, surface, 1)
    assert caught.value.reason == "surface_not_found"


def test_case_exact() -> None:
    text = "Activates early; activates late."
    assert resolve_occurrence(text, "activates", 1) == Resolved(17, 26)


@pytest.mark.parametrize(
    ("text", "surface", "expected"),
    [
        ("TNF reduces IL-6, and drugs reduce TNF.", "reduce", [(28, 34)]),
        ("TNF downregulates IL-6 and regulates TNF.", "regulates", [(27, 36)]),
        ("IL-60 and IL-6 and IL-6a", "IL-6", [(10, 14)]),
        ("reduce_rate reduce 2reduce reduce2", "reduce", [(12, 18)]),
        # The surface starts with a non-word character: that edge needs no boundary.
        ("IL-6 and IL-6R", "-6", [(2, 4)]),
        # ... and ends with one: "IL-" is found inside "IL-6".
        ("IL-6", "IL-", [(0, 3)]),
        ("(p < 0.05)", "p <", [(1, 4)]),
    ],
)
def test_word_boundaries_only_at_word_character_edges(
    text: str, surface: str, expected: list[tuple[int, int]]
) -> None:
    assert list(find_occurrences(text, surface)) == expected
    assert resolve_occurrence(text, surface, 1) == Resolved(*expected[0])


def test_reduce_is_not_found_inside_reduces() -> None:
    with pytest.raises(ResolutionError, match="surface_not_found"):
        resolve_occurrence("Aspirin reduces fever.", "reduce", 1)


def test_overlapping_occurrences_are_counted_separately() -> None:
    # The documented rule: a match may start inside the previous one.
    text = "X-X-X"
    assert list(find_occurrences(text, "X-X")) == [(0, 3), (2, 5)]
    assert resolve_occurrence(text, "X-X", 1) == Resolved(0, 3)
    assert resolve_occurrence(text, "X-X", 2) == Resolved(2, 5)
    assert resolve_occurrence(text, "X-X", 1, claimed={(0, 3)}) == Resolved(
        2, 5, occurrence_fallback=True
    )
    with pytest.raises(ResolutionError, match="duplicate_occurrence"):
        resolve_occurrence(text, "X-X", 1, claimed={(0, 3), (2, 5)})


def test_overlap_inside_a_word_is_no_match() -> None:
    # "aa" in "aaa" overlaps itself, but every candidate continues a word.
    assert list(find_occurrences("aaa", "aa")) == []
    assert list(find_occurrences("a-a-a-a", "a-a")) == [(0, 3), (2, 5), (4, 7)]


def test_greek_letters_are_word_characters() -> None:
    text = "TNF-α induces IL-6; TNF-αβ does not; IFN-γ and TNF-α synergise."
    assert list(find_occurrences(text, "TNF-α")) == [(0, 5), (47, 52)]  # not in "TNF-αβ"
    got = resolve_occurrence(text, "TNF-α", 2)
    assert text[got.a : got.b] == "TNF-α"
    assert resolve_occurrence(text, "IFN-γ", 1) == Resolved(37, 42)


def test_offsets_are_code_points_with_astral_characters() -> None:
    text = "🙂 𝛼-synuclein aggregates; 𝛼-synuclein 🙂 aggregates again."
    first = resolve_occurrence(text, "aggregates", 1)
    second = resolve_occurrence(text, "aggregates", 2)
    assert (first.a, first.b) == (14, 24)  # 🙂 and 𝛼 count one code point each
    assert text[second.a : second.b] == "aggregates"
    assert second.a == text.index("aggregates", first.b)
    # 𝛼 (U+1D6FC) is a letter: "synuclein" after "𝛼-" is bounded, "𝛼" before "x" is not.
    assert resolve_occurrence(text, "𝛼-synuclein", 2) == Resolved(26, 37)
    with pytest.raises(ResolutionError, match="surface_not_found"):
        resolve_occurrence("𝛼x binds", "𝛼", 1)
    assert resolve_occurrence(text, "🙂", 2) == Resolved(38, 39)


def test_non_breaking_space_does_not_match_a_space() -> None:
    text = "STAT3 binds\u00a0to DNA and binds to RNA."
    assert resolve_occurrence(text, "binds to", 1) == Resolved(23, 31)
    assert resolve_occurrence(text, "binds\u00a0to", 1) == Resolved(6, 14)
    with pytest.raises(ResolutionError, match="surface_not_found"):
        resolve_occurrence("binds\u00a0to", "binds to", 1)


WORDS = st.sampled_from(
    ["X", "X-X", "ab", "a", "αβ", "𝛼", "_", "1", "-", " ", "\u00a0", "🙂", "X-"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(WORDS, max_size=12).map("".join), WORDS.filter(str.strip))
def test_occurrences_agree_with_a_regex_reference(text: str, surface: str) -> None:
    assert list(find_occurrences(text, surface)) == reference_occurrences(text, surface)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(WORDS, max_size=12).map("".join),
    WORDS.filter(str.strip),
    st.lists(st.integers(min_value=-1, max_value=6), max_size=8),
)
def test_a_sequence_of_items_never_claims_a_span_twice(
    text: str, surface: str, occurrences: list[int]
) -> None:
    matches = reference_occurrences(text, surface)
    claimed: list[tuple[int, int]] = []
    for occurrence in occurrences:
        try:
            got = resolve_occurrence(text, surface, occurrence, claimed=claimed)
        except ResolutionError as exc:
            expected = "duplicate_occurrence" if matches else "surface_not_found"
            assert exc.reason == expected
            assert len(claimed) == len(matches)
            continue
        span = (got.a, got.b)
        assert text[got.a : got.b] == surface
        assert span not in claimed
        exact = 1 <= occurrence <= len(matches) and matches[occurrence - 1] not in claimed
        assert got.occurrence_fallback == (not exact)
        if exact:
            assert span == matches[occurrence - 1]
        else:
            assert span == next(m for m in matches if m not in claimed)
        claimed.append(span)
