"""The gate's memory: fixed-size digests, at most 64 bytes per eligible row however many rows."""

from __future__ import annotations

import random
import re
import tracemalloc
from collections.abc import Iterator

from goldloop.sample.corpus import CorpusRecord
from goldloop.sample.gate import (
    FUNCTION_WORDS,
    DigestSet,
    Gate,
    GateSettings,
    count_sentences,
    english_share,
    has_sentences,
    is_english,
)

TEXT = (
    "Interleukin-6 activates STAT3 in cultured hepatocytes within minutes of exposure. "
    "STAT3 phosphorylation is inhibited by SOCS3, which is itself induced by the same cytokine. "
    "We show that prolonged exposure reduces the transcriptional response of the liver cells. "
)


SENTENCES_SAMPLE = "Values rose (p < 0.05). The e.g. case stays one. 3 cells died."


def _records(n: int) -> Iterator[CorpusRecord]:
    for i in range(n):
        pmid = str(10_000_000 + i)
        yield CorpusRecord(
            row=i + 1,
            doc_id=f"pmid:{pmid}",
            doc_uid=pmid,
            ids={"pmid": pmid, "doi": None, "openalex": None, "mag": None, "pmcid": None},
            year=2001,
            text=f"{TEXT}Sample {i} was measured twice, in two separate runs of the assay.",
        )


def test_gate_memory_grows_by_at_most_64_bytes_per_eligible_row() -> None:
    n = 60_000
    gate = Gate(GateSettings())
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        for record in _records(n):
            gate.admit(record)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert gate.passed == n
    # A set of the texts' sha1 strings plus one of the doc_ids, as before, took ~230 bytes a row.
    assert peak / n <= 64, f"{peak / n:.1f} bytes per eligible row"


def test_duplicates_are_still_found_after_the_digest_table_grows() -> None:
    gate = Gate(GateSettings())
    records = list(_records(3000))
    assert all(gate.admit(r) for r in records)
    again = [records[5], records[2999]]
    assert [gate.reason(r) for r in again] == ["duplicate_text", "duplicate_text"]
    same_id = CorpusRecord(1, records[7].doc_id, "x", records[7].ids, 2001, TEXT * 2)
    assert gate.reason(same_id) == "duplicate_id"
    assert gate.rows == 3000 and gate.passed == 3000


def test_digest_set_keeps_every_member_across_growth() -> None:
    rng = random.Random(1)
    members = {rng.getrandbits(64) for _ in range(5000)} | {0}
    digests = DigestSet()
    for digest in members:
        digests.add(digest)
        digests.add(digest)
    assert len(digests) == len(members)
    assert all(d in digests for d in members)
    others = [rng.getrandbits(64) for _ in range(5000)]
    assert sum(d in digests for d in others if d not in members) == 0


def test_english_share_ascii_fast_path_matches_the_word_rule() -> None:
    def reference(text: str) -> float:  # the rule as documented: letter runs, casefolded
        words = re.findall(r"[^\W\d_]+", text.casefold())
        return sum(w in FUNCTION_WORDS for w in words) / len(words) if words else 0.0

    texts = [TEXT, "the 3rd of May and/or the_end", "A1B THE", "Über die Wirkung der Zellen", ""]
    for text in texts + [t + " é" for t in texts]:
        assert english_share(text) == reference(text), text


def test_has_sentences_agrees_with_count_sentences() -> None:
    rng = random.Random(3)
    pieces = ["Word", "word", ". ", "! ", "? ", '." ', ".) ", " (", "A", "3", "e.g. x", "\n", "  "]
    texts = ["", " ", "One.", SENTENCES_SAMPLE, *("".join(rng.choices(pieces, k=rng.randint(1, 30)))
                                                for _ in range(3000))]  # fmt: skip
    for text in texts:
        for n in range(5):
            assert has_sentences(text, n) == (count_sentences(text) >= n), (text, n)


def _reference_reason(
    record: CorpusRecord, s: GateSettings, seen: set[str], ids: set[str]
) -> str | None:
    """The gate's rule written plainly: every check in order, full texts in Python sets."""
    text = record.text
    if record.doc_id is None:
        return "no_identifier"
    if record.year is None:
        return "no_year"
    if record.year < s.min_year:
        return "year_before_min"
    if len(text) < s.min_chars:
        return "too_short"
    if len(text) > s.max_chars:
        return "too_long"
    stripped = text.strip()
    sentences = len(re.split(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])", stripped))
    if (sentences if stripped else 0) < s.min_sentences:
        return "too_few_sentences"
    words = re.findall(r"[^\W\d_]+", text.casefold())
    share = sum(w in FUNCTION_WORDS for w in words) / len(words) if words else 0.0
    if share < s.min_english_share:
        return "not_english"
    if text in seen:
        return "duplicate_text"
    if record.doc_id in ids:
        return "duplicate_id"
    return None


def test_gate_decisions_equal_a_plain_reference() -> None:
    # is_english settles most texts on their first words, has_sentences stops at the n-th
    # sentence: on generated and edge-case rows, every reason equals the plain rule's.
    rng = random.Random(11)
    english = ["the", "of", "and", "in", "The", "We", "is", "with", "THE", "Of", "a", "to"]
    other = ["cells", "STAT3", "Zellen", "und", "wurden", "p<0.05", "IL-6", "é", "ß", "3rd",
             "data_set", "(n=12)", "Über", "İN", "K", "--", "", "\n"]  # fmt: skip
    ends = [". ", "! ", "? ", '." ', ".) ", ", ", " "]
    texts = ["", " ", "The.", TEXT, TEXT.upper(), TEXT.replace(". ", "; "), TEXT + " é"]
    for _ in range(600):
        weight = rng.random()
        words = [rng.choice(english if rng.random() < weight else other) for _ in range(rng.randint(0, 120))]  # fmt: skip
        texts.append("".join(w + (rng.choice(ends) if rng.random() < 0.15 else " ") for w in words))
    settings = [GateSettings(min_chars=20, max_chars=2000, min_sentences=n, min_english_share=share)
                for n in (0, 1, 3) for share in (0.0, 0.2, 0.35)]  # fmt: skip
    for s in settings:
        gate = Gate(s)
        seen: set[str] = set()
        ids: set[str] = set()
        for i, text in enumerate(texts + texts[:50]):
            doc_id = None if i % 97 == 5 else f"pmid:{i % 500}"
            year = None if i % 89 == 3 else 1980 + i % 40
            record = CorpusRecord(i, doc_id, str(i), {"pmid": str(i)}, year, text)
            expected = _reference_reason(record, s, seen, ids)
            assert gate.reason(record) == expected, (s, text)
            assert gate.admit(record) == (expected is None)
            if expected is None:
                seen.add(text)
                ids.add(doc_id or "")
        for text in texts:
            words = re.findall(r"[^\W\d_]+", text.casefold())
            share = sum(w in FUNCTION_WORDS for w in words) / len(words) if words else 0.0
            assert english_share(text) == share
            assert is_english(text, s.min_english_share) == (share >= s.min_english_share)
