"""goldloop.scoring.completeness: Chapman's capture–recapture estimate over double documents."""

from __future__ import annotations

import numpy as np
import pytest

from goldloop.formats.gold import Document
from goldloop.scoring.completeness import estimate_completeness
from goldloop.scoring.design import read_design
from tests.scoring.design_simulation import N_DOCS, REPLICATES, make_corpus, sample_gold


def test_counts_use_the_agreement_matcher_and_chapman_by_hand() -> None:
    docs = [
        ({(0, 5), (10, 15)}, {(0, 5)}),
        ({(20, 25)}, {(21, 24), (30, 35)}),  # (21, 24) overlaps (20, 25): the same mention
    ]
    result = estimate_completeness(docs, n_boot=200)
    assert (result.n_docs, result.n1, result.n2, result.m) == (2, 3, 3, 2)
    n_hat = 4 * 4 / 3 - 1
    assert result.n_hat == pytest.approx(n_hat)
    assert result.recall_1 == pytest.approx(3 / n_hat)
    assert result.recall_2 == pytest.approx(3 / n_hat)
    assert result.recall_both == pytest.approx(4 / n_hat)
    low, high = result.n_hat_ci
    assert low is not None and high is not None and low <= n_hat <= high
    data = result.to_dict()
    assert data["n_hat_ci"] == [low, high] and "independently" in data["assumption"]
    assert data["bootstrap"] == {"n": 200, "seed": 0, "level": 0.95}
    assert estimate_completeness(docs, n_boot=200) == result  # seeded


def test_nothing_marked_leaves_recall_undefined() -> None:
    empty = estimate_completeness([(set(), set())], n_boot=50)
    assert (empty.n_hat, empty.recall_1, empty.recall_both) == (0.0, None, None)
    assert empty.recall_1_ci == (None, None)
    none = estimate_completeness([])
    assert (none.n_docs, none.n_hat, none.n_hat_ci) == (0, 0.0, (None, None))


def _campaign(
    rng: np.random.Generator, p1: float, p2: float, shared_difficulty: float = 0.0
) -> tuple[list[tuple[set[tuple[int, int]], set[tuple[int, int]]]], int]:
    """80 documents of 1-8 mentions; each annotator finds a mention with its own probability
    (times the mention's ease when ``shared_difficulty`` > 0, which correlates the misses).
    Annotator 2 marks one character more at the end half the time: still the same mention."""
    docs = []
    total = 0
    for _ in range(80):
        k = int(rng.integers(1, 9))
        total += k
        first: set[tuple[int, int]] = set()
        second: set[tuple[int, int]] = set()
        for j in range(k):
            a, b = 20 * j, 20 * j + 8
            ease = 1.0 - shared_difficulty * rng.random()
            if rng.random() < p1 * ease:
                first.add((a, b))
            if rng.random() < p2 * ease:
                second.add((a, b + int(rng.integers(0, 2))))
        docs.append((first, second))
    return docs, total


def test_the_95_interval_covers_the_true_total_in_at_least_90_percent_of_campaigns() -> None:
    rng = np.random.default_rng(20260601)
    covered = 0
    widths = []
    for campaign in range(200):
        docs, total = _campaign(rng, p1=0.7, p2=0.5)
        low, high = estimate_completeness(docs, seed=campaign).n_hat_ci
        assert low is not None and high is not None
        covered += low <= total <= high
        widths.append((high - low) / total)
    assert covered >= 180, covered
    # Not covering by being useless: about ±13% of the total here (documents vary in how many
    # mentions they hold, and the bootstrap over documents carries that too).
    assert float(np.mean(widths)) < 0.35


def test_correlated_misses_make_the_total_too_low_and_recall_too_high() -> None:
    rng = np.random.default_rng(7)
    ratios = []
    for _ in range(40):
        docs, total = _campaign(rng, p1=0.9, p2=0.9, shared_difficulty=0.9)
        ratios.append(estimate_completeness(docs, n_boot=0).n_hat / total)
    assert float(np.mean(ratios)) < 0.95


def test_corpus_figures_by_hand_from_weighted_counts() -> None:
    docs = [
        ({(0, 5), (10, 15)}, {(0, 5)}),  # n1 2, n2 1, m 1; weight 2
        ({(20, 25)}, {(21, 24), (30, 35)}),  # n1 1, n2 2, m 1; weight 4
    ]
    design = read_design(
        [
            Document(doc_id="a", text="x", p_incl=0.5, stratum="s", batch=0),
            Document(doc_id="b", text="x", p_incl=0.25, stratum="s", batch=0),
        ]
    )
    assert design is not None
    corpus = estimate_completeness(docs, n_boot=0, design=design).corpus
    assert corpus is not None
    n1, n2, m = 2 * 2 + 4 * 1, 2 * 1 + 4 * 2, 2 * 1 + 4 * 1  # 8, 10, 6
    assert corpus.values["n_mentions"] == pytest.approx(n1 * n2 / m)
    assert corpus.values["mentions_per_document"] == pytest.approx(n1 * n2 / m / 6)
    assert corpus.values["recall_1"] == pytest.approx(m / n2)
    assert corpus.values["recall_2"] == pytest.approx(m / n1)
    assert corpus.values["recall_both"] == pytest.approx((n1 + n2 - m) / (n1 * n2 / m))
    assert corpus.population_docs == 6.0


def test_corpus_number_of_mentions_in_a_sampler_simulation() -> None:
    """Two independent annotators on every sampled document; annotator 1 finds tail mentions
    less often. The corpus N̂ recovers the corpus's mentions; the sample's does not."""
    corpus = make_corpus()
    rng = np.random.default_rng(5)
    spans: dict[str, tuple[set[tuple[int, int]], set[tuple[int, int]]]] = {}
    for doc in corpus.docs:
        tail = any(int(m.entity_id[1:]) >= 10 for m in doc.mentions)
        first, second = set(), set()
        for j in range(int(corpus.counts[doc.doc_id][0])):
            span = (10 * j, 10 * j + 5)
            if rng.random() < (0.55 if tail else 0.9):
                first.add(span)
            if rng.random() < 0.8:
                second.add(span)
        spans[doc.doc_id] = (first, second)
    truth = float(sum(c[0] for c in corpus.counts.values()))
    estimates, plain, covered = [], [], 0
    for rep in range(REPLICATES):
        documents, _ = sample_gold(corpus, rep, phase1=None, batches=1, reserve=True)
        design = read_design(documents)
        assert design is not None
        result = estimate_completeness(
            [spans[d.doc_id] for d in documents], n_boot=200, seed=rep, design=design
        )
        assert result.corpus is not None
        estimates.append(result.corpus.values["n_mentions"])
        # The sample's own N̂ per document, scaled to the corpus as if documents were equal.
        plain.append(result.n_hat / len(documents) * N_DOCS)
        low, high = result.corpus.intervals["n_mentions"]
        covered += low <= truth <= high
    assert abs(np.mean(estimates) / truth - 1) <= 0.02, (np.mean(estimates), truth)
    assert covered / REPLICATES >= 0.90, covered
    # The over-drawn tail strata hold more mentions per document: more than 15% too many.
    assert np.mean(plain) / truth - 1 > 0.15, (np.mean(plain), truth)
