"""What scoring one system reports: the sections of a regime's figures and the score result
that carries them, each turned into JSON by its one ``to_dict()``."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    # Types only: scoring.report reads these results, and score's options load it without
    # numpy (the design's and the PPI's modules).
    from goldloop.scoring.design import CorpusFigures
    from goldloop.scoring.detection import GroundTruthScore
    from goldloop.scoring.ppi_corpus import PpiFigures


@dataclass(frozen=True)
class ScoreInputs:
    """What was read of a system's file: its format, rows seen and scored, rows left out by
    reason, and ids the id bridge could not map (None without a bridge)."""

    format: str
    rows: int
    scored: int
    malformed: dict[str, int]
    unmapped_by_id_bridge: int | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DirectionScore:
    """Direction on the mentions whose id was right and whose relation has a direction."""

    n_comparable: int
    n_correct: int

    @property
    def accuracy(self) -> float | None:
        return _share(self.n_correct, self.n_comparable)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_comparable": self.n_comparable,
            "n_correct": self.n_correct,
            "accuracy": self.accuracy,
        }


@dataclass(frozen=True)
class LinkingScore:
    """Linking-only's id decision: gold spans, those answered (an id on an aligned prediction)
    and answered right, and predictions aligned to no gold span."""

    n_gold: int
    n_answered: int
    n_correct: int
    unaligned_predictions: int

    @property
    def abstentions(self) -> int:
        return self.n_gold - self.n_answered

    @property
    def accuracy_overall(self) -> float | None:
        return _share(self.n_correct, self.n_gold)

    @property
    def accuracy_on_predicted(self) -> float | None:
        return _share(self.n_correct, self.n_answered)

    @property
    def coverage(self) -> float | None:
        return _share(self.n_answered, self.n_gold)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_gold": self.n_gold,
            "n_answered": self.n_answered,
            "abstentions": self.abstentions,
            "n_correct": self.n_correct,
            "accuracy_overall": self.accuracy_overall,
            "accuracy_on_predicted": self.accuracy_on_predicted,
            "coverage": self.coverage,
            "unaligned_predictions": self.unaligned_predictions,
        }


@dataclass(frozen=True)
class SliceScore:
    """One slice's gold mentions, those found (``found_name``: detected end-to-end, answered
    linking-only) and linked right; the relation's label on a relation slice; its intervals
    (``None`` without a bootstrap)."""

    label: str | None
    n_gold: int
    n_found: int
    n_correct: int
    found_name: str
    intervals: dict[str, list[float | None]] | None

    def shares(self) -> dict[str, float | None]:
        """The slice's figures by the names its intervals give them: ``found_name``,
        ``accuracy_on_found``, ``accuracy_overall``."""
        return {
            self.found_name: _share(self.n_found, self.n_gold),
            "accuracy_on_found": _share(self.n_correct, self.n_found),
            "accuracy_overall": _share(self.n_correct, self.n_gold),
        }

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.label is None else {"label": self.label}
        out |= {"n_gold": self.n_gold, "n_found": self.n_found, "n_correct": self.n_correct}
        out |= self.shares()
        if self.intervals is not None:
            out["intervals"] = self.intervals
        return out


Slices = dict[str, dict[str, SliceScore]]
"""Each slice's score by kind (``anchoring``, ``relation``, ``role``), then by key."""


def slices_dict(slices: Slices) -> dict[str, Any]:
    """The ``slices`` section's JSON form."""
    return {
        kind: {key: score.to_dict() for key, score in scores.items()}
        for kind, scores in slices.items()
    }


@dataclass(frozen=True)
class EndToEndFigures:
    """End-to-end's sections: detection (per document, and the seed scorer's compatibility
    line), direction, the schemas of ``engine``, the slices and the bootstrap intervals (``{}``
    without a bootstrap)."""

    detection: GroundTruthScore
    seed_detection: GroundTruthScore
    direction: DirectionScore
    engine: str
    schemas: dict[str, Any]
    slices: Slices
    intervals: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "detection": self.detection.to_dict(),
            # The scorer's name as reports have always given it (the seed's module name); the
            # code is goldloop.scoring.detection.
            "detection_seed_compatible": {
                "scorer": "goldloop.ground_truth",
                **self.seed_detection.to_dict(),
            },
            "direction": self.direction.to_dict(),
            "schemas": {"engine": self.engine, **self.schemas},
            "slices": slices_dict(self.slices),
            "intervals": self.intervals,
        }


@dataclass(frozen=True)
class LinkingOnlyFigures:
    """Linking-only's sections: the id decision, direction, the slices and the bootstrap
    intervals (``{}`` without a bootstrap)."""

    linking: LinkingScore
    direction: DirectionScore
    slices: Slices
    intervals: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "linking": self.linking.to_dict(),
            "direction": self.direction.to_dict(),
            "slices": slices_dict(self.slices),
            "intervals": self.intervals,
        }


class BaselineReport(Protocol):
    """What happened while a baseline ran: a score result's ``baseline`` object."""

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ScoreResult:
    """One system scored in one regime (the README gives its JSON fields).

    ``figures`` are the regime's sections in their order (end-to-end: detection,
    detection_seed_compatible, direction, schemas, slices, intervals; linking-only: linking,
    direction, slices, intervals); ``corpus`` the design-weighted figures, None without a
    design; ``corpus_ppi`` their prediction-powered estimates, with a surrogate part only. A run adds how long it took (``scoring_time_s``; a baseline ``wall_time_s`` and its
    ``baseline`` report).
    """

    system: str
    path: str | None
    regime: str
    match_mode: str
    inputs: ScoreInputs
    figures: EndToEndFigures | LinkingOnlyFigures
    corpus: CorpusFigures | None = None
    corpus_ppi: PpiFigures | None = None
    scoring_time_s: float | None = None
    wall_time_s: float | None = None
    baseline: BaselineReport | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "system": self.system,
            "path": self.path,
            "regime": self.regime,
            "match_mode": self.match_mode,
            "inputs": self.inputs.to_dict(),
            **self.figures.to_dict(),
            "corpus": None if self.corpus is None else self.corpus.to_dict(),
        }
        # Only when a surrogate part was given: without one the report reads as before.
        if self.corpus_ppi is not None:
            out["corpus_ppi"] = self.corpus_ppi.to_dict()
        # Only a run's own timing and report: score gives the first, a baseline the other two.
        if self.scoring_time_s is not None:
            out["scoring_time_s"] = self.scoring_time_s
        if self.wall_time_s is not None:
            out["wall_time_s"] = self.wall_time_s
        if self.baseline is not None:
            out["baseline"] = self.baseline.to_dict()
        return out


def _share(numerator: int, denominator: int) -> float | None:
    return None if denominator == 0 else numerator / denominator
