"""Krippendorff's α_u against an independent implementation written from the 2016 paper's words.

``reference_alpha`` counts coincidences character by character (every section of one annotator
that holds the character against every section of the other) and takes the expected
disagreement as a literal double sum over ordered pairs of distinct pairable elements (a unit of
length l, or one gap character), never through the marginal formula the module uses.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from goldloop.scoring.alpha_u import (
    Unit,
    UnitArrays,
    UnitTable,
    alpha_counts,
    alpha_u,
    category_index,
    unit_counts,
)

GAP = "∅"
Doc = tuple[int, Sequence[Unit], Sequence[Unit]]


def reference_alpha(documents: Sequence[Doc]) -> float | None:
    agree = total = 0
    elements: Counter[tuple[str, int]] = Counter()
    for length, units_a, units_b in documents:
        sides = [{u for u in units if u[1] > u[0]} for units in (units_a, units_b)]
        for x in range(length):
            holding = [[c for a, b, c in side if a <= x < b] or [GAP] for side in sides]
            # Both orders of the two annotators: (A, B) and (B, A) count alike.
            for first, second in (holding, holding[::-1]):
                for c in first:
                    for k in second:
                        total += 1
                        agree += c == k
        for side in sides:
            for a, b, c in side:
                elements[(c, b - a)] += 1
            elements[(GAP, 1)] += sum(
                not any(a <= x < b for a, b, _ in side) for x in range(length)
            )
    same = pairs = 0
    # Ordered pairs of distinct elements, grouped by (category, length): a group of m elements
    # pairs with itself m (m - 1) times, with another group m m' times.
    for (c, l1), m1 in elements.items():
        for (k, l2), m2 in elements.items():
            count = m1 * (m1 - 1) if (c, l1) == (k, l2) else m1 * m2
            pairs += count * l1 * l2
            same += count * l1 * l2 if c == k else 0
    if total == 0 or pairs == 0:
        return None
    expected = 1 - same / pairs
    if expected <= 1e-12:
        return None
    return 1 - (1 - agree / total) / expected


def random_units(rng: random.Random, length: int, categories: list[str], n: int) -> list[Unit]:
    units = []
    for _ in range(n):
        a = rng.randrange(0, max(length, 1))
        b = min(length, a + rng.randint(1, 12))
        units.append((a, b, rng.choice(categories)))
    return units


def check(documents: Sequence[Doc]) -> float | None:
    ours = alpha_u(documents, n_boot=0).value
    expected = reference_alpha(documents)
    if expected is None:
        assert ours is None
    else:
        assert ours == pytest.approx(expected, abs=1e-9)
    return ours


@pytest.mark.parametrize("seed", range(30))
def test_alpha_u_equals_the_reference_on_random_cases(seed: int) -> None:
    rng = random.Random(seed)
    categories = ["R1", "R2", "R3"][: rng.randint(1, 3)]
    documents = []
    for _ in range(rng.randint(1, 4)):
        length = rng.randint(0, 60)
        units_a = random_units(rng, length, categories, rng.randint(0, 6)) if length else []
        # B copies some of A's units, moves some and adds its own: overlapping, nested, shifted.
        units_b = [
            (a, min(length, b + rng.randint(-2, 2)), c) if rng.random() < 0.4 else (a, b, c)
            for a, b, c in units_a
            if rng.random() < 0.8
        ]
        units_b += random_units(rng, length, categories, rng.randint(0, 3)) if length else []
        documents.append((length, units_a, units_b))
    check(documents)


def test_identical_annotations_agree_perfectly() -> None:
    units = [(0, 5, "R1"), (10, 20, "R2"), (12, 15, "R2")]  # nested within one annotator
    assert check([(30, units, units)]) == 1.0


def test_hand_made_case() -> None:
    # L = 10, A: [0, 4), B: [2, 6). Coincidences per order: unit–unit 2, A's unit–B's gap 2,
    # A's gap–B's unit 2, gap–gap 4: agreement (2 + 4) / 10. Elements: two units of 4, six gap
    # characters per annotator, so n = (8, 12), s = (32, 12), N = 20.
    # D_e = 1 − (8² − 32 + 12² − 12) / (20² − 44) = 1 − 164 / 356; D_o = 0.4.
    expected = 1 - 0.4 / (1 - 164 / 356)
    assert check([(10, [(0, 4, "x")], [(2, 6, "x")])]) == pytest.approx(expected, abs=1e-12)


def test_undefined_cases() -> None:
    assert check([]) is None
    assert check([(0, [], [])]) is None  # an empty document
    assert check([(20, [], [])]) is None  # nothing marked: one category throughout
    assert check([(5, [(0, 5, "x")], [(0, 5, "x")])]) is None  # everything one unit


def test_one_side_empty_disagrees() -> None:
    value = check([(40, [(0, 5, "x"), (10, 20, "y")], [])])
    assert value is not None and value < 0


def test_the_interval_covers_the_truth_in_a_seeded_simulation() -> None:
    # Two annotators copy a true segmentation and each drops or moves a unit with a known rate;
    # the interval over 60 documents should cover the α_u of a very large run most of the time.
    def simulate(rng: random.Random, n_docs: int) -> list[Doc]:
        documents: list[Doc] = []
        for _ in range(n_docs):
            truth = [(k * 40 + rng.randrange(10), k * 40 + 20, "x") for k in range(5)]

            def copy(units: list[Unit]) -> list[Unit]:
                return [
                    (max(0, a + rng.randint(-3, 3)), b, c) if rng.random() < 0.3 else (a, b, c)
                    for a, b, c in units
                    if rng.random() < 0.85
                ]

            documents.append((200, copy(truth), copy(truth)))
        return documents

    truth_value = alpha_u(simulate(random.Random(999), 3000), n_boot=0).value
    assert truth_value is not None
    covered = 0
    for seed in range(40):
        found = alpha_u(simulate(random.Random(seed), 60), n_boot=300, seed=seed)
        low, high = found.interval
        assert low is not None and high is not None
        covered += low <= truth_value <= high
    assert covered >= 33, covered  # 95% nominal; 33 of 40 leaves room for chance


def test_document_order_does_not_matter() -> None:
    rng = random.Random(3)
    documents = [(50, random_units(rng, 50, ["a", "b"], 5), random_units(rng, 50, ["a", "b"], 5))]
    documents += [(30, random_units(rng, 30, ["a"], 3), random_units(rng, 30, ["b"], 3))]
    assert alpha_u(documents, n_boot=0).value == pytest.approx(
        alpha_u(documents[::-1], n_boot=0).value, abs=1e-12
    )
    check(documents)


@pytest.mark.parametrize("seed", range(10))
def test_documents_laid_end_to_end_count_alone(seed: int) -> None:
    """Counting every document at once leaks nothing across documents: each row equals that
    document's row with all the others' units removed (and their rows are then pure gap)."""
    rng = random.Random(seed)
    documents: list[Doc] = []
    for _ in range(rng.randint(1, 6)):
        length = rng.choice([0, 1, 8, 30, 60])
        documents.append(
            (
                length,
                random_units(rng, length, ["a", "b", "c"], rng.randint(0, 6)) if length else [],
                random_units(rng, length, ["a", "b", "c"], rng.randint(0, 6)) if length else [],
            )
        )
    # A last document holding every category keeps the columns the same in every call.
    every: Doc = (3, [(0, 1, c) for c in "abc"], [])
    together = alpha_counts([*documents, every])
    width = together.shape[1]
    for d in range(len(documents)):
        alone = alpha_counts(
            [doc if k == d else (doc[0], [], []) for k, doc in enumerate(documents)] + [every]
        )
        assert alone[d].tolist() == together[d].tolist()
        for k, (other, _, _) in enumerate(documents):
            if k != d:
                # Nothing marked: every character is gap on both sides, and agrees.
                gap = [other, other, 2 * other] + [0] * 3 + [2 * other] + [0] * (width - 7)
                assert alone[k].tolist() == gap


@pytest.mark.parametrize("seed", range(10))
def test_unit_table_counts_one_category_as_its_own_units(seed: int) -> None:
    """A UnitTable counts its units by one category as unit arrays of category 1 count them,
    the same rows, when no annotator marked a span twice; and refuses when one did (such a
    span counts once by one category, twice by two)."""
    rng = random.Random(seed)
    documents: list[Doc] = [
        (length, random_units(rng, length, ["a", "b"], 5), random_units(rng, length, ["b"], 4))
        for length in (0, 30, 60, 90)
    ]
    index = category_index([side for _, *sides in documents for side in sides])
    lengths = np.array([length for length, _, _ in documents], dtype=np.int64)

    def arrays(side: int, category: Callable[[str], int]) -> UnitArrays:
        rows = [
            (d, a, b, category(c))
            for d, document in enumerate(documents)
            for a, b, c in (document[1], document[2])[side]
        ]
        doc, a, b, c = np.array(rows, dtype=np.int64).reshape(-1, 4).T
        return doc, a, b, c

    table = UnitTable(lengths, [arrays(s, index.__getitem__) for s in (0, 1)])
    ones = unit_counts(lengths, [arrays(s, lambda _: 1) for s in (0, 1)], 2)
    # Units of no characters (and documents of none) are left out before any count.
    kept = [
        {u for u in side if u[1] > u[0]} for length, *sides in documents if length for side in sides
    ]
    repeated = any(len({(a, b) for a, b, _ in side}) < len(side) for side in kept)
    assert table.spans_distinct == (not repeated)
    if repeated:
        with pytest.raises(ValueError):
            table.span_counts(2)
    else:
        assert table.span_counts(2).tolist() == ones.tolist()
    assert table.counts(len(index) + 1).tolist() == alpha_counts(documents).tolist()
