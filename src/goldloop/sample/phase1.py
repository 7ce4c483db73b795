"""Phase 1 of two-phase sampling: one seeded random order of the eligible documents.

Each eligible document gets a 64-bit key, a keyed hash of its ``doc_id`` under the phase-1
seed; the order is ascending key. Its first ``n`` documents are a simple random sample without
replacement of the ``N`` eligible ones (inclusion probability ``n / N`` each), found in one
streaming pass that keeps only the ``n`` smallest keys. Growing phase 1 to ``n' > n`` takes the
first ``n'`` of the same order, so it always contains the smaller phase 1.
"""

from __future__ import annotations

import hashlib
import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from goldloop.sample.corpus import CorpusRecord

AUTO_MULTIPLE = 20  # ``auto``: phase 1 holds 20 batches' worth of documents


def order_key(seed: int | str, doc_id: str) -> int:
    """The document's place in the phase-1 order for ``seed`` (smaller comes first)."""
    digest = hashlib.blake2b(
        doc_id.encode("utf-8"), digest_size=8, key=str(seed).encode("utf-8")[:64]
    ).digest()
    return int.from_bytes(digest, "big")


@dataclass
class Phase1Draw:
    """The first ``n`` eligible records of the order, in order, and how many were eligible."""

    records: list[CorpusRecord]
    eligible: int


def first_in_order(records: Iterable[CorpusRecord], seed: int | str, n: int) -> Phase1Draw:
    """The ``n`` eligible ``records`` with the smallest keys (all of them when fewer)."""
    # Negated (key, row): the heap's root is the largest kept; equal keys keep the earlier row.
    heap: list[tuple[int, int, CorpusRecord]] = []
    eligible = 0
    for record in records:
        eligible += 1
        assert record.doc_id is not None  # the gate admits only identified records
        item = (-order_key(seed, record.doc_id), -record.row, record)
        if len(heap) < n:
            heapq.heappush(heap, item)
        elif item[:2] > heap[0][:2]:
            heapq.heapreplace(heap, item)
    ordered = sorted(heap, key=lambda item: (-item[0], -item[1]))
    return Phase1Draw([record for _, _, record in ordered], eligible)


def size_for(phase1: int | str, batch: int) -> int:
    """Phase-1 size asked for: a number, or ``auto`` = ``AUTO_MULTIPLE`` × the batch size."""
    if phase1 == "auto":
        return AUTO_MULTIPLE * batch
    return int(phase1)
