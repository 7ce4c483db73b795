"""Scoring systems on the gold: span matching, nervaluate schemas, regimes, intervals, baselines."""
