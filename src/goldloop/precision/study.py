"""Drawing the sample to label, and joining labels with verdicts into the corrected precision."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np

from goldloop.formats.gold import Document
from goldloop.llm.tasks.judge import CLOSE, OPEN
from goldloop.precision.mentions import JudgedMention, Label, PrecisionError
from goldloop.scoring.bootstrap import ratio
from goldloop.scoring.design import CorpusFigures, Design, corpus_figures
from goldloop.scoring.ppi import Estimate, is_calibrated, prediction_powered


def draw_sample(
    mentions: Sequence[JudgedMention], n: int, seed: int = 0, *, by_relation: bool = False
) -> list[JudgedMention]:
    """``n`` mentions drawn without replacement (all of them when there are fewer).

    ``by_relation`` gives each relation its proportional share (largest remainders), drawn at
    random within it: every mention keeps an inclusion chance near n/N, as PPI assumes, while
    no relation's share is left to luck.
    """
    ordered = sorted(mentions, key=lambda m: m.key)
    rng = random.Random(seed)
    n = min(n, len(ordered))
    if not by_relation:
        return rng.sample(ordered, n)
    strata: dict[str, list[JudgedMention]] = {}
    for mention in ordered:
        strata.setdefault(mention.entity_id, []).append(mention)
    quotas = {rel: n * len(members) / len(ordered) for rel, members in strata.items()}
    counts = {rel: int(q) for rel, q in quotas.items()}
    by_remainder = sorted(quotas, key=lambda rel: (counts[rel] - quotas[rel], rel))
    for rel in by_remainder[: n - sum(counts.values())]:
        counts[rel] += 1
    drawn = [m for rel in sorted(strata) for m in rng.sample(strata[rel], counts[rel])]
    rng.shuffle(drawn)
    return drawn


def labelling_row(mention: JudgedMention, text: str) -> dict[str, Any]:
    """A row to label: the claim and its passage, the judge's verdict left out."""
    return {
        "key": mention.key,
        "doc_id": mention.doc_id,
        "a": mention.a,
        "b": mention.b,
        "entity_id": mention.entity_id,
        "surface": mention.surface,
        "relation": mention.label,
        "direction": mention.direction,
        "passage": f"{text[: mention.a]}{OPEN}{mention.surface}{CLOSE}{text[mention.b :]}",
        "label": None,
    }


def labelling_rows(
    sample: Sequence[JudgedMention], documents: dict[str, Document], source: str = "verdicts"
) -> list[dict[str, Any]]:
    """Rows to label; each mention's surface is taken from its document (a verdicts file need
    not carry it), and a mention that does not fit its document names ``source`` and itself."""
    return [labelling_row(*_fitted(mention, documents, source)) for mention in sample]


def check_fit(
    mentions: Sequence[JudgedMention], documents: dict[str, Document], source: str = "verdicts"
) -> None:
    """Every mention lies in its document with its surface (not only those drawn)."""
    for mention in mentions:
        _fitted(mention, documents, source)


def _fitted(
    mention: JudgedMention, documents: dict[str, Document], source: str
) -> tuple[JudgedMention, str]:
    """The mention with its document's surface, and the document's text."""
    where = f"{source}: mention {mention.key}"
    document = documents.get(mention.doc_id)
    if document is None:
        raise PrecisionError(f"{where}: no document {mention.doc_id!r} among the documents")
    text = document.text
    if not 0 <= mention.a < mention.b <= len(text):
        raise PrecisionError(
            f"{where}: span [{mention.a}, {mention.b}) lies outside its document "
            f"(length {len(text)})"
        )
    surface = text[mention.a : mention.b]
    if mention.surface and mention.surface != surface:
        raise PrecisionError(
            f"{where}: surface {mention.surface!r} differs from the document's "
            f"{surface!r}: were these verdicts judged on other texts?"
        )
    return replace(mention, surface=surface), text


