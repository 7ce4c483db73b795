"""The words that say how a gold is scored, in a module without numpy: a door lists and checks
them before it imports the scoring (:mod:`goldloop.scoring.regimes`, :mod:`goldloop.scoring.design`,
:mod:`goldloop.scoring.plan`, :mod:`goldloop.scoring.baselines`)."""

from __future__ import annotations

REGIMES = ("end-to-end", "linking-only")
"""What a system is scored on: spans and ids together, or ids on the gold's spans."""
BASELINES = ("lexical", "encoder", "llm")
"""The baselines a gold can be scored with."""
DESIGN_MODES = ("use", "ignore")
"""Whether corpus figures weight documents by 1/p_incl (``use``) or equally (``ignore``)."""
METRICS: dict[str, tuple[tuple[str, ...], tuple[str, ...], float]] = {
    # figure: (numerator columns, denominator columns, numerator factor)
    "f1": (("matched",), ("gold", "predicted"), 2.0),
    "precision": (("matched",), ("predicted",), 1.0),
    "recall": (("matched",), ("gold",), 1.0),
    "entity_accuracy": (("id_correct",), ("id_comparable",), 1.0),
}
"""The corpus figures a plan aims at, each a ratio of per-document count columns."""
