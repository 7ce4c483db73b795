"""Regimes, folding, direction, slices and intervals on a small gold written in conftest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goldloop.formats.gold import Document, read_gold
from goldloop.kb import KB
from goldloop.scoring.bootstrap import document_bootstrap, ratio
from goldloop.scoring.folding import fold_answer
from goldloop.scoring.inputs import rows_to_predictions
from goldloop.scoring.regimes import score_system
from goldloop.scoring.schemas import evaluate_with_nervaluate

from .conftest import row


def _score(
    gold_file: Path, rows: list[dict[str, Any]], kb: KB | None, **options: Any
) -> dict[str, Any]:
    documents = read_gold(gold_file, kb).documents
    system = rows_to_predictions("sys", None, "rows", rows, documents)
    return score_system(documents, system, kb=kb, **options).to_dict()


def test_a_converse_answer_is_folded_and_scored_right(gold_file: Path, kb: KB) -> None:
    # "directly regulated by" read the other way round is the gold's "directly regulates", forward.
    rows = [row(0, "directly regulates", "RO.0002022", "inverse")]
    folded = _score(gold_file, rows, kb)
    assert folded["detection"]["n_id_correct"] == 1
    assert folded["direction"] == {"n_comparable": 1, "n_correct": 1, "accuracy": 1.0}
    assert fold_answer(kb, "RO.0002022", "inverse") == ("RO.0002578", "forward")
    unfolded = _score(gold_file, rows, None)
    assert unfolded["detection"]["n_id_correct"] == 0
    # Reading it forward is a direction error on the right relation.
    wrong_way = _score(gold_file, [row(0, "directly regulates", "RO.0002022", "forward")], kb)
    assert wrong_way["detection"]["n_id_correct"] == 1
    assert wrong_way["direction"]["accuracy"] == 0.0


def test_equivalences_fold_both_sides(gold_file: Path, kb: KB) -> None:
    # 'associated with' (PEL.000040) is an equivalence of the symmetric 'associates' (PEL.000002).
    result = _score(gold_file, [row(1, "associates with", "PEL.000040", "inverse")], kb)
    assert result["detection"]["n_id_correct"] == 1
    assert result["direction"]["accuracy"] == 1.0  # symmetric: any direction agrees
    assert fold_answer(kb, "PEL.000040", "inverse")[0] == kb.fold_id("PEL.000040")


def test_linking_only_counts_abstentions(gold_file: Path, kb: KB) -> None:
    rows = [
        row(0, "directly regulates", "RO.0002578"),  # right
        row(0, "binds to", "PEL.000000"),  # wrong
        row(1, "activates", None),  # abstains with a null id
        # "associates with" has no row: abstains
    ]
    result = _score(gold_file, rows, kb, regime="linking-only")
    linking = result["linking"]
    assert linking["n_gold"] == 4
    assert (linking["n_answered"], linking["abstentions"], linking["n_correct"]) == (2, 2, 1)
    assert linking["accuracy_overall"] == 0.25
    assert linking["accuracy_on_predicted"] == 0.5
    assert linking["coverage"] == 0.5
    anchoring = result["slices"]["anchoring"]
    assert anchoring["anchored"]["n_gold"] == 2 and anchoring["anchored"]["n_correct"] == 1
    assert anchoring["paraphrase"]["accuracy_overall"] == 0.0
    assert result["slices"]["role"]["double"]["n_found"] == 0
    assert result["slices"]["relation"]["RO.0002578"]["label"] == "directly regulates"


def test_linking_only_with_no_answers_has_undefined_accuracy_on_predicted(
    gold_file: Path, kb: KB
) -> None:
    linking = _score(gold_file, [], kb, regime="linking-only")["linking"]
    assert (linking["accuracy_overall"], linking["accuracy_on_predicted"], linking["coverage"]) == (
        0.0,
        None,
        0.0,
    )


def test_end_to_end_schemas_match_nervaluate_and_slices_add_up(gold_file: Path, kb: KB) -> None:
    rows = [
        row(0, "directly regulates", "RO.0002578"),
        row(0, "directly", "RO.0002578"),  # a second prediction over the same gold span: spurious
        row(0, "STAT3", "PEL.000003"),  # overlaps nothing
        row(1, "activates", "PEL.000001"),  # wrong relation
    ]
    ours = _score(gold_file, rows, kb)
    theirs = _score(gold_file, rows, kb, engine="nervaluate")
    assert ours["schemas"]["overall"] == theirs["schemas"]["overall"]
    assert ours["schemas"]["by_label"] == theirs["schemas"]["by_label"]
    # "STAT3", and "directly" once "directly regulates" has taken the gold span.
    assert ours["schemas"]["overall"]["strict"]["spurious"] == 2
    detection = ours["detection"]
    assert (detection["n_gold"], detection["n_predicted"], detection["n_matched"]) == (4, 4, 2)
    assert detection["precision"] == 0.5 and detection["entity_accuracy"] == 0.5
    relation = ours["slices"]["relation"]
    assert sum(s["n_found"] for s in relation.values()) == detection["n_matched"]
    assert sum(s["n_correct"] for s in relation.values()) == detection["n_id_correct"]
    docs = read_gold(gold_file, kb).documents
    gold_spans = [
        [{"label": h.entity_id, "start": h.a, "end": h.b} for h in d.ground_truth] for d in docs
    ]
    assert (
        ours["schemas"]["overall"]
        == evaluate_with_nervaluate(gold_spans, _pred_spans(rows, docs))["overall"]
    )


def _pred_spans(rows: list[dict[str, Any]], docs: list[Any]) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = [[] for _ in docs]
    for r in rows:
        index = [d.doc_id for d in docs].index(r["doc_id"])
        out[index].append({"label": r["entity_id_predicted"], "start": r["a"], "end": r["b"]})
    return out


def test_id_bridge_in_a_regime(gold_file: Path, kb: KB) -> None:
    documents = read_gold(gold_file, kb).documents
    rows = [row(0, "directly regulates", "kb::C1"), row(0, "binds to", "kb::C2")]
    system = rows_to_predictions("sys", None, "rows", rows, documents)
    result = score_system(documents, system, kb=kb, id_bridge={"kb::C1": "RO.0002022"}).to_dict()
    assert result["inputs"]["unmapped_by_id_bridge"] == 1
    assert (result["detection"]["n_id_comparable"], result["detection"]["n_id_correct"]) == (1, 1)


def test_bootstrap_is_seeded_and_brackets_the_estimate(gold_file: Path, kb: KB) -> None:
    # Document 1 is found in full, document 2 not at all: resamples spread recall around 0.5.
    rows = [row(0, "directly regulates", "RO.0002578"), row(0, "binds to", "PEL.000003")]
    first = _score(gold_file, rows, kb, bootstrap=300, seed=7)["intervals"]
    again = _score(gold_file, rows, kb, bootstrap=300, seed=7)["intervals"]
    assert first == again
    assert first["n_resamples"] == 300
    low, high = first["recall"]
    assert low <= 0.5 <= high and low < high
    assert json.dumps(first)  # plain floats, JSON-ready


def test_each_slice_has_its_own_document_bootstrap(gold_file: Path, kb: KB) -> None:
    # Anchored gold mentions: "directly regulates" (document 1, found) and "activates"
    # (document 2, found with the wrong relation); the paraphrase "binds to" is missed.
    rows = [row(0, "directly regulates", "RO.0002578"), row(1, "activates", "PEL.000001")]
    result = _score(gold_file, rows, kb, bootstrap=400, seed=5)
    anchored = result["slices"]["anchoring"]["anchored"]
    assert (anchored["n_gold"], anchored["n_found"], anchored["n_correct"]) == (2, 2, 1)
    # The same resamples of the same two documents, over this slice's counts alone.
    alone = document_bootstrap(
        np.array([[1, 1, 1], [1, 1, 0]]),
        lambda s: {"accuracy_overall": ratio(s[:, 2], s[:, 0])},
        400,
        seed=5,
    )
    assert anchored["intervals"]["accuracy_overall"] == alone["accuracy_overall"]
    assert anchored["intervals"]["recall"] == [1.0, 1.0]
    low, high = anchored["intervals"]["accuracy_overall"]
    assert low == 0.0 and high == 1.0
    assert result["slices"]["anchoring"]["paraphrase"]["intervals"]["recall"] == [0.0, 0.0]
    assert "intervals" not in _score(gold_file, rows, kb)["slices"]["role"]["primary"]


@pytest.mark.parametrize("seed", range(5))
def test_exact_headline_equals_the_exact_schema_of_the_nervaluate_package(seed: int) -> None:
    """Random documents whose predictions copy, nudge or invent spans (a near miss never comes
    before an exact copy of the same gold span, the one case where the two rules part)."""
    rng = np.random.default_rng(seed)
    documents, rows = [], []
    for d in range(30):
        starts = sorted(
            rng.choice(np.arange(0, 400, 10), size=int(rng.integers(0, 6)), replace=False)
        )
        hits = [{"a": int(a), "b": int(a) + 6, "entity_id": "PEL.000000"} for a in starts]
        documents.append({"doc_id": f"d{d}", "text": "x" * 420, "ground_truth": hits})
        for h in hits:
            draw = rng.random()
            if draw < 0.5:  # exact copy, sometimes twice (the second is spurious)
                rows += [{"itext": d, "a": h["a"], "b": h["b"], "entity_id_predicted": "X"}] * (
                    1 + int(rng.random() < 0.2)
                )
            elif draw < 0.75:  # near miss
                rows.append(
                    {"itext": d, "a": h["a"] + 1, "b": h["b"] + 2, "entity_id_predicted": "X"}
                )
        if rng.random() < 0.5:  # invented, overlapping nothing
            rows.append({"itext": d, "a": 405, "b": 410, "entity_id_predicted": "X"})
    docs = [Document.model_validate(d) for d in documents]
    result = score_system(
        docs, rows_to_predictions("s", None, "rows", rows, docs), kb=None, match_mode="exact"
    ).to_dict()
    gold_spans = [[{"label": "g", "start": h.a, "end": h.b} for h in d.ground_truth] for d in docs]
    predicted: list[list[dict[str, Any]]] = [[] for _ in docs]
    for r in rows:
        predicted[r["itext"]].append({"label": "p", "start": r["a"], "end": r["b"]})
    exact = evaluate_with_nervaluate(gold_spans, predicted)["overall"]["exact"]
    detection = result["detection"]
    assert detection["n_matched"] == exact["correct"]
    assert detection["precision"] == pytest.approx(exact["precision"])
    assert detection["recall"] == pytest.approx(exact["recall"])
