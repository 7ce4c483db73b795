"""goldloop.scoring.schemas against the nervaluate package and the notes' worked example."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldloop.scoring.schemas import COUNTS, SCHEMAS, evaluate, evaluate_with_nervaluate


def _span(label: str, start: int, end: int) -> dict[str, object]:
    return {"label": label, "start": start, "end": end}


def test_worked_example_from_the_notes() -> None:
    # 1 correct, 1 partial boundary, 1 wrong label, 1 missed, 1 spurious (half-open offsets).
    gold = [[_span("A", 0, 5), _span("B", 10, 15), _span("C", 20, 25), _span("D", 30, 35)]]
    pred = [[_span("A", 0, 5), _span("B", 10, 13), _span("X", 20, 25), _span("E", 40, 45)]]
    out = evaluate(gold, pred)["overall"]
    assert [out["strict"][k] for k in COUNTS] == [1, 2, 0, 1, 1]
    assert out["strict"]["f1"] == pytest.approx(0.25)
    assert (out["exact"]["correct"], out["exact"]["incorrect"]) == (2, 1)
    assert out["exact"]["f1"] == pytest.approx(0.5)
    assert (out["partial"]["correct"], out["partial"]["partial"]) == (2, 1)
    assert out["partial"]["f1"] == pytest.approx(0.625)
    assert (out["ent_type"]["correct"], out["ent_type"]["incorrect"]) == (2, 1)
    assert out["ent_type"]["f1"] == pytest.approx(0.5)
    assert evaluate(gold, pred) == evaluate_with_nervaluate(gold, pred)


def test_wrong_label_is_incorrect_overall_but_missed_and_spurious_per_label() -> None:
    out = evaluate([[_span("A", 0, 5)]], [[_span("B", 0, 5)]])
    assert out["overall"]["strict"]["incorrect"] == 1
    assert out["by_label"]["A"]["strict"]["missed"] == 1
    assert out["by_label"]["B"]["strict"]["spurious"] == 1
    assert out["by_label"]["A"]["strict"]["incorrect"] == 0


def test_adjacent_half_open_spans_do_not_overlap() -> None:
    out = evaluate([[_span("A", 0, 5)]], [[_span("A", 5, 9)]])
    assert out["overall"]["partial"]["partial"] == 0
    assert out["overall"]["partial"]["spurious"] == 1
    assert out == evaluate_with_nervaluate([[_span("A", 0, 5)]], [[_span("A", 5, 9)]])


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="2 gold documents but 1"):
        evaluate([[], []], [[]])
    with pytest.raises(ValueError, match="predicted document 0, span 0"):
        evaluate([[]], [[_span("A", 4, 4)]])


labels = st.sampled_from(["A", "B", "C", "D"])


@st.composite
def spans(draw: st.DrawFn) -> dict[str, object]:
    start = draw(st.integers(0, 24))
    length = draw(st.one_of(st.integers(1, 8), st.integers(90, 260)))  # long spans test the 1% rule
    return _span(draw(labels), start, start + length)


@st.composite
def documents(
    draw: st.DrawFn,
) -> tuple[list[list[dict[str, object]]], list[list[dict[str, object]]]]:
    n = draw(st.integers(1, 5))
    gold = [draw(st.lists(spans(), max_size=8)) for _ in range(n)]
    # Predictions often reuse or nudge gold boundaries, so exact and partial matches are common.
    pred: list[list[dict[str, object]]] = []
    for doc in gold:
        derived = []
        for s in doc:
            if draw(st.booleans()):
                start, end = int(s["start"]), int(s["end"])  # type: ignore[call-overload]
                end = max(start + 1, end + draw(st.sampled_from([0, 0, 1, -1])))
                derived.append(_span(draw(labels), start, end))
        pred.append(draw(st.permutations(derived + draw(st.lists(spans(), max_size=5)))))
    return gold, pred


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), st.sampled_from([1.0, 1.0, 50.0, 100.0]))
def test_every_schema_equals_nervaluate(
    docs: tuple[list[list[dict[str, object]]], list[list[dict[str, object]]]], min_pct: float
) -> None:
    gold, pred = docs
    ours = evaluate(gold, pred, min_overlap_percentage=min_pct)
    theirs = evaluate_with_nervaluate(gold, pred, min_overlap_percentage=min_pct)
    assert ours["overall"] == theirs["overall"]
    assert ours["by_label"] == theirs["by_label"]
    for counts in ours["overall"].values():
        assert set(counts) == {*COUNTS, "precision", "recall", "f1"}
    assert set(ours["overall"]) == set(SCHEMAS)


def test_ent_type_takes_the_closest_gold_span_first_on_ties() -> None:
    gold = [[_span("A", 8, 20), _span("A", 12, 20), _span("A", 10, 21)]]
    # The second prediction ties between 8-20 and 12-20 and takes 8-20, so the third (which
    # touches only 8-20) is spurious.
    pred = [[_span("A", 10, 20), _span("A", 10, 20), _span("A", 6, 9)]]
    assert evaluate(gold, pred) == evaluate_with_nervaluate(gold, pred)
    assert evaluate(gold, pred)["overall"]["ent_type"]["spurious"] == 1
