"""A score result's JSON: its sections' keys and their order, and the shares they carry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goldloop.formats.gold import read_gold
from goldloop.kb import KB
from goldloop.scoring.inputs import rows_to_predictions
from goldloop.scoring.regimes import score_system
from goldloop.scoring.score_result import DirectionScore, LinkingScore

from .conftest import row


def _score(
    gold_file: Path, rows: list[dict[str, Any]], kb: KB | None, **options: Any
) -> dict[str, Any]:
    documents = read_gold(gold_file, kb).documents
    system = rows_to_predictions("sys", None, "rows", rows, documents)
    return score_system(documents, system, kb=kb, **options).to_dict()


def test_a_share_of_nothing_is_undefined_not_zero() -> None:
    """A figure over an empty denominator is null in the JSON (0/0 is not 0% right)."""
    assert DirectionScore(n_comparable=0, n_correct=0).to_dict()["accuracy"] is None
    assert DirectionScore(n_comparable=4, n_correct=3).to_dict()["accuracy"] == 0.75
    linking = LinkingScore(n_gold=5, n_answered=0, n_correct=0, unaligned_predictions=2).to_dict()
    assert linking["abstentions"] == 5
    assert linking["accuracy_overall"] == 0.0
    assert linking["accuracy_on_predicted"] is None


def test_a_result_keeps_its_json_keys_in_order(gold_file: Path, kb: KB) -> None:
    """The typed result writes the keys score has always written, in the same order."""
    result = _score(gold_file, [row(0, "binds to", "PEL.000003")], kb)
    assert list(result) == [
        "system", "path", "regime", "match_mode", "inputs", "detection",
        "detection_seed_compatible", "direction", "schemas", "slices", "intervals", "corpus",
    ]  # fmt: skip
    assert list(result["inputs"]) == [
        "format", "rows", "scored", "malformed", "unmapped_by_id_bridge",
    ]  # fmt: skip
    assert list(result["direction"]) == ["n_comparable", "n_correct", "accuracy"]
    assert next(iter(result["detection_seed_compatible"])) == "scorer"
    assert next(iter(result["schemas"])) == "engine"
    linking = _score(gold_file, [], kb, regime="linking-only")
    assert list(linking)[5:] == ["linking", "direction", "slices", "intervals", "corpus"]
    assert list(linking["linking"]) == [
        "n_gold", "n_answered", "abstentions", "n_correct", "accuracy_overall",
        "accuracy_on_predicted", "coverage", "unaligned_predictions",
    ]  # fmt: skip
    assert list(linking["direction"]) == ["n_comparable", "n_correct", "accuracy"]
    figures = ["accuracy_on_found", "accuracy_overall"]
    counts = ["n_gold", "n_found", "n_correct"]
    relation = next(iter(result["slices"]["relation"].values()))
    assert list(relation) == ["label", *counts, "recall", *figures]
    role = next(iter(linking["slices"]["role"].values()))
    assert list(role) == [*counts, "coverage", *figures]
    rows = [row(0, "binds to", "PEL.000003")]
    bootstrapped = _score(gold_file, rows, kb, bootstrap=20, seed=0)["slices"]["anchoring"]
    assert {tuple(s) for s in bootstrapped.values()} == {(*counts, "recall", *figures, "intervals")}
