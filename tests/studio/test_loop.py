"""The loop against a real Label Studio: push, annotators at work through the API, pull.

Annotators start from the pre-filled review prediction stored in Label Studio and accept, fix
relation or direction, delete, widen a span, add, leave a region without relation, skip; a
second person annotates the double-role task. The pulled gold and sidecar are checked exactly.
"""

from __future__ import annotations

import json
import uuid
from copy import deepcopy
from typing import Any

import pytest

from goldloop.formats.labelstudio.offsets import to_label_studio
from goldloop.gold import Hit, read_gold
from goldloop.kb import load_kb
from goldloop.studio.review import hit_regions, review_tag
from tests.conftest import CliResult, run_goldloop
from tests.studio.loop_data import (
    ACTIVATES,
    BINDS,
    INDUCES,
    INHIBITS,
    PHOSPHORYLATES,
    REDUCES,
    REGULATES,
    SUPPRESSES,
    TAG_A,
    TAG_B,
    span,
    text_of,
    write_inputs,
)  # fmt: skip

REVIEW = review_tag(TAG_A, TAG_B)


def _run(args: list[str], label_studio) -> CliResult:
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    result = run_goldloop(args, env)
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result


def _tasks(client, project_id: int) -> dict[str, Any]:
    return {
        t.data["doc_id"]: t
        for t in client.tasks.list(project=project_id, fields="all", page_size=100)
    }


def _project(client, title: str):
    return next(
        p for p in client.projects.list(include="id,title,model_version") if p.title == title
    )


def _review(task) -> list[dict[str, Any]]:
    review = next(p for p in task.predictions if p.model_version == REVIEW)
    return deepcopy(review.result)


def _set(result: list[dict], surface: str, doc_id: str, from_name: str, value: dict) -> None:
    start, end = to_label_studio(text_of(doc_id), *span(doc_id, surface))
    for item in result:
        if item["from_name"] == from_name and (item["value"]["start"], item["value"]["end"]) == (
            start,
            end,
        ):
            item["value"].update(value)
            return
    raise AssertionError(f"no {from_name} region on {surface!r}")


def _without(result: list[dict], surface: str, doc_id: str) -> list[dict]:
    start, end = to_label_studio(text_of(doc_id), *span(doc_id, surface))
    return [i for i in result if (i["value"]["start"], i["value"]["end"]) != (start, end)]


def _widen(result: list[dict], old: str, new: str, doc_id: str) -> None:
    start, end = to_label_studio(text_of(doc_id), *span(doc_id, old))
    new_start, new_end = to_label_studio(text_of(doc_id), *span(doc_id, new))
    for item in result:
        if (item["value"]["start"], item["value"]["end"]) == (start, end):
            item["value"].update(start=new_start, end=new_end, text=new)


def _region(doc_id: str, surface: str, entity_id: str | None, direction: str | None) -> list[dict]:
    a, b = span(doc_id, surface)
    hit = Hit(a=a, b=b, surface=surface, entity_id=entity_id or ACTIVATES, direction=direction)
    items = hit_regions(text_of(doc_id), hit, load_kb())
    for item in items:
        item["id"] = f"new{a}"
    return items if entity_id else [i for i in items if i["from_name"] == "mention"]


