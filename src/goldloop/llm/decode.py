"""Decoding an annotator's answer into hits: read the answer, resolve candidates, check them.

Follows the design's LLM contract: offsets resolved from surface + occurrence, labels folded over
the whole KB, nested spans dropped, then ``non_verbal`` and ``surface_anchored`` from the parse.
The work is split at the cache line: :func:`read_answer` needs no spaCy (stop reason, parsing,
resolution, folding; the answer's outcome is
:class:`~goldloop.llm.tasks.preannotate.PreannotationTask`'s), :func:`finish_answer` runs the
checks on the parse. A truncated, unparsable
or failed answer is a document failure, never a document without mentions.

Rejection reasons per item: ``malformed_item`` (not an object, or no usable surface),
``surface_not_found``, ``duplicate_occurrence``, ``unknown_label``, ``bad_direction``,
``nested_in_longer_span``, ``non_verbal``. Per document: ``truncated``, ``unparsable``, ``failed``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from goldloop.formats.gold import Document, Hit
from goldloop.kb import DIRECTIONS, KB, Folded, Relation
from goldloop.llm.answer import FAILED, TRUNCATED, UNPARSABLE, Outcome
from goldloop.llm.base import LLMError, LLMResponse
from goldloop.llm.tasks.preannotate import PreannotationTask
from goldloop.llm.tasks.task import outcome_of
from goldloop.text.nlp import (
    is_verb_predicate_label,
    pipeline_of,
    span_has_verb,
    surface_anchored,
)
from goldloop.text.resolve import ResolutionError, find_occurrences, resolve_occurrence

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from goldloop.text.detector import DetectedMention
    from goldloop.text.lexical import LexicalAnnotator

DOCUMENT_FAILURES = (TRUNCATED, UNPARSABLE, FAILED)  # llm.answer's outcomes that fail a document


@dataclass
class Candidate:
    """An item that resolved to a span and a KB relation, awaiting the post-cache checks.

    Decoding's working record, not a mention yet: it keeps the answer's item (for a rejection's
    message) and the KB fold, and becomes a gold hit (:func:`to_hit`) once it passes.
    """

    item: dict[str, Any]
    a: int
    b: int
    relation: Relation
    folded: Folded
    occurrence_fallback: bool = False
    subject_text: str | None = None
    object_text: str | None = None
    confidence: float | None = None


@dataclass(frozen=True)
class Rejection:
    """An answer's item not taken, and why: its fields as the model wrote them (a non-object item
    as ``{"item": item}``), then the document and the reasons."""

    fields: dict[str, Any]
    doc_id: str
    reasons: list[str]

    @classmethod
    def of_item(cls, item: Any, doc_id: str, reasons: list[str]) -> Rejection:
        return cls(dict(item) if isinstance(item, dict) else {"item": item}, doc_id, reasons)

    def to_dict(self) -> dict[str, Any]:
        # Over the item's own keys: an item with a doc_id or reasons field shows ours there.
        return {**self.fields, "doc_id": self.doc_id, "reasons": self.reasons}


@dataclass(frozen=True)
class Failure:
    """Why a document gave no annotated copy: its outcome (truncated, unparsable, failed), what
    happened, and an unparsable answer's first 500 characters."""

    reason: Outcome
    detail: str | None
    answer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"reason": self.reason, "detail": self.detail}
        return out if self.answer is None else {**out, "answer": self.answer}


@dataclass
class DocumentResult:
    """What one document gave: its annotated copy (None when it failed) and its rejections."""

    doc_id: str
    document: Document | None
    items: int = 0
    rejections: list[Rejection] = field(default_factory=list)
    failure: Failure | None = None
    usage: dict[str, int] = field(default_factory=dict)
    cached: bool = False


@dataclass
class ReadAnswer:
    """The pre-cache half of decoding: a failure, or the items with their candidates."""

    result: DocumentResult
    items: list[Any] = field(default_factory=list)
    candidates: list[Candidate] = field(default_factory=list)
    rejections: list[tuple[Any, list[str]]] = field(default_factory=list)


