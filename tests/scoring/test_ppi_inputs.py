"""Reading a surrogate part and the pre-annotation (``scoring.ppi_inputs``): the gold's order, and
each refusal the CLI's tests do not reach (tests/cli/test_score.py has the others, end to end)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.gold import Document
from goldloop.scoring.ppi_inputs import SurrogateRefused, read_surrogate


def _doc(doc_id: str, text: str = "t", **fields: Any) -> dict[str, Any]:
    return {"doc_id": doc_id, "text": text, "ground_truth": [], **fields}


def _write(path: Path, documents: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(documents), encoding="utf-8")
    return path


GOLD = [
    Document(doc_id=f"g{k}", text="t", p_incl=0.5, stratum="ab"[k % 2], batch=0) for k in range(3)
]
PART = [_doc(f"s{k}", role="surrogate", p_incl=0.1, stratum="ab"[k % 2], batch=0) for k in range(4)]


def test_the_pre_annotation_is_read_in_the_gold_order(tmp_path: Path) -> None:
    pre = _write(tmp_path / "pre.json", [_doc("g2"), _doc("g0"), _doc("g1")])
    parts = read_surrogate(_write(tmp_path / "s.json", PART), pre, GOLD, None)
    assert [d.doc_id for d in parts.pre_annotated] == ["g0", "g1", "g2"]
    assert parts.design.weights.tolist() == [10.0] * 4
    assert parts.design.strata is not None and parts.design.strata.tolist() == ["a", "b"] * 2


@pytest.mark.parametrize(
    ("pre", "part", "message"),
    [
        ([_doc("g0"), _doc("g1")], PART, "pre.json: no pre-annotation of the gold's document 3"),
        ([_doc("g0"), _doc("g1"), _doc("g2")], [{**d, "stratum": "z"} for d in PART],
         "s.json: none of its strata is the gold's: drawn from another pool"),
        ([_doc("g0"), _doc("g1"), _doc("g2")], [*PART, _doc("g1", "other", role="surrogate",
         p_incl=0.1, stratum="b")], "s.json: document 5 ('g1') has another text than the gold's"),
        ([_doc("g0"), _doc("g1"), _doc("g2")], [], "s.json: holds no documents"),
    ],
)  # fmt: skip
def test_a_part_that_cannot_stand_with_the_gold_is_refused(
    tmp_path: Path, pre: list[dict[str, Any]], part: list[dict[str, Any]], message: str
) -> None:
    with pytest.raises(SurrogateRefused) as caught:
        read_surrogate(
            _write(tmp_path / "s.json", part), _write(tmp_path / "pre.json", pre), GOLD, None
        )
    assert message in str(caught.value)
