"""Pairwise span F1 between two annotators: a hand count, the nervaluate package's figures, the
weights, a seeded simulation whose true F1 is known, and one of the corpus span F1 (sampled by
the sampler's own draw from a population whose F1 is known)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB
from goldloop.scoring.agreement import agreement, corpus_agreement
from goldloop.scoring.design import read_design
from goldloop.scoring.schemas import evaluate_with_nervaluate
from goldloop.scoring.span_agreement import (
    headline_counts,
    headline_f1,
    span_agreement,
)
from tests.scoring.design_simulation import REPLICATES, Corpus, make_corpus, sample_gold
from tests.scoring.test_alpha_u import reference_alpha

TEXT = "IL-6 regulates TNF. TNF is expressed in liver. A inhibits B and C activates D." + " " * 120


def hit(a: int, b: int, entity_id: str, direction: str | None = "forward") -> Hit:
    return Hit(a=a, b=b, surface=TEXT[a:b], entity_id=entity_id, direction=direction)


def doc(doc_id: str, *hits: Hit) -> Document:
    return Document(doc_id=doc_id, text=TEXT, ground_truth=list(hits))


def test_hand_count(kb: KB) -> None:
    a = doc(
        "d1",
        hit(5, 14, "RO.0002211"),  # B: same offsets, same relation
        hit(27, 39, "RO.0002206", "inverse"),  # B: overlapping; both fold to RO.0002292 forward
        hit(49, 57, "PEL.000018"),  # B: same offsets, another relation
        hit(62, 71, "PEL.000018"),  # only A
    )
    b = doc(
        "d1",
        hit(5, 14, "RO.0002211"),
        hit(30, 39, "RO.0002292", "forward"),
        hit(49, 57, "PEL.000000"),
        hit(90, 95, "PEL.000000"),  # only B
        hit(100, 104, "PEL.000000"),  # only B
    )
    found = span_agreement([(a, b)], kb, n_boot=0)
    # n_a = 4, n_b = 5. Strict: 2 pairs (5-14, 49-57); lenient: 3 (27-39 overlaps 30-39).
    strict, lenient = found.span_f1["strict"], found.span_f1["lenient"]
    assert (strict.precision, strict.recall, strict.f1) == pytest.approx((2 / 5, 2 / 4, 4 / 9))
    assert (lenient.precision, lenient.recall, lenient.f1) == pytest.approx((3 / 5, 3 / 4, 6 / 9))
    # Labelled: relation and direction must agree: 5-14 strictly, 27-39 only leniently.
    labelled = found.span_f1_labelled
    assert labelled["strict"].f1 == pytest.approx(2 / 9)
    assert labelled["lenient"].f1 == pytest.approx(4 / 9)
    assert (found.only_a, found.only_b) == (1, 2)
    rows = {row.key: row for row in found.per_relation}
    assert (rows["PEL.000000"].n_a, rows["PEL.000000"].n_b) == (0, 3)
    assert (rows["RO.0002292"].f1_strict, rows["RO.0002292"].f1_lenient) == (0.0, 1.0)
    assert rows["PEL.000018"].f1_lenient == 0.0
    # The most marked relation comes first.
    assert found.per_relation[0].key == "PEL.000000"
    # Incomplete positions are exactly the spans κ pairs with ∅.
    report = agreement([a], [b], kb, n_boot=0)
    assert (report.n_only_a, report.n_only_b) == (found.only_a, found.only_b)
    data = report.to_dict()
    assert data["incomplete"] == {"only_a": 1, "only_b": 2}
    assert set(data["span_f1"]["strict"]) >= {"f1", "precision", "recall", "interval"}
    assert set(data["alpha_u"]) == {"spans", "relations"}
    assert set(data["per_relation"][0]) >= {"entity_id", "n_a", "n_b", "f1_strict", "f1_lenient"}


@pytest.mark.parametrize("relation", ["forward", "inverse", "none"])
def test_a_relation_spelled_like_a_direction_has_its_own_group(relation: str) -> None:
    # Relations and directions are two namespaces: an id "forward" next to the direction
    # "forward" still gets its own per relation row, and the direction its own row.
    a = doc("d1", hit(5, 14, relation), hit(27, 39, "R2"), hit(49, 57, relation, None))
    b = doc("d1", hit(5, 14, relation), hit(30, 39, "R2", "inverse"), hit(60, 70, relation))
    found = span_agreement([(a, b)], None, n_boot=20)
    rows = {row.key: row for row in found.per_relation}
    assert set(rows) == {relation, "R2"}
    # relation: A 2 spans, B 2, one strict pair (5-14); R2: one lenient pair only.
    assert (rows[relation].n_a, rows[relation].n_b) == (2, 2)
    assert (rows[relation].f1_strict, rows[relation].f1_lenient) == (0.5, 0.5)
    assert (rows["R2"].f1_strict, rows["R2"].f1_lenient) == (0.0, 1.0)
    directions = {row.key: (row.n_a, row.n_b) for row in found.per_direction}
    assert directions == {"forward": (2, 2), "inverse": (0, 1), "none": (1, 0)}
    # Labelled: only 5-14 agrees in relation and direction.
    assert found.span_f1_labelled["strict"].f1 == pytest.approx(2 / 6)
    assert found.alpha_relations.value is not None


def slotted(rng: random.Random, n_docs: int, labels: list[str]) -> tuple[list[Any], list[Any]]:
    """Two sides whose spans sit in 20-character slots: each span overlaps at most one other,
    the case where nervaluate's counting and the one-to-one matcher coincide."""
    docs_a, docs_b = [], []
    for d in range(n_docs):
        spans_a, spans_b = [], []
        for slot in range(10):
            base = 20 * slot
            start, end = sorted(rng.sample(range(19), 2))
            label = rng.choice(labels)
            if rng.random() < 0.8:
                spans_a.append((base + start, base + end, label))
            if rng.random() < 0.8:
                if rng.random() < 0.5:
                    start, end = sorted(rng.sample(range(19), 2))
                if rng.random() < 0.3:
                    label = rng.choice(labels)
                spans_b.append((base + start, base + end, label))
        docs_a.append(Document(doc_id=f"d{d}", text=TEXT, ground_truth=[_hit(*s) for s in spans_a]))
        docs_b.append(Document(doc_id=f"d{d}", text=TEXT, ground_truth=[_hit(*s) for s in spans_b]))
    return docs_a, docs_b


