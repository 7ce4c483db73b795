"""One short text and its hits, shared by the tests of the Label Studio export (and curation's)."""

from __future__ import annotations

from goldloop.formats.gold import Hit

TEXT = "SOCS3 inhibits STAT3 and regulates growth."
INHIBITS, REGULATES, ACTIVATES = "PEL.000018", "RO.0002211", "PEL.000000"


def hit(surface: str, entity_id: str, direction: str = "forward") -> Hit:
    a = TEXT.index(surface)
    return Hit(a=a, b=a + len(surface), surface=surface, entity_id=entity_id, direction=direction)
