"""The loop against a real Label Studio: push, annotators at work through the API, pull.

Annotators start from the pre-filled review prediction stored in Label Studio and accept, fix
relation or direction, delete, widen a span, add, leave a region without relation, skip; a
second person annotates the double-role task. The pulled gold and sidecar are checked exactly.
"""

from __future__ import annotations

import json
import uuid

import pytest

from goldloop.formats.gold import read_gold
from goldloop.kb import KB
from tests.conftest import assert_fits, run_goldloop
from tests.studio.conftest import run_in_studio
from tests.studio.loop_data import (
    ACTIVATES,
    BINDS,
    INDUCES,
    INHIBITS,
    PHOSPHORYLATES,
    REDUCES,
    REGULATES,
    REVIEW,
    SUPPRESSES,
    TAG_A,
    TAG_B,
    project_titled,
    span,
    tasks_of,
    text_of,
    write_inputs,
)  # fmt: skip


def test_push_creates_tasks_predictions_and_model_version(pushed, label_studio) -> None:
    studio = label_studio.studio
    tasks = tasks_of(studio.sdk, pushed["main"].id)
    assert sorted(tasks) == [f"pmid:{i}" for i in (1, 2, 3, 4, 5, 6, 8)]
    assert list(tasks_of(studio.sdk, pushed["double"].id)) == ["pmid:7"]
    assert project_titled(studio.sdk, pushed["name"]).model_version == REVIEW
    versions = sorted(p.model_version for p in tasks["pmid:2"].predictions)
    assert versions == sorted([TAG_A, TAG_B, REVIEW])
    assert tasks["pmid:3"].data == {"text": text_of("pmid:3"), "doc_id": "pmid:3", "role": "primary", "batch": 0,
                                    "p_incl": 0.25, "stratum": None}  # fmt: skip
    double = studio.sdk.projects.get(id=pushed["double"].id)
    assert double.maximum_annotations == 2


def test_pull_gives_exact_verified_hits_and_verdicts(kb: KB, pushed, label_studio) -> None:
    out = pushed["dir"] / "gold.verified.json"
    run_in_studio(["pull", "--project", pushed["name"], "--out", str(out)], label_studio)
    gold = read_gold(out, kb)
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
    run_in_studio(["pull", "--project", pushed["name"], "--out", str(out), "--annotator", pushed["second"],
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
    out = run_in_studio(["push", "--sample", str(pushed["documents"]), "--project", pushed["name"], "--candidates",
                str(pushed["gold_a"]), "--other", str(pushed["gold_b"])], label_studio).stdout  # fmt: skip
    assert "tasks created" in out
    studio = label_studio.studio
    assert len(tasks_of(studio.sdk, pushed["main"].id)) == 7
    assert len(tasks_of(studio.sdk, pushed["double"].id)) == 1
    assert (
        sum(len(t.predictions) for t in tasks_of(studio.sdk, pushed["main"].id).values()) == 7 * 3
    )


def test_a_campaign_of_double_documents_only_is_pulled(label_studio, tmp_path) -> None:
    documents, gold_a, _ = write_inputs(tmp_path)
    name = f"double-only-{uuid.uuid4().hex[:6]}"
    run_in_studio(["push", "--sample", str(documents), "--project", name, "--candidates", str(gold_a),
          "--roles", "double"], label_studio)  # fmt: skip
    assert name not in {p.title for p in label_studio.studio.sdk.projects.list(include="id,title")}
    out = tmp_path / "gold.json"
    run_in_studio(["pull", "--project", name, "--out", str(out)], label_studio)
    sidecar = json.loads((tmp_path / "gold.json.verification.json").read_text())
    assert (sidecar["tasks"], sidecar["verified_tasks"]) == (1, 0)
    status = tmp_path / "status.json"
    run_in_studio(["status", "--project", name, "-o", str(status)], label_studio)
    figures = json.loads(status.read_text())
    assert figures["projects"] == {"double": f"{name}-double"}
    assert figures["roles"]["double"]["annotations_needed"] == 2
    again = tmp_path / "since.json"
    run_in_studio(["pull", "--project", name, "--out", str(again), "--since"], label_studio)
    assert read_gold(again).documents == read_gold(out).documents


def test_push_prints_the_review_tag_whole_at_80_columns(pushed, label_studio, terminal) -> None:
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    result = run_goldloop(["push", "--sample", pushed["documents"], "--project", pushed["name"],
                           "--candidates", pushed["gold_a"], "--other", pushed["gold_b"]], env)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert_fits(result.stdout)
    lines = result.stdout.splitlines()
    assert f"review tag of {pushed['name']} (the ML backend's title): {REVIEW}" in lines
    out = pushed["dir"] / "narrow.json"
    pulled = run_goldloop(["pull", "--project", pushed["name"], "--out", out], env)
    assert pulled.returncode == 0, pulled.stderr
    sidecar = json.loads((pushed["dir"] / "narrow.json.verification.json").read_text())
    assert_fits(pulled.stdout, [f"{sidecar['correction_rate']:.3f}", sidecar["candidates"]])


def test_a_campaign_without_double_documents_has_nothing_to_curate(label_studio, tmp_path) -> None:
    documents, gold_a, _ = write_inputs(tmp_path)
    name = f"primary-only-{uuid.uuid4().hex[:6]}"
    run_in_studio(["push", "--sample", str(documents), "--project", name, "--candidates", str(gold_a),
          "--roles", "primary"], label_studio)  # fmt: skip
    out = run_in_studio(["curate", "--project", name], label_studio).stdout
    assert f"{name} has no double tasks ({name}-double): nothing to curate" in out
    titles = {p.title for p in label_studio.studio.sdk.projects.list(include="id,title")}
    assert name in titles and f"{name}-curate" not in titles and f"{name}-double" not in titles
    run_in_studio(["status", "--project", name, "-o", str(tmp_path / "status.json")], label_studio)
    run_in_studio(["pull", "--project", name, "--out", str(tmp_path / "gold.json")], label_studio)
    missing = run_goldloop(["curate", "--project", f"{name}-nope"],
                           {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token})  # fmt: skip
    assert missing.returncode == 2 and f"'{name}-nope' or '{name}-nope-double'" in missing.err
