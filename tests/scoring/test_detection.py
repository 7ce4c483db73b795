"""goldloop.scoring.detection (also ``goldloop.scoring.detection``): the seed's semantics, case by case."""

from __future__ import annotations

import pytest

from goldloop.scoring.detection import (
    GtSpan,
    load_ground_truth_spans,
    score_predictions_against_ground_truth,
)
from tests.conftest import LEGACY


def _row(a: int, b: int, entity_id: str | None = "R.1", itext: int = 0) -> dict[str, object]:
    return {"itext": itext, "a": a, "b": b, "entity_id_predicted": entity_id}


def test_duplicate_predictions_over_one_gold_span_are_false_positives() -> None:
    score = score_predictions_against_ground_truth(
        [_row(0, 5), _row(1, 4)], [GtSpan(0, 0, 5, "R.1")]
    )
    assert (score.n_gold, score.n_predicted, score.n_matched) == (1, 2, 1)
    assert score.precision == 0.5
    assert score.recall == 1.0
    assert score.f1 == pytest.approx(2 / 3)


def test_overlap_versus_exact() -> None:
    gold = [GtSpan(0, 10, 20, "R.1")]
    predictions = [_row(12, 25)]
    assert score_predictions_against_ground_truth(predictions, gold).n_matched == 1
    assert (
        score_predictions_against_ground_truth(predictions, gold, match_mode="exact").n_matched == 0
    )
    assert (
        score_predictions_against_ground_truth([_row(10, 20)], gold, match_mode="exact").n_matched
        == 1
    )
    # Touching is not overlapping: offsets are half-open.
    assert score_predictions_against_ground_truth([_row(20, 25)], gold).n_matched == 0
    with pytest.raises(ValueError, match="match_mode"):
        score_predictions_against_ground_truth(predictions, gold, match_mode="fuzzy")


def test_matching_is_greedy_in_prediction_order_and_per_document() -> None:
    gold = [GtSpan(0, 0, 10, "R.1"), GtSpan(0, 5, 15, "R.2"), GtSpan(1, 20, 30, "R.3")]
    # The first prediction takes 0-10 although it fits 5-15 better; the second then gets 5-15.
    score = score_predictions_against_ground_truth(
        [_row(5, 10, "R.2"), _row(8, 9, "R.2"), _row(20, 30, "R.3", itext=1)], gold
    )
    assert (score.n_matched, score.n_id_comparable, score.n_id_correct) == (3, 3, 2)


def test_entity_accuracy_is_undefined_not_zero_when_nothing_is_comparable() -> None:
    gold = [GtSpan(0, 0, 5, "R.1")]
    no_id = score_predictions_against_ground_truth([_row(0, 5, None)], gold)
    assert (no_id.n_matched, no_id.n_id_comparable, no_id.entity_accuracy) == (1, 0, None)
    wrong = score_predictions_against_ground_truth([_row(0, 5, "R.9")], gold)
    assert (wrong.n_id_comparable, wrong.entity_accuracy) == (1, 0.0)
    nothing = score_predictions_against_ground_truth([], [])
    assert (nothing.precision, nothing.recall, nothing.f1, nothing.entity_accuracy) == (
        None,
        None,
        None,
        None,
    )


def test_the_id_bridge_maps_minted_ids_and_leaves_unmapped_ones_uncomparable() -> None:
    gold = [GtSpan(0, 0, 5, "R.1"), GtSpan(0, 10, 15, "R.2")]
    predictions = [_row(0, 5, "kb::C0007"), _row(10, 15, "kb::C0008")]
    bridged = score_predictions_against_ground_truth(
        predictions, gold, predicted_id_to_kb_in={"kb::C0007": "R.1"}
    )
    assert (bridged.n_matched, bridged.n_id_comparable, bridged.n_id_correct) == (2, 1, 1)
    assert bridged.entity_accuracy == 1.0
    unbridged = score_predictions_against_ground_truth(predictions, gold, predicted_id_to_kb_in={})
    assert unbridged.entity_accuracy is None


def test_malformed_rows_are_skipped_but_still_counted_as_predictions() -> None:
    rows = [{"itext": 0, "a": 0}, {"itext": "x", "a": 0, "b": 5}, {"a": None, "b": 5}, _row(0, 5)]
    score = score_predictions_against_ground_truth(rows, [GtSpan(0, 0, 5, "R.1")])
    assert (score.n_predicted, score.n_matched, score.n_id_correct) == (4, 1, 1)
    # A row without itext belongs to document 0.
    assert (
        score_predictions_against_ground_truth([{"a": 0, "b": 5}], [GtSpan(0, 0, 5)]).n_matched == 1
    )


def test_gt_span_refuses_an_empty_span() -> None:
    with pytest.raises(ValueError, match="span end must exceed start"):
        GtSpan(0, 5, 5)


def test_legacy_file_scored_against_itself_is_perfect() -> None:
    spans = load_ground_truth_spans(LEGACY)
    assert len(spans) == 41
    assert {s.itext for s in spans} == {0}
    rows = [
        {"itext": s.itext, "a": s.a, "b": s.b, "entity_id_predicted": s.entity_id} for s in spans
    ]
    score = score_predictions_against_ground_truth(rows, spans, match_mode="exact")
    assert score.to_dict() | {"match_mode": "exact"} == {
        "n_gold": 41, "n_predicted": 41, "n_matched": 41, "match_mode": "exact", "precision": 1.0,
        "recall": 1.0, "f1": 1.0, "n_id_comparable": 41, "n_id_correct": 41, "entity_accuracy": 1.0,
    }  # fmt: skip


def test_consumption_is_keyed_on_offsets_as_in_the_seed() -> None:
    """The seed consumes a gold span by its (a, b): the same offsets in another document are
    blocked once matched. Kept for numbers identical to pelinker's scorer."""
    gold = [GtSpan(0, 5, 10, "R1"), GtSpan(1, 5, 10, "R1")]
    rows = [{"itext": 0, "a": 5, "b": 10, "entity_id_predicted": "R1"},
            {"itext": 1, "a": 5, "b": 10, "entity_id_predicted": "R1"}]  # fmt: skip
    score = score_predictions_against_ground_truth(rows, gold)
    assert (score.n_gold, score.n_predicted, score.n_matched) == (2, 2, 1)
    assert (score.n_id_comparable, score.n_id_correct) == (1, 1)
