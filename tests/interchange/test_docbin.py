"""spaCy DocBin: read back by spaCy, every span on its surface (or expanded and counted), the
exact offsets and fields in user_data."""

from __future__ import annotations

import json
from pathlib import Path

import spacy
from spacy.tokens import DocBin

from goldloop.formats.gold import Document
from goldloop.interchange import export_gold
from goldloop.interchange.docbin import NOT_ON_TOKENS, SPANS_KEY, USER_DATA_KEY
from tests.conftest import Cli


def test_spacy_reads_every_mention_back(tmp_path: Path, documents: list[Document]) -> None:
    out = tmp_path / "gold.spacy"
    report = export_gold("spacy", documents, out)
    assert report.counts == {NOT_ON_TOKENS: 1}  # "nds" inside "ends"
    docs = list(DocBin().from_disk(out).get_docs(spacy.blank("en").vocab))
    assert len(docs) == len(documents)
    expanded = 0
    for document, doc in zip(documents, docs, strict=True):
        assert doc.text == document.text  # CRs included
        stored = doc.user_data[USER_DATA_KEY]
        assert stored["doc_id"] == document.doc_id and stored["p_incl"] == document.p_incl
        spans = list(doc.spans[SPANS_KEY])
        for hit, span, exact in zip(document.ground_truth, spans, stored["hits"], strict=True):
            assert span.label_ == hit.entity_id
            assert doc.text[exact["a"] : exact["b"]] == exact["surface"] == hit.surface
            # msgpack gives lists back as tuples
            assert json.loads(json.dumps(exact)) == hit.to_json()
            if span.text != hit.surface:
                expanded += 1
                assert span.start_char <= hit.a < hit.b <= span.end_char
    assert expanded == 1


def test_the_cli_prints_the_count(tmp_path: Path, gold_file: Path, cli: Cli) -> None:
    out = tmp_path / "gold.spacy"
    result = cli("export", "--gold", gold_file, "--format", "spacy", "--out", out)
    assert result.returncode == 0, result.stderr
    assert NOT_ON_TOKENS in result.out
    assert out.exists()
