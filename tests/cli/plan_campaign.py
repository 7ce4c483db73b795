"""A small campaign for the plan's command tests (``tests/cli/test_plan.py``, the real Label Studio
loop in ``tests/studio/test_plan_loop.py``): a corpus of abstracts recombined from the demo
corpus's sentences (every text distinct, every verb real), and, for drawn documents, a gold
(every verb surface of a small table, linked) and a system that misses and mislinks some."""

from __future__ import annotations

import random
import re
from pathlib import Path

from goldloop.formats.gold import Document, Hit, write_gold
from goldloop.settings import DEMO_CORPUS
from tests.studio.loop_data import ACTIVATES, BINDS, INHIBITS, REGULATES

SURFACES = {
    "activates": (ACTIVATES, "forward"),
    "inhibited by": (INHIBITS, "inverse"),
    "inhibits": (INHIBITS, "forward"),
    "binds": (BINDS, "symmetric"),
    "regulates": (REGULATES, "forward"),
}


def write_corpus(path: Path, n_docs: int = 120, seed: int = 5) -> Path:
    """``n_docs`` abstracts of 3-6 sentences drawn from the demo corpus's, as a TSV."""
    lines = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()
    sentences = [
        s.strip() + "."
        for line in lines[1:]
        for s in line.split("\t")[3].split(". ")
        if len(s.split()) >= 5
    ]
    sentences += [
        "Interleukin-6 activates STAT3 in hepatocytes.",
        "The kinase binds the receptor at the membrane.",
        "SOCS3 inhibits JAK2 signalling in macrophages.",
        "Insulin regulates glucose uptake in muscle.",
        "Apoptosis is inhibited by BCL2 in lymphocytes.",
    ] * 4
    rng = random.Random(seed)
    rows = ["pmid\tdoi\tpublication_year\tabstract"]
    for i in range(n_docs):
        text = " ".join(rng.sample(sentences, rng.randint(3, 6))).replace("..", ".")
        rows.append(f"{98000000 + i}\t10.99998/plan.{i:04d}\t{rng.randint(2001, 2023)}\t{text}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def hits_of(text: str) -> list[Hit]:
    """Every surface of :data:`SURFACES` in ``text``, left to right, none overlapping."""
    found: list[Hit] = []
    taken: set[int] = set()
    for surface, (entity_id, direction) in SURFACES.items():
        for match in re.finditer(rf"\b{surface}\b", text):
            span = set(range(match.start(), match.end()))
            if span & taken:
                continue
            taken |= span
            found.append(Hit(a=match.start(), b=match.end(), surface=surface,
                             entity_id=entity_id, direction=direction))  # fmt: skip
    return sorted(found, key=lambda h: h.a)


def system_hits(doc_id: str, hits: list[Hit]) -> list[Hit]:
    """The system's answer: per document (seeded by its id) a hit missed or mislinked now and
    then, so that its figure varies between documents."""
    rng = random.Random(doc_id)
    out = []
    for hit in hits:
        roll = rng.random()
        if roll < 0.2:
            continue
        if roll < 0.35:
            hit = hit.model_copy(update={"entity_id": REGULATES, "direction": "forward"})
        out.append(hit)
    return out


def write_gold_and_system(documents: list[Document], gold: Path, system: Path) -> None:
    """The gold of ``documents`` (their design kept) and the system's predictions, both as gold
    files."""
    with_hits = [d.model_copy(update={"ground_truth": hits_of(d.text)}) for d in documents]
    write_gold(gold, with_hits)
    write_gold(
        system,
        [d.model_copy(update={"ground_truth": system_hits(d.doc_id, d.ground_truth)})
         for d in with_hits],
    )  # fmt: skip


def pre_annotated(documents: list[Document]) -> list[Document]:
    """A pre-annotator's hits (tagged ``pre``): the gold's, a few missed (seeded by the id, not
    as the system misses them), so that it agrees with people on most documents."""
    out = []
    for d in documents:
        rng = random.Random(f"pre:{d.doc_id}")
        hits = [h.model_copy(update={"annotator": "pre"}) for h in hits_of(d.text)
                if rng.random() > 0.1]  # fmt: skip
        out.append(d.model_copy(update={"ground_truth": hits}))
    return out


def write_surrogate(
    gold_documents: list[Document], part: list[Document], pre: Path, surrogate: Path, system: Path
) -> None:
    """The pre-annotation of the gold's documents and of the surrogate part, and the system's
    predictions over both parts."""
    write_gold(pre, pre_annotated(gold_documents))
    write_gold(surrogate, pre_annotated(part))
    ours = {d.doc_id for d in gold_documents}
    both = gold_documents + [d for d in part if d.doc_id not in ours]
    write_gold(
        system,
        [d.model_copy(update={"ground_truth": system_hits(d.doc_id, hits_of(d.text))})
         for d in both],
    )  # fmt: skip