def read_answer(
    document: Document, answer: LLMResponse | LLMError | None, kb: KB, max_tokens: int | None = None
) -> ReadAnswer:
    """Check the stop reason, parse the answer, resolve and fold its items (no spaCy needed)."""
    # Reading needs no prompt: the task's token limit does not matter here.
    outcome = outcome_of(PreannotationTask(kb), answer)
    if not isinstance(answer, LLMResponse):
        return ReadAnswer(_failed(document, FAILED, outcome.detail or ""))
    result = DocumentResult(document.doc_id, None, usage=dict(answer.usage), cached=answer.cached)
    if outcome.outcome == TRUNCATED:
        result.failure = Failure(TRUNCATED, f"the answer stopped at the token limit ({max_tokens})")
        return ReadAnswer(result)
    if outcome.outcome == UNPARSABLE or outcome.value is None:
        result.failure = Failure(UNPARSABLE, outcome.detail, answer.text[:500])
        return ReadAnswer(result)
    items = outcome.value
    result.items = len(items)
    return ReadAnswer(result, items, *read_candidates(document.text, items, kb))


def finish_answer(
    read: ReadAnswer,
    document: Document,
    doc: Doc | None,
    annotator_tag: str,
    verbal_only: bool = True,
) -> DocumentResult:
    """The post-cache half: nested spans, ``non_verbal`` and ``surface_anchored`` on the parse
    (``doc`` may be None only when there are no candidates)."""
    result = read.result
    if result.failure is not None:
        return result
    hits: list[Candidate] = []
    late: list[tuple[Any, list[str]]] = []
    if read.candidates:
        if doc is None:
            raise ValueError(f"{document.doc_id}: candidates to check but no parse")
        hits, late = check_candidates(read.candidates, doc, verbal_only)
    order = {id(item): k for k, item in enumerate(read.items)}
    in_order = sorted(read.rejections + late, key=lambda pair: order[id(pair[0])])
    result.rejections = [
        Rejection.of_item(item, document.doc_id, reasons) for item, reasons in in_order
    ]
    result.document = _with_hits(
        document, [to_hit(c, document.text, doc, annotator_tag, "llm") for c in hits if doc]
    )
    return result


def decode_answer(
    document: Document,
    answer: LLMResponse | LLMError | None,
    doc: Doc,
    kb: KB,
    annotator_tag: str,
    verbal_only: bool = True,
    max_tokens: int | None = None,
) -> DocumentResult:
    """Turn one LLM answer into hits and rejections (or a document failure), given its parse."""
    return finish_answer(
        read_answer(document, answer, kb, max_tokens), document, doc, annotator_tag, verbal_only
    )


def read_candidates(
    text: str, items: list[Any], kb: KB
) -> tuple[list[Candidate], list[tuple[Any, list[str]]]]:
    """Pre-cache decoding of the model's items, in order: fields, label, direction, offsets.

    Only an item that passes every check claims its span, so a rejected item never pushes a
    later one onto a fallback occurrence.
    """
    candidates: list[Candidate] = []
    rejections: list[tuple[Any, list[str]]] = []
    claimed: list[tuple[int, int]] = []
    for item in items:
        reasons: list[str] = []
        fields = item if isinstance(item, dict) else {}
        surface, occurrence = fields.get("surface"), _occurrence(fields.get("occurrence"))
        usable_surface = isinstance(surface, str) and surface.strip() != ""
        if not usable_surface:
            reasons.append("malformed_item")
        label, direction = fields.get("label"), fields.get("direction")
        folded = kb.decode_label(label, direction) if isinstance(label, str) else None
        if folded is None:
            reasons.append("unknown_label")
        if direction not in DIRECTIONS or (
            folded is not None and not kb.direction_allowed(folded.entity_id, str(folded.direction))
        ):
            reasons.append("bad_direction")
        resolved = None
        if isinstance(surface, str) and usable_surface:
            try:
                resolved = resolve_occurrence(text, surface, occurrence, claimed)
            except ResolutionError as exc:
                reasons.append(exc.reason)
        if reasons or resolved is None or folded is None:
            rejections.append((item, reasons))
            continue
        claimed.append((resolved.a, resolved.b))
        relation = kb.lookup(str(label))
        assert relation is not None  # decode_label found it
        candidates.append(
            _candidate(
                fields, resolved.a, resolved.b, resolved.occurrence_fallback, relation, folded
            )
        )
    return candidates, rejections


def _candidate(
    item: dict[str, Any], a: int, b: int, fallback: bool, relation: Relation, folded: Folded
) -> Candidate:
    subject, obj = _text_or_none(item.get("subject_text")), _text_or_none(item.get("object_text"))
    if folded.label_canonicalized:
        # The arguments were given in the converse's order; the hit reads in the canonical one.
        subject, obj = obj, subject
    return Candidate(
        item, a, b, relation, folded, fallback, subject, obj, _confidence(item.get("confidence"))
    )


