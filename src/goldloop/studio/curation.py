"""Curation of double annotations: what the curator is shown.

Pure functions of two annotators' hits (as ``goldloop.formats.labelstudio.verify`` reads them); when two
versions agree is decided in ``goldloop.formats.labelstudio.versions``. A disputed task goes to
``NAME-curate`` with a curation prediction, tagged ``curate:<review tag>``, that the project
pre-fills from: one region per span either annotator marked, with the first annotator's values
where they marked it; its ``meta`` and its ``note`` say ``both``, or who kept it with which
relation and direction. Each annotator's own version is a prediction too
(``annotator:<email>``), for Label Studio's compare view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from goldloop.formats.gold import Hit
from goldloop.formats.labelstudio.offsets import to_label_studio
from goldloop.formats.labelstudio.tasks import CURATE_PREFIX
from goldloop.formats.labelstudio.versions import hit_key
from goldloop.kb import KB
from goldloop.studio import label_config as lc
from goldloop.studio.review import (
    Prediction,
    annotator_prediction,
    describe_hit,
    hit_regions,
    region_id,
)

VERSION_PREFIX = "annotator:"
BOTH = "both"


def curate_tag(review: str | None) -> str:
    """``curate:<review tag>`` (``curate:`` alone for tasks pushed without candidates)."""
    return f"{CURATE_PREFIX}{review or ''}"


def version_tag(email: str) -> str:
    return f"{VERSION_PREFIX}{email}"


def dispute_notes(
    text: str, versions: Mapping[str, Sequence[Hit]], kb: KB
) -> dict[tuple[int, int], str]:
    """Per span either annotator marked: ``both``, or who kept it with which relation and direction."""
    spans = _by_span(versions)
    notes: dict[tuple[int, int], str] = {}
    for span, held in spans.items():
        keys = {hit_key(hit) for hit in held.values()}
        if len(held) == len(versions) and len(keys) == 1:
            notes[span] = BOTH
        elif len(held) == 1:
            email, hit = next(iter(held.items()))
            notes[span] = f"only {email}: {describe_hit(hit, kb)}"
        else:
            notes[span] = " | ".join(
                f"{email}: {describe_hit(hit, kb)}" for email, hit in held.items()
            )
    return notes


def curation_prediction(
    text: str, versions: Mapping[str, Sequence[Hit]], review: str | None, kb: KB
) -> Prediction:
    """The prediction a curator starts from (see the module docstring); ``versions`` in order."""
    notes = dispute_notes(text, versions, kb)
    result: list[dict[str, Any]] = []
    for span, held in sorted(_by_span(versions).items()):
        hit = next(iter(held.values()))
        note = notes[span]
        meta = {"text": note, "kept_by": list(held)}
        result += hit_regions(text, hit, kb, meta=meta)
        if note != BOTH:
            start, end = to_label_studio(text, *span)
            result.append(
                {"id": region_id(*span), "from_name": lc.NOTE, "to_name": lc.OBJECT,
                 "type": "textarea", "value": {"start": start, "end": end, "text": [note]}}
            )  # fmt: skip
    return {"model_version": curate_tag(review), "result": result}


def curation_predictions(
    text: str,
    versions: Mapping[str, Sequence[Hit]],
    review: Prediction | None,
    kb: KB,
) -> list[Prediction]:
    """A curate task's predictions: the double task's review, each version, then the curation one."""
    out: list[Prediction] = []
    if review is not None:
        out.append({k: review[k] for k in ("model_version", "result", "score") if k in review})
    out += [
        annotator_prediction(text, hits, version_tag(email), kb) for email, hits in versions.items()
    ]
    tag = str(review["model_version"]) if review is not None else None
    out.append(curation_prediction(text, versions, tag, kb))
    return out


def _by_span(versions: Mapping[str, Sequence[Hit]]) -> dict[tuple[int, int], dict[str, Hit]]:
    spans: dict[tuple[int, int], dict[str, Hit]] = {}
    for email, hits in versions.items():
        for hit in hits:
            spans.setdefault((hit.a, hit.b), {}).setdefault(email, hit)
    return spans
