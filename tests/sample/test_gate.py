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
