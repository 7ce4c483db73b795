"""The precision sample through a real Label Studio: push (idempotent, mention pre-highlighted at
the right code-point offsets, every task exactly once across a crash), annotate through the API,
pull the labels, report."""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from goldloop.formats.labelstudio.offsets import from_label_studio, to_label_studio
from goldloop.precision.mentions import JudgedMention, write_verdicts
from goldloop.precision.study import labelling_rows
from goldloop.studio.connection import StudioUnreachable, connect
from goldloop.studio.precision_project import (
    LABEL_CONFIG,
    MODEL_VERSION,
    pull_labels,
    push_sample,
    task_of,
)
from goldloop.studio.project import find_project
from tests.conftest import Cli

pytestmark = pytest.mark.studio

# Astral characters before the mentions: offsets cross the boundary only through
# goldloop.formats.labelstudio.offsets, and come back to the same span.
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
    studio = label_studio.studio
    judged = mentions()
    rows = labelling_rows(judged, {"pmid:9": _doc()})
    title = f"precision-{tmp_path.name}"

    first = push_sample(studio, title, rows[:2], {"pmid:9": TEXT})
    again = push_sample(studio, title, rows, {"pmid:9": TEXT})
    assert (first.imported, again.imported, again.already_there) == (2, 1, 2)
    project = studio.sdk.projects.get(id=first.project_id)
    assert project.model_version == MODEL_VERSION
    tasks = {
        t.data["key"]: t for t in studio.sdk.tasks.list(project=first.project_id, fields="all")
    }
    assert len(tasks) == 3
    stored = studio.sdk.tasks.get(id=tasks[rows[0]["key"]].id)
    prediction = stored.predictions[0]
    region = (prediction if isinstance(prediction, dict) else prediction.dict())["result"][0][
        "value"
    ]
    a, b = from_label_studio(TEXT, region["start"], region["end"])
    assert TEXT[a:b] == "inhibits"

    def choose(task_key: str, choice: str) -> None:
        studio.sdk.annotations.create(
            id=tasks[task_key].id,
            result=[{"id": "v", "from_name": "verdict", "to_name": "text", "type": "choices",
                     "value": {"choices": [choice]}}],
        )  # fmt: skip

    choose(rows[0]["key"], "supported")
    choose(rows[0]["key"], "contradicted")  # a second, later annotation: counted, not used
    choose(rows[1]["key"], "not found")
    pulled = pull_labels(studio, title)
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


def _many(n_docs: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Rows of ``3 * n_docs`` mentions (the three of TEXT in each of ``n_docs`` documents)."""
    from goldloop.formats.gold import Document

    judged = [
        JudgedMention(
            f"pmid:{i}", m.a, m.b, m.entity_id, m.surface, m.label, m.direction, m.verdict
        )
        for i in range(n_docs)
        for m in mentions()
    ]
    texts = {f"pmid:{i}": TEXT for i in range(n_docs)}
    docs = {doc_id: Document(doc_id=doc_id, text=text) for doc_id, text in texts.items()}
    return labelling_rows(judged, docs), texts


def _keys(label_studio: Any, title: str) -> Counter[str]:
    project = find_project(label_studio.studio, title, check=lambda *_: None)
    assert project is not None
    listed = label_studio.studio.sdk.tasks.list(
        project=project.id, page_size=1000, include="id,data"
    )
    return Counter(t.data["key"] for t in listed)


def test_precision_sample_survives_a_crash_between_batches(label_studio: Any) -> None:
    rows, texts = _many(20)
    title = f"precision-crash-{uuid.uuid4().hex[:6]}"
    batches: list[int] = []

    def crash_after_first_batch(n: int) -> None:
        batches.append(n)
        if len(batches) == 1:
            label_studio.crash()

    with pytest.raises(StudioUnreachable, match="cannot reach Label Studio"):
        push_sample(label_studio.studio, title, rows, texts,
                    batch_size=10, progress=crash_after_first_batch)  # fmt: skip
    label_studio.restart()
    assert sum(_keys(label_studio, title).values()) == 10
    again = push_sample(label_studio.studio, title, rows, texts)
    assert (again.imported, again.already_there) == (len(rows) - 10, 10)
    after = _keys(label_studio, title)
    assert sorted(after) == sorted(r["key"] for r in rows) and max(after.values()) == 1


def test_precision_sample_survives_a_crash_mid_import(label_studio: Any) -> None:
    """The server dies while a 300-task import is in flight: the re-run completes it exactly once."""
    rows, texts = _many(100)
    title = f"precision-midcrash-{uuid.uuid4().hex[:6]}"
    push_sample(label_studio.studio, title, rows[:1], texts)
    killer = threading.Timer(1.0, label_studio.crash)
    killer.start()
    try:
        push_sample(label_studio.studio, title, rows, texts)
    except StudioUnreachable:
        pass  # the usual outcome; a server that finished first leaves nothing to resume
    finally:
        killer.join()
    label_studio.restart()
    push_sample(label_studio.studio, title, rows, texts)
    after = _keys(label_studio, title)
    assert sorted(after) == sorted(r["key"] for r in rows) and max(after.values()) == 1


def test_an_import_whose_answer_is_lost_is_not_sent_again(label_studio: Any) -> None:
    """The server stores an import but the answer never arrives (a client timeout, real server):
    the import is not repeated blindly, so no task is doubled. Only the first request's timeout
    is shortened; every call goes to the real Label Studio."""
    rows, texts = _many(100)
    title = f"precision-timeout-{uuid.uuid4().hex[:6]}"
    studio = connect(label_studio.studio.connection)  # its own: its HTTP client is patched below
    http = studio.sdk._client_wrapper.httpx_client  # the one Studio.post_json sends through
    real_request = http.request
    calls: list[int] = []

    def first_answer_lost(path: str, **kwargs: Any) -> Any:
        if path.endswith("/import"):
            calls.append(len(json.loads(kwargs["content"])))
            if len(calls) == 1:
                kwargs["request_options"] = {
                    **kwargs["request_options"],
                    "timeout_in_seconds": 0.05,
                }
        return real_request(path, **kwargs)

    http.request = first_answer_lost  # type: ignore[method-assign]
    summary = push_sample(studio, title, rows, texts)
    assert summary.imported == len(rows)
    after = _keys(label_studio, title)
    assert sorted(after) == sorted(r["key"] for r in rows) and max(after.values()) == 1
    assert calls[0] == len(rows)  # the lost request carried every task, and it was stored


def _doc() -> Any:
    from goldloop.formats.gold import Document

    return Document(doc_id="pmid:9", text=TEXT)
