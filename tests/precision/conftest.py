"""The precision tests' inputs: a judged study of one document, and the seed's worked example."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldloop.precision.mentions import JudgedMention, write_verdicts

STUDY_TEXT = "IL-6 regulates TNF. A inhibits B. C is activated by D."


@pytest.fixture
def study(tmp_path: Path) -> tuple[Path, Path]:
    """A system's output (three mentions and one abstained row) and its one document."""
    documents = tmp_path / "docs.jsonl"
    documents.write_text(json.dumps({"doc_id": "pmid:1", "text": STUDY_TEXT}) + "\n")
    system = tmp_path / "system.jsonl"
    rows = [
        {
            "doc_id": "pmid:1",
            "a": 5,
            "b": 14,
            "entity_id_predicted": "RO.0002211",
            "direction_predicted": "forward",
        },
        {
            "doc_id": "pmid:1",
            "a": 22,
            "b": 30,
            "entity_id_predicted": "PEL.000018",
            "direction_predicted": "forward",
        },
        # "activated by" named by its converse id: judged as "activates", direction flipped.
        {
            "doc_id": "pmid:1",
            "a": 39,
            "b": 51,
            "entity_id_predicted": "PEL.000000",
            "direction_predicted": "inverse",
        },
        {"doc_id": "pmid:1", "a": 0, "b": 4, "entity_id_predicted": None},
    ]
    system.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return system, documents


@pytest.fixture
def worked_example(tmp_path: Path) -> tuple[Path, Path]:
    """The seed's example as files: 1,000 judged mentions, 120 labelled."""
    mentions = [
        JudgedMention(
            "d", 10 * k, 10 * k + 5, "PEL.000018", "inhibits", "inhibits", "forward"
        ).judged("supported" if k < 850 else ("not_found" if k % 2 else "contradicted"))
        for k in range(1000)
    ]
    verdicts = tmp_path / "verdicts.jsonl"
    write_verdicts(verdicts, mentions)
    # Labelled: 86 judged-and-true, 12 judged-but-false, 4 lost by the judge, 18 both false.
    chosen = (
        [(m, "supported") for m in mentions[:86]]
        + [(m, "contradicted") for m in mentions[86:98]]
        + [(m, "supported") for m in mentions[850:854]]
        + [(m, "not_found") for m in mentions[854:872]]
    )
    rows = [{"key": m.key, "label": label} for m, label in chosen]
    rows += [
        {"key": "d|1-2|PEL.000018", "label": "supported"},  # names no judged mention
        {"key": mentions[900].key, "label": None},  # unlabelled
        {"key": mentions[901].key, "label": "supported"},  # repeated: both copies left out
        {"key": mentions[901].key, "label": "contradicted"},
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return verdicts, labels
