"""Decoded answers stored in the parse cache: a re-run (lexical, or an LLM's cached answers)
reads them instead of parsing, gives exactly what a fresh decode gives, and anything that
decides an outcome is part of its key. LLM answers come from the real SDKs and the fake server."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

import goldloop.llm.annotate
from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB, load_kb
from goldloop.llm import SQLiteCache, decoded_store
from goldloop.llm.annotate import annotate_documents
from goldloop.llm.decode import DocumentResult, Rejection
from goldloop.settings import DEMO_CORPUS, Settings
from goldloop.text.lexical import LexicalAnnotator
from goldloop.text.parse_cache import ENV_PATH
from goldloop.text.parsing import Parsing
from tests.conftest import KbWriter
from tests.fakes.llm_server import FakeLLMServer, FakeRequest


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
    real = goldloop.llm.annotate.parse_many

    def parse(texts: Iterable[str], *args: Any, **options: Any) -> Iterator[Any]:
        listed = list(texts)
        seen.extend(listed)
        return real(listed, *args, **options)

    monkeypatch.setattr(goldloop.llm.annotate, "parse_many", parse)
    return seen


@pytest.fixture
def cache_file(tmp_path: Path) -> Path:
    return tmp_path / "parse-cache.sqlite"


@pytest.fixture
def parsing(cache_file: Path) -> Parsing:
    """The bundled pipeline through the parse cache in ``cache_file``."""
    return Parsing(cache_path=cache_file)


def run(
    documents: list[Document], kb: KB, parsing: Parsing, verbal_only: bool = True
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """The documents' file form, the report, and the doc_ids in ``on_document``'s order."""
    order: list[str] = []
    done = annotate_documents(
        documents,
        LexicalAnnotator(kb),
        kb,
        parsing=parsing,
        verbal_only=verbal_only,
        on_document=lambda result: order.append(result.doc_id),
    )
    return [d.to_json() for d in done.documents], done.report.to_dict(), order


def fresh(
    documents: list[Document], kb: KB, **kw: Any
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    """The same run without a parse cache: every text parsed and detected."""
    return run(documents, kb, Parsing(), **kw)


def stored_answers(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM answers").fetchone()[0])


def test_a_rerun_reads_the_stored_answers_and_equals_a_fresh_run(
    documents: list[Document],
    kb: KB,
    parsing: Parsing,
    parsed: list[str],
    cache_file: Path,
) -> None:
    reference = fresh(documents, kb)
    gold, report, _ = reference
    # Not a trivial comparison: hits of every direction, folded ones, documents without hits.
    hits = [h for d in gold for h in d["ground_truth"]]
    assert len(hits) > 40 and report["counts"]["documents_without_hits"] > 0
    assert {h["direction"] for h in hits} >= {"forward", "inverse", "symmetric"}
    assert any(h.get("label_canonicalized") for h in hits)
    parsed.clear()
    assert run(documents, kb, parsing) == reference
    assert len(parsed) == len(documents)
    assert stored_answers(cache_file) == len(documents)
    parsed.clear()
    assert run(documents, kb, parsing) == reference
    assert parsed == []  # every answer was read back: nothing parsed, nothing detected
    # A window mixing stored and new texts keeps the input order and parses only the new ones.
    new = Document(doc_id="new:0", text="TNF is regulated by IL-6 in mice.")
    mixed = [*documents[5:10], new, *documents[:5]]
    got = run(mixed, kb, parsing)
    assert parsed == [new.text]
    assert got == fresh(mixed, kb)
    assert got[2] == [d.doc_id for d in mixed]


def test_a_stored_text_under_another_doc_id_is_that_documents_answer(
    documents: list[Document],
    kb: KB,
    parsing: Parsing,
    cache_file: Path,
) -> None:
    run(documents, kb, parsing)
    renamed = [d.model_copy(update={"doc_id": f"other:{k}", "role": None}) for k, d in
               enumerate(documents)]  # fmt: skip
    gold, report, order = run(renamed, kb, parsing)
    assert (gold, report, order) == fresh(renamed, kb)
    assert {r["doc_id"] for r in report["rejections"]} <= {d.doc_id for d in renamed}


def smaller(write_kb: KbWriter, entity_id: str) -> KB:
    """The bundled KB without the relation ``entity_id`` and its converse: another KB content."""
    return load_kb(
        write_kb(
            bundled=lambda rows: [
                r for r in rows if entity_id not in (r["entity_id"], r["canonical_entity_id"])
            ]
        )
    )


def test_what_decides_an_answer_is_part_of_its_key(
    documents: list[Document],
    kb: KB,
    parsing: Parsing,
    parsed: list[str],
    cache_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    write_kb: KbWriter,
) -> None:
    gold, _, _ = run(documents, kb, parsing)
    first = gold[0]["ground_truth"][0]["entity_id"] if gold[0]["ground_truth"] else None
    assert first is not None
    other_kb = smaller(write_kb, first)
    assert first not in other_kb.relations and len(other_kb.relations) < len(kb.relations)
    variants = {
        "verbal_only off": lambda: (kb, {"verbal_only": False}),
        "another KB": lambda: (other_kb, {}),
    }
    for name, variant in variants.items():
        variant_kb, options = variant()
        parsed.clear()
        got = run(documents, variant_kb, parsing, **options)
        assert len(parsed) == len(documents), name  # a miss: parsed and detected again
        assert got == fresh(documents, variant_kb, **options), name
    assert all(h["entity_id"] != first for d in run(documents, other_kb, parsing)[0]
               for h in d["ground_truth"])  # fmt: skip
    # Another version of the code that decides answers: nothing stored before is served.
    monkeypatch.setattr(decoded_store, "_fingerprint", "0" * 64)
    parsed.clear()
    assert run(documents, kb, parsing)[0] == gold
    assert len(parsed) == len(documents)


def test_the_code_fingerprint_covers_the_deciding_modules() -> None:
    fingerprint = decoded_store.code_fingerprint()
    assert len(fingerprint) == 64 and fingerprint == decoded_store.code_fingerprint()
    assert {
        "goldloop.text.nlp",
        "goldloop.text.detector",
        "goldloop.llm.decode",
        "goldloop.text.lexical",
    } <= set(decoded_store.DECIDING_MODULES)


def test_a_stored_outcome_round_trips_every_hit_field() -> None:
    hit = Hit(
        a=0, b=9, entity_id="RO:0002213", surface="regulates", label="regulates",
        direction="inverse", annotator="lexical@x", source="lexical", surface_anchored=False,
        label_canonicalized=True, subject_text="TNF", subject_span=(10, 13), confidence=0.5,
        extra_field={"kept": [1, 2]},
    )  # fmt: skip
    document = Document(doc_id="d", text="regulates TNF", ground_truth=[hit])
    result = DocumentResult(
        "d", document, items=3, rejections=[Rejection({"surface": "x"}, "d", ["r"])]
    )
    blob = decoded_store.DecodedStore.dump(result)
    back = decoded_store.DecodedStore.load(document.model_copy(update={"doc_id": "e"}), blob)
    assert back.document is not None and back.document.ground_truth == [hit]
    assert back.items == 3 and [r.to_dict() for r in back.rejections] == [
        {"surface": "x", "doc_id": "e", "reasons": ["r"]}
    ]
    assert back.failure is None and not back.cached


def test_with_the_parse_cache_off_nothing_is_stored(
    documents: list[Document],
    kb: KB,
    parsing: Parsing,
    parsed: list[str],
    tmp_path: Path,
) -> None:
    off = Settings.from_env({"GOLDLOOP_HOME": str(tmp_path), ENV_PATH: "off"})
    parsing = Parsing.from_settings(off)
    run(documents[:5], kb, parsing)
    run(documents[:5], kb, parsing)
    assert len(parsed) == 10
    assert not list(tmp_path.iterdir())


GOOD = "TNF binds to TNFR1 and increases apoptosis, whereas the activation of STAT3 was rare."
LONG = "IL-6 is activated by TNF in macrophages, and TNF increases the expression of SOCS3."
BAD = "Nothing to see in this abstract."
LLM_DOCUMENTS = [Document(doc_id=f"pmid:{k}", text=t) for k, t in enumerate((GOOD, LONG, BAD))]


def item(surface: str, label: str, **more: Any) -> dict[str, Any]:
    return {"surface": surface, "occurrence": 1, "label": label, "direction": "forward", **more}


def scripted(long_answer: list[dict[str, Any]]) -> Callable[[FakeRequest], str]:
    """GOOD: hits, a non-verbal and an unknown label; LONG: ``long_answer``; BAD: unparsable."""
    answers = {
        GOOD: [item("binds to", "binds to"), item("increases", "increases", confidence=0.9),
               item("activation", "activates"), item("apoptosis", "no such relation")],
        LONG: long_answer,
    }  # fmt: skip

    def answer(request: FakeRequest) -> str:
        for text, items in answers.items():
            if text in request.user:
                return json.dumps({"mentions": items})
        return "I could not find any relation mentions."

    return answer


LONG_ITEMS = [
    item("activated by", "activated by", subject_text="IL-6", object_text="TNF"),
    item("increases", "increases"),
    item("missing words", "causes"),
]


def llm_run(
    server: FakeLLMServer, answers: SQLiteCache, kb: KB, parsing: Parsing, **options: Any
) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    provider = server.provider("openai", "model-x", cache=answers)
    order: list[str] = []
    done = annotate_documents(
        LLM_DOCUMENTS, provider, kb, parsing=parsing, concurrency=2,
        on_document=lambda result: order.append(result.doc_id), **options,
    )  # fmt: skip
    return [d.to_json() for d in done.documents], done.report.to_dict(), order


def without_cost(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "cost"}


def test_an_llm_rerun_reads_the_decoded_answers_and_equals_a_fresh_decode(
    llm_server: FakeLLMServer,
    kb: KB,
    parsing: Parsing,
    parsed: list[str],
    cache_file: Path,
    tmp_path: Path,
) -> None:
    llm_server.answer = scripted(LONG_ITEMS)
    answers = SQLiteCache(tmp_path / "answers.sqlite")
    gold, report, _ = llm_run(llm_server, answers, kb, parsing)
    assert report["counts"]["unparsable"] == 1 and report["counts"]["rejections"] == 3
    assert any(h.get("label_canonicalized") for d in gold for h in d["ground_truth"])
    assert stored_answers(cache_file) == 2  # the unparsable answer is decided again each time
    assert sorted(parsed) == sorted([GOOD, LONG])
    parsed.clear()
    llm_server.reset()
    again = llm_run(llm_server, answers, kb, parsing)
    assert llm_server.request_count == 1  # the unparsable one only
    assert parsed == []  # both decoded documents came back without a parse
    # A fresh decode of the same cached answers, with the parse cache off, gives the same.
    reference = llm_run(llm_server, answers, kb, Parsing())
    assert again[0] == reference[0] == gold and again[2] == reference[2]
    assert without_cost(again[1]) == without_cost(reference[1])
    assert again[1]["counts"]["from_cache"] == 2 and again[1]["usage_from_cache"]
    assert {r["doc_id"] for r in again[1]["rejections"]} == {"pmid:0", "pmid:1"}


def test_another_answer_for_a_stored_text_is_decoded_again(
    llm_server: FakeLLMServer,
    kb: KB,
    parsing: Parsing,
    parsed: list[str],
    cache_file: Path,
    tmp_path: Path,
) -> None:
    llm_server.answer = scripted(LONG_ITEMS)
    llm_run(llm_server, SQLiteCache(tmp_path / "a.sqlite"), kb, parsing)
    parsed.clear()
    llm_server.answer = scripted([item("increases", "increases")])
    gold, _, _ = llm_run(llm_server, SQLiteCache(tmp_path / "b.sqlite"), kb, parsing)
    assert parsed == [LONG]  # GOOD's answer is the same: its outcome is served
    long_doc = next(d for d in gold if d["doc_id"] == "pmid:1")
    assert [h["surface"] for h in long_doc["ground_truth"]] == ["increases"]
    # verbal_only is part of the key: the same answers decoded again without the check.
    parsed.clear()
    loose, _, _ = llm_run(
        llm_server, SQLiteCache(tmp_path / "b.sqlite"), kb, parsing, verbal_only=False
    )
    assert sorted(parsed) == sorted([GOOD, LONG])
    assert "activation" in [h["surface"] for h in loose[0]["ground_truth"]]
