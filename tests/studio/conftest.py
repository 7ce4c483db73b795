"""Shared by the tests of tests/studio/: the curation campaign, built once per session in the
session's Label Studio; the loop pushed and worked on once per module (`pushed`); copies of the
loop corpus for a fresh project; two people's hits on three texts."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

import pytest

from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB
from goldloop.studio.project import find_project
from goldloop.studio.push import Candidates
from tests.conftest import CliResult, run_goldloop, shared_kb
from tests.studio.campaign_data import Campaign, build
from tests.studio.loop_data import (
    ACTIVATES,
    BINDS,
    DOCS,
    INHIBITS,
    REGULATES,
    people_work,
    write_inputs,
)
from tests.studio.published_data import Published
from tests.studio.published_data import build as build_published


@pytest.fixture(scope="session")
def campaign(label_studio: Any, kb: KB) -> Campaign:
    return build(label_studio, kb)


# --- two people's hits on three texts (test_campaign_agreement.py, test_campaign.py) ---

TEXTS = {
    "pmid:1": "IL-6 activates STAT3 and inhibits SOCS3.",
    "pmid:2": "𝛼-syn 🧬 binds to lipids; TNF is inhibited by IkB.",
    "pmid:3": "Insulin stimulates glucose uptake.",
}
# (doc_id, surface, entity_id, direction) per annotator
FIRST = [
    ("pmid:1", "activates", ACTIVATES, "forward"),
    ("pmid:1", "inhibits", INHIBITS, "forward"),
    ("pmid:2", "binds to", BINDS, "symmetric"),
    ("pmid:2", "inhibited by", INHIBITS, "inverse"),
]
SECOND = [
    ("pmid:1", "activates", ACTIVATES, "forward"),
    ("pmid:1", "inhibits", REGULATES, "forward"),
    ("pmid:2", "is inhibited by", INHIBITS, "forward"),
]


def hits(rows: list[tuple[str, str, str, str]], doc_id: str) -> list[Hit]:
    out = []
    for doc, surface, entity_id, direction in rows:
        if doc == doc_id:
            a = TEXTS[doc].index(surface)
            out.append(
                Hit(
                    a=a,
                    b=a + len(surface),
                    surface=surface,
                    entity_id=entity_id,
                    direction=direction,
                )
            )
    return out


def doc_ids_in(label_studio, title: str) -> Counter[str]:
    project = find_project(label_studio.studio, title)
    assert project is not None
    return Counter(
        t.data["doc_id"]
        for t in label_studio.studio.sdk.tasks.list(project=project.id, page_size=1000)
    )


def loop_copies(tmp_path, prefix: str, n: int) -> tuple[KB, Candidates, list[Document], str]:
    """KB, A's candidates, ``n`` documents (copies of the loop corpus) and a fresh project name."""
    kb = shared_kb()
    _, gold_a, _ = write_inputs(tmp_path)
    copies = [
        Document(**{**d, "doc_id": f"{prefix}{i}:{d['doc_id']}", "role": "primary"})
        for i in range(n // len(DOCS) + 1)
        for d in DOCS
    ]
    return kb, Candidates.from_gold(gold_a, kb), copies[:n], f"{prefix}-{uuid.uuid4().hex[:6]}"


def run_in_studio(args: list[str], label_studio) -> CliResult:
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.token}
    result = run_goldloop(args, env)
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result


@pytest.fixture(scope="module")
def pushed(label_studio, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One push, then the annotators' work; the pulls read it."""
    directory = tmp_path_factory.mktemp("loop")
    documents, gold_a, gold_b = write_inputs(directory)
    name = f"loop-{uuid.uuid4().hex[:6]}"
    out = run_in_studio(["push", "--sample", str(documents), "--project", name,
                         "--candidates", str(gold_a), "--other", str(gold_b)],
                        label_studio).stdout  # fmt: skip
    main, double, second = people_work(label_studio.studio.sdk, name)
    return {"name": name, "dir": directory, "documents": documents, "gold_a": gold_a,
            "gold_b": gold_b, "push_output": out, "main": main, "double": double,
            "second": second}  # fmt: skip


@pytest.fixture(scope="session")
def published(label_studio, kb: KB, tmp_path_factory: pytest.TempPathFactory) -> Published:
    """A campaign with double, blind and curated documents, pulled, and a system to score."""
    return build_published(label_studio, kb, tmp_path_factory.mktemp("published"))
