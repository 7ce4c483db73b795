"""Scoring one system on the gold, end-to-end or linking-only, with slices and intervals.

*End-to-end* scores span detection and linking together (detection P/R/F1 and entity accuracy,
nervaluate's schemas, direction); every figure matches spans within each document, and the seed
scorer's cross-document figure rides along as ``detection_seed_compatible``. *Linking-only* gives
the system the gold spans and scores the id decision alone: a gold span with no aligned
prediction, or one whose id is null, is an abstention; ``accuracy_overall`` counts abstentions as
wrong, ``accuracy_on_predicted`` does not, and ``coverage`` is the share answered. Both sides are folded through the KB before ids meet.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from goldloop.formats.gold import Document
from goldloop.formats.mention import Mention
from goldloop.kb import KB
from goldloop.scoring import schemas
from goldloop.scoring.bootstrap import document_bootstrap, f1, ratio
from goldloop.scoring.design import Design, Metrics, corpus_figures
from goldloop.scoring.detection import GroundTruthScore, score_seed_compatible
from goldloop.scoring.folding import direction_agrees, fold_answer
from goldloop.scoring.inputs import Prediction, SystemPredictions, per_document
from goldloop.scoring.matching import check_match_mode, match_spans
from goldloop.scoring.ppi_corpus import PpiFigures, ppi_corpus_figures
from goldloop.scoring.ppi_inputs import SurrogateParts
from goldloop.scoring.schemas import ENGINES
from goldloop.scoring.score_result import (
    DirectionScore,
    EndToEndFigures,
    LinkingOnlyFigures,
    LinkingScore,
    ScoreInputs,
    ScoreResult,
    Slices,
    SliceScore,
)

REGIMES = ("end-to-end", "linking-only")
NO_ID = "NONE"  # the schema label of a predicted span that carries no id
# Per-document count columns of each regime (rows of the bootstrap matrix).
E2E_COLUMNS = (
    "gold",
    "predicted",
    "matched",
    "id_comparable",
    "id_correct",
    "dir_comparable",
    "dir_correct",
)
_LINK = ("gold", "answered", "correct", "dir_comparable", "dir_correct")


@dataclass(frozen=True, kw_only=True)
class GoldMention(Mention):
    """A gold hit as the core mention, its id and direction folded, with what slices need."""

    anchoring: str  # anchored | paraphrase | unknown
    role: str


def gold_mentions(documents: Sequence[Document], kb: KB | None) -> list[list[GoldMention]]:
    """Per document, its hits folded through the KB (tiers 0 and 1)."""
    out: list[list[GoldMention]] = []
    for document in documents:
        mentions = []
        for hit in document.ground_truth:
            entity_id, direction = fold_answer(kb, hit.entity_id, hit.direction)
            anchoring = {True: "anchored", False: "paraphrase"}.get(hit.surface_anchored, "unknown")  # type: ignore[arg-type]
            mentions.append(
                GoldMention(
                    doc_id=document.doc_id,
                    a=hit.a,
                    b=hit.b,
                    entity_id=entity_id or hit.entity_id,
                    surface=hit.surface,
                    direction=direction,
                    anchoring=anchoring,
                    role=document.role or "unknown",
                )
            )
        out.append(mentions)
    return out


def fold_predictions(
    system: SystemPredictions, kb: KB | None, id_bridge: Mapping[str, str] | None
) -> tuple[list[Prediction], int]:
    """Predictions with ids bridged (when a bridge is given) and folded; and how many ids the
    bridge could not map (they become null: not comparable, an abstention in linking-only)."""
    folded: list[Prediction] = []
    unmapped = 0
    for p in system.predictions:
        entity_id = p.entity_id
        if id_bridge is not None and entity_id is not None:
            entity_id = id_bridge.get(entity_id)
            unmapped += entity_id is None
        entity_id, direction = fold_answer(kb, entity_id, p.direction)
        folded.append(Prediction(p.doc_id, p.a, p.b, entity_id, direction, p.score))
    return folded, unmapped


def score_system(
    documents: Sequence[Document],
    system: SystemPredictions,
    *,
    kb: KB | None,
    regime: str = "end-to-end",
    match_mode: str = "overlap",
    id_bridge: Mapping[str, str] | None = None,
    engine: str = "goldloop",
    bootstrap: int = 0,
    seed: int = 0,
    design: Design | None = None,
    surrogate: SurrogateParts | None = None,
) -> ScoreResult:
    """Score ``system`` on ``documents``. With the gold's ``design``, the result has ``corpus``
    figures (design-weighted), and with a ``surrogate`` part too, ``corpus_ppi`` (prediction
    powered: ``scoring.ppi_corpus``); ``system`` then holds predictions of both parts."""
    check_match_mode(match_mode)
    if regime not in REGIMES:
        raise ValueError(f"regime must be one of {REGIMES}, got {regime!r}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
    gold = gold_mentions(documents, kb)
    predictions, unmapped = fold_predictions(system, kb, id_bridge)
    everything = predictions
    if surrogate is not None:
        gold_ids = {d.doc_id for d in documents}
        predictions = [p for p in everything if p.doc_id in gold_ids]
    by_doc = per_document(documents, predictions)
    inputs = ScoreInputs(
        format=system.format,
        rows=system.rows_seen,
        scored=len(predictions),
        malformed=dict(system.malformed),
        unmapped_by_id_bridge=unmapped if id_bridge is not None else None,
    )
    figures: EndToEndFigures | LinkingOnlyFigures
    if regime == "end-to-end":
        figures, per_doc = _end_to_end(
            documents, gold, by_doc, predictions, kb, match_mode, engine, bootstrap, seed
        )
        metrics = _e2e_metrics
    else:
        figures, per_doc = _linking_only(documents, gold, by_doc, kb, match_mode, bootstrap, seed)
        metrics = _linking_metrics
    return ScoreResult(
        system=system.name,
        path=None if system.path is None else str(system.path),
        regime=regime,
        match_mode=match_mode,
        inputs=inputs,
        figures=figures,
        corpus=None
        if design is None
        else corpus_figures(per_doc, metrics, design, bootstrap, seed),
        corpus_ppi=None
        if design is None or surrogate is None
        else _prediction_powered(
            regime, per_doc, by_doc, everything, surrogate, kb, match_mode, design, metrics
        ),
    )


def _prediction_powered(
    regime: str,
    per_doc: np.ndarray,
    by_doc: list[list[Prediction]],
    predictions: list[Prediction],
    surrogate: SurrogateParts,
    kb: KB | None,
    match_mode: str,
    design: Design,
    metrics: Metrics,
) -> PpiFigures:
    """The regime's counts against the pre-annotation, on the gold's documents and on the
    surrogate part, beside ``per_doc`` (against the gold): the corpus figures by PPI."""

    def counts(gold: list[list[GoldMention]], preds: list[list[Prediction]]) -> np.ndarray:
        return _counts(regime, gold, preds, kb, match_mode)[0]

    part = surrogate.documents
    part_ids = {d.doc_id for d in part}
    part_by_doc = per_document(part, [p for p in predictions if p.doc_id in part_ids])
    return ppi_corpus_figures(
        per_doc,
        counts(gold_mentions(surrogate.pre_annotated, kb), by_doc),
        counts(gold_mentions(part, kb), part_by_doc),
        metrics,
        design,
        surrogate.design,
    )


def _end_to_end(
    documents: Sequence[Document],
    gold: list[list[GoldMention]],
    by_doc: list[list[Prediction]],
    predictions: list[Prediction],
    kb: KB | None,
    match_mode: str,
    engine: str,
    bootstrap: int,
    seed: int,
) -> tuple[EndToEndFigures, np.ndarray]:
    slices = _Slices(len(documents))
    per_doc, _ = _counts("end-to-end", gold, by_doc, kb, match_mode, slices)
    totals = [int(v) for v in per_doc.sum(axis=0)]
    detection = GroundTruthScore(
        n_gold=totals[0],
        n_predicted=totals[1],
        n_matched=totals[2],
        match_mode=match_mode,
        n_id_comparable=totals[3],
        n_id_correct=totals[4],
    )
    evaluate = schemas.evaluate if engine == "goldloop" else schemas.evaluate_with_nervaluate
    schema_result = evaluate(
        [[{"label": m.entity_id, "start": m.a, "end": m.b} for m in doc] for doc in gold],
        [
            [{"label": p.entity_id or NO_ID, "start": p.a, "end": p.b} for p in doc]
            for doc in by_doc
        ],
    )
    figures = EndToEndFigures(
        detection=detection,
        # The seed scorer's figures (a matched span blocks its offsets in every document): a
        # compatibility line, never the headline.
        seed_detection=score_seed_compatible(
            [document.doc_id for document in documents], gold, predictions, match_mode
        ),
        direction=DirectionScore(totals[5], totals[6]),
        engine=engine,
        schemas=schema_result,
        slices=slices.scores("recall", kb, bootstrap, seed),
        intervals=_intervals(per_doc, _e2e_metrics, bootstrap, seed),
    )
    return figures, per_doc


def end_to_end_counts(
    documents: Sequence[Document],
    system: SystemPredictions,
    kb: KB | None,
    match_mode: str = "overlap",
) -> np.ndarray:
    """Per document (the gold's order) its end-to-end counts, columns :data:`E2E_COLUMNS`: the
    rows every end-to-end corpus figure is a ratio of (what a plan needs, without the report)."""
    check_match_mode(match_mode)
    predictions, _ = fold_predictions(system, kb, None)
    ours = {d.doc_id for d in documents}
    # A system read over more documents (a surrogate part's too) is counted on these alone.
    by_doc = per_document(documents, (p for p in predictions if p.doc_id in ours))
    return _counts("end-to-end", gold_mentions(documents, kb), by_doc, kb, match_mode)[0]


def _counts(
    regime: str,
    gold: list[list[GoldMention]],
    by_doc: list[list[Prediction]],
    kb: KB | None,
    match_mode: str,
    slices: _Slices | None = None,
) -> tuple[np.ndarray, int]:
    """Per document the regime's counts (``E2E_COLUMNS``' or ``_LINK``'s columns), and the predictions
    matched to no gold span; each gold mention also goes to ``slices`` when given."""
    end_to_end = regime == "end-to-end"
    per_doc = np.zeros((len(gold), len(E2E_COLUMNS if end_to_end else _LINK)), dtype=np.int64)
    count = _e2e_mention if end_to_end else _link_mention
    unaligned = 0
    for i, (mentions, preds) in enumerate(zip(gold, by_doc, strict=True)):
        found = _matched(mentions, preds, match_mode)
        unaligned += len(preds) - len(found)
        row = per_doc[i]
        row[0] = len(mentions)
        if end_to_end:
            row[1] = len(preds)
        for j, mention in enumerate(mentions):
            hit, correct = count(row, mention, found.get(j), kb)
            if slices is not None:
                slices.add(i, mention, hit, correct)
    return per_doc, unaligned


def _e2e_mention(
    row: np.ndarray, mention: GoldMention, p: Prediction | None, kb: KB | None
) -> tuple[bool, bool]:
    """Counts one gold mention end to end; (found, found with the gold's id)."""
    correct = p is not None and p.entity_id == mention.entity_id
    if p is not None:
        row[2] += 1
        if p.entity_id is not None:
            row[3] += 1
            row[4] += correct
        _direction(row, 5, kb, mention, p, correct)
    return p is not None, correct


def _link_mention(
    row: np.ndarray, mention: GoldMention, p: Prediction | None, kb: KB | None
) -> tuple[bool, bool]:
    """Counts one gold span linking-only; (answered, answered with the gold's id)."""
    answered = p is not None and p.entity_id is not None
    correct = answered and p is not None and p.entity_id == mention.entity_id
    row[1] += answered
    row[2] += correct
    _direction(row, 3, kb, mention, p, correct)
    return answered, correct


def _direction(
    row: np.ndarray,
    at: int,
    kb: KB | None,
    mention: GoldMention,
    p: Prediction | None,
    correct: bool,
) -> None:
    """Columns ``at`` and ``at + 1``: a right id whose direction can be compared, and agrees."""
    agrees = (
        direction_agrees(kb, mention.entity_id, mention.direction, p.direction)
        if correct and p is not None
        else None
    )
    if agrees is not None:
        row[at] += 1
        row[at + 1] += agrees


def _matched(
    mentions: list[GoldMention], preds: list[Prediction], match_mode: str
) -> dict[int, Prediction]:
    """Gold mention index -> the prediction that took it, within one document."""
    taken = match_spans([(p.a, p.b) for p in preds], [(m.a, m.b) for m in mentions], match_mode)
    return {j: p for p, j in zip(preds, taken, strict=True) if j is not None}


def _linking_only(
    documents: Sequence[Document],
    gold: list[list[GoldMention]],
    by_doc: list[list[Prediction]],
    kb: KB | None,
    match_mode: str,
    bootstrap: int,
    seed: int,
) -> tuple[LinkingOnlyFigures, np.ndarray]:
    slices = _Slices(len(documents))
    per_doc, unaligned = _counts("linking-only", gold, by_doc, kb, match_mode, slices)
    n_gold, n_answered, n_correct, dir_comparable, dir_correct = (
        int(v) for v in per_doc.sum(axis=0)
    )
    figures = LinkingOnlyFigures(
        linking=LinkingScore(n_gold, n_answered, n_correct, unaligned),
        direction=DirectionScore(dir_comparable, dir_correct),
        slices=slices.scores("coverage", kb, bootstrap, seed),
        intervals=_intervals(per_doc, _linking_metrics, bootstrap, seed),
    )
    return figures, per_doc


def _e2e_metrics(s: np.ndarray) -> dict[str, np.ndarray]:
    precision, recall = ratio(s[:, 2], s[:, 1]), ratio(s[:, 2], s[:, 0])
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1(precision, recall),
        "entity_accuracy": ratio(s[:, 4], s[:, 3]),
        "direction_accuracy": ratio(s[:, 6], s[:, 5]),
    }


def _linking_metrics(s: np.ndarray) -> dict[str, np.ndarray]:
    return {
        "accuracy_overall": ratio(s[:, 2], s[:, 0]),
        "accuracy_on_predicted": ratio(s[:, 2], s[:, 1]),
        "coverage": ratio(s[:, 1], s[:, 0]),
        "direction_accuracy": ratio(s[:, 4], s[:, 3]),
    }


def _intervals(per_doc: np.ndarray, metrics: Any, n: int, seed: int) -> dict[str, Any]:
    if n <= 0:
        return {}
    return {
        "n_resamples": n,
        "seed": seed,
        "level": 0.95,
        **document_bootstrap(per_doc, metrics, n, seed),
    }


class _Slices:
    """Gold-side counts per slice (anchored vs paraphrase, relation, document role), kept per
    document so that each slice gets its own document-bootstrap interval."""

    def __init__(self, n_documents: int) -> None:
        self.n_documents = n_documents
        # (kind, key) -> document -> [n_gold, n_found, n_correct]
        self.counts: dict[tuple[str, str], dict[int, list[int]]] = {}

    def add(self, document: int, mention: GoldMention, found: bool, correct: bool) -> None:
        for kind, key in (
            ("anchoring", mention.anchoring),
            ("relation", mention.entity_id),
            ("role", mention.role),
        ):
            row = self.counts.setdefault((kind, key), {}).setdefault(document, [0, 0, 0])
            row[0] += 1
            row[1] += found
            row[2] += correct

    def scores(self, found_name: str, kb: KB | None, bootstrap: int, seed: int) -> Slices:
        names = (found_name, "accuracy_on_found", "accuracy_overall")
        intervals = self._intervals(names, bootstrap, seed)
        out: Slices = {"anchoring": {}, "relation": {}, "role": {}}
        for kind, key in sorted(self.counts):
            rows = self.counts[kind, key].values()
            n_gold, n_found, n_correct = (sum(row[j] for row in rows) for j in range(3))
            relation = kb.get(key) if kb is not None and kind == "relation" else None
            out[kind][key] = SliceScore(
                label=None if relation is None else relation.label,
                n_gold=n_gold,
                n_found=n_found,
                n_correct=n_correct,
                found_name=found_name,
                intervals={name: intervals[f"{kind}/{key}/{name}"] for name in names}
                if intervals
                else None,
            )
        return out

    def _intervals(
        self, names: tuple[str, str, str], n: int, seed: int
    ) -> dict[str, list[float | None]]:
        """``"kind/key/metric" -> [low, high]`` from one bootstrap over documents for all slices."""
        if n <= 0 or not self.counts:
            return {}
        slices = sorted(self.counts)
        per_doc = np.zeros((self.n_documents, 3 * len(slices)), dtype=np.int64)
        for k, slice_key in enumerate(slices):
            for doc, row in self.counts[slice_key].items():
                per_doc[doc, 3 * k : 3 * k + 3] = row

        def metrics(sums: np.ndarray) -> dict[str, np.ndarray]:
            out: dict[str, np.ndarray] = {}
            for k, (kind, key) in enumerate(slices):
                gold, found, correct = (sums[:, 3 * k + j] for j in range(3))
                for name, value in zip(
                    names,
                    (ratio(found, gold), ratio(correct, found), ratio(correct, gold)),
                    strict=True,
                ):
                    out[f"{kind}/{key}/{name}"] = value
            return out

        return document_bootstrap(per_doc, metrics, n, seed)