def check_candidates(
    candidates: list[Candidate], doc: Doc, verbal_only: bool
) -> tuple[list[Candidate], list[tuple[Any, list[str]]]]:
    """Drop spans nested in a longer one, then (after the cache) verb-predicate labels on no verb."""
    kept: list[Candidate] = []
    rejections: list[tuple[Any, list[str]]] = []
    nested = _nested_spans({(c.a, c.b) for c in candidates})
    model = pipeline_of(doc)
    for candidate in candidates:
        if (candidate.a, candidate.b) in nested:
            rejections.append((candidate.item, ["nested_in_longer_span"]))
        elif (
            verbal_only
            and is_verb_predicate_label(candidate.relation.label, model)
            and not span_has_verb(doc, candidate.a, candidate.b)
        ):
            rejections.append((candidate.item, ["non_verbal"]))
        else:
            kept.append(candidate)
    return kept, rejections


def _nested_spans(spans: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The spans lying inside a longer one of ``spans``, in one sweep instead of all pairs.

    In (start, longest first) order every span seen before ``(a, b)`` starts at or before ``a``
    and is a different span, so ``(a, b)`` is nested exactly when one of them reaches ``b``.
    """
    nested: set[tuple[int, int]] = set()
    reach = -1
    for a, b in sorted(spans, key=lambda span: (span[0], -span[1])):
        if reach >= b:
            nested.add((a, b))
        reach = max(reach, b)
    return nested


def to_hit(candidate: Candidate, text: str, doc: Doc, annotator_tag: str, source: str) -> Hit:
    a, b = candidate.a, candidate.b
    return Hit(
        a=a,
        b=b,
        surface=text[a:b],
        entity_id=candidate.folded.entity_id,
        label=candidate.relation.label,
        direction=candidate.folded.direction,
        annotator=annotator_tag,
        source=source,
        surface_anchored=surface_anchored(doc, a, b, candidate.relation),
        label_canonicalized=candidate.folded.label_canonicalized,
        direction_coerced=candidate.folded.direction_coerced,
        occurrence_fallback=candidate.occurrence_fallback,
        confidence=candidate.confidence,
        subject_text=candidate.subject_text,
        object_text=candidate.object_text,
        subject_span=nearest_occurrence(text, candidate.subject_text, a, b),
        object_span=nearest_occurrence(text, candidate.object_text, a, b),
    )


def nearest_occurrence(text: str, needle: str | None, a: int, b: int) -> tuple[int, int] | None:
    """The word-bounded occurrence of ``needle`` closest to ``[a, b)`` (the earlier on a tie)."""
    if not needle:
        return None
    spans = list(find_occurrences(text, needle))
    return min(spans, key=lambda s: max(0, a - s[1], s[0] - b), default=None)


def decode_lexical(
    document: Document, doc: Doc, annotator: LexicalAnnotator, kb: KB, verbal_only: bool
) -> DocumentResult:
    mentions = annotator.mentions(doc)
    candidates = [_lexical_candidate(m, kb) for m in mentions]
    hits, rejections = check_candidates(candidates, doc, verbal_only)
    return DocumentResult(
        document.doc_id,
        _with_hits(
            document, [to_hit(c, document.text, doc, annotator.tag, "lexical") for c in hits]
        ),
        items=len(mentions),
        rejections=[
            Rejection.of_item(item, document.doc_id, reasons) for item, reasons in rejections
        ],
    )


def _lexical_candidate(mention: DetectedMention, kb: KB) -> Candidate:
    relation = kb.lookup(mention.label) or kb.relations[mention.entity_id]
    item = {
        "surface": mention.surface, "a": mention.a, "b": mention.b, "label": mention.label,
        "direction": mention.direction, "verbal": mention.verbal,
    }  # fmt: skip
    folded = Folded(
        mention.entity_id, mention.direction, label_canonicalized=not relation.is_canonical
    )
    return Candidate(item, mention.a, mention.b, relation, folded)


def _with_hits(document: Document, hits: list[Hit]) -> Document:
    return document.model_copy(update={"ground_truth": sorted(hits, key=lambda h: (h.a, h.b))})


def _failed(document: Document, reason: Outcome, detail: str) -> DocumentResult:
    return DocumentResult(document.doc_id, None, failure=Failure(reason, detail))


def _occurrence(value: Any) -> int | None:
    """The index the model gave; anything unusable is ``None`` (resolution falls back, flagged)."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _confidence(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None
