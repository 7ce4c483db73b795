"""A small corpus with two annotators' candidates, written as the files push reads, and the
people's work on its pushed tasks through the SDK."""

from __future__ import annotations

import json
import uuid
from copy import deepcopy
from pathlib import Path
from typing import Any

from goldloop.formats.gold import Hit
from goldloop.formats.labelstudio.offsets import to_label_studio
from goldloop.studio.review import hit_regions, review_tag
from tests.conftest import shared_kb

ACTIVATES, INHIBITS, REGULATES = "PEL.000000", "PEL.000018", "RO.0002211"
BINDS, STIMULATES, REDUCES, PHOSPHORYLATES = "PEL.000003", "PEL.000034", "PEL.000029", "PEL.000025"
INDUCES, SUPPRESSES = "PEL.000017", "PEL.000035"
TAG_A, TAG_B = "gpt-test@low", "claude-test"
REVIEW = review_tag(TAG_A, TAG_B)

DOCS: list[dict[str, Any]] = [
    {"doc_id": "pmid:1", "text": "IL-6 activates STAT3 in hepatocytes.", "role": "primary", "batch": 0, "p_incl": 0.5},
    {"doc_id": "pmid:2", "text": "SOCS3 inhibits STAT3 and regulates growth.", "role": "primary", "batch": 0, "p_incl": 0.5},
    {"doc_id": "pmid:3", "text": "𝛼-synuclein binds to lipids and activates microglia 🧬.", "role": "primary", "batch": 0, "p_incl": 0.25},
    {"doc_id": "pmid:4", "text": "TNF activates NF-kB, which is inhibited by IkB.", "role": "primary", "batch": 0, "p_incl": 0.25},
    {"doc_id": "pmid:5", "text": "Insulin stimulates glucose uptake.", "role": "primary", "batch": 1, "p_incl": 0.1},
    {"doc_id": "pmid:6", "text": "Metformin reduces hepatic glucose output and induces AMPK.", "role": "primary", "batch": 1, "p_incl": 0.1},
    {"doc_id": "pmid:7", "text": "🧬 AMPK phosphorylates ULK1 at two sites.", "role": "double", "batch": 1, "p_incl": 0.1},
    {"doc_id": "pmid:8", "text": "Leptin suppresses appetite.", "role": "primary", "batch": 1, "p_incl": 0.1},
]  # fmt: skip

# (doc_id, surface, entity_id, direction, anchored)
HITS_A = [
    ("pmid:1", "activates", ACTIVATES, "forward", True),
    ("pmid:2", "inhibits", INHIBITS, "forward", True),
    ("pmid:2", "regulates", REGULATES, "forward", False),
    ("pmid:3", "binds to", BINDS, "symmetric", True),
    ("pmid:3", "activates", ACTIVATES, "forward", True),
    ("pmid:4", "activates", ACTIVATES, "forward", True),
    ("pmid:5", "stimulates", STIMULATES, "forward", True),
    ("pmid:6", "reduces", REDUCES, "forward", True),
    ("pmid:7", "phosphorylates", PHOSPHORYLATES, "forward", True),
    ("pmid:8", "suppresses", SUPPRESSES, "forward", True),
]
HITS_B = [
    ("pmid:1", "activates", ACTIVATES, "forward", True),
    ("pmid:2", "inhibits", INHIBITS, "inverse", True),
    ("pmid:4", "inhibited by", INHIBITS, "inverse", True),
]


def text_of(doc_id: str) -> str:
    return next(d["text"] for d in DOCS if d["doc_id"] == doc_id)


def span(doc_id: str, surface: str) -> tuple[int, int]:
    a = text_of(doc_id).index(surface)
    return a, a + len(surface)


def _gold(hits: list[tuple[str, str, str, str, bool]], tag: str) -> list[dict[str, Any]]:
    docs = []
    for doc in DOCS:
        rows = []
        for doc_id, surface, entity_id, direction, anchored in hits:
            if doc_id == doc["doc_id"]:
                a, b = span(doc_id, surface)
                rows.append({
                    "a": a, "b": b, "surface": surface, "entity_id": entity_id, "direction": direction,
                    "annotator": tag, "source": "llm", "surface_anchored": anchored, "confidence": 0.9,
                })  # fmt: skip
        docs.append({**doc, "ground_truth": rows})
    return docs


def write_inputs(
    directory: Path, docs: list[dict[str, Any]] | None = None
) -> tuple[Path, Path, Path]:
    """documents.jsonl, gold.a.json and gold.b.json under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    documents = directory / "documents.jsonl"
    documents.write_text(
        "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in docs or DOCS), encoding="utf-8"
    )
    gold_a, gold_b = directory / "gold.a.json", directory / "gold.b.json"
    gold_a.write_text(json.dumps(_gold(HITS_A, TAG_A), ensure_ascii=False), encoding="utf-8")
    gold_b.write_text(json.dumps(_gold(HITS_B, TAG_B), ensure_ascii=False), encoding="utf-8")
    return documents, gold_a, gold_b


def tasks_of(client, project_id: int) -> dict[str, Any]:
    return {
        t.data["doc_id"]: t
        for t in client.tasks.list(project=project_id, fields="all", page_size=100)
    }


def project_titled(client, title: str):
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
    items = hit_regions(text_of(doc_id), hit, shared_kb())
    for item in items:
        item["id"] = f"new{a}"
    return items if entity_id else [i for i in items if i["from_name"] == "mention"]


def people_work(client: Any, name: str) -> tuple[Any, Any, str]:
    """The annotators' work on project ``name`` (pushed with both candidates), each starting from
    the stored review prediction: accept (pmid:1), fix a relation and a direction (pmid:2), delete
    one region and note another (pmid:3), widen a span and leave a region without a relation
    (pmid:4), skip (pmid:5), add (pmid:6); on the double task (pmid:7) the admin accepts and a
    second person flips a direction. The two projects, and the second person's email."""
    main, double = project_titled(client, name), project_titled(client, f"{name}-double")
    tasks, double_tasks = tasks_of(client, main.id), tasks_of(client, double.id)
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
    return main, double, str(second.email)
