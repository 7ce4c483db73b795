"""What pre-annotation saves and what it anchors, from the blind documents' pairs.

A blind document was annotated twice by two people: once with the pre-annotator's candidates
(``pre``) and once without (``blind``); its final gold settles the two (agreed, or curated), so
it comes from neither condition alone. On those paired documents, per document, the counts below
are summed with the design's weights (the caller's: ``studio.campaign_agreement.campaign_design`` gives
the campaign's, 1/p_incl with batches combined by the draw's batch shares, the pairs standing for
their batch; without one, the pairs' own ``p_incl``) and each
figure is a Hájek ratio with its stratified document-bootstrap interval
(``scoring.bootstrap.document_bootstrap`` through ``corpus_figures``): an estimate for the
corpus the sample was drawn from, as if every document had been annotated both ways.

A mention is the same mention when span, folded relation and direction are equal (the rule by
which two versions agree, ``formats.labelstudio.versions.hit_key``). Minutes are the annotations'
capped ``lead_time``; they are divided by the final gold's mentions of the same documents, so
both conditions share one denominator and the saving is the time alone (a person who marks less
is not made to look faster per mention). Only documents with both annotations timed count for
the minutes.

Regions the ML backend proposed for other occurrences of a drawn surface, submitted untouched
(``verdict: proposed``), are counted apart from the review candidates: the machine showed them,
so a final-gold mention among them is no miss of the candidates, and ``proposed_in_gold`` says
how many of them the final gold holds.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from goldloop.formats.gold import Document, Hit
from goldloop.formats.labelstudio.versions import hit_key
from goldloop.kb import KB
from goldloop.scoring.alpha_u import AlphaU
from goldloop.scoring.bootstrap import ratio
from goldloop.scoring.design import CorpusFigures, Design, corpus_figures, read_design
from goldloop.scoring.span_agreement import headline_counts, headline_f1, span_agreement

# Per-document columns, summed with the design weights.
_COLUMNS = (
    "minutes_pre", "minutes_blind", "gold_timed",  # documents with both annotations timed
    "gold", "found_pre", "found_blind",
    "accepted", "accepted_not_blind",
    "missed_by_candidates", "missed_too_pre", "missed_too_blind",
    "proposed", "proposed_in_gold",
)  # fmt: skip
_AT = {name: i for i, name in enumerate(_COLUMNS)}

# What each figure estimates, in the report and the README's words.
FIGURES: dict[str, str] = {
    "minutes_per_mention_pre": "minutes per final-gold mention with pre-annotation",
    "minutes_per_mention_blind": "minutes per final-gold mention without pre-annotation",
    "minutes_saved_per_mention": "blind minus pre-annotated minutes per final-gold mention",
    "time_saving": "share of the time without pre-annotation that pre-annotation saves "
    "(1 - pre / blind)",
    "recall_pre": "share of final-gold mentions the person with candidates kept",
    "recall_blind": "share of final-gold mentions the person without candidates marked",
    "recall_difference": "recall with minus recall without pre-annotation",
    "accepted_not_blind": "share of the candidates people accepted that the blind person did "
    "not mark (what people take from the candidates; includes accepted errors)",
    "missed_too_pre": "share of the pre-annotator's misses (final-gold mentions that were not "
    "candidates nor proposals) that the person with candidates missed too",
    "missed_too_blind": "the same share for the person without candidates (the baseline)",
    "missed_too_difference": "missed_too_pre minus missed_too_blind: the misses the candidates "
    "cause (anchoring on omissions)",
    "proposed_in_gold": "share of the other-occurrence proposals submitted untouched (verdict "
    "proposed) that the final gold holds",
    "span_f1_strict": "span F1 between the two conditions' annotations, same offsets",
    "span_f1_lenient": "span F1 between the two conditions' annotations, overlapping spans",
    "span_f1_labelled_strict": "span F1, same offsets, relation and direction",
    "span_f1_labelled_lenient": "span F1, overlapping spans, same relation and direction",
}
PNG_FIGURES = (
    ("minutes per final-gold mention", "minutes_per_mention_pre", "minutes_per_mention_blind"),
    ("recall against the final gold", "recall_pre", "recall_blind"),
)


@dataclass(frozen=True)
class PairedDocument:
    """One blind document annotated both ways, and its settled gold.

    ``document`` carries the design (``p_incl``, ``stratum``, ``batch``) and the final gold
    (``ground_truth``); ``candidates`` are what the person with candidates was shown.
    """

    document: Document
    candidates: Sequence[Hit]
    pre: Sequence[Hit]
    blind: Sequence[Hit]
    minutes_pre: float | None
    minutes_blind: float | None
    pre_annotator: str = ""
    blind_annotator: str = ""


def document_counts(doc: PairedDocument) -> np.ndarray:
    """The row of :data:`_COLUMNS` for one paired document."""
    gold = {hit_key(h) for h in doc.document.ground_truth}
    shown = {hit_key(h) for h in doc.candidates}
    pre = {hit_key(h) for h in doc.pre}
    blind = {hit_key(h) for h in doc.blind}
    proposed = {hit_key(h) for h in doc.pre if h.verdict == "proposed"}
    timed = doc.minutes_pre is not None and doc.minutes_blind is not None
    accepted = shown & pre
    missed = gold - shown - proposed
    row = {
        "minutes_pre": doc.minutes_pre if timed else 0.0,
        "minutes_blind": doc.minutes_blind if timed else 0.0,
        "gold_timed": len(gold) if timed else 0,
        "gold": len(gold),
        "found_pre": len(gold & pre),
        "found_blind": len(gold & blind),
        "accepted": len(accepted),
        "accepted_not_blind": len(accepted - blind),
        "missed_by_candidates": len(missed),
        "missed_too_pre": len(missed - pre),
        "missed_too_blind": len(missed - blind),
        "proposed": len(proposed),
        "proposed_in_gold": len(proposed & gold),
    }
    return np.array([row[name] for name in _COLUMNS], dtype=float)


def _metrics(sums: np.ndarray) -> dict[str, np.ndarray]:
    """Every figure from summed columns (rows: the estimate, or one resample each)."""
    s = {name: sums[:, i] for name, i in _AT.items()}
    pre_minutes = ratio(s["minutes_pre"], s["gold_timed"])
    blind_minutes = ratio(s["minutes_blind"], s["gold_timed"])
    recall_pre, recall_blind = ratio(s["found_pre"], s["gold"]), ratio(s["found_blind"], s["gold"])
    missed_pre = ratio(s["missed_too_pre"], s["missed_by_candidates"])
    missed_blind = ratio(s["missed_too_blind"], s["missed_by_candidates"])
    return {
        "minutes_per_mention_pre": pre_minutes,
        "minutes_per_mention_blind": blind_minutes,
        "minutes_saved_per_mention": blind_minutes - pre_minutes,
        "time_saving": 1 - ratio(s["minutes_pre"], s["minutes_blind"]),
        "recall_pre": recall_pre,
        "recall_blind": recall_blind,
        "recall_difference": recall_pre - recall_blind,
        "accepted_not_blind": ratio(s["accepted_not_blind"], s["accepted"]),
        "missed_too_pre": missed_pre,
        "missed_too_blind": missed_blind,
        "missed_too_difference": missed_pre - missed_blind,
        "proposed_in_gold": ratio(s["proposed_in_gold"], s["proposed"]),
        **headline_f1(sums[:, len(_COLUMNS) :]),
    }


@dataclass(frozen=True)
class Crossing:
    """Whether people are crossed over the two conditions (``crossed``: ``None`` when some pair
    does not name its people) and who annotated in one condition only."""

    crossed: bool | None
    only_with_candidates: list[str]
    only_without_candidates: list[str]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EffectFigure:
    """One figure over the pairs: its value, its interval, and what it estimates (``FIGURES``)."""

    value: float | None
    interval: list[float | None] | None
    estimates: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class EffectReport:
    """:func:`effect_report`'s figures; :meth:`to_dict` is the JSON the effect report holds."""

    paired_documents: int
    timed_pairs: int
    with_candidates: list[str]  # who annotated with the candidates, sorted
    without_candidates: list[str]
    crossing: Crossing
    figures: dict[str, EffectFigure]  # by name, in FIGURES' order
    alpha_spans: AlphaU  # between the two conditions, unweighted (of the sample)
    alpha_relations: AlphaU
    design: CorpusFigures  # only its design is written: n_docs, n_strata, population_docs, …
    bootstrap: int
    seed: int
    level: float = 0.95

    def to_dict(self) -> dict[str, Any]:
        return {
            "paired_documents": self.paired_documents,
            "timed_pairs": self.timed_pairs,
            "annotators": {
                "with_candidates": self.with_candidates,
                "without_candidates": self.without_candidates,
            },
            "crossing": self.crossing.to_dict(),
            "figures": {name: figure.to_dict() for name, figure in self.figures.items()},
            "alpha_u": {
                "spans": {"value": self.alpha_spans.value, "interval": self.alpha_spans.interval},
                "relations": {
                    "value": self.alpha_relations.value,
                    "interval": self.alpha_relations.interval,
                },
                "of": "sample",
            },
            "design": self.design.design(),
            "bootstrap": {"n": self.bootstrap, "seed": self.seed, "level": self.level},
        }


