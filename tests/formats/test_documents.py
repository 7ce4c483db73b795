"""The one documents reader: a documents JSONL, a gold file, a Label Studio export, a sample dir."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from goldloop.formats.documents import DocumentsError, input_files, read_documents
from goldloop.formats.gold import Document, Hit, write_gold
from goldloop.kb import KB

TEXT = "SOCS3 inhibits STAT3."


def test_a_documents_jsonl_reads_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    rows = [{"doc_id": "pmid:2", "text": "B."}, {"doc_id": "pmid:1", "text": "A."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [(d.doc_id, d.text) for d in read_documents(path)] == [
        ("pmid:2", "B."),
        ("pmid:1", "A."),
    ]
    assert input_files(path) == [path]


def test_a_gold_file_reads_with_its_hits(tmp_path: Path, kb: KB) -> None:
    a = TEXT.index("inhibits")
    hit = Hit(a=a, b=a + 8, surface="inhibits", entity_id="PEL.000018", direction="forward")
    path = tmp_path / "gold.json"
    write_gold(path, [Document(doc_id="pmid:1", text=TEXT, ground_truth=[hit])])
    (document,) = read_documents(path, kb)
    assert document.doc_id == "pmid:1" and document.text == TEXT
    assert [(h.a, h.b, h.entity_id) for h in document.ground_truth] == [(a, a + 8, "PEL.000018")]


def test_a_label_studio_export_needs_the_kb(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps([{"id": 1, "data": {"doc_id": "pmid:1", "text": TEXT},
                                 "annotations": [], "predictions": []}]))  # fmt: skip
    with pytest.raises(DocumentsError, match=re.escape(f"{path}: reading a Label Studio export")):
        read_documents(path)


def test_an_empty_text_is_refused_naming_the_file_and_document(tmp_path: Path) -> None:
    path = tmp_path / "docs.jsonl"
    path.write_text('{"doc_id": "pmid:1", "text": "A."}\n{"doc_id": "pmid:2", "text": "  "}\n')
    with pytest.raises(DocumentsError, match=re.escape(f"{path}: document 'pmid:2'")):
        read_documents(path)
