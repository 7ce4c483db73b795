"""Which review prediction an annotation is judged against; a blind document's pair and how pull
settles it (no Label Studio needed)."""

from __future__ import annotations

from goldloop.formats.gold import Hit
from goldloop.formats.labelstudio.tasks import blind_pair, latest_prediction, review_seen
from goldloop.formats.labelstudio.verify import read_annotation, verify
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


def _blind_doc(kb: KB) -> tuple[dict, dict, list, list]:
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


def _annotation(aid: int, email: str, result: list, created: str = T1) -> dict:
    return {"id": aid, "created_at": created, "result": result, "completed_by": {"email": email}}


def test_a_blind_document_pairs_its_two_tasks_by_two_people(kb: KB) -> None:
    pre, blind, one, two = _blind_doc(kb)
    assert blind_pair(pre, blind) is None  # nothing annotated yet
    pre["annotations"] = [_annotation(1, "a@x", one)]
    assert blind_pair(pre, blind) is None and blind_pair(pre, None) is None
    blind["annotations"] = [_annotation(2, "a@x", two)]
    assert blind_pair(pre, blind) is None  # one person in both conditions: no comparison
    blind["annotations"] = [_annotation(3, "b@x", two)]
    pair = blind_pair(pre, blind)
    assert pair is not None and (pair.pre["id"], pair.blind["id"]) == (1, 3)


def test_pull_settles_a_blind_document_as_a_double_task(kb: KB) -> None:
    pre, blind, one, two = _blind_doc(kb)
    # Only the annotation without candidates is done: the document's, every region added.
    blind["annotations"] = [_annotation(3, "b@x", two)]
    alone = verify([pre], kb, blind=[blind])
    (doc,) = alone.documents
    assert (doc.doc_id, doc.role, doc.p_incl) == ("d1", "blind", 0.5)
    assert [(h.surface, h.verdict, h.source, h.decided) for h in doc.ground_truth] == [
        ("inhibits", "added", "human", "single"), ("regulates", "added", "human", "single"),
    ]  # fmt: skip
    assert alone.tally.candidates == 0 and alone.tasks == 1
    # Both done and disputed: awaiting curation, the annotation with candidates stands meanwhile.
    pre["annotations"] = [_annotation(1, "a@x", one)]
    disputed = verify([pre], kb, blind=[blind])
    assert disputed.awaiting_curation == ["d1"] and disputed.disputed_tasks == 1
    assert [(h.surface, h.verdict) for h in disputed.documents[0].ground_truth] == [
        ("inhibits", "accept")
    ]
    # Curated: the curator's version, each hit saying who had it.
    curation = {"id": 90, "data": pre["data"], "predictions": [],
                "annotations": [_annotation(9, "c@x", two, T2)]}  # fmt: skip
    curated = verify([pre], kb, blind=[blind], curated=[curation])
    hits = curated.documents[0].ground_truth
    assert [(h.surface, h.decided, sorted(h.kept_by)) for h in hits] == [
        ("inhibits", "curated", ["a@x", "b@x"]), ("regulates", "curated", ["b@x"]),
    ]  # fmt: skip
    assert curated.verified_by == {"a@x", "b@x", "c@x"}
    # Agreed: both people's versions are the same.
    blind["annotations"] = [_annotation(3, "b@x", one)]
    agreed = verify([pre], kb, blind=[blind])
    assert agreed.decided["agreed"] == 1 and agreed.verified_by == {"a@x", "b@x"}
    # A blind task whose document has no task with candidates is verified alone.
    lone = verify([], kb, blind=[blind])
    assert [d.doc_id for d in lone.documents] == ["d1"] and lone.decided["single"] == 1