def _hit(a: int, b: int, label: str) -> Hit:
    return Hit(a=a, b=b, surface=TEXT[a:b], entity_id=label, direction="forward")


def _spans(docs: list[Document], labelled: bool) -> list[list[dict[str, Any]]]:
    return [
        [
            {"label": h.entity_id if labelled else "span", "start": h.a, "end": h.b}
            for h in d.ground_truth
        ]
        for d in docs
    ]


@pytest.mark.parametrize("seed", range(10))
def test_equals_nervaluate_where_the_definitions_coincide(seed: int) -> None:
    rng = random.Random(seed)
    docs_a, docs_b = slotted(rng, 8, ["R1", "R2", "R3"])
    found = span_agreement(list(zip(docs_a, docs_b, strict=True)), None, n_boot=0)
    # A is nervaluate's gold, B its prediction: precision = share of B's spans paired.
    plain = evaluate_with_nervaluate(_spans(docs_a, False), _spans(docs_b, False))["overall"]
    typed = evaluate_with_nervaluate(_spans(docs_a, True), _spans(docs_b, True))["overall"]
    for ours, theirs in (
        (found.span_f1["strict"], plain["exact"]),
        (found.span_f1_labelled["strict"], typed["strict"]),
    ):
        assert ours.precision == pytest.approx(theirs["precision"], abs=1e-12)
        assert ours.recall == pytest.approx(theirs["recall"], abs=1e-12)
        assert ours.f1 == pytest.approx(theirs["f1"], abs=1e-12)
    # Lenient pairs are nervaluate's correct + partial of the partial schema (which scores a
    # partial pair as a half): equal counts, and equal figures when no pair is partial.
    partial = plain["partial"]
    paired = partial["correct"] + partial["partial"]
    actual = paired + partial["incorrect"] + partial["spurious"]
    possible = paired + partial["incorrect"] + partial["missed"]
    lenient = found.span_f1["lenient"]
    assert lenient.precision == pytest.approx(paired / actual, abs=1e-12)
    assert lenient.recall == pytest.approx(paired / possible, abs=1e-12)
    if partial["partial"] == 0:
        assert lenient.f1 == pytest.approx(partial["f1"], abs=1e-12)
    assert found.only_a == partial["missed"] and found.only_b == partial["spurious"]


