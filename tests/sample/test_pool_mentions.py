"""A pool document's mentions: the detector's mentions of each text, in order, through the one
bulk parse (the Dask workers call the same function: tests/sample/test_distributed.py)."""

from __future__ import annotations

from typing import Any

from goldloop.kb import KB
from goldloop.sample.pool_mentions import PoolMention, detect_here
from goldloop.text.detector import detect_mentions

TEXTS = [
    "𝛼-Synuclein activates TNF, and IL-6 is inhibited by aspirin.",
    "The weather was fine.",
    "IL-6 activates STAT3 in these cells.",
]


def test_each_text_gets_the_detectors_mentions_in_order(kb: KB, nlp: Any) -> None:
    found = list(detect_here(iter(TEXTS), kb, batch_size=2))
    assert len(found) == len(TEXTS) and found[1] == ()
    for text, mentions in zip(TEXTS, found, strict=True):
        expected = detect_mentions(nlp(text), kb)
        assert [(text[m.a : m.b], m.entity_id, m.direction) for m in mentions] == [
            (m.surface, m.entity_id, m.direction) for m in expected
        ]
    first = {TEXTS[0][m.a : m.b]: m for m in found[0]}
    # Code points: the astral 𝛼 counts once (12 = 1 + len("-Synuclein ")), not twice as in UTF-16.
    assert first["activates"] == PoolMention(
        12, 21, kb.lookup("activates").entity_id, "activates", "forward", True
    )
