"""The eligibility gate: only plausible English research abstracts enter the sampling pool.

Checks run in a fixed order and a dropped row is counted under the first reason it fails.
Sentences are counted with a punctuation rule, not the parser, so the gate runs before any parse.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from goldloop.sample.corpus import CorpusRecord

GATE_REASONS = (
    "no_identifier",
    "in_excluded_corpus",
    "no_year",
    "year_before_min",
    "too_short",
    "too_long",
    "too_few_sentences",
    "not_english",
    "duplicate_text",
    "duplicate_id",
)
# Closed-class English words: their share separates English prose from other languages and
# from lists of names or numbers, whatever the topic.
FUNCTION_WORDS = frozenset({
    "a", "about", "after", "against", "all", "also", "an", "and", "any", "are", "as", "at", "be",
    "been", "before", "being", "between", "both", "but", "by", "can", "could", "did", "do",
    "does", "during", "each", "either", "for", "from", "had", "has", "have", "here", "how", "if",
    "in", "into", "is", "it", "its", "may", "might", "more", "most", "no", "nor", "not", "of",
    "on", "once", "only", "or", "other", "our", "over", "same", "should", "since", "so", "such",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "those",
    "through", "thus", "to", "under", "until", "upon", "was", "we", "were", "what", "when",
    "where", "whether", "which", "while", "who", "whose", "why", "will", "with", "within",
    "without", "would",
})  # fmt: skip
_WORD = re.compile(r"[^\W\d_]+")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")


@dataclass(frozen=True)
class GateSettings:
    min_year: int = 1990
    min_chars: int = 300
    max_chars: int = 5000
    min_sentences: int = 3
    min_english_share: float = 0.2

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def count_sentences(text: str) -> int:
    """Sentences by terminal punctuation followed by a capital or digit (cheap, parser-free)."""
    stripped = text.strip()
    return len(_SENTENCE_BREAK.split(stripped)) if stripped else 0


def english_share(text: str) -> float:
    """The share of words that are English function words."""
    words = _WORD.findall(text.casefold())
    return sum(word in FUNCTION_WORDS for word in words) / len(words) if words else 0.0


@dataclass
class Gate:
    """Checks records one by one, remembering texts seen; ``dropped`` counts each reason."""

    settings: GateSettings
    excluded_ids: frozenset[str] = frozenset()
    excluded_hashes: frozenset[str] = frozenset()
    dropped: Counter[str] = field(default_factory=Counter)
    passed: int = 0
    _seen: set[str] = field(default_factory=set)
    _seen_ids: set[str | None] = field(default_factory=set)

    def reason(self, record: CorpusRecord) -> str | None:
        """Why the record is not eligible, or ``None``; duplicates are checked last."""
        s = self.settings
        text = record.text
        checks = (
            ("no_identifier", lambda: record.doc_id is None),
            ("in_excluded_corpus", lambda: self._excluded(record)),
            ("no_year", lambda: record.year is None),
            ("year_before_min", lambda: record.year is not None and record.year < s.min_year),
            ("too_short", lambda: len(text) < s.min_chars),
            ("too_long", lambda: len(text) > s.max_chars),
            ("too_few_sentences", lambda: count_sentences(text) < s.min_sentences),
            ("not_english", lambda: english_share(text) < s.min_english_share),
            ("duplicate_text", lambda: record.text_sha1 in self._seen),
            ("duplicate_id", lambda: record.doc_id in self._seen_ids),
        )
        for name, failed in checks:
            if failed():
                return name
        return None

    def admit(self, record: CorpusRecord) -> bool:
        """Check and count one record; an eligible record's text is remembered for duplicates."""
        why = self.reason(record)
        if why is not None:
            self.dropped[why] += 1
            return False
        self._seen.add(record.text_sha1)
        self._seen_ids.add(record.doc_id)
        self.passed += 1
        return True

    def _excluded(self, record: CorpusRecord) -> bool:
        return record.text_sha1 in self.excluded_hashes or any(
            key in self.excluded_ids for key in record_keys(record)
        )

    def counts(self) -> dict[str, int]:
        return {reason: self.dropped.get(reason, 0) for reason in GATE_REASONS}


def record_keys(record: CorpusRecord) -> list[str]:
    """Every identifier of a record as ``kind:value`` (plus its ``doc_id``), for exclusion."""
    keys = [f"{kind}:{value}" for kind, value in record.ids.items() if value]
    if record.doc_id:
        keys.append(record.doc_id)
    return keys


def exclusion_sets(records: Iterable[CorpusRecord]) -> tuple[frozenset[str], frozenset[str]]:
    """Identifier keys and text hashes of an excluded corpus (such as the fit corpus)."""
    ids: set[str] = set()
    hashes: set[str] = set()
    for record in records:
        ids.update(record_keys(record))
        if record.text:
            hashes.add(record.text_sha1)
    return frozenset(ids), frozenset(hashes)
