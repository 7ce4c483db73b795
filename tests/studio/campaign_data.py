"""A small double-annotation campaign in a real Label Studio, built once per test session.

Pushed with one pre-annotator's candidates; alice and bob (users created through the API)
annotate the double tasks through the SDK (their own ``completed_by``), with one disagreement of
each kind: a span (pmid:12), a relation (pmid:13), a direction (pmid:14) and a one-sided region
(pmid:15); pmid:11 they agree on; pmid:16 only alice annotated. The admin annotates the primary
task. ``goldloop curate`` pushes the four disputes; carol curates three of them (pmid:14 waits:
the browser check opens it).
Every annotation's ``lead_time`` is set from :data:`LEAD_TIMES` (bob left pmid:13 open for two
hours: an idle outlier).
"""

from __future__ import annotations

import uuid
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

from goldloop.formats.gold import Document, Hit
from goldloop.formats.labelstudio.tasks import curate_name, double_name
from goldloop.kb import KB
from goldloop.studio.curate import CurateReport, curate
from goldloop.studio.project import find_project
from goldloop.studio.push import Candidates, push
from goldloop.studio.review import hit_regions
from tests.studio.loop_data import ACTIVATES, INDUCES, INHIBITS, PHOSPHORYLATES, REDUCES, REGULATES

STIMULATES, SUPPRESSES = "PEL.000034", "PEL.000035"
TAG = "gpt-test@low"
TEXTS = {
    "pmid:10": "AMPK phosphorylates ULK1 at two sites.",
    "pmid:11": "IL-6 activates STAT3 in hepatocytes.",
    "pmid:12": "SOCS3 inhibits STAT3 and regulates growth.",
    "pmid:13": "TNF activates NF-kB in 𝛼-cells.",
    "pmid:14": "Insulin stimulates glucose uptake.",
    "pmid:15": "Metformin reduces hepatic glucose output and induces AMPK.",
    "pmid:16": "Leptin suppresses the appetite of mice.",
}
# The pre-annotator's candidates: (doc_id, surface, entity_id, direction)
CANDIDATES = [
    ("pmid:10", "phosphorylates", PHOSPHORYLATES, "forward"),
    ("pmid:11", "activates", ACTIVATES, "forward"),
    ("pmid:12", "inhibits", INHIBITS, "forward"),
    ("pmid:12", "regulates", REGULATES, "forward"),
    ("pmid:13", "activates", ACTIVATES, "forward"),
    ("pmid:14", "stimulates", STIMULATES, "forward"),
    ("pmid:15", "reduces", REDUCES, "forward"),
    ("pmid:16", "suppresses", SUPPRESSES, "forward"),
]
# What each person's final version holds, per document.
ALICE = {
    "pmid:11": [("activates", ACTIVATES, "forward")],
    "pmid:12": [("inhibits", INHIBITS, "forward"), ("regulates", REGULATES, "forward")],
    "pmid:13": [("activates", ACTIVATES, "forward")],
    "pmid:14": [("stimulates", STIMULATES, "forward")],
    "pmid:15": [("reduces", REDUCES, "forward"), ("induces", INDUCES, "forward")],
    "pmid:16": [("suppresses", SUPPRESSES, "forward")],
}
BOB = {
    "pmid:11": [("activates", ACTIVATES, "forward")],
    "pmid:12": [("inhibits STAT3", INHIBITS, "forward"), ("regulates", REGULATES, "forward")],
    "pmid:13": [("activates", REGULATES, "forward")],
    "pmid:14": [("stimulates", STIMULATES, "inverse")],
    "pmid:15": [("reduces", REDUCES, "forward")],
}
CAROL = {
    "pmid:12": [("inhibits STAT3", INHIBITS, "forward"), ("regulates", REGULATES, "forward")],
    "pmid:13": [("activates", REGULATES, "forward")],
    "pmid:15": [("reduces", REDUCES, "forward")],
}
ADMIN = {"pmid:10": [("phosphorylates", PHOSPHORYLATES, "forward")]}
# Seconds each annotation was open: (person, doc_id) -> lead_time
LEAD_TIMES = {
    ("admin", "pmid:10"): 90.0,
    ("alice", "pmid:11"): 60.0, ("bob", "pmid:11"): 120.0,
    ("alice", "pmid:12"): 120.0, ("bob", "pmid:12"): 180.0,
    ("alice", "pmid:13"): 60.0, ("bob", "pmid:13"): 7200.0,
    ("alice", "pmid:14"): 30.0, ("bob", "pmid:14"): 90.0,
    ("alice", "pmid:15"): 240.0, ("bob", "pmid:15"): 60.0,
    ("alice", "pmid:16"): 150.0,
    ("carol", "pmid:12"): 300.0, ("carol", "pmid:13"): 120.0, ("carol", "pmid:15"): 60.0,
}  # fmt: skip


