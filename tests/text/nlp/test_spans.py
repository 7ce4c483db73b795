"""Span checks on real sentences with real spaCy: does a span hold a verb, does it use its
relation's own wording."""

from __future__ import annotations

import pytest
from spacy.language import Language

from goldloop.kb import KB
from goldloop.text.nlp import span_has_verb, surface_anchored


@pytest.mark.parametrize(
    ("text", "surface", "has_verb"),
    [
        ("The inhibition of JAK2 was complete.", "inhibition", False),
        ("A strong association with disease was seen.", "association", False),
        ("Aspirin inhibits COX-1.", "inhibits", True),
        ("COX-1 is inhibited by aspirin.", "inhibited by", True),
        ("TNF-induced apoptosis was seen.", "induced", True),
        ("Red cells were counted.", "Red", False),  # an "-ed" adjective, no known verb "re"
        ("COX-1 is inhibited by aspirin.", "aspirin", False),
        ("COX-1 is inhibited by aspirin.", "is", False),
    ],
)
def test_span_has_verb(nlp: Language, text: str, surface: str, has_verb: bool) -> None:
    a = text.index(surface)
    assert span_has_verb(nlp(text), a, a + len(surface)) is has_verb


def test_span_has_verb_rejects_spans_outside_the_text(nlp: Language) -> None:
    doc = nlp("Aspirin inhibits COX-1.")
    assert not span_has_verb(doc, 8, 8)
    assert not span_has_verb(doc, 20, 40)


@pytest.mark.parametrize(
    ("text", "surface", "entity_id", "anchored"),
    [
        ("Serum IL-6 increased after surgery.", "increased", "PEL.000016", True),
        ("Smoking leads to cancer.", "leads to", "PEL.000004", False),
        ("Smoking caused cancer.", "caused", "PEL.000004", True),
        ("IL-6 is regulated by TNF.", "regulated by", "RO.0002211", True),
        ("IL-6 is regulated by TNF.", "regulated", "RO.0002211", True),
        ("IL-6 is regulated by TNF.", "regulated", "RO.0002212", False),
        ("IL-6 is negatively regulated by TNF.", "negatively regulated by", "RO.0002212", True),
        ("The gene is expressed in liver.", "expressed in", "RO.0002292", True),
        ("The complex has a part in repair.", "has a part", "BFO.0000051", True),
        ("The kinase blocks STAT3.", "blocks", "PEL.000018", False),
    ],
)
def test_surface_anchored(
    nlp: Language, kb: KB, text: str, surface: str, entity_id: str, anchored: bool
) -> None:
    relation = kb.get(entity_id)
    assert relation is not None
    a = text.index(surface)
    assert surface_anchored(nlp(text), a, a + len(surface), relation) is anchored
