"""The verdict table: an annotation's regions compared with the review's candidates, by span
(no Label Studio needed)."""

from __future__ import annotations

from goldloop.formats.gold import Hit
from goldloop.formats.labelstudio import controls as lc
from goldloop.formats.labelstudio.verdicts import Region, compare, read_regions
from goldloop.kb import KB
from goldloop.studio.review import build_review_prediction
from tests.formats.labelstudio.conftest import INHIBITS, REGULATES

# An astral character first: offsets are code points.
TEXT = "𝛼-Synuclein inhibits STAT3 and regulates growth of cells."


def span(surface: str) -> tuple[int, int]:
    a = TEXT.index(surface)
    return a, a + len(surface)


def region(surface: str, label: str | None = "inhibits", direction: str = "forward") -> Region:
    return Region(*span(surface), label, direction)


def verdicts(candidates: list[Region], regions: list[Region], kb: KB) -> list[tuple]:
    decisions = compare(candidates, regions, kb).decisions
    return [
        (d.verdict, TEXT[d.region.a : d.region.b] if d.region else None,
         TEXT[d.candidate.a : d.candidate.b] if d.candidate else None, d.fixed_boundary, d.reason)
        for d in decisions
    ]  # fmt: skip


def test_the_same_span_is_accepted_or_fixed_by_its_relation_and_direction(kb: KB) -> None:
    candidates = [region("inhibits"), region("regulates", "regulates")]
    kept = [region("inhibits"), region("regulates", "regulates", "inverse")]
    assert verdicts(candidates, kept, kb) == [
        ("accept", "inhibits", "inhibits", False, None),
        ("fix", "regulates", "regulates", False, None),
    ]


def test_a_moved_boundary_over_one_candidate_is_a_fix_over_several_an_addition(kb: KB) -> None:
    candidates = [region("inhibits"), region("STAT3", "regulates"), region("growth", "regulates")]
    regions = [region("inhibits STAT3"), region("growth of cells", "regulates")]
    assert verdicts(candidates, regions, kb) == [
        ("added", "inhibits STAT3", None, False, None),
        ("reject", None, "inhibits", False, "replaced by a wider or split span"),
        ("reject", None, "STAT3", False, "replaced by a wider or split span"),
        ("fix", "growth of cells", "growth", True, None),
    ]


def test_a_deleted_candidate_is_rejected_and_a_new_span_added(kb: KB) -> None:
    assert verdicts([region("inhibits")], [region("regulates", "regulates")], kb) == [
        ("added", "regulates", None, False, None),
        ("reject", None, "inhibits", False, "deleted"),
    ]


def test_a_region_without_a_relation_or_with_one_the_kb_lacks_is_incomplete(kb: KB) -> None:
    unknown = region("regulates", "befriends")
    assert verdicts([region("inhibits")], [region("inhibits", None), unknown], kb) == [
        ("incomplete", "inhibits", "inhibits", False, "no relation picked"),
        ("incomplete", "regulates", None, False, "relation 'befriends' is not in the KB"),
    ]


def test_read_regions_gives_back_the_review_spans_in_code_points(kb: KB) -> None:
    hits = [
        Hit(a=a, b=b, surface=TEXT[a:b], entity_id=entity_id, direction="forward")
        for (a, b), entity_id in ((span("regulates"), REGULATES), (span("inhibits"), INHIBITS))
    ]
    result = build_review_prediction(TEXT, hits, None, "m", None, kb)["result"]
    stray = {"id": "lonely", "from_name": lc.NOTE, "value": {"text": ["a note"]}}
    regions, strays = read_regions(TEXT, [*result, stray])
    assert [(TEXT[r.a : r.b], r.label, r.direction) for r in regions] == [
        ("inhibits", "inhibits", "forward"), ("regulates", "regulates", "forward")
    ]  # fmt: skip
    assert strays == [stray]


def test_a_proposal_submitted_untouched_is_proposed_and_an_edited_one_the_annotators(
    kb: KB,
) -> None:
    """A region no candidate holds but Label Studio marks as a prediction's (the backend proposed
    it for another occurrence); edited, the editor marks it ``prediction-changed``."""
    proposed = Region(*span("regulates"), "regulates", "forward", None, None, None, "prediction")
    edited = Region(*span("STAT3"), "regulates", "na", None, None, None, "prediction-changed")
    drawn = Region(*span("growth"), "regulates", "forward", None, None, None, "manual")
    assert verdicts([region("inhibits")], [region("inhibits"), proposed, edited, drawn], kb) == [
        ("accept", "inhibits", "inhibits", False, None),
        ("proposed", "regulates", None, False, None),
        ("added", "STAT3", None, False, None),
        ("added", "growth", None, False, None),
    ]
    # Without a relation a proposal is incomplete, like any region.
    assert verdicts([], [Region(*span("STAT3"), None, None, studio_origin="prediction")], kb) == [
        ("incomplete", "STAT3", None, False, "no relation picked")
    ]
