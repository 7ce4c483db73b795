"""One short text and its hits, shared by the tests of the Label Studio export (and curation's);
a blind document's two tasks and annotations on them."""

from __future__ import annotations

from goldloop.formats.gold import Hit
from goldloop.kb import KB
from goldloop.studio.review import build_review_prediction

TEXT = "SOCS3 inhibits STAT3 and regulates growth."
INHIBITS, REGULATES, ACTIVATES = "PEL.000018", "RO.0002211", "PEL.000000"


def hit(surface: str, entity_id: str, direction: str = "forward") -> Hit:
    a = TEXT.index(surface)
    return Hit(a=a, b=a + len(surface), surface=surface, entity_id=entity_id, direction=direction)


def blind_doc(kb: KB) -> tuple[dict, dict, list, list]:
    """A blind document's two tasks (data as push gives both) and two versions' results: the
    candidate alone, and the candidate with the mention the pre-annotator missed."""
    review = build_review_prediction(TEXT, [hit("inhibits", INHIBITS)], None, "a", None, kb)
    both = build_review_prediction(
        TEXT, [hit("inhibits", INHIBITS), hit("regulates", REGULATES)], None, "x", None, kb
    )
    data = {"text": TEXT, "doc_id": "d1", "role": "blind", "p_incl": 0.5, "stratum": "s"}
    pre = {"id": 7, "data": data, "predictions": [{**review, "id": 1, "created_at": T0}],
           "annotations": []}  # fmt: skip
    blind = {"id": 70, "data": data, "predictions": [], "annotations": []}
    return pre, blind, review["result"], both["result"]


T0, T1, T2 = "2026-11-30T10:00:00Z", "2026-11-30T11:00:00Z", "2026-11-30T12:00:00Z"


def annotation_by(aid: int, email: str, result: list, created: str = T1) -> dict:
    return {"id": aid, "created_at": created, "result": result, "completed_by": {"email": email}}
