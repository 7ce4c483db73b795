"""Verdicts: a submitted annotation compared with the review prediction's regions, by span.

Region ids are not relied on. Exact spans first: same relation and direction is ``accept``, a
change is ``fix``. Then a changed span overlapping exactly one unmatched candidate is a ``fix``
with ``fixed_boundary``; overlapping several makes the region ``added`` and those candidates
``reject``; overlapping none, ``added``. Candidates left unmatched are ``reject``. A region with no
relation picked (or a label the KB does not know) stays out of gold: it is ``incomplete``.

A region that is no candidate but that Label Studio still marks as a prediction's
(``origin: "prediction"``: the ML backend proposed it, for another occurrence of a drawn
surface, and nobody edited it) is ``proposed``, not ``added``: the annotator submitted it but did
not make it. Once edited (``prediction-changed``) it is the annotator's, ``added``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from goldloop.formats.labelstudio import controls as lc
from goldloop.formats.labelstudio.offsets import from_label_studio
from goldloop.kb import KB

PREDICTION, PREDICTION_CHANGED = "prediction", "prediction-changed"


@dataclass(frozen=True)
class Region:
    """One span region read from a prediction or an annotation (code-point offsets).

    Not the core :class:`goldloop.formats.mention.Mention`: a region has the label picked in the
    editor, which may be none yet or one the KB does not know (``incomplete``), not a KB id; it
    is one region of one task's result (no ``doc_id``); and it keeps the editor's note, the
    candidate's origin and anchoring. A kept region becomes a gold hit through
    :func:`goldloop.formats.labelstudio.verify.judge`.
    """

    a: int
    b: int
    label: str | None
    direction: str | None
    note: str | None = None
    origin: str | None = None
    anchored: bool | None = None
    # Label Studio's origin of the region (manual, prediction, prediction-changed), and what
    # proposed it (the backend's ``meta.source``).
    studio_origin: str | None = None
    proposed_by: str | None = None

    @property
    def changed_proposal(self) -> bool:
        """A region a prediction made that the annotator then edited."""
        return self.studio_origin == PREDICTION_CHANGED


@dataclass(frozen=True)
class Decision:
    """What became of one region or candidate."""

    verdict: str  # accept, fix, added, proposed, reject, incomplete
    region: Region | None
    candidate: Region | None = None
    fixed_boundary: bool = False
    reason: str | None = None


@dataclass
class Comparison:
    decisions: list[Decision] = field(default_factory=list)

    def of(self, verdict: str) -> list[Decision]:
        return [d for d in self.decisions if d.verdict == verdict]


def read_regions(
    text: str, result: Sequence[dict[str, Any]]
) -> tuple[list[Region], list[dict[str, Any]]]:
    """Span regions of a result, grouped by region id; also the items that form no span region."""
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    for item in result:
        groups.setdefault(str(item.get("id")), {})[str(item.get("from_name"))] = item
    regions: list[Region] = []
    stray: list[dict[str, Any]] = []
    for items in groups.values():
        span = items.get(lc.SPAN)
        if span is None:
            stray.extend(items.values())
            continue
        value = span.get("value", {})
        a, b = from_label_studio(text, int(value["start"]), int(value["end"]))
        relation = items.get(lc.RELATION, {}).get("value", {})
        direction = items.get(lc.DIRECTION, {}).get("value", {}).get("choices") or [None]
        note = items.get(lc.NOTE, {}).get("value", {}).get("text") or []
        meta = span.get("meta") or {}
        regions.append(
            Region(
                a, b, lc.read_relation(relation), direction[0],
                " ".join(str(n) for n in note) or None, meta.get("origin"), meta.get("anchored"),
                span.get("origin"), meta.get("source"),
            )
        )  # fmt: skip
    regions.sort(key=lambda r: (r.a, r.b))
    return regions, stray


def compare(candidates: Sequence[Region], regions: Sequence[Region], kb: KB) -> Comparison:
    """Apply the verdict table to one annotation."""
    out = Comparison()
    by_span = {(c.a, c.b): c for c in candidates}
    matched: set[tuple[int, int]] = set()
    later: list[Region] = []
    for region in regions:
        candidate = by_span.get((region.a, region.b))
        if candidate is None or (region.a, region.b) in matched:
            later.append(region)
            continue
        matched.add((region.a, region.b))
        out.decisions.append(_judge(region, candidate, kb, fixed_boundary=False))
    for region in later:
        overlapping = [
            c for c in candidates
            if (c.a, c.b) not in matched and c.a < region.b and region.a < c.b
        ]  # fmt: skip
        if len(overlapping) == 1:
            candidate = overlapping[0]
            matched.add((candidate.a, candidate.b))
            out.decisions.append(_judge(region, candidate, kb, fixed_boundary=True))
            continue
        out.decisions.append(_added(region, kb))
        for candidate in overlapping:
            matched.add((candidate.a, candidate.b))
            out.decisions.append(
                Decision("reject", None, candidate, reason="replaced by a wider or split span")
            )
    for candidate in candidates:
        if (candidate.a, candidate.b) not in matched:
            out.decisions.append(Decision("reject", None, candidate, reason="deleted"))
    return out


def _judge(region: Region, candidate: Region, kb: KB, *, fixed_boundary: bool) -> Decision:
    reason = _incomplete(region, kb)
    if reason:
        return Decision("incomplete", region, candidate, fixed_boundary, reason)
    same = (region.label, region.direction) == (candidate.label, candidate.direction)
    verdict = "accept" if same and not fixed_boundary else "fix"
    return Decision(verdict, region, candidate, fixed_boundary)


def _added(region: Region, kb: KB) -> Decision:
    reason = _incomplete(region, kb)
    if reason:
        return Decision("incomplete", region, None, reason=reason)
    return Decision("proposed" if region.studio_origin == PREDICTION else "added", region)


def _incomplete(region: Region, kb: KB) -> str | None:
    if not region.label:
        return "no relation picked"
    if kb.lookup(region.label) is None:
        return f"relation {region.label!r} is not in the KB"
    return None
