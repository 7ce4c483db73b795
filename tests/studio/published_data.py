"""A whole campaign to publish, in a real Label Studio: double, blind and curated documents, every
document drawn with a design (stratum, p_incl), and a system scored on the pulled gold.

The double and primary documents are :mod:`tests.studio.campaign_data`'s (alice and bob on the
double tasks, their disagreements; the admin on the primary one); the blind documents are
annotated with the candidates by one of alice and bob and without by the other, crossed; the blind
person misses a mention on every third document. ``goldloop curate`` sends every dispute to
NAME-curate, where carol settles each (the double ones as campaign_data's carol, or alice's
version; the blind ones with every true mention). ``goldloop pull`` writes the gold, and the
system ``lexical`` is the gold less every fourth mention.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldloop.formats.gold import Document, Hit, read_gold, write_gold
from goldloop.formats.labelstudio.tasks import blind_name, curate_name
from goldloop.kb import KB
from goldloop.studio.curate import curate
from goldloop.studio.project import find_project
from goldloop.studio.push import Candidates, push
from goldloop.studio.review import hit_regions
from tests.conftest import run_goldloop
from tests.studio import campaign_data as double_data
from tests.studio.loop_data import ACTIVATES

BLIND = {
    f"blind:{k}": " ".join(f"A{k}{j} activates B{j}." for j in range(1 + k % 3)) for k in range(6)
}
# stratum and p_incl by role: each document drawn with a known probability.
DESIGN = {"primary": ("p", 0.5), "double": ("d", 0.25), "blind": ("b", 0.2)}


@dataclass
class Published:
    name: str
    directory: Path
    gold: Path
    system: Path
    env: dict[str, str]


def _spans(text: str) -> list[tuple[int, int]]:
    out, at = [], text.find("activates")
    while at >= 0:
        out.append((at, at + len("activates")))
        at = text.find("activates", at + 1)
    return out


def _blind_hits(text: str, spans: list[tuple[int, int]]) -> list[Hit]:
    return [Hit(a=a, b=b, surface=text[a:b], entity_id=ACTIVATES, direction="forward",
                surface_anchored=True) for a, b in spans]  # fmt: skip


def build(label_studio: Any, kb: KB, directory: Path) -> Published:
    studio = label_studio.studio
    name = f"pub-{uuid.uuid4().hex[:6]}"
    docs = []
    for doc_id, text in {**double_data.TEXTS, **BLIND}.items():
        role = "blind" if doc_id in BLIND else "primary" if doc_id == "pmid:10" else "double"
        stratum, p_incl = DESIGN[role]
        docs.append(Document(doc_id=doc_id, text=text, role=role, batch=0, p_incl=p_incl,
                             stratum=stratum))  # fmt: skip
    candidates = {
        d: double_data.hits([(s, e, di) for doc, s, e, di in double_data.CANDIDATES if doc == d], d)
        for d in double_data.TEXTS
    }
    candidates |= {d: _blind_hits(t, _spans(t)) for d, t in BLIND.items()}
    for found in candidates.values():
        for hit in found:
            hit.surface_anchored = True
    push(studio, docs, name, kb, a=Candidates(double_data.TAG, candidates))
    people = {"admin": studio.sdk.users.whoami()}
    for person in ("alice", "bob", "carol"):
        people[person] = studio.sdk.users.create(
            email=f"{person}-{uuid.uuid4().hex[:6]}@goldloop.local", username=uuid.uuid4().hex[:10]
        )
    tasks: dict[tuple[str, str], int] = {}
    for title in (name, f"{name}-double", blind_name(name)):
        project = find_project(studio, title)
        assert project is not None
        tasks |= {
            (title, t.data["doc_id"]): t.id for t in studio.sdk.tasks.list(project=project.id)
        }

    def annotate(person: str, task: int, text: str, found: list[Hit], seconds: float) -> None:
        result = [item for hit in found for item in hit_regions(text, hit, kb)]
        studio.sdk.annotations.create(id=task, result=result, completed_by=people[person].id,
                                  lead_time=seconds)  # fmt: skip

    seconds = double_data.LEAD_TIMES
    text = double_data.TEXTS
    for doc_id, rows in double_data.ADMIN.items():
        annotate("admin", tasks[(name, doc_id)], text[doc_id], double_data.hits(rows, doc_id),
                 seconds[("admin", doc_id)])  # fmt: skip
    for doc_id, rows in double_data.ALICE.items():
        task = tasks[(f"{name}-double", doc_id)]
        annotate("alice", task, text[doc_id], double_data.hits(rows, doc_id),
                 seconds[("alice", doc_id)])  # fmt: skip
        if doc_id in double_data.BOB:
            annotate("bob", task, text[doc_id], double_data.hits(double_data.BOB[doc_id], doc_id),
                     seconds[("bob", doc_id)])  # fmt: skip
    for k, (doc_id, blind_text) in enumerate(BLIND.items()):
        pre, alone = ("alice", "bob") if k % 2 == 0 else ("bob", "alice")
        true = _spans(blind_text)
        annotate(pre, tasks[(name, doc_id)], blind_text, _blind_hits(blind_text, true),
                 40.0 + 10 * k)  # fmt: skip
        seen = true[:-1] if k % 3 == 0 else true
        annotate(alone, tasks[(blind_name(name), doc_id)], blind_text,
                 _blind_hits(blind_text, seen), 70.0 + 10 * k)  # fmt: skip
    curate(studio, name, kb)
    project = find_project(studio, curate_name(name))
    assert project is not None
    for task in studio.sdk.tasks.list(project=project.id):
        doc_id = task.data["doc_id"]
        if doc_id in BLIND:
            found = _blind_hits(BLIND[doc_id], _spans(BLIND[doc_id]))
            annotate("carol", task.id, BLIND[doc_id], found, 45.0)
        else:
            rows = double_data.CAROL.get(doc_id, double_data.ALICE[doc_id])
            annotate("carol", task.id, text[doc_id], double_data.hits(rows, doc_id), 100.0)
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    gold = directory / "gold.verified.json"
    pulled = run_goldloop(["pull", "--project", name, "--out", gold], env)
    assert pulled.returncode == 0, pulled.stderr
    system = directory / "lexical.json"
    documents = read_gold(gold).documents
    kept = [h for d in documents for h in d.ground_truth]
    dropped = {id(h) for h in kept[::4]}
    write_gold(system, [Document(doc_id=d.doc_id, text=d.text, ground_truth=[
        h for h in d.ground_truth if id(h) not in dropped]) for d in documents])  # fmt: skip
    return Published(name, directory, gold, system, env)
