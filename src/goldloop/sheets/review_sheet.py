"""The gold review sheet: adjudication in a spreadsheet, without Label Studio.

``sheet_text`` writes one TSV row per candidate span of the first annotator's gold (``origin``
``gold``) and per span only the other annotator proposed (``other``), with the other side's id,
label and direction, whether the KB-folded ids agree (``agrees``) and, where they do, the
directions (``agrees_direction``; any direction agrees on a symmetric relation), a context window
with the span marked, and empty ``verdict``, ``fix_entity_id``, ``fix_direction`` and ``note``.
Documents the other annotator never saw read ``not-covered`` in the comparison columns.

``read_sheet`` reads the filled sheet back. Each row's verdict becomes what a Label Studio
annotation would hold (accept keeps the candidate's region, fix changes its relation or
direction, reject drops it; an ``added`` row is a new region, by offsets or by a quoted surface
and occurrence resolved as ``annotate`` resolves quotes), and
:func:`goldloop.formats.labelstudio.verify.judge` turns them into verdicts, hits and counts, as
for ``pull``: the verified gold and its sidecar cannot tell the two roads apart. Every problem
is listed with its line, and nothing is returned while one remains.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from goldloop.errors import GoldloopError
from goldloop.files.csvfile import format_bool, parse_bool, read_csv, table_text
from goldloop.formats.gold import Document, Hit, hits_by_span
from goldloop.formats.labelstudio.verdicts import Region
from goldloop.formats.labelstudio.verify import PullResult, add_document, judge
from goldloop.kb import DIRECTIONS, KB
from goldloop.text.resolve import ResolutionError, resolve_occurrence

COLUMNS = (
    "doc_id", "a", "b", "surface", "entity_id", "label", "direction", "origin",
    "other_entity_id", "other_label", "other_direction", "agrees", "agrees_direction", "context",
    "verdict", "fix_entity_id", "fix_direction", "note", "anchored", "occurrence",
)  # fmt: skip
REQUIRED = ("doc_id", "a", "b", "surface", "entity_id", "direction", "origin", "verdict")
COMPARISON = ("other_entity_id", "other_label", "other_direction", "agrees", "agrees_direction")
NOT_COVERED = "not-covered"
ORIGINS = ("gold", "other", "added")
VERDICTS = ("accept", "reject", "fix")
CONTEXT = 80  # characters of text on each side of the span
MARK = ("[[", "]]")


class SheetError(GoldloopError):
    """A review sheet cannot be read or does not fit its gold files; the message names lines."""


def sheet_text(gold: Sequence[Document], other: Sequence[Document] | None, kb: KB) -> str:
    """The review sheet of ``gold`` against ``other`` (None: no second annotator) as TSV text."""
    theirs = {d.doc_id: d for d in other or ()}
    rows: list[dict[str, str]] = []
    for document in gold:
        second = theirs.get(document.doc_id)
        if second is not None and second.text != document.text:
            raise SheetError(
                f"document {document.doc_id!r}: the two gold files hold different texts"
            )
        mine, others = (
            hits_by_span(document.ground_truth),
            hits_by_span(second.ground_truth if second else ()),
        )
        for span in sorted(mine.keys() | others.keys()):
            hit = mine.get(span)
            if hit is not None:
                row = _row(document, hit, "gold", kb)
                _compare(row, hit, others.get(span), covered=second is not None, kb=kb)
            else:
                row = _row(document, others[span], "other", kb)
                _compare(row, others[span], None, covered=True, kb=kb)
            rows.append(row)
    return table_text(COLUMNS, rows, delimiter="\t")


def _row(document: Document, hit: Hit, origin: str, kb: KB) -> dict[str, str]:
    relation = kb.get(hit.entity_id)
    return {
        "doc_id": document.doc_id, "a": str(hit.a), "b": str(hit.b),
        "surface": document.text[hit.a : hit.b], "entity_id": hit.entity_id,
        "label": relation.label if relation else hit.label or "", "direction": hit.direction or "",
        "origin": origin, "context": context(document.text, hit.a, hit.b),
        "anchored": "" if hit.surface_anchored is None else format_bool(hit.surface_anchored),
    }  # fmt: skip


def _compare(row: dict[str, str], hit: Hit, other: Hit | None, *, covered: bool, kb: KB) -> None:
    """The comparison columns of ``hit``'s row: ``other`` is the other side's hit on its span."""
    if not covered:
        row.update(dict.fromkeys(COMPARISON, NOT_COVERED))
        return
    row["agrees"] = format_bool(False)
    if other is None:
        return
    relation = kb.get(other.entity_id)
    row.update(
        other_entity_id=other.entity_id,
        other_label=relation.label if relation else other.label or "",
        other_direction=other.direction or "",
    )
    agrees = kb.fold_id(hit.entity_id) == kb.fold_id(other.entity_id)
    row["agrees"] = format_bool(agrees)
    if agrees:
        canonical = kb.get(kb.fold_id(hit.entity_id))
        same = kb.fold(hit.entity_id, hit.direction).direction == (
            kb.fold(other.entity_id, other.direction).direction
        )
        row["agrees_direction"] = format_bool(
            same or (canonical is not None and canonical.is_symmetric)
        )


def context(text: str, a: int, b: int) -> str:
    """The span marked in up to :data:`CONTEXT` characters each side, on one line."""
    left, right = text[max(0, a - CONTEXT) : a], text[b : b + CONTEXT]
    left = ("…" if a > CONTEXT else "") + left
    right += "…" if b + CONTEXT < len(text) else ""
    return re.sub(r"\s+", " ", f"{left}{MARK[0]}{text[a:b]}{MARK[1]}{right}")


def has_verdicts(path: Path) -> bool:
    """Whether ``path`` is a review sheet with a verdict filled in (a person's work)."""
    if not path.is_file():
        return False
    try:
        table = read_csv(path, error=SheetError, spreadsheet=True)
    except SheetError:
        return False
    return any(row.get("verdict", "").strip() for _, row in table.rows)


@dataclass
class _Document:
    """What a reviewer kept of one document: the candidates shown and the regions left."""

    candidates: list[Region] = field(default_factory=list)
    regions: list[Region] = field(default_factory=list)
    rows: set[tuple[int, int]] = field(default_factory=set)

    def keep(self, region: Region) -> None:
        """Leave ``region``; a span left twice (an added row repeating a kept candidate) would
        make two hits of one mention, and is refused."""
        if any((r.a, r.b) == (region.a, region.b) for r in self.regions):
            raise SheetError(
                f"the span [{region.a}, {region.b}) is kept by another row already (one hit "
                "per span: fix that row instead)"
            )
        self.regions.append(region)


def read_sheet(
    path: Path,
    gold: Sequence[Document],
    other: Sequence[Document] | None,
    kb: KB,
    verified_by: str,
) -> PullResult:
    """Verified documents and the sidecar's counts from a filled review sheet.

    ``gold`` and ``other`` are the files the sheet was exported from (``other`` may be None when
    no ``other`` row was kept); ``verified_by`` is the reviewer, every kept hit's annotator.
    """
    table = read_csv(path, required=REQUIRED, error=SheetError, spreadsheet=True)
    documents = {d.doc_id: d for d in gold}
    theirs = None if other is None else {d.doc_id: d for d in other}
    reviewed: dict[str, _Document] = {d.doc_id: _Document() for d in gold}
    problems: list[str] = []
    for line, row in table.rows:
        try:
            _read_row(row, documents, theirs, kb, reviewed)
        except SheetError as exc:
            problems.append(f"line {line}: {exc}")
    for document in gold:
        for span, hit in hits_by_span(document.ground_truth).items():
            if span not in reviewed[document.doc_id].rows:
                problems.append(
                    f"document {document.doc_id!r}: the gold hit {hit.surface!r} "
                    f"[{hit.a}, {hit.b}) has no row (every candidate needs a verdict)"
                )
    if problems:
        raise SheetError(f"{path}: {len(problems)} problem(s): " + "; ".join(problems))
    result = PullResult([])
    for document in gold:
        kept = reviewed[document.doc_id]
        comparison, hits = judge(
            document.text, sorted(kept.candidates, key=_span), sorted(kept.regions, key=_span),
            kb, verified_by,
        )  # fmt: skip
        data = {"role": document.role, "batch": document.batch, "p_incl": document.p_incl}
        add_document(result, data, document.doc_id, document.text, comparison, hits, "single")
    result.tasks = len(gold)
    if gold:
        result.verified_by.add(verified_by)
    return result


def _span(region: Region) -> tuple[int, int]:
    return region.a, region.b


def _read_row(
    row: dict[str, str],
    documents: dict[str, Document],
    theirs: dict[str, Document] | None,
    kb: KB,
    reviewed: dict[str, _Document],
) -> None:
    doc_id = row["doc_id"].strip()
    document = documents.get(doc_id)
    if document is None:
        raise SheetError(f"doc_id {doc_id!r} is not in the gold file")
    origin, verdict = row["origin"].strip(), row["verdict"].strip()
    if origin not in ORIGINS:
        raise SheetError(f"origin must be one of {', '.join(ORIGINS)}, got {origin!r}")
    kept = reviewed[doc_id]
    note = row.get("note", "").strip() or None
    if origin == "added":
        if verdict != "accept":
            raise SheetError(f"an added row's verdict must be accept, got {verdict!r}")
        kept.keep(_added(row, document, kb, kept, note))
        return
    a, b = _offsets(row, document)
    if (a, b) in kept.rows:
        raise SheetError(f"the span [{a}, {b}) of {doc_id!r} has a row already")
    kept.rows.add((a, b))  # a row with a problem is reported once, not again as missing
    if verdict not in VERDICTS:
        raise SheetError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
    candidate = _candidate(row, origin, verdict, document, theirs, kb, (a, b))
    kept.candidates.append(candidate)
    fix_id, fix_direction = (
        row.get("fix_entity_id", "").strip(),
        row.get("fix_direction", "").strip(),
    )
    if verdict != "fix":
        if fix_id or fix_direction:
            raise SheetError(f"fix_entity_id or fix_direction given with verdict {verdict}")
        if verdict == "accept":
            kept.keep(_with(candidate, candidate.label, candidate.direction, note))
        return
    if not fix_id and not fix_direction:
        raise SheetError("verdict fix needs fix_entity_id and/or fix_direction")
    label = candidate.label
    if fix_id:
        relation = kb.get(fix_id)
        if relation is None:
            raise SheetError(f"fix_entity_id {fix_id!r} is not in the KB")
        label = relation.label
    direction = fix_direction or candidate.direction
    _check_direction(kb, fix_id or row["entity_id"].strip(), direction, "fix_direction")
    if (label, direction) == (candidate.label, candidate.direction):
        raise SheetError("verdict fix changes neither the relation nor the direction")
    kept.keep(_with(candidate, label, direction, note))


def _offsets(row: dict[str, str], document: Document) -> tuple[int, int]:
    try:
        a, b = int(row["a"]), int(row["b"])
    except ValueError:
        raise SheetError(f"a and b must be whole numbers, got {row['a']!r}, {row['b']!r}") from None
    if not a < b:
        raise SheetError(f"the span [{a}, {b}) is empty or reversed: b must be greater than a")
    surface = row["surface"]
    if not 0 <= a < b <= len(document.text) or document.text[a:b] != surface:
        raise SheetError(
            f"the span [{a}, {b}) no longer matches document {document.doc_id!r} "
            f"(the sheet says {surface!r})"
        )
    return a, b


def _candidate(
    row: dict[str, str],
    origin: str,
    verdict: str,
    document: Document,
    theirs: dict[str, Document] | None,
    kb: KB,
    span: tuple[int, int],
) -> Region:
    """The candidate region a row was about, read from the gold file that proposed it."""
    entity_id = row["entity_id"].strip()
    if origin == "gold":
        hit = hits_by_span(document.ground_truth).get(span)
        if hit is None:
            raise SheetError(f"the gold file has no hit at [{span[0]}, {span[1]})")
        second = None if theirs is None else theirs.get(document.doc_id)
        proposed_too = (
            span in hits_by_span(second.ground_truth)
            if second is not None
            else row.get("other_entity_id", "").strip() not in ("", NOT_COVERED)
        )
        where = "A+B" if proposed_too else "A"
    elif theirs is None:
        if verdict != "reject":
            raise SheetError(
                f"an other row with verdict {verdict} needs the other annotator's gold file, "
                "where its hit is"
            )
        hit = _sheet_hit(row, span, document, kb)
        where = "B"
    else:
        second = theirs.get(document.doc_id)
        hit = hits_by_span(second.ground_truth).get(span) if second is not None else None
        if hit is None:
            raise SheetError(f"the other gold file has no hit at [{span[0]}, {span[1]})")
        where = "B"
    if hit.entity_id != entity_id:
        raise SheetError(f"entity_id {entity_id!r} differs from its gold file's {hit.entity_id!r}")
    relation = kb.get(hit.entity_id)
    if relation is None:
        raise SheetError(f"entity_id {hit.entity_id!r} is not in the KB")
    return Region(
        span[0], span[1], relation.label, hit.direction, None, where, hit.surface_anchored
    )


def _sheet_hit(row: dict[str, str], span: tuple[int, int], document: Document, kb: KB) -> Hit:
    """A rejected ``other`` row's candidate, from the sheet alone (its file was not given)."""
    entity_id, direction = row["entity_id"].strip(), row["direction"].strip() or None
    if entity_id not in kb:
        raise SheetError(f"entity_id {entity_id!r} is not in the KB")
    _check_direction(kb, entity_id, direction, "direction")
    anchored = row.get("anchored", "").strip()
    return Hit(
        a=span[0], b=span[1], surface=document.text[span[0] : span[1]], entity_id=entity_id,
        direction=direction, surface_anchored=parse_bool(anchored, "", "anchored", SheetError)
        if anchored else None,
    )  # fmt: skip


def _added(
    row: dict[str, str], document: Document, kb: KB, kept: _Document, note: str | None
) -> Region:
    """A mention the reviewer added: by offsets, or by a quoted surface and occurrence."""
    entity_id, direction = row["entity_id"].strip(), row["direction"].strip() or None
    relation = kb.get(entity_id)
    if relation is None:
        raise SheetError(f"entity_id {entity_id!r} is not in the KB")
    _check_direction(kb, entity_id, direction, "direction")
    if row["a"].strip() or row["b"].strip():
        a, b = _offsets(row, document)
    else:
        a, b = _quoted(row, document, kept)
    return Region(a, b, relation.label, direction, note)


def _quoted(row: dict[str, str], document: Document, kept: _Document) -> tuple[int, int]:
    surface, occurrence = row["surface"], row.get("occurrence", "").strip()
    if not surface:
        raise SheetError("an added row needs a and b, or a surface (and an occurrence)")
    try:
        nth = int(occurrence) if occurrence else None
    except ValueError:
        raise SheetError(f"occurrence must be a whole number, got {occurrence!r}") from None
    claimed = kept.rows | {(r.a, r.b) for r in kept.regions}
    try:
        resolved = resolve_occurrence(document.text, surface, nth, claimed)
    except ResolutionError as exc:
        raise SheetError(f"document {document.doc_id!r}: {exc}") from None
    if nth is not None and resolved.occurrence_fallback:
        raise SheetError(f"document {document.doc_id!r}: {surface!r} has no free occurrence {nth}")
    return resolved.a, resolved.b


def _check_direction(kb: KB, entity_id: str, direction: str | None, column: str) -> None:
    if direction is not None and (
        direction not in DIRECTIONS or not kb.direction_allowed(entity_id, direction)
    ):
        raise SheetError(
            f"{column} {direction!r} is not allowed on {entity_id} "
            f"(one of {', '.join(DIRECTIONS)}; symmetric only on a symmetric relation)"
        )


def _with(candidate: Region, label: str | None, direction: str | None, note: str | None) -> Region:
    """The region a reviewer leaves in place of ``candidate``."""
    return Region(candidate.a, candidate.b, label, direction, note)