@dataclass(frozen=True)
class LabelStudioLabels:
    """Where the labels came from when pulled from Label Studio: the project, its tasks, those
    labelled and not, and the cancelled and extra annotations left out."""

    project: str
    tasks: int
    labelled: int
    unlabelled: int
    cancelled_annotations: int
    extra_annotations: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PrecisionReport:
    n_judged: int
    n_labelled: int
    judge: Estimate
    corrected: Estimate
    labels: Estimate
    false_support: int
    lost_support: int
    verdicts: Counter[str] = field(default_factory=Counter)
    human_labels: Counter[str] = field(default_factory=Counter)
    unlabelled: int = 0
    unknown_keys: int = 0
    repeated: int = 0
    # The labelled mentions with their human label ("supported" or not), for corpus figures.
    labelled: list[tuple[JudgedMention, bool]] = field(default_factory=list)
    # The design-weighted figures (``corpus_precision``), None without the documents' design.
    corpus: CorpusFigures | None = None
    # None unless the labels were pulled from Label Studio.
    label_studio: LabelStudioLabels | None = None

    @property
    def calibrated(self) -> bool:
        return is_calibrated(self.n_labelled)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_judged": self.n_judged,
            "n_labelled": self.n_labelled,
            "judge": self.judge.to_dict(),
            "corrected": self.corrected.to_dict(),
            "labels": self.labels.to_dict(),
            "calibrated": self.calibrated,
            "judge_on_sample": {
                "false_support": self.false_support,
                "lost_support": self.lost_support,
            },
            "verdicts": dict(sorted(self.verdicts.items())),
            "human_labels": dict(sorted(self.human_labels.items())),
            "left_out": {
                "unlabelled": self.unlabelled,
                "unknown_mention": self.unknown_keys,
                "repeated": self.repeated,
            },
            "corpus": None if self.corpus is None else self.corpus.to_dict(),
            **({} if self.label_studio is None else {"label_studio": self.label_studio.to_dict()}),
        }


def precision_report(verdicts: Sequence[JudgedMention], labels: Sequence[Label]) -> PrecisionReport:
    """Join labels to verdicts on the mention key; unlabelled, unknown and repeated are counted."""
    by_key = {m.key: m for m in verdicts}
    counts = Counter(label.key for label in labels)
    pairs: list[tuple[bool, bool]] = []
    joined: list[tuple[JudgedMention, bool]] = []
    human: Counter[str] = Counter()
    unlabelled = unknown = repeated = 0
    for label in labels:
        if label.label is None:
            unlabelled += 1
        elif label.key not in by_key:
            unknown += 1
        elif counts[label.key] > 1:
            repeated += 1
        else:
            human[label.label] += 1
            pairs.append((by_key[label.key].verdict == "supported", label.label == "supported"))
            joined.append((by_key[label.key], label.label == "supported"))
    if not pairs:
        raise PrecisionError(
            f"no label joins a judged mention ({unlabelled} unlabelled, {unknown} naming no "
            f"judged mention, {repeated} repeated)"
        )
    judge, corrected, labelled = prediction_powered(
        [m.verdict == "supported" for m in verdicts], pairs
    )
    return PrecisionReport(
        n_judged=len(verdicts),
        n_labelled=len(pairs),
        judge=judge,
        corrected=corrected,
        labels=labelled,
        false_support=sum(f and not y for f, y in pairs),
        lost_support=sum(y and not f for f, y in pairs),
        verdicts=Counter(m.verdict or "" for m in verdicts),
        human_labels=human,
        unlabelled=unlabelled,
        unknown_keys=unknown,
        repeated=repeated,
        labelled=joined,
    )


def corpus_precision(
    verdicts: Sequence[JudgedMention],
    report: PrecisionReport,
    documents: Sequence[Document],
    design: Design,
    bootstrap: int,
    seed: int,
) -> CorpusFigures:
    """The ``corpus`` object of a precision report: each mention weighs its document's ``w``.

    ``corrected`` = Σ w·f / Σ w (judged) + Σ w·(y − f) / Σ w (labelled), PPI with weighted
    means; ``judge`` and ``labels`` are the two weighted shares alone. Intervals come from the
    stratified bootstrap over documents, each resampled with its judged and labelled mentions.
    """
    index = {d.doc_id: i for i, d in enumerate(documents)}
    # Per document: judged mentions, those the judge supports, labelled, labelled supported,
    # and Σ (y - f) over the labelled.
    counts = np.zeros((len(documents), 5))
    for mention in verdicts:
        row = _row(index, mention)
        counts[row, 0] += 1
        counts[row, 1] += mention.verdict == "supported"
    for mention, supported in report.labelled:
        row = _row(index, mention)
        counts[row, 2] += 1
        counts[row, 3] += supported
        counts[row, 4] += supported - (mention.verdict == "supported")
    return corpus_figures(counts, _precision_figures, design, bootstrap, seed)


def _row(index: dict[str, int], mention: JudgedMention) -> int:
    row = index.get(mention.doc_id)
    if row is None:
        raise PrecisionError(
            f"mention {mention.key}: no document {mention.doc_id!r} among the documents"
        )
    return row


def _precision_figures(s: np.ndarray) -> dict[str, np.ndarray]:
    judge = ratio(s[:, 1], s[:, 0])
    return {
        "corrected": np.clip(judge + ratio(s[:, 4], s[:, 2]), 0.0, 1.0),
        "judge": judge,
        "labels": ratio(s[:, 3], s[:, 2]),
    }
