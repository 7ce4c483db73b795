"""The lexical pre-annotator's stored answers: a re-run reads them instead of parsing, gives
exactly what a fresh run gives, and anything that decides an answer is part of its key."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from spacy.language import Language

import goldloop.annotate
from goldloop import lexical_answers
from goldloop.annotate import annotate_documents
from goldloop.decode import DocumentResult
from goldloop.gold import Document, Hit
from goldloop.kb import KB
from goldloop.lexical import LexicalAnnotator
from goldloop.nlp import load_nlp
from goldloop.parse_cache import ENV_PATH
from goldloop.settings import DEMO_CORPUS


@pytest.fixture(scope="module")
def nlp() -> Language:
    return load_nlp()


@pytest.fixture
def documents() -> list[Document]:
    """The demo corpus's 30 distinct abstracts."""
    rows = DEMO_CORPUS.read_text(encoding="utf-8").splitlines()[1:]
    texts = list(dict.fromkeys(row.split("\t")[-1] for row in rows))
    return [Document(doc_id=f"demo:{k}", text=t, role="primary") for k, t in enumerate(texts)]


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts annotate hands to the parser, in order."""
    seen: list[str] = []
    real = goldloop.annotate.parse_many

    def parse(texts: Iterable[str], **options: Any) -> Iterator[Any]:
        listed = list(texts)
        seen.extend(listed)
        return real(listed, **options)

    monkeypatch.setattr(goldloop.annotate, "parse_many", parse)
    return seen


@pytest.fixture
def cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "parse-cache.sqlite"
    monkeypatch.setenv(ENV_PATH, str(path))
    return path


def run(
    documents: list[Document], kb: KB, nlp: Language, verbal_only: bool = True
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """The documents' file form, the report, and the doc_ids in ``on_document``'s order."""
    order: list[str] = []
    done = annotate_documents(
        documents,
        LexicalAnnotator(kb),
        kb,
        nlp=nlp,
        verbal_only=verbal_only,
        on_document=lambda result: order.append(result.doc_id),
    )
    return [d.to_json() for d in done.documents], done.report, order


def fresh(
    documents: list[Document], kb: KB, nlp: Language, monkeypatch: pytest.MonkeyPatch, **kw: Any
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """The same run with the parse cache off: every text parsed and detected."""
    with monkeypatch.context() as patch:
        patch.setenv(ENV_PATH, "off")
        return run(documents, kb, nlp, **kw)


def stored_answers(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])


def test_a_rerun_reads_the_stored_answers_and_equals_a_fresh_run(
    documents: list[Document],
    kb: KB,
    nlp: Language,
    parsed: list[str],
    cache_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reference = fresh(documents, kb, nlp, monkeypatch)
    gold, report, _ = reference
    # Not a trivial comparison: hits of every direction, folded ones, documents without hits.
    hits = [h for d in gold for h in d["ground_truth"]]
    assert len(hits) > 40 and report["counts"]["documents_without_hits"] > 0
    assert {h["direction"] for h in hits} >= {"forward", "inverse", "symmetric"}
    assert any(h.get("label_canonicalized") for h in hits)
    parsed.clear()
    assert run(documents, kb, nlp) == reference
    assert len(parsed) == len(documents)
    assert stored_answers(cache_file) == len(documents)
    parsed.clear()
    assert run(documents, kb, nlp) == reference
    assert parsed == []  # every answer was read back: nothing parsed, nothing detected
    # A window mixing stored and new texts keeps the input order and parses only the new ones.
    new = Document(doc_id="new:0", text="TNF is regulated by IL-6 in mice.")
    mixed = [*documents[5:10], new, *documents[:5]]
    got = run(mixed, kb, nlp)
    assert parsed == [new.text]
    assert got == fresh(mixed, kb, nlp, monkeypatch)
    assert got[2] == [d.doc_id for d in mixed]


def test_a_stored_text_under_another_doc_id_is_that_documents_answer(
    documents: list[Document],
    kb: KB,
    nlp: Language,
    cache_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run(documents, kb, nlp)
    renamed = [d.model_copy(update={"doc_id": f"other:{k}", "role": None}) for k, d in
               enumerate(documents)]  # fmt: skip
    gold, report, order = run(renamed, kb, nlp)
    assert (gold, report, order) == fresh(renamed, kb, nlp, monkeypatch)
    assert {r["doc_id"] for r in report["rejections"]} <= {d.doc_id for d in renamed}


def smaller(kb: KB, entity_id: str) -> KB:
    """``kb`` without the relation ``entity_id`` and its converse (another KB content)."""
    kept = {
        k: r
        for k, r in kb.relations.items()
        if entity_id not in (r.entity_id, r.canonical_entity_id)
    }
    digest = hashlib.sha256(f"{kb.sha256} without {entity_id}".encode()).hexdigest()
    return KB(path=kb.path, sha256=digest, relations=kept)


def test_what_decides_an_answer_is_part_of_its_key(
    documents: list[Document],
    kb: KB,
    nlp: Language,
    parsed: list[str],
    cache_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gold, _, _ = run(documents, kb, nlp)
    first = gold[0]["ground_truth"][0]["entity_id"] if gold[0]["ground_truth"] else None
    assert first is not None
    other_kb = smaller(kb, first)
    variants = {
        "verbal_only off": lambda: (kb, {"verbal_only": False}),
        "another KB": lambda: (other_kb, {}),
    }
    for name, variant in variants.items():
        variant_kb, options = variant()
        parsed.clear()
        got = run(documents, variant_kb, nlp, **options)
        assert len(parsed) == len(documents), name  # a miss: parsed and detected again
        assert got == fresh(documents, variant_kb, nlp, monkeypatch, **options), name
    assert all(h["entity_id"] != first for d in run(documents, other_kb, nlp)[0]
               for h in d["ground_truth"])  # fmt: skip
    # Another version of the code that decides answers: nothing stored before is served.
    monkeypatch.setattr(lexical_answers, "_fingerprint", "0" * 64)
    parsed.clear()
    assert run(documents, kb, nlp)[0] == gold
    assert len(parsed) == len(documents)


def test_the_code_fingerprint_covers_the_deciding_modules() -> None:
    fingerprint = lexical_answers.code_fingerprint()
    assert len(fingerprint) == 64 and fingerprint == lexical_answers.code_fingerprint()
    assert {"goldloop.nlp", "goldloop.decode", "goldloop.lexical"} <= set(
        lexical_answers.DECIDING_MODULES
    )


def test_a_stored_answer_round_trips_every_hit_field(kb: KB) -> None:
    hit = Hit(
        a=0, b=9, entity_id="RO:0002213", surface="regulates", label="regulates",
        direction="inverse", annotator="lexical@x", source="lexical", surface_anchored=False,
        label_canonicalized=True, subject_text="TNF", subject_span=(10, 13), confidence=0.5,
        extra_field={"kept": [1, 2]},
    )  # fmt: skip
    document = Document(doc_id="d", text="regulates TNF", ground_truth=[hit])
    result = DocumentResult(
        "d", document, items=3, rejections=[{"surface": "x", "doc_id": "d", "reasons": ["r"]}]
    )
    blob = lexical_answers.LexicalAnswers.dump(result)
    back = lexical_answers.LexicalAnswers.load(document.model_copy(update={"doc_id": "e"}), blob)
    assert back.document is not None and back.document.ground_truth == [hit]
    assert back.items == 3 and back.rejections == [
        {"surface": "x", "doc_id": "e", "reasons": ["r"]}
    ]
    assert back.failure is None and not back.cached


def test_with_the_parse_cache_off_nothing_is_stored(
    documents: list[Document],
    kb: KB,
    nlp: Language,
    parsed: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_PATH, "off")
    run(documents[:5], kb, nlp)
    run(documents[:5], kb, nlp)
    assert len(parsed) == 10
    assert not list(tmp_path.iterdir())
