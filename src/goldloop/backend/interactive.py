"""Interactive suggestions: the relation and direction for a region the annotator drew.

With Auto-Annotation on, Label Studio 1.23.2 sends ``/predict`` a ``context`` holding **every**
region of the task with goldloop's label (a Text object has no suggestion mode of its own, so the
editor sends its connected regions): the pre-annotated ones first, each with its relation and
direction results, and the region just drawn last, with ``origin: "manual"`` and no relation. It
sends the same on a deletion and during the teardown after Submit, when no region is new. The
editor replaces the region whose id an answer carries, so an answer names the new region only, and
a context without one gets an empty answer: a suggestion must never overwrite a region the
annotator already has. Every item carries ``globalOffsets`` beside ``start``/``end``: the editor
copies an accepted suggestion onto the drawn region without computing its offsets, and a region
left without them breaks the next one drawn on the page (see the browser test's docstring).

The KB decides first: the relations :meth:`goldloop.kb.KB.lookup` finds for the surface and the
lexical detector (:func:`goldloop.text.detector.detect_mentions`) finds over the span. One relation and
direction is an exact KB match; none or several go to the configured LLM with a short prompt
about the sentence alone (:class:`goldloop.llm.tasks.suggest.SuggestTask`, run by
:func:`goldloop.llm.tasks.task.run_task`, so the answer is cached like every other). Without an
LLM the KB alone can name only what the lexical pre-annotation already marks (the detector finds
every KB label it can read), so a key is what makes suggestions useful. The other occurrences of
the same surface that no region covers yet get their own suggestion, a *proposal*: its items say
``origin: "prediction"``, so the editor marks the region as a prediction's (a sparkle in the
region list) and, once the annotator edits it, ``prediction-changed``; ``pull`` records one
submitted untouched as ``proposed`` (:mod:`goldloop.formats.labelstudio.verdicts`), not as the
annotator's. ``GOLDLOOP_PROPOSE_OCCURRENCES=0`` turns proposals off. Scores and ``meta.text`` say
where each suggestion came from.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from goldloop.formats.gold import Hit
from goldloop.formats.labelstudio.offsets import OffsetError, from_label_studio
from goldloop.kb import KB
from goldloop.llm.answer import OK
from goldloop.llm.base import Provider
from goldloop.llm.tasks.suggest import Phrase, SuggestTask
from goldloop.llm.tasks.task import TaskReport, run_task
from goldloop.studio import label_config as lc
from goldloop.studio.review import hit_regions, region_id
from goldloop.text.detector import detect_mentions
from goldloop.text.nlp import parse_many, sentence_of
from goldloop.text.parsing import Parsing
from goldloop.text.resolve import find_occurrences

if TYPE_CHECKING:
    from spacy.tokens import Doc

    from goldloop.backend.protocol import Task

log = logging.getLogger("goldloop.backend")

KB_SCORE = 1.0
LLM_SCORE = 0.5
# Label Studio's origin of a region a prediction made and nobody has edited yet.
PROPOSED_ORIGIN = "prediction"


@dataclass(frozen=True)
class Drawn:
    """The region the annotator drew: its editor id and code-point span (no relation yet, so not
    a :class:`goldloop.formats.mention.Mention`)."""

    id: str
    a: int
    b: int


@dataclass(frozen=True)
class Suggestion:
    """A relation for a span, and where it came from (``kb`` or the LLM's tag).

    Not the core :class:`goldloop.formats.mention.Mention`: it answers one region of the task in
    the editor (no ``doc_id``) and becomes a hit's regions at once (:meth:`Suggester.region_items`).
    """

    a: int
    b: int
    entity_id: str
    direction: str | None
    source: str


def drawn_region(text: str, context: object) -> Drawn | None:
    """The region of ``context`` the annotator just drew: a span region of goldloop's control over
    the task's text with no relation yet, the last ``manual`` one, else the last; None when every
    region already has a relation (a deletion, the teardown after Submit) or none is usable."""
    items = context.get("result") if isinstance(context, dict) else None
    items = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
    related = {i.get("id") for i in items if i.get("from_name") == lc.RELATION}
    new: list[tuple[bool, Drawn]] = []
    for item in items:
        if item.get("from_name") != lc.SPAN or (item.get("id") and item["id"] in related):
            continue
        value = item.get("value")
        if not isinstance(value, dict):
            continue
        start, end = value.get("start"), value.get("end")
        if not isinstance(start, int) or not isinstance(end, int) or start >= end:
            continue
        try:
            a, b = from_label_studio(text, start, end)
        except OffsetError:
            continue
        if "text" in value and value["text"] != text[a:b]:
            continue  # the editor holds another text than the task: nothing to say
        drawn = Drawn(str(item.get("id") or region_id(a, b)), a, b)
        new.append((item.get("origin") == "manual", drawn))
    pool = [drawn for is_manual, drawn in new if is_manual] or [drawn for _, drawn in new]
    return pool[-1] if pool else None


class Suggester:
    """Suggestions for drawn regions: the KB first, then ``provider`` (None: the KB alone)."""

    def __init__(
        self, kb: KB, parsing: Parsing, provider: Provider | None = None, proposals: bool = True
    ) -> None:
        """``proposals``: suggest for the drawn surface's other occurrences too."""
        self.kb = kb
        self.parsing = parsing
        self.provider = provider
        self.propose_occurrences = proposals
        self.task = SuggestTask(kb)

    def suggest(self, task: Task, context: object) -> list[dict[str, Any]]:
        """The result items for the drawn region (its id kept) and, unless turned off, proposals
        for the uncovered occurrences of its surface; ``[]`` when the context holds no usable
        region."""
        text = task.data.get("text")
        if not isinstance(text, str):
            return []
        drawn = drawn_region(text, context)
        if drawn is None:
            return []
        covered = _covered_spans(text, task, context)
        # A new region's id must not be one the editor holds: it would replace that region.
        taken = _region_ids(context)
        others = find_occurrences(text, text[drawn.a : drawn.b]) if self.propose_occurrences else ()
        spans = [(drawn.a, drawn.b)] + [
            span
            for span in others
            if span != (drawn.a, drawn.b)
            and not any(_overlap(span, c) for c in covered)
            and region_id(*span) not in taken
        ]
        suggestions = self.suggest_spans(text, spans)
        items: list[dict[str, Any]] = []
        for suggestion in suggestions:
            rid = drawn.id if (suggestion.a, suggestion.b) == (drawn.a, drawn.b) else None
            items += self.region_items(text, suggestion, rid)
        return items

    def suggest_spans(self, text: str, spans: Sequence[tuple[int, int]]) -> list[Suggestion]:
        """One suggestion per span the KB or the LLM could name a relation for, in span order."""
        # Through the parse cache: the document was most likely parsed for its pre-annotation.
        doc = next(iter(parse_many([text], self.parsing)))
        mentions = detect_mentions(doc, self.kb)
        found: list[Suggestion] = []
        ask: list[tuple[int, int]] = []
        for a, b in spans:
            candidates = {(m.entity_id, m.direction) for m in mentions if m.a < b and a < m.b}
            looked_up = self.kb.lookup(text[a:b])
            if looked_up is not None:
                folded = self.kb.fold(looked_up.entity_id, "forward")
                candidates.add((folded.entity_id, folded.direction or "forward"))
            if len(candidates) == 1:
                ((entity_id, direction),) = candidates
                found.append(Suggestion(a, b, entity_id, direction, "kb"))
            else:
                ask.append((a, b))
        if ask and self.provider is not None:
            found += self._ask(doc, ask)
        return sorted(found, key=lambda s: (s.a, s.b))

    def _ask(self, doc: Doc, spans: list[tuple[int, int]]) -> list[Suggestion]:
        assert self.provider is not None
        phrases = [phrase(doc, a, b) for a, b in spans]
        results = run_task(self.provider, self.task, phrases)
        report = TaskReport.of(self.task.name, results)
        if report.outcomes[OK] < len(results):
            # Counts only: an annotator sees no suggestion, the operator sees why.
            outcomes = ", ".join(f"{n} {o}" for o, n in sorted(report.outcomes.items()))
            log.info("suggestions from %s: %s", self.provider.tag, outcomes)
        found = []
        for (a, b), result in zip(spans, results, strict=True):
            if result.outcome == OK and result.value is not None:
                entity_id, direction = result.value
                found.append(Suggestion(a, b, entity_id, direction, self.provider.tag))
        return found

    def region_items(
        self, text: str, suggestion: Suggestion, rid: str | None = None
    ) -> list[dict[str, Any]]:
        """The span, relation and direction items of one suggestion (``rid``: the drawn id;
        without it, a proposal for a region nobody drew)."""
        from_kb = suggestion.source == "kb"
        score = KB_SCORE if from_kb else LLM_SCORE
        where = "exact KB match" if from_kb else f"suggested by {suggestion.source}"
        hit = Hit(
            a=suggestion.a, b=suggestion.b, surface=text[suggestion.a : suggestion.b],
            entity_id=suggestion.entity_id, direction=suggestion.direction, confidence=score,
        )  # fmt: skip
        items = hit_regions(text, hit, self.kb, meta={"text": where, "source": suggestion.source})
        for item in items:
            if rid is not None:
                item["id"] = rid
            else:
                item["origin"] = PROPOSED_ORIGIN
            item["score"] = hit.confidence
            # The editor copies a suggestion onto the drawn region without computing its offsets;
            # with none, its next redraw throws and the page's next region is never finished.
            value = item["value"]
            value["globalOffsets"] = {"start": value["start"], "end": value["end"]}
        return items


def phrase(doc: Doc, a: int, b: int) -> Phrase:
    """What the LLM is shown of ``[a, b)``: its sentence alone, the phrase, and which occurrence
    in the sentence when it repeats."""
    sent = sentence_of(doc, a, b)
    surface = doc.text[a:b]
    occurrences = list(find_occurrences(sent.text, surface))
    before = [s for s, _ in occurrences if sent.start_char + s < a]
    return Phrase(sent.text, surface, len(before) + 1 if len(occurrences) > 1 else None)


def _region_ids(context: object) -> set[str]:
    items = context.get("result") if isinstance(context, dict) else None
    return {
        str(item["id"])
        for item in (items if isinstance(items, list) else ())
        if isinstance(item, dict) and item.get("id")
    }


def _covered_spans(text: str, task: Task, context: object) -> list[tuple[int, int]]:
    """Spans some region already holds: the context's, the task's predictions, drafts and
    annotations (what the editor shows)."""
    results: list[Any] = [context.get("result") if isinstance(context, dict) else None]
    extra = task.model_extra or {}
    for key in ("predictions", "drafts", "annotations"):
        for holder in (task.predictions if key == "predictions" else extra.get(key)) or ():
            if isinstance(holder, dict):
                results.append(holder.get("result"))
    spans = []
    for result in results:
        for item in result if isinstance(result, list) else ():
            value = item.get("value") if isinstance(item, dict) else None
            start, end = (
                (value.get("start"), value.get("end")) if isinstance(value, dict) else (0, 0)
            )
            if isinstance(start, int) and isinstance(end, int):
                try:
                    spans.append(from_label_studio(text, start, end))
                except OffsetError:
                    continue  # a region of another text: it covers nothing here
    return spans


def _overlap(x: tuple[int, int], y: tuple[int, int]) -> bool:
    return x[0] < y[1] and y[0] < x[1]