def span(doc_id: str, surface: str) -> tuple[int, int]:
    a = TEXTS[doc_id].index(surface)
    return a, a + len(surface)


def hits(rows: list[tuple[str, str, str]], doc_id: str) -> list[Hit]:
    return [
        Hit(a=span(doc_id, s)[0], b=span(doc_id, s)[1], surface=s, entity_id=e, direction=d)
        for s, e, d in rows
    ]


def documents(version: dict[str, list[tuple[str, str, str]]]) -> list[Document]:
    """One person's version as gold documents (for an independent κ)."""
    return [
        Document(doc_id=d, text=TEXTS[d], ground_truth=hits(rows, d)) for d, rows in version.items()
    ]


@dataclass
class Campaign:
    name: str
    people: dict[str, Any]
    tasks: dict[str, Any]  # doc_id -> task id in the primary or double project
    curate_tasks: dict[str, Any] = field(default_factory=dict)
    first_curate: CurateReport | None = None

    def email(self, person: str) -> str:
        return str(self.people[person].email)


def build(label_studio: Any, kb: KB) -> Campaign:
    studio = label_studio.studio
    name = f"cur-{uuid.uuid4().hex[:6]}"
    docs = [
        Document(doc_id=d, text=t, role="primary" if d == "pmid:10" else "double")
        for d, t in TEXTS.items()
    ]
    candidates = {
        d: [Hit(a=span(d, s)[0], b=span(d, s)[1], surface=s, entity_id=e, direction=di,
                surface_anchored=True) for doc, s, e, di in CANDIDATES if doc == d]
        for d in TEXTS
    }  # fmt: skip
    push(studio, docs, name, kb, a=Candidates(TAG, candidates))
    people = {"admin": studio.sdk.users.whoami()}
    for person in ("alice", "bob", "carol"):
        people[person] = studio.sdk.users.create(
            email=f"{person}-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:10]
        )
    tasks: dict[str, Any] = {}
    for title in (name, double_name(name)):
        project = find_project(studio, title)
        assert project is not None
        tasks |= {t.data["doc_id"]: t.id for t in studio.sdk.tasks.list(project=project.id)}
    campaign = Campaign(name, people, tasks)

    def annotate(person: str, task_id: int, doc_id: str, rows: list[tuple[str, str, str]]) -> None:
        result = [
            item for hit in hits(rows, doc_id) for item in hit_regions(TEXTS[doc_id], hit, kb)
        ]
        studio.sdk.annotations.create(
            id=task_id, result=result, completed_by=people[person].id,
            lead_time=LEAD_TIMES[(person, doc_id)],
        )  # fmt: skip

    for doc_id, rows in ADMIN.items():
        annotate("admin", tasks[doc_id], doc_id, rows)
    for doc_id in ALICE:  # alice first on every double task: hers is the earliest annotation
        annotate("alice", tasks[doc_id], doc_id, ALICE[doc_id])
        if doc_id in BOB:
            annotate("bob", tasks[doc_id], doc_id, BOB[doc_id])
    campaign.first_curate = curate(studio, name, kb)
    project = find_project(studio, curate_name(name))
    assert project is not None
    campaign.curate_tasks = {
        t.data["doc_id"]: t for t in studio.sdk.tasks.list(project=project.id, fields="all")
    }
    for doc_id, rows in CAROL.items():
        task = campaign.curate_tasks[doc_id]
        start = next(p for p in task.predictions if p.model_version.startswith("curate:"))
        result = _curated(deepcopy(start.result), doc_id, rows, kb)
        studio.sdk.annotations.create(
            id=task.id, result=result, completed_by=people["carol"].id,
            lead_time=LEAD_TIMES[("carol", doc_id)],
        )  # fmt: skip
    return campaign


def _curated(
    prefill: list[dict[str, Any]], doc_id: str, rows: list[tuple[str, str, str]], kb: Any
) -> list[dict[str, Any]]:
    """The curator's result: the pre-filled regions carol keeps as they are, the rest redone."""
    wanted = {span(doc_id, s): (s, e, d) for s, e, d in rows}
    prefilled = {
        (i["value"]["start"], i["value"]["end"]) for i in prefill if i["from_name"] == "mention"
    }
    kept = []
    redone: list[tuple[str, str, str]] = []
    for (a, b), row in wanted.items():
        items = [i for i in prefill if (i["value"]["start"], i["value"]["end"]) == (a, b)]
        same = hit_regions(TEXTS[doc_id], hits([row], doc_id)[0], kb)
        values = {i["from_name"]: i["value"] for i in same}
        if (a, b) in prefilled and all(
            values.get(i["from_name"]) == i["value"] for i in items if i["from_name"] != "note"
        ):
            kept += items  # as pre-filled, the dispute note included
        else:
            redone.append(row)
    return kept + [
        item for hit in hits(redone, doc_id) for item in hit_regions(TEXTS[doc_id], hit, kb)
    ]
