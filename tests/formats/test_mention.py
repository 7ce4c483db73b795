"""The core mention type: its identity in files."""

from __future__ import annotations

from goldloop.formats.gold import Hit
from goldloop.formats.mention import Mention, mention_key
from goldloop.precision.mentions import JudgedMention


def test_a_mention_is_known_by_document_span_and_kb_id() -> None:
    text = "𝛼-Synuclein activates TNF."
    a = text.index("activates")
    mention = Mention("pmid:1", a, a + len("activates"), "PEL.000000", "activates", "activates")
    assert mention.key == mention_key("pmid:1", 12, 21, "PEL.000000") == "pmid:1|12-21|PEL.000000"
    # The label and direction do not change which mention it is.
    assert Mention("pmid:1", 12, 21, "PEL.000000", "activates", None, "inverse").key == mention.key


def test_a_judged_mention_is_a_mention_with_a_verdict() -> None:
    judged = JudgedMention("d", 0, 4, "X", "x y z", "x").judged("supported", "stated")
    assert isinstance(judged, Mention) and judged.key == "d|0-4|X"
    assert judged.to_json() == {
        "key": "d|0-4|X", "doc_id": "d", "a": 0, "b": 4, "entity_id": "X", "surface": "x y z",
        "label": "x", "verdict": "supported", "reason": "stated",
    }  # fmt: skip


def test_a_gold_hit_and_a_mention_convert_both_ways() -> None:
    hit = Hit(a=12, b=21, surface="activates", entity_id="PEL.000000", label="activates",
              direction="forward", annotator="ann@x", source="human", verdict="fix")  # fmt: skip
    mention = hit.mention("pmid:1")
    assert mention == Mention("pmid:1", 12, 21, "PEL.000000", "activates", "activates", "forward")
    back = Hit.from_mention(mention, annotator="ann@x", source="human", verdict="fix")
    assert back.to_json() == hit.to_json()
    # The hit's own fields are not the mention's: a bare conversion carries none of them.
    assert Hit.from_mention(mention).to_json() == {
        "a": 12, "b": 21, "surface": "activates", "entity_id": "PEL.000000",
        "label": "activates", "direction": "forward",
    }  # fmt: skip
