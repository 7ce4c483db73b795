"""The offline pre-annotator: the KB's labels found by the mention detector, no credentials."""

from __future__ import annotations

from typing import Any

from goldloop.kb import KB
from goldloop.text.detector import DetectedMention
from goldloop.text.lexical import LexicalAnnotator


def test_the_lexical_annotator_finds_kb_labels_offline(kb: KB, nlp: Any) -> None:
    annotator = LexicalAnnotator(kb)
    text = "TNF induces apoptosis and is inhibited by IL-10."
    mentions = annotator.mentions(nlp(text))
    assert [(m.surface, m.direction) for m in mentions] == [
        ("induces", "forward"),
        ("inhibited by", "inverse"),
    ]
    assert all(text[m.a : m.b] == m.surface for m in mentions)
    assert annotator.mentions(nlp("TNF induces apoptosis.")) == [
        DetectedMention(4, 11, "induces", "PEL.000017", "induces", "forward", True)
    ]


def test_its_tag_names_the_kb_and_no_model_or_endpoint(kb: KB) -> None:
    annotator = LexicalAnnotator(kb)
    assert annotator.tag == f"lexical@{kb.tag}"
    assert (annotator.name, annotator.source) == ("lexical", "lexical")
    assert annotator.model is annotator.effort is annotator.endpoint is None
