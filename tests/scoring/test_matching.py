"""goldloop.scoring.matching: the one per-document matcher."""

from __future__ import annotations

import pytest

from goldloop.scoring.matching import match_spans


def test_greedy_in_prediction_order() -> None:
    # The first prediction takes 0-10 although it fits 5-15 better; the second then gets 5-15.
    assert match_spans([(5, 10), (8, 9)], [(0, 10), (5, 15)]) == [0, 1]


def test_each_gold_span_is_taken_once_even_at_repeated_offsets() -> None:
    # A second prediction over one annotation is unmatched ...
    assert match_spans([(0, 5), (1, 4)], [(0, 5)]) == [0, None]
    # ... but two annotations at the same offsets (two relations on one phrase) are both found.
    assert match_spans([(0, 5), (0, 5)], [(0, 5), (0, 5)]) == [0, 1]


def test_exact_needs_identical_boundaries_and_touching_is_not_overlap() -> None:
    assert match_spans([(12, 25)], [(10, 20)], "exact") == [None]
    assert match_spans([(12, 25), (10, 20)], [(10, 20)], "exact") == [None, 0]
    assert match_spans([(20, 25)], [(10, 20)]) == [None]
    with pytest.raises(ValueError, match="match_mode"):
        match_spans([], [], "fuzzy")
