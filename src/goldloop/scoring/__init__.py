"""The scoring-side analyses: systems on the gold (one per-document span matcher, nervaluate
schemas, regimes, intervals, baselines), agreement between annotators, pooled relative recall,
capture–recapture completeness, and prediction-powered precision."""
