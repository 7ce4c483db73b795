"""A real two-batch sample of the demo corpus, a gold file for it, and a parse that fails (a
valid pool cache must not parse)."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest

import goldloop.text.nlp
from goldloop.formats.gold import Document, Hit, write_gold
from goldloop.kb import KB
from goldloop.sample import read_documents
from goldloop.sample.batch_record import SampleSettings
from goldloop.sample.run import run_sample
from goldloop.settings import DEMO_CORPUS

SETTINGS = SampleSettings(n_primary=8, n_double=2, n_reserve=2, tail_top_k=10, seed=5)


class Gold(NamedTuple):
    path: Path
    documents: list[Document]
    x: str  # the entity id with three hits
    y: str


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory: pytest.TempPathFactory, kb: KB) -> Path:
    """Two batches of 12 (8 primary, 2 double, 2 reserve) drawn from the demo corpus."""
    directory = tmp_path_factory.mktemp("sample")
    run_sample(DEMO_CORPUS, directory, kb, SETTINGS)
    run_sample(DEMO_CORPUS, directory, kb, SETTINGS, extend=True)
    return directory


def _hit(doc: Document, word: str, entity_id: str, anchored: bool) -> Hit:
    a = doc.text.index(word)
    return Hit(a=a, b=a + len(word), surface=word, entity_id=entity_id, direction="forward",
               source="human", surface_anchored=anchored)  # fmt: skip


@pytest.fixture
def sample_gold(sample_dir: Path, kb: KB, tmp_path: Path) -> Gold:
    """Gold for the sample (``tmp_path/gold.json``): label X gets 3 hits in batch 0, label Y 2 in
    batch 0 and 1 in batch 1; the first document of each batch and one negative control get none."""
    path = tmp_path / "gold.json"
    x, y = kb.lookup("reduces"), kb.lookup("activates")
    assert x is not None and y is not None
    docs = read_documents(sample_dir)
    batch0 = [d for d in docs if d.batch == 0 and d.stratum and not d.stratum.endswith("-none")]
    batch1 = [d for d in docs if d.batch == 1 and d.stratum and not d.stratum.endswith("-none")]
    for doc in batch0[1:4]:
        doc.ground_truth = [_hit(doc, doc.text[:4], x.entity_id, True)]
    for doc in batch0[4:6] + batch1[1:2]:
        doc.ground_truth = [_hit(doc, doc.text[:4], y.entity_id, False)]
    write_gold(path, docs)
    return Gold(path, docs, x.entity_id, y.entity_id)


def forbid_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, any bulk parse fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the pool was parsed again although its cache is valid")

    for bulk in ("parse_many", "derive_many"):
        monkeypatch.setattr(goldloop.text.nlp, bulk, refuse)