@pytest.fixture(scope="module")
def pushed(label_studio, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One push, then the annotators' work; the pulls read it."""
    directory = tmp_path_factory.mktemp("loop")
    documents, gold_a, gold_b = write_inputs(directory)
    name = f"loop-{uuid.uuid4().hex[:6]}"
    out = _run(["push", "--sample", str(documents), "--project", name, "--candidates", str(gold_a),
                "--other", str(gold_b)], label_studio).stdout  # fmt: skip
    client = label_studio.client
    main, double = _project(client, name), _project(client, f"{name}-double")
    tasks, double_tasks = _tasks(client, main.id), _tasks(client, double.id)
    annotate = client.annotations.create

    annotate(id=tasks["pmid:1"].id, result=_review(tasks["pmid:1"]))  # accept all
    fixed = _review(tasks["pmid:2"])
    _set(fixed, "inhibits", "pmid:2", "relation", {"taxonomy": [["suppresses"]]})
    _set(fixed, "regulates", "pmid:2", "direction", {"choices": ["inverse"]})
    annotate(id=tasks["pmid:2"].id, result=fixed)
    deleted = _without(_review(tasks["pmid:3"]), "activates", "pmid:3")
    binds = next(i for i in deleted if i["from_name"] == "mention")
    deleted.append({"id": binds["id"], "from_name": "note", "to_name": "text", "type": "textarea",
                    "value": {"start": binds["value"]["start"], "end": binds["value"]["end"],
                              "text": ["lipid binding"]}})  # fmt: skip
    annotate(id=tasks["pmid:3"].id, result=deleted)
    widened = _review(tasks["pmid:4"])
    _widen(widened, "inhibited by", "is inhibited by", "pmid:4")
    widened += _region("pmid:4", "which", None, None)  # no relation picked
    annotate(id=tasks["pmid:4"].id, result=widened)
    annotate(id=tasks["pmid:5"].id, result=[], was_cancelled=True)
    annotate(
        id=tasks["pmid:6"].id,
        result=_review(tasks["pmid:6"]) + _region("pmid:6", "induces", INDUCES, "forward"),
    )
    annotate(id=double_tasks["pmid:7"].id, result=_review(double_tasks["pmid:7"]))
    second = client.users.create(
        email=f"second-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:8]
    )
    other = _review(double_tasks["pmid:7"])
    _set(other, "phosphorylates", "pmid:7", "direction", {"choices": ["inverse"]})
    annotate(id=double_tasks["pmid:7"].id, result=other, completed_by=second.id)
    return {"name": name, "dir": directory, "documents": documents, "gold_a": gold_a, "gold_b": gold_b,
            "push_output": out, "main": main, "double": double, "second": second.email}  # fmt: skip


def test_push_creates_tasks_predictions_and_model_version(pushed, label_studio) -> None:
    client = label_studio.client
    tasks = _tasks(client, pushed["main"].id)
    assert sorted(tasks) == [f"pmid:{i}" for i in (1, 2, 3, 4, 5, 6, 8)]
    assert list(_tasks(client, pushed["double"].id)) == ["pmid:7"]
    assert _project(client, pushed["name"]).model_version == REVIEW
    versions = sorted(p.model_version for p in tasks["pmid:2"].predictions)
    assert versions == sorted([TAG_A, TAG_B, REVIEW])
    assert tasks["pmid:3"].data == {"text": text_of("pmid:3"), "doc_id": "pmid:3", "role": "primary", "batch": 0,
                                    "p_incl": 0.25}  # fmt: skip
    double = client.projects.get(id=pushed["double"].id)
    assert double.maximum_annotations == 2


def test_pull_gives_exact_verified_hits_and_verdicts(pushed, label_studio) -> None:
    out = pushed["dir"] / "gold.verified.json"
    _run(["pull", "--project", pushed["name"], "--out", str(out)], label_studio)
    gold = read_gold(out, load_kb())
    got = sorted(
        (d.doc_id, h.surface, h.entity_id, h.direction, h.verdict, h.source, bool(h.model_extra.get("fixed_boundary")))
        for d in gold.documents for h in d.ground_truth
    )  # fmt: skip
    assert got == sorted([
        ("pmid:1", "activates", ACTIVATES, "forward", "accept", "human", False),
        ("pmid:2", "inhibits", SUPPRESSES, "forward", "fix", "human", False),
        ("pmid:2", "regulates", REGULATES, "inverse", "fix", "human", False),
        ("pmid:3", "binds to", BINDS, "symmetric", "accept", "human", False),
        ("pmid:4", "activates", ACTIVATES, "forward", "accept", "human", False),
        ("pmid:4", "is inhibited by", INHIBITS, "inverse", "fix", "human", True),
        ("pmid:6", "reduces", REDUCES, "forward", "accept", "human", False),
        ("pmid:6", "induces", INDUCES, "forward", "added", "human", False),
        ("pmid:7", "phosphorylates", PHOSPHORYLATES, "forward", "accept", "human", False),
    ])  # fmt: skip
    # Astral characters before the span: code points in gold, UTF-16 units only in Label Studio.
    binds = next(h for d in gold.documents if d.doc_id == "pmid:3" for h in d.ground_truth)
    assert (binds.a, binds.b) == span("pmid:3", "binds to")
    assert binds.model_extra["note"] == "lipid binding"
    assert {h.annotator for d in gold.documents for h in d.ground_truth} == {"admin@goldloop.local"}
    sidecar = json.loads((pushed["dir"] / "gold.verified.json.verification.json").read_text())
    assert {k: sidecar[k] for k in ("candidates", "accept", "fix", "reject", "added", "incomplete")} == {
        "candidates": 9, "accept": 5, "fix": 3, "reject": 1, "added": 1, "incomplete": 1,
    }  # fmt: skip
    assert sidecar["correction_rate"] == pytest.approx(4 / 9)
    assert sidecar["by_slice"]["paraphrase"]["candidates"] == 1
    assert sidecar["by_slice"]["paraphrase"]["fix"] == 1
    assert sidecar["by_slice"]["anchored"]["candidates"] == 8
    assert sidecar["adopted_from_second_annotator"] == 1
    assert [(r["doc_id"], r["surface"], r["reason"]) for r in sidecar["rejected"]] == [
        ("pmid:3", "activates", "deleted")
    ]
    assert [(r["doc_id"], r["surface"], r["reason"]) for r in sidecar["incomplete_regions"]] == [
        ("pmid:4", "which", "no relation picked")
    ]
    assert [s["doc_id"] for s in sidecar["skipped_tasks"]] == ["pmid:5"]
    assert sidecar["multi_annotation_tasks"] == [
        {"doc_id": "pmid:7", "task": sidecar["multi_annotation_tasks"][0]["task"], "used": "admin@goldloop.local",
         "others": [pushed["second"]]}
    ]  # fmt: skip
    assert (sidecar["tasks"], sidecar["verified_tasks"], sidecar["unannotated_tasks"]) == (8, 6, 1)
    assert sidecar["verified_by"] == ["admin@goldloop.local"]


def test_pull_one_annotator_and_per_annotator_files(pushed, label_studio) -> None:
    out = pushed["dir"] / "second.json"
    _run(["pull", "--project", pushed["name"], "--out", str(out), "--annotator", pushed["second"],
          "--per-annotator"], label_studio)  # fmt: skip
    gold = read_gold(out)
    assert [
        (d.doc_id, [(h.direction, h.verdict, h.annotator) for h in d.ground_truth])
        for d in gold.documents
    ] == [("pmid:7", [("inverse", "fix", pushed["second"])])]
    per_admin = read_gold(pushed["dir"] / "second.admin@goldloop.local.json")
    assert len(per_admin.documents) == 6
    per_second = read_gold(pushed["dir"] / f"second.{pushed['second']}.json")
    assert [d.doc_id for d in per_second.documents] == ["pmid:7"]


def test_push_twice_adds_nothing(pushed, label_studio) -> None:
    out = _run(["push", "--sample", str(pushed["documents"]), "--project", pushed["name"], "--candidates",
                str(pushed["gold_a"]), "--other", str(pushed["gold_b"])], label_studio).stdout  # fmt: skip
    assert "tasks created" in out
    client = label_studio.client
    assert len(_tasks(client, pushed["main"].id)) == 7
    assert len(_tasks(client, pushed["double"].id)) == 1
    assert sum(len(t.predictions) for t in _tasks(client, pushed["main"].id).values()) == 7 * 3


def test_sync_pushes_what_is_missing_then_pulls(pushed, label_studio) -> None:
    out = pushed["dir"] / "synced.json"
    extra = pushed["dir"] / "more.jsonl"
    lines = pushed["documents"].read_text(encoding="utf-8")
    new = {"doc_id": "pmid:9", "text": "Rapamycin inhibits mTORC1.", "role": "primary", "batch": 2}
    extra.write_text(lines + json.dumps(new) + "\n", encoding="utf-8")
    output = _run(
        ["sync", "--sample", str(extra), "--project", pushed["name"], "--out", str(out),
         "--candidates", str(pushed["gold_a"]), "--other", str(pushed["gold_b"])],
        label_studio,
    ).stdout  # fmt: skip
    assert "tasks created" in output
    assert sorted(_tasks(label_studio.client, pushed["main"].id)) == [
        f"pmid:{i}" for i in (1, 2, 3, 4, 5, 6, 8, 9)
    ]
    sidecar = json.loads((pushed["dir"] / "synced.json.verification.json").read_text())
    assert (sidecar["tasks"], sidecar["verified_tasks"], sidecar["unannotated_tasks"]) == (9, 6, 2)
    assert len(read_gold(out).documents) == 6
