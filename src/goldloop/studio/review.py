"""The predictions a task carries: A's hits, B's hits, and the review prediction built from both.

Pure functions of (text, A's hits, B's hits, tags, KB): ``push`` sends them and the ML backend
returns the review prediction, so both doors give Label Studio the same regions. Hits carry
canonical KB ids; regions carry canonical labels and code-point offsets (``goldloop.formats.labelstudio.offsets``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from goldloop.errors import GoldloopError
from goldloop.formats.gold import Hit, hits_by_span
from goldloop.formats.labelstudio.offsets import to_label_studio
from goldloop.formats.labelstudio.tasks import REVIEW_PREFIX
from goldloop.kb import KB
from goldloop.studio import label_config as lc

Prediction = dict[str, Any]


def review_tag(tag_a: str, tag_b: str | None = None) -> str:
    """``review:<A-tag>+<B-tag>``, or ``review:<A-tag>`` without a second annotator."""
    return f"{REVIEW_PREFIX}{tag_a}+{tag_b}" if tag_b else f"{REVIEW_PREFIX}{tag_a}"


def region_id(a: int, b: int) -> str:
    """One region id per span, stable across pushes (pull matches by span, not by id)."""
    return f"m{a}_{b}"


def hit_regions(
    text: str, hit: Hit, kb: KB, meta: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The result items of one region: the span, its relation, and its direction when known."""
    relation = kb.get(hit.entity_id)
    if relation is None:
        raise GoldloopError(
            f"hit {hit.surface!r} [{hit.a}, {hit.b}): {hit.entity_id} is not in the KB"
        )
    start, end = to_label_studio(text, hit.a, hit.b)
    rid = region_id(hit.a, hit.b)
    span = {"start": start, "end": end, "text": text[hit.a : hit.b]}
    labels: dict[str, Any] = {
        "id": rid, "from_name": lc.SPAN, "to_name": lc.OBJECT, "type": "labels",
        "value": {**span, "labels": [lc.SPAN_LABEL]},
    }  # fmt: skip
    if hit.confidence is not None:
        labels["score"] = hit.confidence
    if meta:
        labels["meta"] = meta
    items = [
        labels,
        {"id": rid, "from_name": lc.RELATION, "to_name": lc.OBJECT, "type": lc.RELATION_TYPE,
         "value": {**span, **lc.relation_value(relation.label)}},
    ]  # fmt: skip
    if hit.direction is not None:
        items.append(
            {"id": rid, "from_name": lc.DIRECTION, "to_name": lc.OBJECT, "type": "choices",
             "value": {**span, "choices": [hit.direction]}}
        )  # fmt: skip
    return items


def annotator_prediction(text: str, hits: Sequence[Hit], tag: str, kb: KB) -> Prediction:
    """One annotator's own prediction: a region per span (first hit wins on a repeated span)."""
    chosen = hits_by_span(hits)
    result = [item for hit in chosen.values() for item in hit_regions(text, hit, kb)]
    return _prediction(result, tag, chosen.values())


def build_review_prediction(
    text: str,
    hits_a: Sequence[Hit],
    hits_b: Sequence[Hit] | None,
    tag_a: str,
    tag_b: str | None,
    kb: KB,
) -> Prediction:
    """The review prediction: one region per distinct span proposed by A or B.

    Relation and direction are A's where A proposed the span, else B's; with a B, ``meta.text``
    tells the annotator where the region came from (:func:`origin_note`).
    """
    spans_a = hits_by_span(hits_a)
    spans_b = hits_by_span(hits_b or ())
    result: list[dict[str, Any]] = []
    chosen: list[Hit] = []
    for span in sorted(spans_a.keys() | spans_b.keys()):
        hit_a, hit_b = spans_a.get(span), spans_b.get(span)
        hit = hit_a or hit_b
        assert hit is not None
        chosen.append(hit)
        note = origin_note(hit_a, hit_b, kb, tag_a, tag_b)
        result += hit_regions(text, hit, kb, meta=_review_meta(hit_a, hit_b, note))
    return _prediction(result, review_tag(tag_a, tag_b), chosen)


def task_predictions(
    text: str,
    hits_a: Sequence[Hit],
    hits_b: Sequence[Hit] | None,
    tag_a: str,
    tag_b: str | None,
    kb: KB,
) -> list[Prediction]:
    """Everything push sends for one task: the review prediction, after A's and B's own when there
    is a B (each pre-annotator's version, for Label Studio's Compare All). With A alone, A's own
    would hold the review's regions again, under a second tab."""
    review = build_review_prediction(text, hits_a, hits_b, tag_a, tag_b, kb)
    if tag_b is None:
        return [review]
    return [
        annotator_prediction(text, hits_a, tag_a, kb),
        annotator_prediction(text, hits_b or (), tag_b, kb),
        review,
    ]


def origin_note(
    hit_a: Hit | None, hit_b: Hit | None, kb: KB, tag_a: str, tag_b: str | None
) -> str | None:
    """Where a review region came from, in words an annotator reads beside the region, naming the
    pre-annotators by their tags (their prediction tabs' names); None without a B."""
    if tag_b is None:
        return None
    if hit_a is None:
        return f"only {tag_b} proposed this"
    if hit_b is None:
        return f"only {tag_a} proposed this"
    if (hit_a.entity_id, hit_a.direction) == (hit_b.entity_id, hit_b.direction):
        return "both pre-annotators agree"
    return f"{tag_a}: {describe_hit(hit_a, kb)} | {tag_b}: {describe_hit(hit_b, kb)}"


def _review_meta(hit_a: Hit | None, hit_b: Hit | None, note: str | None) -> dict[str, Any]:
    """``text`` is shown to the annotator; ``origin`` and ``anchored`` are read back by pull."""
    hit = hit_a or hit_b
    assert hit is not None
    meta: dict[str, Any] = {"origin": _origin(hit_a, hit_b)}
    if note is not None:
        meta["text"] = note
    if hit.surface_anchored is not None:
        meta["anchored"] = hit.surface_anchored
    return meta


def _origin(hit_a: Hit | None, hit_b: Hit | None) -> str:
    return "A+B" if hit_a and hit_b else "A" if hit_a else "B"


def describe_hit(hit: Hit, kb: KB) -> str:
    """``<relation label> · <direction>``, as region notes show a hit."""
    relation = kb.get(hit.entity_id)
    label = relation.label if relation else hit.entity_id
    return f"{label} · {hit.direction or 'no direction'}"


def _prediction(result: list[dict[str, Any]], tag: str, hits: Iterable[Hit]) -> Prediction:
    scores = [hit.confidence for hit in hits if hit.confidence is not None]
    prediction: Prediction = {"model_version": tag, "result": result}
    if scores:
        prediction["score"] = sum(scores) / len(scores)
    return prediction