def effect_report(
    paired: Sequence[PairedDocument],
    kb: KB | None,
    *,
    design: Design | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
) -> EffectReport:
    """The figures over ``paired`` (each an :class:`EffectFigure`), the design's
    summary, how many documents each part used, and α_u between the two conditions (unweighted,
    of the sample, as the agreement suite gives it).

    ``design``: the pairs' weights and cells, in ``paired``'s order; a campaign's come from
    ``studio.campaign_agreement.campaign_design`` (the pairs as a random part of each batch of the
    campaign's draw, the one design ``agree`` weighs its double documents by). Without it the
    pairs are the whole sample (their own ``p_incl``; none: equal weights)."""
    documents = [p.document for p in paired]
    if design is None:
        design = read_design(documents) or read_design(documents, "ignore")
    assert design is not None  # "ignore" always gives equal weights
    if len(design.weights) != len(paired):
        raise ValueError(f"a design of {len(design.weights)} documents for {len(paired)} pairs")
    conditions = [
        (
            p.document.model_copy(update={"ground_truth": list(p.pre)}),
            p.document.model_copy(update={"ground_truth": list(p.blind)}),
        )
        for p in paired
    ]
    per_document = np.hstack(
        [
            np.array([document_counts(p) for p in paired]).reshape(len(paired), len(_COLUMNS)),
            headline_counts(conditions, kb),
        ]
    )
    corpus = corpus_figures(per_document, _metrics, design, bootstrap, seed)
    figures = {
        name: EffectFigure(corpus.values[name], corpus.intervals.get(name), what)
        for name, what in FIGURES.items()
    }
    agreement = span_agreement(conditions, kb, n_boot=bootstrap, seed=seed)
    timed = sum(p.minutes_pre is not None and p.minutes_blind is not None for p in paired)
    return EffectReport(
        paired_documents=len(paired),
        timed_pairs=timed,
        with_candidates=sorted({p.pre_annotator for p in paired}),
        without_candidates=sorted({p.blind_annotator for p in paired}),
        crossing=crossing(paired),
        figures=figures,
        alpha_spans=agreement.alpha_spans,
        alpha_relations=agreement.alpha_relations,
        design=corpus,
        bootstrap=bootstrap,
        seed=seed,
    )


