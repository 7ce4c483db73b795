"""Scoring systems and annotators: span matching, schemas, intervals, precision without gold."""
