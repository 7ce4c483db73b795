"""Verified gold from exported tasks: which review an annotation is judged against (no Label
Studio needed; the whole pull: tests/studio/test_loop.py)."""

from __future__ import annotations

from goldloop.formats.labelstudio.verify import read_annotation
from goldloop.kb import KB
from goldloop.studio.review import build_review_prediction
from tests.formats.labelstudio.conftest import INHIBITS, REGULATES, TEXT, hit


def test_regions_added_after_the_annotation_are_not_counted_as_rejected(kb: KB) -> None:
    only_a = build_review_prediction(TEXT, [hit("inhibits", INHIBITS)], None, "a", None, kb)
    with_b = build_review_prediction(
        TEXT, [hit("inhibits", INHIBITS)], [hit("regulates", REGULATES)], "a", "b", kb
    )
    task = {"id": 7, "data": {"text": TEXT}, "predictions": [
        {**only_a, "id": 1, "created_at": "2026-11-30T10:00:00Z"},
        {**with_b, "id": 2, "created_at": "2026-11-30T12:00:00Z"},
    ]}  # fmt: skip
    accepted = {"id": 5, "created_at": "2026-11-30T11:00:00Z", "result": only_a["result"],
                "completed_by": {"email": "a@x"}}  # fmt: skip
    comparison, hits = read_annotation(task, accepted, kb)
    assert [h.surface for h in hits] == ["inhibits"]
    assert comparison.of("reject") == [] and len(comparison.of("accept")) == 1
    # made after B's regions were shown, leaving out "regulates" rejects it
    later = {**accepted, "created_at": "2026-11-30T13:00:00Z"}
    assert len(read_annotation(task, later, kb)[0].of("reject")) == 1