def crossing(paired: Sequence[PairedDocument]) -> Crossing:
    """Whether people are crossed over the two conditions: ``crossed`` is false when some person
    annotated in one condition only, for then what that person does differently is read as the
    candidates' effect (the two are confounded); ``None`` when some pair does not name its
    people. ``only_with_candidates`` / ``only_without_candidates`` name those people."""
    pre = {p.pre_annotator for p in paired}
    blind = {p.blind_annotator for p in paired}
    only_pre, only_blind = sorted(pre - blind), sorted(blind - pre)
    named = "" not in pre | blind
    return Crossing(
        crossed=not (only_pre or only_blind) if named else None,
        only_with_candidates=only_pre if named else [],
        only_without_candidates=only_blind if named else [],
    )


def effect_png(report: EffectReport) -> bytes:
    """The chart as PNG bytes (the door writes them with the JSON, as one commit): two panels,
    with and without pre-annotation, each with its 95% interval: minutes per final-gold mention,
    and recall against the final gold."""
    import matplotlib  # matplotlib loads only when a chart is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(PNG_FIGURES), figsize=(9, 3.6))
    for axis, (title, pre, blind) in zip(axes, PNG_FIGURES, strict=True):
        values, lows, highs = [], [], []
        for name in (pre, blind):
            figure = report.figures[name]
            value = figure.value if figure.value is not None else np.nan
            low, high = figure.interval or (None, None)
            values.append(value)
            lows.append(value - low if low is not None else 0.0)
            highs.append(high - value if high is not None else 0.0)
        axis.bar([0, 1], values, color=["#3070b0", "#f0a030"],
                 yerr=[lows, highs], capsize=6)  # fmt: skip
        axis.set_xticks([0, 1], ["with candidates", "without"])
        axis.set_title(title)
    fig.suptitle(f"{report.paired_documents} paired blind documents, 95% intervals")
    fig.tight_layout()
    chart = io.BytesIO()
    fig.savefig(chart, format="png", dpi=100)
    plt.close(fig)
    return chart.getvalue()
