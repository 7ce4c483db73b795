"""The seed-compatible span scorer, under the name the seed gave it (code in
:mod:`goldloop.scoring.detection`)."""

from goldloop.scoring.detection import (
    GroundTruthScore,
    GtSpan,
    load_ground_truth_spans,
    score_predictions_against_ground_truth,
)

__all__ = [
    "GroundTruthScore",
    "GtSpan",
    "load_ground_truth_spans",
    "score_predictions_against_ground_truth",
]
