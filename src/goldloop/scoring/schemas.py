"""nervaluate's entity-level schemas (strict, exact, partial, ent_type), computed in one pass.

The counts equal the ``nervaluate`` package's (1.2.1) count for count, overall and per label,
where nervaluate scores each label on its own: a prediction with the wrong label is INC overall
but, per label, MIS for the gold label and SPU for the predicted one. nervaluate re-walks every
span once per label; here each document is walked once: the overlapping gold candidates of each
prediction are found once and shared by all schemas and labels.

Spans here are half-open ``{"label", "start", "end"}``; nervaluate's ``end`` is inclusive, and
:func:`evaluate_with_nervaluate` is the one adapter that converts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

SCHEMAS = ("strict", "exact", "partial", "ent_type")
COUNTS = ("correct", "incorrect", "partial", "missed", "spurious")
# Who counts the schemas: this module's one pass, or the nervaluate package (the reference).
ENGINES = ("goldloop", "nervaluate")
# Schemas whose precision and recall give partial matches half credit.
_HALF_CREDIT = frozenset({"partial", "ent_type"})

Span = tuple[str, int, int]
# One candidate gold span for a prediction: (gold index, same boundaries, same label, distance).
_Candidate = tuple[int, bool, bool, int]
Tally = dict[str, list[int]]  # schema -> [correct, incorrect, partial, missed, spurious]


def evaluate(
    gold_docs: Sequence[Sequence[Mapping[str, Any]]],
    predicted_docs: Sequence[Sequence[Mapping[str, Any]]],
    *,
    tags: Iterable[str] | None = None,
    min_overlap_percentage: float = 1.0,
) -> dict[str, Any]:
    """Score predicted spans against gold spans, document by document.

    Returns ``{"overall": {schema: counts}, "by_label": {label: {schema: counts}}}`` where counts
    holds ``correct, incorrect, partial, missed, spurious, precision, recall, f1``. ``tags``
    restricts scoring to those labels (spans with other labels are ignored, as nervaluate does);
    None keeps every label. ``min_overlap_percentage`` is nervaluate's: the share of the gold
    span that an overlap must cover (1–100). ``by_label`` lists the labels that occur.
    """
    if len(gold_docs) != len(predicted_docs):
        raise ValueError(
            f"{len(gold_docs)} gold documents but {len(predicted_docs)} predicted documents"
        )
    if not 1.0 <= min_overlap_percentage <= 100.0:
        raise ValueError("min_overlap_percentage must be between 1 and 100")
    allowed = None if tags is None else frozenset(tags)
    overall: Tally = _new_tally()
    by_label: dict[str, Tally] = {}
    for index, (gold, predicted) in enumerate(zip(gold_docs, predicted_docs, strict=True)):
        true = _spans(gold, allowed, f"gold document {index}")
        pred = _spans(predicted, allowed, f"predicted document {index}")
        _score_document(true, pred, min_overlap_percentage, overall, by_label)
    return {
        "overall": _finish(overall),
        "by_label": {label: _finish(tally) for label, tally in sorted(by_label.items())},
    }


def evaluate_with_nervaluate(
    gold_docs: Sequence[Sequence[Mapping[str, Any]]],
    predicted_docs: Sequence[Sequence[Mapping[str, Any]]],
    *,
    tags: Iterable[str] | None = None,
    min_overlap_percentage: float = 1.0,
) -> dict[str, Any]:
    """The same result from the ``nervaluate`` package: the oracle, and ``--engine nervaluate``."""
    from nervaluate import Evaluator  # nervaluate loads only for --engine nervaluate

    def inclusive(docs: Sequence[Sequence[Mapping[str, Any]]]) -> list[list[dict[str, Any]]]:
        return [
            [{"label": s["label"], "start": s["start"], "end": s["end"] - 1} for s in doc]
            for doc in docs
        ]

    labels = sorted(
        {s["label"] for docs in (gold_docs, predicted_docs) for doc in docs for s in doc}
    )
    evaluator = Evaluator(
        inclusive(gold_docs),
        inclusive(predicted_docs),
        tags=labels if tags is None else list(tags),
        loader="dict",
        min_overlap_percentage=min_overlap_percentage,
    )
    raw = evaluator.evaluate()

    def counts(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        out = _finish(_new_tally())
        for schema in SCHEMAS:
            if schema in results:
                r = results[schema]
                out[schema] = {
                    key: getattr(r, key) for key in (*COUNTS, "precision", "recall", "f1")
                }
        return out

    return {
        "overall": counts(raw["overall"]),
        "by_label": {label: counts(raw["entities"][label]) for label in sorted(raw["entities"])},
    }


def metrics(counts: Sequence[int], schema: str) -> dict[str, Any]:
    """nervaluate's precision, recall and F1 for one schema's ``[COR, INC, PAR, MIS, SPU]``."""
    correct, incorrect, partial, missed, spurious = counts
    actual = correct + incorrect + partial + spurious
    possible = correct + incorrect + partial + missed
    credit = correct + 0.5 * partial if schema in _HALF_CREDIT else correct
    precision = credit / actual if actual > 0 else 0.0
    recall = credit / possible if possible > 0 else 0.0
    f1 = 2 * (precision * recall) / (precision + recall) if precision + recall > 0 else 0.0
    return {
        **dict(zip(COUNTS, counts, strict=True)),
        "precision": precision,
        "recall": recall,
        "f1": f1,
    }


def _new_tally() -> Tally:
    return {schema: [0, 0, 0, 0, 0] for schema in SCHEMAS}


def _finish(tally: Tally) -> dict[str, dict[str, Any]]:
    return {schema: metrics(tally[schema], schema) for schema in SCHEMAS}


def _spans(
    doc: Sequence[Mapping[str, Any]], allowed: frozenset[str] | None, where: str
) -> list[Span]:
    out: list[Span] = []
    for k, span in enumerate(doc):
        try:
            label, start, end = span["label"], span["start"], span["end"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{where}, span {k}: needs label, start and end") from exc
        if (
            not isinstance(label, str)
            or not isinstance(start, int)
            or not isinstance(end, int)
            or end <= start
        ):
            raise ValueError(
                f"{where}, span {k}: needs a string label and integer start < end, got {span!r}"
            )
        if allowed is None or label in allowed:
            out.append((label, start, end))
    return out


def _candidates(true: list[Span], pred: list[Span], min_pct: float) -> list[list[_Candidate]]:
    """Per prediction, the gold spans it overlaps enough (nervaluate's rule), in gold order."""
    out: list[list[_Candidate]] = []
    for p_label, ps, pe in pred:
        found: list[_Candidate] = []
        for j, (t_label, ts, te) in enumerate(true):
            if ps < te and ts < pe and (min(pe, te) - max(ps, ts)) / (te - ts) * 100.0 >= min_pct:
                found.append(
                    (j, ps == ts and pe == te, p_label == t_label, abs(ps - ts) + abs(pe - te))
                )
        out.append(found)
    return out


def _first_fit(cands: list[list[_Candidate]], n_true: int, need_label: bool) -> list[int]:
    """Strict (``need_label``) or exact/partial: the first unused same-boundary candidate is COR,
    failing that the first unused candidate is the near miss (INC, or PAR for ``partial``).
    Returns ``[COR, near, MIS, SPU]``."""
    used: set[int] = set()
    correct = near = spurious = 0
    for found in cands:
        fallback = -1
        for j, same_bounds, same_label, _ in found:
            if j in used:
                continue
            if same_bounds and (same_label or not need_label):
                correct += 1
                used.add(j)
                break
            if fallback < 0:
                fallback = j
        else:
            if fallback >= 0:
                near += 1
                used.add(fallback)
            else:
                spurious += 1
    return [correct, near, n_true - len(used), spurious]


def _closest(cands: list[list[_Candidate]], n_true: int) -> list[int]:
    """ent_type: the unused same-label candidate with the closest boundaries (first on ties) is
    COR; failing that the first unused other-label candidate is INC.

    Returns ``[COR, INC, MIS, SPU]``."""
    used: set[int] = set()
    correct = incorrect = spurious = 0
    for found in cands:
        best = wrong = -1
        best_distance = 0
        for j, _, same_label, distance in found:
            if j in used:
                continue
            if same_label:
                if best < 0 or distance < best_distance:
                    best, best_distance = j, distance
            elif wrong < 0:
                wrong = j
        if best >= 0:
            correct += 1
            used.add(best)
        elif wrong >= 0:
            incorrect += 1
            used.add(wrong)
        else:
            spurious += 1
    return [correct, incorrect, n_true - len(used), spurious]


def _add(tally: Tally, schema: str, counts: list[int], near_is_partial: bool = False) -> None:
    correct, near, missed, spurious = counts
    row = tally[schema]
    row[0] += correct
    row[2 if near_is_partial else 1] += near
    row[3] += missed
    row[4] += spurious


def _score_document(
    true: list[Span], pred: list[Span], min_pct: float, overall: Tally, by_label: dict[str, Tally]
) -> None:
    cands = _candidates(true, pred, min_pct)
    n_true = len(true)
    _add(overall, "strict", _first_fit(cands, n_true, need_label=True))
    exact = _first_fit(cands, n_true, need_label=False)
    _add(overall, "exact", exact)
    _add(overall, "partial", exact, near_is_partial=True)
    _add(overall, "ent_type", _closest(cands, n_true))

    # Per label, nervaluate sees only that label's spans: keep same-label candidates, and within
    # one label strict and exact coincide.
    true_per_label: dict[str, int] = {}
    for label, _, _ in true:
        true_per_label[label] = true_per_label.get(label, 0) + 1
    cands_per_label: dict[str, list[list[_Candidate]]] = {label: [] for label in true_per_label}
    for (label, _, _), found in zip(pred, cands, strict=True):
        cands_per_label.setdefault(label, []).append([c for c in found if c[2]])
    for label, label_cands in cands_per_label.items():
        tally = by_label.get(label)
        if tally is None:
            tally = by_label[label] = _new_tally()
        n_label = true_per_label.get(label, 0)
        same = _first_fit(label_cands, n_label, need_label=False)
        _add(tally, "strict", same)
        _add(tally, "exact", same)
        _add(tally, "partial", same, near_is_partial=True)
        _add(tally, "ent_type", _closest(label_cands, n_label))
