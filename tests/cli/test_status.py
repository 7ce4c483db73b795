"""``goldloop status``'s view: the corpus figures stand beside the sample's when the double tasks
carry the design, whole at 80 columns, and are absent when they do not."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path

from rich.console import Console

from goldloop.cli.status import status_view

RECORDED = Path(__file__).parents[1] / "data/recorded/studio/files/campaign.status.json"


def _render(data: dict) -> str:
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(status_view("campaign", data, Path("campaign.status.json")))
    return console.export_text()


def test_corpus_rows_appear_only_with_the_design() -> None:
    data = json.loads(RECORDED.read_text())
    assert data["agreement"]["corpus"] is None and data["completeness"]["corpus"] is None
    plain = _render(data)
    assert "corpus" not in plain
    with_design = copy.deepcopy(data)
    with_design["agreement"]["corpus"] = {"span_f1_lenient": 0.8125, "kappa_entity_id_folded": 0.4}
    with_design["completeness"]["corpus"] = {"recall_both": 0.9375, "n_mentions": 123.5}
    shown = _render(with_design)
    lines = shown.splitlines()
    assert any(
        "corpus span F1 lenient / κ folded" in line and "0.812 / 0.400" in line for line in lines
    )
    assert any(
        "corpus recall (both) / mentions" in line and "0.938 / 123.500" in line for line in lines
    )
    assert all(len(line.rstrip()) <= 80 for line in lines)
