"""The span table: each document's counts read off its overlapping pairs are the greedy
matcher's, per group, on random and tangled documents."""

from __future__ import annotations

import random

import numpy as np
import pytest

from goldloop.formats.gold import Document, Hit
from goldloop.scoring.span_table import Labelled, SpanTable, group_counts, span_counts


def _random_side(rng: random.Random, messy: bool) -> list[Labelled]:
    """Spans of one side: in 20-character slots (each overlaps at most one of the other side's),
    or anywhere, nested, repeated, empty and reversed too."""
    out: list[Labelled] = []
    for slot in range(rng.randrange(8)):
        if messy:
            a = rng.randrange(60)
            b = a + rng.choice([-2, 0, 1, 3, 8, 25])
        else:
            a = 20 * slot + rng.randrange(6)
            b = a + rng.randint(1, 12)
        out.append((a, b, rng.choice(["R1", "R2", "R3"]), rng.choice(["forward", "inverse"])))
        if messy and rng.random() < 0.2:
            out.append((*out[-1][:2], rng.choice(["R1", "R2"]), "forward"))
    return out


def _overlaps_two(side: list[Labelled], other: list[Labelled]) -> bool:
    return any(sum(a < y and x < b for x, y, _, _ in other) > 1 for a, b, _, _ in side)


@pytest.mark.parametrize("seed", range(30))
def test_counts_read_off_overlapping_pairs_equal_the_matchers(seed: int) -> None:
    # span_counts reads most documents' pairs off their overlaps instead of running the greedy
    # matcher per relation and direction: the same counts as group_counts on every document.
    rng = random.Random(seed)
    labelled_a, labelled_b = [], []
    for _ in range(40):
        messy = rng.random() < 0.3
        labelled_a.append(_random_side(rng, messy))
        labelled_b.append(_random_side(rng, messy and rng.random() < 0.7))
    # A span whose one overlapping span starts before another that ends at or before it.
    for end in (12, 20):
        labelled_a.append([(20, 30, "R1", "forward")])
        labelled_b.append([(0, 40, "R1", "forward"), (5, end, "R2", "forward")])
    shared = [
        tuple(
            Document(
                doc_id=f"d{d}",
                text=" " * 200,
                ground_truth=[Hit(a=a, b=b, entity_id=r, direction=w) for a, b, r, w in side],
            )
            for side in sides
        )
        for d, sides in enumerate(zip(labelled_a, labelled_b, strict=True))
    ]
    table = SpanTable.of(shared, None)
    found = span_counts(table.labelled, table.groups, table.arrays, table.overlaps)
    assert found.dtype == np.int64
    assert np.array_equal(found, group_counts(labelled_a, labelled_b, table.groups))
    # Both kinds of document were there: ones read off their overlaps, and ones that are not.
    tangled = [
        _overlaps_two(a, b) or _overlaps_two(b, a) or any(x >= y for x, y, _, _ in a + b)
        for a, b in zip(labelled_a, labelled_b, strict=True)
    ]
    assert 0 < sum(tangled) < len(tangled)
