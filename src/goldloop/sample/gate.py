"""The eligibility gate: only plausible English research abstracts enter the sampling pool.

Checks run in a fixed order and a dropped row is counted under the first reason it fails.
Sentences are counted with a punctuation rule, not the parser, so the gate runs before any parse.
The duplicate checks remember 64-bit digests of texts and ids, never the texts, so the gate's
memory grows by at most 64 bytes per eligible row however long the corpus.
"""

from __future__ import annotations

import re
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
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
_FUNCTION_BYTES = frozenset(word.encode("ascii") for word in FUNCTION_WORDS)
_WORD = re.compile(r"[^\W\d_]+")
# ASCII letters lowercased, every other byte a space: the ASCII case of ``_WORD`` in one C call.
_ASCII_WORDS = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 else 32 for c in range(256))
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_BREAK_AT_PUNCTUATION = re.compile(r"[.!?][\"')\]]*\s+[\"'(\[]?[A-Z0-9]")


@dataclass(frozen=True)
class GateSettings:
    min_year: int = 1990
    min_chars: int = 300
    max_chars: int = 5000
    min_sentences: int = 3
    min_english_share: float = 0.2

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def count_sentences(text: str) -> int:
    """Sentences by terminal punctuation followed by a capital or digit (cheap, parser-free)."""
    stripped = text.strip()
    return len(_SENTENCE_BREAK.split(stripped)) if stripped else 0


def has_sentences(text: str, n: int) -> bool:
    """``count_sentences(text) >= n``, reading only as far as the n-th sentence."""
    stripped = text.strip()
    if n <= 1 or not stripped:
        return n <= 0 or (n == 1 and bool(stripped))
    # The same breaks as ``_SENTENCE_BREAK``, found by their punctuation first (much faster):
    # a break's next-sentence start can never be another break's punctuation.
    end = 0
    for _ in range(n - 1):
        found = _BREAK_AT_PUNCTUATION.search(stripped, end)
        if found is None:
            return False
        end = found.end()
    return True


def english_share(text: str) -> float:
    """The share of words that are English function words."""
    words, function_words = _words(text)
    return _count(function_words, words) / len(words) if words else 0.0


