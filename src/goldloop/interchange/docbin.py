"""spaCy's ``DocBin`` (training data): a ``Doc`` per gold document, its hits in the span group
``mentions`` with the KB id as each span's label, everything else in ``user_data["goldloop"]``.

Offsets are code points, as spaCy's ``Doc.char_span`` takes them, and a span must fall on token
boundaries (tokens from spaCy's English tokenizer, ``spacy.blank("en")``, the rules of the
pipeline goldloop parses with). A mention that does not is kept with its exact characters: the
span group holds its ``expand``-aligned span (the smallest run of tokens covering it), and
``user_data["goldloop"]["hits"]`` holds every hit with its exact offsets and fields; the export
counts them. The tokenizer keeps every character, so ``doc.text`` is the gold text, CRs included.
"""

from __future__ import annotations

from pathlib import Path

import spacy
from spacy.tokens import DocBin

from goldloop.files.atomic import atomic_write_bytes
from goldloop.formats.gold import Document
from goldloop.interchange.spans import FormatError, document_fields, span_out

SPANS_KEY = "mentions"
USER_DATA_KEY = "goldloop"
NOT_ON_TOKENS = "spans not on token boundaries (expanded)"


def doc_bin(documents: list[Document], counts: dict[str, int]) -> DocBin:
    nlp = spacy.blank("en")
    out = DocBin(store_user_data=True)
    for document in documents:
        doc = nlp.make_doc(document.text)
        if doc.text != document.text:  # pragma: no cover - spaCy's tokenizer keeps every character
            raise FormatError(f"document {document.doc_id}: spaCy's tokenizer changed the text")
        spans = []
        for k, hit in enumerate(document.ground_truth):
            a, b = span_out(document, hit, k)
            span = doc.char_span(a, b, label=hit.entity_id)
            if span is None:
                counts[NOT_ON_TOKENS] = counts.get(NOT_ON_TOKENS, 0) + 1
                span = doc.char_span(a, b, label=hit.entity_id, alignment_mode="expand")
            if span is None:  # pragma: no cover - expand covers any non-empty span with tokens
                raise FormatError(f"document {document.doc_id}: hit {k}: no token covers it")
            spans.append(span)
        doc.spans[SPANS_KEY] = spans
        doc.user_data[USER_DATA_KEY] = {
            "doc_id": document.doc_id,
            **document_fields(document),
            "hits": [hit.to_json() for hit in document.ground_truth],
        }
        out.add(doc)
    return out


def write(path: Path, documents: list[Document]) -> dict[str, int]:
    counts: dict[str, int] = {}
    atomic_write_bytes(path, doc_bin(documents, counts).to_bytes())
    return counts
