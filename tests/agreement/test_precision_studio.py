"""The precision sample through a real Label Studio: push (idempotent, mention pre-highlighted at
the right UTF-16 offsets), annotate through the API, pull the labels, report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from goldloop.precision.mentions import JudgedMention, write_verdicts
from goldloop.precision.studio import LABEL_CONFIG, MODEL_VERSION, pull_labels, push_sample, task_of
from goldloop.precision.study import labelling_rows
from goldloop.studio.offsets import from_label_studio, to_label_studio
from tests.agreement.conftest import Cli

pytestmark = pytest.mark.studio

# Astral characters before the mentions: offsets cross the boundary only through
# goldloop.studio.offsets, and come back to the same span.
TEXT = "𝛼-synuclein 🧬 inhibits B. C activates D. E regulates F."


def mentions() -> list[JudgedMention]:
    spans = [("inhibits", "PEL.000018", "supported"), ("activates", "PEL.000000", "contradicted"),
             ("regulates", "RO.0002211", "supported")]  # fmt: skip
    out = []
    for surface, entity_id, verdict in spans:
        a = TEXT.index(surface)
        out.append(
            JudgedMention(
                "pmid:9", a, a + len(surface), entity_id, surface, surface, "forward", verdict
            )
        )
    return out


def test_task_prediction_is_valid_for_the_config() -> None:
    from label_studio_sdk.label_interface import LabelInterface

    row = labelling_rows(mentions()[:1], {"pmid:9": _doc()})[0]
    task = task_of(row, TEXT)
    value = task["predictions"][0]["result"][0]["value"]
    a = TEXT.index("inhibits")
    assert (value["start"], value["end"]) == to_label_studio(TEXT, a, a + len("inhibits"))
    assert LabelInterface(LABEL_CONFIG).validate_prediction(task["predictions"][0])


def test_push_annotate_pull_report(
    label_studio: Any, tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    connection = label_studio.connection
    client = label_studio.client
    judged = mentions()
    rows = labelling_rows(judged, {"pmid:9": _doc()})
    title = f"precision-{tmp_path.name}"

    first = push_sample(connection, title, rows[:2], {"pmid:9": TEXT})
    again = push_sample(connection, title, rows, {"pmid:9": TEXT})
    assert (first.imported, again.imported, again.already_there) == (2, 1, 2)
    project = client.projects.get(id=first.project_id)
    assert project.model_version == MODEL_VERSION
    tasks = {t.data["key"]: t for t in client.tasks.list(project=first.project_id, fields="all")}
    assert len(tasks) == 3
    stored = client.tasks.get(id=tasks[rows[0]["key"]].id)
    prediction = stored.predictions[0]
    region = (prediction if isinstance(prediction, dict) else prediction.dict())["result"][0][
        "value"
    ]
    a, b = from_label_studio(TEXT, region["start"], region["end"])
    assert TEXT[a:b] == "inhibits"

    def choose(task_key: str, choice: str) -> None:
        client.annotations.create(
            id=tasks[task_key].id,
            result=[{"id": "v", "from_name": "verdict", "to_name": "text", "type": "choices",
                     "value": {"choices": [choice]}}],
        )  # fmt: skip

    choose(rows[0]["key"], "supported")
    choose(rows[0]["key"], "contradicted")  # a second, later annotation: counted, not used
    choose(rows[1]["key"], "not found")
    pulled = pull_labels(connection, title)
    assert {label.key: label.label for label in pulled.labels} == {
        rows[0]["key"]: "supported",
        rows[1]["key"]: "not_found",
        rows[2]["key"]: None,
    }
    assert (pulled.tasks, pulled.unlabelled, pulled.extra_annotations) == (3, 1, 1)

    verdicts = tmp_path / "verdicts.jsonl"
    write_verdicts(verdicts, judged)
    result = cli(
        "precision", "report", "--verdicts", verdicts, "--studio-project", title,
        "--url", label_studio.url, "-o", tmp_path / "p.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "p.json").read_text())
    assert report["n_labelled"] == 2 and report["judge_on_sample"] == {
        "false_support": 0,
        "lost_support": 0,
    }
    assert report["left_out"]["unlabelled"] == 1
    assert report["label_studio"]["extra_annotations"] == 1


def test_pull_from_a_missing_project_is_a_clear_error(
    label_studio: Any, cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", label_studio.token)
    verdicts = tmp_path / "verdicts.jsonl"
    write_verdicts(verdicts, mentions())
    result = cli(
        "precision", "report", "--verdicts", verdicts, "--studio-project", "no-such-project",
        "--url", label_studio.url,
    )  # fmt: skip
    assert result.returncode == 2
    assert "no-such-project" in result.err


def _doc() -> Any:
    from goldloop.gold import Document

    return Document(doc_id="pmid:9", text=TEXT)
