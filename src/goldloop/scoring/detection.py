"""Detection P/R/F1 and entity accuracy against char-offset ground truth, and the seed's scorer.

Two levels are kept apart: *detection* (was the span found?) and *entity agreement* (of the spans
found, was the id right?). Entity accuracy is **undefined** (None), not zero, when no matched pair
carried two comparable ids — most often because a system emits minted ids and no
``predicted_id_to_kb_in`` map was given. ``goldloop score`` fills :class:`GroundTruthScore` from
per-document matching (:func:`goldloop.scoring.matching.match_spans`);
:func:`score_predictions_against_ground_truth` is the seed's scorer, kept exactly (also as
``goldloop.scoring.detection``), and gives score's compatibility line.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldloop.formats.gold import read_gold
from goldloop.formats.mention import Mention
from goldloop.scoring.inputs import Prediction
from goldloop.scoring.matching import check_match_mode, overlaps


@dataclass(frozen=True)
class GtSpan:
    """One ground-truth annotation in the seed's form: the range ``[a, b)`` of document ``itext``
    (its position in the gold file), and its id.

    Not a :class:`~goldloop.formats.mention.Mention`: the seed's scorer and its files (pelinker's
    ``*.gt.json`` and prediction rows) place a span by position, not ``doc_id``, and its id may be
    missing; :func:`score_seed_compatible` turns goldloop's mentions into this form.
    """

    itext: int
    a: int
    b: int
    entity_id: str | None = None

    def __post_init__(self) -> None:
        if self.b <= self.a:
            raise ValueError(f"span end must exceed start, got a={self.a} b={self.b}")


@dataclass(frozen=True)
class GroundTruthScore:
    """Detection quality, and entity accuracy over the spans that were detected."""

    n_gold: int
    n_predicted: int
    n_matched: int
    match_mode: str
    n_id_comparable: int
    """Matched pairs where both sides carried a comparable id; 0 makes entity accuracy undefined."""
    n_id_correct: int

    @property
    def precision(self) -> float | None:
        return None if self.n_predicted == 0 else self.n_matched / self.n_predicted

    @property
    def recall(self) -> float | None:
        return None if self.n_gold == 0 else self.n_matched / self.n_gold

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None or p + r == 0.0:
            return None
        return 2 * p * r / (p + r)

    @property
    def entity_accuracy(self) -> float | None:
        """Correct ids over comparable matched pairs; None when nothing is comparable."""
        return None if self.n_id_comparable == 0 else self.n_id_correct / self.n_id_comparable

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_gold": self.n_gold,
            "n_predicted": self.n_predicted,
            "n_matched": self.n_matched,
            "match_mode": self.match_mode,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "n_id_comparable": self.n_id_comparable,
            "n_id_correct": self.n_id_correct,
            "entity_accuracy": self.entity_accuracy,
        }


def load_ground_truth_spans(path: Path | str) -> list[GtSpan]:
    """Read a gold file (list of documents, or a legacy single object) into spans.

    A hit's ``itext`` is kept when present (legacy files carry it); otherwise the document's
    position in the file stands in. Invalid files raise :class:`goldloop.formats.gold.GoldError`.
    """
    spans: list[GtSpan] = []
    for index, document in enumerate(read_gold(Path(path).expanduser()).documents):
        for hit in document.ground_truth:
            itext = (hit.model_extra or {}).get("itext", index)
            spans.append(GtSpan(itext=int(itext), a=hit.a, b=hit.b, entity_id=hit.entity_id))
    return spans


def score_seed_compatible(
    doc_ids: Sequence[str],
    gold: Sequence[Sequence[Mention]],
    predictions: Sequence[Prediction],
    match_mode: str,
) -> GroundTruthScore:
    """:func:`score_predictions_against_ground_truth` on goldloop's records: ``gold`` holds the
    mentions of each document of ``doc_ids``, whose position is the seed's ``itext``."""
    position = {doc_id: index for index, doc_id in enumerate(doc_ids)}
    return score_predictions_against_ground_truth(
        [
            {"itext": position[p.doc_id], "a": p.a, "b": p.b, "entity_id_predicted": p.entity_id}
            for p in predictions
        ],
        [GtSpan(i, m.a, m.b, m.entity_id) for i, document in enumerate(gold) for m in document],
        match_mode=match_mode,
    )


def score_predictions_against_ground_truth(
    predictions: Sequence[Mapping[str, Any]],
    gold: Iterable[GtSpan],
    *,
    match_mode: str = "overlap",
    predicted_id_to_kb_in: Mapping[str, str] | None = None,
) -> GroundTruthScore:
    """Greedy one-to-one span matching, exactly as pelinker's ``ground_truth`` module scores.

    ``predictions`` are rows with ``itext`` (absent or null means document 0), ``a``, ``b`` and
    ``entity_id_predicted``, matched in the order given: each row takes the first gold span of its
    document that it matches (any overlap, or identical boundaries with ``match_mode="exact"``)
    and that is not consumed yet, so duplicate predictions over one annotation are false
    positives. A row whose ``itext``, ``a`` or ``b`` is missing or not an integer is skipped but
    still counts in ``n_predicted``; callers that want such rows reported validate them first.
    ``predicted_id_to_kb_in`` translates predicted ids onto gold ids: a prediction it cannot map is
    not comparable, so it neither helps nor hurts accuracy.

    Kept for compatibility with the seed: consumption is keyed on the gold span's ``(a, b)``
    alone, so a consumed span also blocks a gold span with the same offsets in another document
    (or a repeated span in the same one). ``goldloop score``'s figures match within each document
    (:func:`goldloop.scoring.matching.match_spans`) and show this one only as a compatibility
    line.
    """
    check_match_mode(match_mode)
    gold_by_doc: dict[int, list[GtSpan]] = {}
    n_gold = 0
    for span in gold:
        gold_by_doc.setdefault(span.itext, []).append(span)
        n_gold += 1

    consumed: set[tuple[int, int]] = set()
    n_matched = n_id_comparable = n_id_correct = 0
    for row in predictions:
        try:
            itext = int(row.get("itext", 0) or 0)
            a = int(row["a"])
            b = int(row["b"])
        except (KeyError, TypeError, ValueError):
            continue
        hit = next(
            (
                span
                for span in gold_by_doc.get(itext, ())
                if (span.a, span.b) not in consumed
                and (
                    (span.a, span.b) == (a, b)
                    if match_mode == "exact"
                    else overlaps(a, b, span.a, span.b)
                )
            ),
            None,
        )
        if hit is None:
            continue
        consumed.add((hit.a, hit.b))
        n_matched += 1
        predicted_id = _comparable_id(row.get("entity_id_predicted"), predicted_id_to_kb_in)
        if predicted_id is None or hit.entity_id is None:
            continue
        n_id_comparable += 1
        n_id_correct += predicted_id == hit.entity_id

    return GroundTruthScore(
        n_gold=n_gold,
        n_predicted=len(predictions),
        n_matched=n_matched,
        match_mode=match_mode,
        n_id_comparable=n_id_comparable,
        n_id_correct=n_id_correct,
    )


def _comparable_id(raw: Any, bridge: Mapping[str, str] | None) -> str | None:
    if raw is None:
        return None
    if bridge is None:
        return str(raw)
    mapped = bridge.get(str(raw))
    return None if mapped is None else str(mapped)