def test_weights_scale_documents(kb: KB) -> None:
    rng = random.Random(5)
    docs_a, docs_b = slotted(rng, 6, ["R1", "R2"])
    shared = list(zip(docs_a, docs_b, strict=True))
    plain = span_agreement(shared, None, n_boot=50)
    equal = span_agreement(shared, None, weights={d.doc_id: 1.0 for d in docs_a}, n_boot=50)
    assert equal.span_f1 == plain.span_f1
    # A weight of 3 counts a document as three copies of it.
    weighted = span_agreement(shared, None, weights={"d0": 3.0}, n_boot=0)
    copied = span_agreement([*shared, shared[0], shared[0]], None, n_boot=0)
    for mode in ("strict", "lenient"):
        assert weighted.span_f1[mode].f1 == pytest.approx(copied.span_f1[mode].f1, abs=1e-12)
        assert weighted.span_f1_labelled[mode].f1 == pytest.approx(
            copied.span_f1_labelled[mode].f1, abs=1e-12
        )
    assert weighted.only_a == copied.only_a


def test_interval_covers_the_known_f1_in_a_seeded_simulation() -> None:
    # Each annotator keeps each true mention independently (A with 0.9, B with 0.7), at the
    # true offsets, and adds nothing: the population F1 is 2 p_a p_b / (p_a + p_b).
    p_a, p_b = 0.9, 0.7
    truth = 2 * p_a * p_b / (p_a + p_b)
    covered = 0
    for seed in range(40):
        rng = random.Random(seed)
        shared = []
        for d in range(40):
            mentions = [(20 * k, 20 * k + 8) for k in range(rng.randint(1, 9))]
            a = [_hit(x, y, "R") for x, y in mentions if rng.random() < p_a]
            b = [_hit(x, y, "R") for x, y in mentions if rng.random() < p_b]
            shared.append((doc(f"d{d}", *a), doc(f"d{d}", *b)))
        found = span_agreement(shared, None, n_boot=400, seed=seed).span_f1["strict"]
        low, high = found.interval
        assert low is not None and high is not None and low <= found.f1 <= high  # type: ignore[operator]
        covered += low <= truth <= high
    assert covered >= 33, covered  # 95% nominal


def span_population(corpus: Corpus, seed: int = 11) -> dict[str, tuple[list[Hit], list[Hit]]]:
    """A's and B's hits on every document of the simulation's corpus, fixed once: the population.

    Each true mention (the document's detected verbs, plus a few more in older documents) sits
    in its own 20-character slot; A keeps it more often than B, B moves its start now and then
    (lenient but not strict) and relabels some, and each side invents a few. Documents with a
    tail relation, which the sampler over-draws, agree much less, so the sample's plain F1 leans
    low while the corpus F1 counts every document once.
    """
    rng = random.Random(seed)
    out = {}
    for pool_doc in corpus.docs:
        tail = any(int(m.entity_id[1:]) >= 10 for m in pool_doc.mentions)
        keep_a, keep_b, same, moved = (0.7, 0.45, 0.6, 0.4) if tail else (0.95, 0.9, 0.95, 0.1)
        labels = [m.entity_id for m in pool_doc.mentions]
        labels += ["E0"] * (rng.random() < (0.5 if pool_doc.year < 2005 else 0.1))
        hits_a, hits_b = [], []
        for slot, label in enumerate(labels):
            start = 20 * slot + rng.randrange(5)
            if rng.random() < keep_a:
                hits_a.append(_hit(start, start + 8, label))
            if rng.random() < keep_b:
                shift = rng.randint(1, 3) if rng.random() < moved else 0
                other = label if rng.random() < same else f"E{rng.randrange(60)}"
                hits_b.append(_hit(start + shift, start + shift + 8, other))
        for hits in (hits_a, hits_b):
            for _ in range(rng.random() < (0.4 if tail else 0.1)):
                start = 20 * len(labels) + rng.randrange(10)
                hits.append(_hit(start, start + 6, "E1"))
        out[pool_doc.doc_id] = (hits_a, hits_b)
    return out


def _versions(document: Document, hits: list[Hit]) -> Document:
    """A sampled document (its design: p_incl, stratum, batch) carrying one side's hits."""
    return document.model_copy(update={"text": TEXT, "ground_truth": hits})


