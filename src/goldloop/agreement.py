"""Agreement between two annotators under its documented name (code in
:mod:`goldloop.scoring.agreement`)."""

from goldloop.scoring.agreement import (
    NONE,
    AgreementError,
    AgreementReport,
    SpanPair,
    agreement,
    cohen_kappa,
    direction_pairs,
    pair_spans,
)

__all__ = [
    "NONE",
    "AgreementError",
    "AgreementReport",
    "SpanPair",
    "agreement",
    "cohen_kappa",
    "direction_pairs",
    "pair_spans",
]
