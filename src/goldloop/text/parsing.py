"""How a command parses: the spaCy pipelines to try and the parse cache to use.

Plain data without spaCy, so every layer that hands it on (pull, the sampler's workers, the
backend) imports it for nothing. A door builds it from its settings and passes it down to
:func:`goldloop.text.nlp.parse_many`; it pickles, so worker processes parse the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from goldloop.settings import DEFAULT_PARSE_CACHE_MB, SPACY_MODELS, Settings


@dataclass(frozen=True)
class Parsing:
    """The pipelines to try in order (the first that loads parses) and the parse cache's file
    and bound (no file: parse everything, store nothing). The default: the bundled pipelines,
    no cache."""

    models: tuple[str, ...] = SPACY_MODELS
    cache_path: Path | None = None
    cache_bytes: int = DEFAULT_PARSE_CACHE_MB * 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Settings) -> Parsing:
        """``GOLDLOOP_SPACY_MODEL`` first, then the bundled names; the settings' parse cache
        (none when ``GOLDLOOP_PARSE_CACHE=off`` or ``--no-parse-cache``)."""
        return cls(settings.spacy_model_names(), settings.parse_cache, settings.parse_cache_bytes)

    def without_cache(self) -> Parsing:
        return replace(self, cache_path=None)


__all__ = ["Parsing"]
