"""Dataset statistics under their documented name (code in :mod:`goldloop.sample.stats`)."""

from goldloop.sample.stats import (
    corpus_stats,
    dataset_stats,
    describe,
    gold_stats,
    kb_stats,
    sample_stats,
)

__all__ = [
    "corpus_stats",
    "dataset_stats",
    "describe",
    "gold_stats",
    "kb_stats",
    "sample_stats",
]
