"""Which review prediction an annotation is judged against (no Label Studio needed)."""

from __future__ import annotations

from goldloop.formats.gold import Hit
from goldloop.formats.labelstudio.tasks import latest_prediction, review_seen
from goldloop.formats.labelstudio.verify import read_annotation
from goldloop.kb import KB
from goldloop.studio.review import build_review_prediction

TEXT = "SOCS3 inhibits STAT3 and regulates growth."
INHIBITS, REGULATES = "PEL.000018", "RO.0002211"


def hit(surface: str, entity_id: str) -> Hit:
    a = TEXT.index(surface)
    return Hit(a=a, b=a + len(surface), surface=surface, entity_id=entity_id, direction="forward")


def prediction(pid: int, version: str, created: str) -> dict:
    return {"id": pid, "model_version": version, "created_at": created, "result": []}


A = prediction(1, "review:a", "2026-11-30T10:00:00.5Z")
AB = prediction(2, "review:a+b", "2026-11-30T12:00:00Z")
OTHER = prediction(3, "a", "2026-11-30T09:00:00Z")
TASK = {"id": 7, "data": {"text": TEXT}, "predictions": [AB, OTHER, A]}


def test_an_annotation_is_judged_against_the_review_it_was_made_over() -> None:
    assert latest_prediction(TASK, "review:") is AB
    # made between the two: the annotator saw A's review, not A+B's added later
    assert review_seen(TASK, {"created_at": "2026-11-30T11:00:00.000001Z"}) is A
    assert review_seen(TASK, {"created_at": "2026-11-30T12:00:00Z"}) is AB
    # before any review: none was shown
    assert review_seen(TASK, {"created_at": "2026-11-30T09:30:00Z"}) is None
    # Label Studio's parent prediction wins; no or an unreadable time: the latest
    assert review_seen(TASK, {"created_at": "2026-11-30T13:00:00Z", "parent_prediction": 1}) is A
    assert review_seen(TASK, {}) is AB
    assert review_seen(TASK, {"created_at": "yesterday"}) is AB
    # the whole second does not sort after its fractions (the export drops ".000000")
    seconds = {"id": 8, "predictions": [prediction(1, "review:a", "2026-11-30T10:00:00Z"),
                                        prediction(2, "review:a+b", "2026-11-30T10:00:00.5Z")]}  # fmt: skip
    assert review_seen(seconds, {"created_at": "2026-11-30T10:00:00.2Z"})["id"] == 1


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
