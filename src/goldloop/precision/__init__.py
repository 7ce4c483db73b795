"""Precision without gold: judge every mention a system wrote, label a random sample by hand,
and correct the judge with prediction-powered inference (``goldloop.scoring.ppi``)."""