def is_english(text: str, min_share: float) -> bool:
    """``english_share(text) >= min_share``, most often settled by the text's first words."""
    if text.isascii():
        letters = text.encode("ascii").translate(_ASCII_WORDS)
        # Only the first 2/3 are split and looked up: the rest holds at most as many words as
        # spaces. English prose is about 40% function words, so the head's count over that bound
        # settles the usual threshold; float division is monotone, so it is a lower bound.
        cut = letters.find(b" ", 2 * len(letters) // 3)
        if cut > 0:
            head = letters[:cut].split()
            hits = _count(_FUNCTION_BYTES, head)
            if hits / (len(head) + letters.count(b" ", cut)) >= min_share:
                return True
            tail = letters[cut:].split()  # the cut is a space: no word spans it
            n = len(head) + len(tail)
            return (hits + _count(_FUNCTION_BYTES, tail)) / n >= min_share if n else min_share <= 0
    return english_share(text) >= min_share


def _words(text: str) -> tuple[Sequence[str | bytes], frozenset[str | bytes]]:
    """The text's letter runs (``_WORD``), casefolded, and the function words in that type."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_WORDS).split(), _FUNCTION_BYTES
    return _WORD.findall(text.casefold()), FUNCTION_WORDS


def _count(members: frozenset[str | bytes], words: Sequence[str | bytes]) -> int:
    return len([*filter(members.__contains__, words)])


class DigestSet:
    """A set of 64-bit digests in one flat array (open addressing, at most 3/4 full).

    About 11-21 bytes per member, 32 while it doubles: a Python ``set`` of the same digests
    takes over 60.
    """

    def __init__(self) -> None:
        self._slots = array("Q", [0]) * 1024
        self._mask = 1023
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def __contains__(self, digest: int) -> bool:
        return self.slot(digest) is None

    def add(self, digest: int) -> None:
        slot = self.slot(digest)
        if slot is not None:
            self.put(slot, digest)

    def slot(self, digest: int) -> int | None:
        """Where ``digest`` would go, or ``None`` when it is a member (for :meth:`put`)."""
        digest = digest or 1  # 0 marks an empty slot
        slots, mask = self._slots, self._mask
        # The digest's low bits are uniform already: SipHash made them.
        i = digest & mask
        while (held := slots[i]) != digest:
            if held == 0:
                return i
            i = (i + 1) & mask
        return None

    def put(self, slot: int, digest: int) -> None:
        """Store ``digest`` in the ``slot`` that :meth:`slot` gave, with no change in between."""
        self._slots[slot] = digest or 1
        self._size += 1
        if 4 * self._size > 3 * len(self._slots):
            self._grow()

    def _grow(self) -> None:
        old = self._slots
        self._slots = array("Q", [0]) * (2 * len(old))  # no temporary buffer
        self._mask = len(self._slots) - 1
        for digest in old:
            if digest:
                self._slots[self.slot(digest)] = digest  # type: ignore[index]


def _digest(value: str) -> int:
    """A 64-bit digest for the duplicate checks: Python's own string hash (SipHash, keyed per
    process, computed in C). The set lives for one pass, so a per-process key is enough, and
    64 bits make a collision unlikely before billions of rows."""
    return hash(value) & 0xFFFF_FFFF_FFFF_FFFF


@dataclass
class Gate:
    """Checks records one by one, remembering digests of the texts and ids admitted;
    ``dropped`` counts each reason."""

    settings: GateSettings
    excluded_ids: frozenset[str] = frozenset()
    excluded_hashes: frozenset[str] = frozenset()
    dropped: Counter[str] = field(default_factory=Counter)
    passed: int = 0
    _seen: DigestSet = field(default_factory=DigestSet)
    _seen_ids: DigestSet = field(default_factory=DigestSet)

    def reason(self, record: CorpusRecord) -> str | None:
        """Why the record is not eligible, or ``None``; duplicates are checked last."""
        return self._check(record)[0]

    def admit(self, record: CorpusRecord) -> bool:
        """Check and count one record; an eligible record's digests are remembered."""
        why, text_slot, id_slot = self._check(record)
        if why is not None:
            self.dropped[why] += 1
            return False
        self._seen.put(text_slot, _digest(record.text))
        self._seen_ids.put(id_slot, _digest(record.doc_id or ""))
        self.passed += 1
        return True

    def _check(self, record: CorpusRecord) -> tuple[str | None, int, int]:
        """The first failed check (in ``GATE_REASONS`` order) and, when every check passes, the
        free slots of the text's and the id's digests."""
        s = self.settings
        text, year = record.text, record.year
        if record.doc_id is None:
            return "no_identifier", -1, -1
        if (self.excluded_hashes or self.excluded_ids) and self._excluded(record):
            return "in_excluded_corpus", -1, -1
        if year is None:
            return "no_year", -1, -1
        if year < s.min_year:
            return "year_before_min", -1, -1
        if len(text) < s.min_chars:
            return "too_short", -1, -1
        if len(text) > s.max_chars:
            return "too_long", -1, -1
        if not has_sentences(text, s.min_sentences):
            return "too_few_sentences", -1, -1
        if not is_english(text, s.min_english_share):
            return "not_english", -1, -1
        text_slot = self._seen.slot(_digest(text))
        if text_slot is None:
            return "duplicate_text", -1, -1
        id_slot = self._seen_ids.slot(_digest(record.doc_id))
        if id_slot is None:
            return "duplicate_id", -1, -1
        return None, text_slot, id_slot

    def _excluded(self, record: CorpusRecord) -> bool:
        return record.text_sha1 in self.excluded_hashes or any(
            key in self.excluded_ids for key in record_keys(record)
        )

    @property
    def rows(self) -> int:
        """Rows checked so far (each either admitted or dropped)."""
        return self.passed + sum(self.dropped.values())

    def counts(self) -> dict[str, int]:
        """Rows dropped per reason, every reason in ``GATE_REASONS`` order. A mapping, not a
        report: the pool cache records it as it is, and a batch's report reads it back."""
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