def test_corpus_span_f1_recovers_the_population_f1_in_a_seeded_simulation() -> None:
    # The corpus span F1 is a Hájek ratio of design-weighted counts (scoring.design); here the
    # sampler's own draw (unequal, tail-weighted strata) samples a population whose
    # span F1s are known: the estimate is within 2% on average and its interval covers them.
    corpus = make_corpus()
    population = span_population(corpus)
    everything = [
        (_versions(Document(doc_id=d, text=TEXT), a), _versions(Document(doc_id=d, text=TEXT), b))
        for d, (a, b) in population.items()
    ]
    truth = {
        name: float(value[0])
        for name, value in headline_f1(
            headline_counts(everything, None).sum(axis=0)[None, :]
        ).items()
    }
    names = list(truth)
    estimates: dict[str, list[float]] = {name: [] for name in names}
    plain: dict[str, list[float]] = {name: [] for name in names}
    covered = dict.fromkeys(names, 0)
    for rep in range(REPLICATES):
        documents, _ = sample_gold(corpus, rep, phase1=None, batches=1, reserve=True)
        design = read_design(documents)
        assert design is not None
        first = [_versions(d, population[d.doc_id][0]) for d in documents]
        second = [_versions(d, population[d.doc_id][1]) for d in documents]
        report = agreement(first, second, None, n_boot=0)
        doc_ids = [d.doc_id for d in documents]
        shared = list(zip(first, second, strict=True))
        figures = corpus_agreement(report, doc_ids, None, design, 200, rep, shared=shared).to_dict()
        assert report.spans is not None
        for name in names:
            estimates[name].append(figures[name])
            labelled, mode = "labelled" in name, name.rsplit("_", 1)[1]
            sample = report.spans.span_f1_labelled if labelled else report.spans.span_f1
            plain[name].append(sample[mode].f1)
            low, high = figures["intervals"][name]
            covered[name] += low <= truth[name] <= high
    for name in names:
        mean = float(np.mean(estimates[name]))
        assert abs(mean / truth[name] - 1) <= 0.02, (name, mean, truth[name])
        # 95% nominal; measured 91-96% over the four figures.
        assert covered[name] / REPLICATES >= 0.88, (name, covered[name])
        # The sample's plain F1 describes the over-drawn tail: 15-35% low, measured.
        assert float(np.mean(plain[name])) / truth[name] - 1 < -0.10, (name, np.mean(plain[name]))


@pytest.mark.parametrize("seed", range(5))
def test_alpha_u_of_the_report_equals_the_independent_implementation(seed: int) -> None:
    # The report's α_u units are read off its span arrays: the same values as the character by
    # character reference on the hits' spans (one category) and relations, nested and repeated
    # spans included.
    rng = random.Random(seed)
    shared, spans, relations = [], [], []
    for d in range(12):
        sides = []
        for _ in range(2):
            hits = []
            for _ in range(rng.randrange(7)):
                a = rng.randrange(150)
                label = rng.choice(["R1", "R2", "R3"])
                hits.append(_hit(a, a + rng.randint(1, 30), label))
            hits += hits[: rng.randrange(2)]
            sides.append(hits)
        shared.append((doc(f"d{d}", *sides[0]), doc(f"d{d}", *sides[1])))
        units = [[(h.a, h.b, h.entity_id) for h in side] for side in sides]
        spans.append((len(TEXT), *[[(a, b, "span") for a, b, _ in u] for u in units]))
        relations.append((len(TEXT), *units))
    found = span_agreement(shared, None, n_boot=0)
    assert found.alpha_spans.value == pytest.approx(reference_alpha(spans), abs=1e-9)
    assert found.alpha_relations.value == pytest.approx(reference_alpha(relations), abs=1e-9)


@pytest.mark.parametrize("shared", [[], [(doc("d1"), doc("d1"))]], ids=["no-documents", "no-spans"])
def test_nothing_to_compare_gives_undefined_figures_not_an_error(
    kb: KB, shared: list[tuple[Document, Document]]
) -> None:
    # A campaign before its first double task is annotated pulls with no shared document.
    report = span_agreement(shared, kb).to_dict()
    for figure in ("span_f1", "span_f1_labelled"):
        for kind in ("strict", "lenient"):
            assert report[figure][kind]["f1"] is None
            assert report[figure][kind]["interval"] == [None, None]
    assert report["per_relation"] == []
