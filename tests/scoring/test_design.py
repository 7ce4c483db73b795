"""Corpus figures (``scoring.design``): a seeded simulation through the sampler's own draw, a
hand-worked case, equal ``p_incl``, and the refusals."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from goldloop.errors import DesignRefused, SettingError
from goldloop.formats.gold import Document, Hit
from goldloop.sample.run import draw_batch
from goldloop.scoring.agreement import (
    AgreementReport,
    SpanPair,
    agreement,
    cohen_kappa,
    corpus_agreement,
)
from goldloop.scoring.bootstrap import f1, ratio
from goldloop.scoring.design import (
    Design,
    NotInGold,
    batch_weights,
    corpus_figures,
    part_design,
    read_design,
    weighted_ratio,
)
from tests.scoring.design_simulation import (
    N_DOCS,
    REPLICATES,
    SETTINGS,
    Corpus,
    make_corpus,
    sample_gold,
)

# gold, predicted, matched: one row per document.
COLUMNS = 3


def _figures(s: np.ndarray) -> dict[str, np.ndarray]:
    precision, recall = ratio(s[:, 2], s[:, 1]), ratio(s[:, 2], s[:, 0])
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1(precision, recall),
        "mentions": s[:, 0],
    }


def corpus_truth(corpus: Corpus) -> dict[str, float]:
    total = np.sum(list(corpus.counts.values()), axis=0)[None, :]
    return {name: float(v[0]) for name, v in _figures(total).items()}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return make_corpus()


# (phase 1 size or None, batches, reserve documents verified, the total is checked, coverage).
SCENARIOS = {
    "one-phase": (None, 1, True, True, 0.90),
    "two-phase": (900, 1, True, True, 0.90),
    "extended": (None, 2, True, True, 0.90),
    # Earlier batches' documents stand only for themselves in a later batch's estimate, while in
    # two phases they also stand for phase 1's undrawn part: totals run ~5% low (README).
    "two-phase-extended": (900, 2, True, False, 0.90),
    # The verified part of a batch has a random number of documents per stratum, which the
    # stratified bootstrap holds fixed: intervals cover ~85% (README); totals count the verified.
    "reserve-unverified": (None, 2, False, False, 0.80),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_corpus_estimates_recover_the_corpus_where_the_sample_figure_misses(
    corpus: Corpus, scenario: str
) -> None:
    phase1, batches, reserve, total, coverage = SCENARIOS[scenario]
    truth = corpus_truth(corpus)
    names = ("precision", "recall", "f1") + (("mentions",) if total else ())
    estimates: dict[str, list[float]] = {name: [] for name in names}
    sample: dict[str, list[float]] = {name: [] for name in names}
    covered: dict[str, int] = dict.fromkeys(names, 0)
    for rep in range(REPLICATES):
        documents, per_doc = sample_gold(
            corpus, rep, phase1=phase1, batches=batches, reserve=reserve
        )
        design = read_design(documents)
        assert design is not None
        figures = corpus_figures(per_doc, _figures, design, bootstrap=200, seed=rep)
        plain = _figures(per_doc.sum(axis=0)[None, :])
        for name in names:
            estimates[name].append(figures.values[name])
            sample[name].append(float(plain[name][0]))
            low, high = figures.intervals[name]
            covered[name] += low <= truth[name] <= high
    for name in names:
        mean = float(np.mean(estimates[name]))
        assert abs(mean / truth[name] - 1) <= 0.02, (name, mean, truth[name])
        assert covered[name] / REPLICATES >= coverage, (name, covered[name])
    # The unweighted sample figures describe the over-drawn tail strata: precision more than 3%
    # low and recall more than 15% low (relative), where the corpus estimate is within 2%.
    for name, margin in (("precision", 0.03), ("recall", 0.15)):
        off = float(np.mean(sample[name])) / truth[name] - 1
        assert off < -margin, (name, off)


@pytest.mark.parametrize(("phase1", "batches"), [(900, 1), (None, 2)])
def test_population_docs_estimates_the_eligible_corpus(
    corpus: Corpus, phase1: int | None, batches: int
) -> None:
    totals = []
    for rep in range(50):
        documents, _ = sample_gold(corpus, rep, phase1=phase1, batches=batches, reserve=True)
        design = read_design(documents)
        assert design is not None
        totals.append(design.population_docs)
    assert abs(np.mean(totals) / N_DOCS - 1) <= 0.02


def test_hand_worked_weights_and_ratios() -> None:
    # Batch 0: a (p .5, stratum s), b (p .25, s), c (p 1, t); batch 1: d (p .5, s).
    documents = [
        Document(doc_id="a", text="x", p_incl=0.5, stratum="s", batch=0),
        Document(doc_id="b", text="x", p_incl=0.25, stratum="s", batch=0),
        Document(doc_id="c", text="x", p_incl=1.0, stratum="t", batch=0),
        Document(doc_id="d", text="x", p_incl=0.5, stratum="s", batch=1),
    ]
    design = read_design(documents)
    assert design is not None
    # α_0 = 3/4, α_1 = 1/4: batch 0 weighs α_0/p + α_1, batch 1 weighs α_1/p.
    expected = [0.75 / 0.5 + 0.25, 0.75 / 0.25 + 0.25, 0.75 / 1 + 0.25, 0.25 / 0.5]
    assert design.weights.tolist() == pytest.approx(expected)  # 1.75, 3.25, 1.0, 0.5
    assert design.population_docs == pytest.approx(6.5)
    assert design.n_strata == 2
    # Cells (s,0), (t,0), (s,1): the lone (t,0) document joins (s,0), batch 1's stays alone.
    assert design.cells.tolist() == [0, 0, 0, 1]
    # gold, predicted, matched per document.
    per_doc = np.array([[2, 2, 1], [4, 1, 1], [0, 3, 0], [1, 1, 1]])
    figures = corpus_figures(per_doc, _figures, design, bootstrap=0, seed=0)
    tp = 1.75 * 1 + 3.25 * 1 + 1.0 * 0 + 0.5 * 1  # 5.5
    predicted = 1.75 * 2 + 3.25 * 1 + 1.0 * 3 + 0.5 * 1  # 10.25
    gold = 1.75 * 2 + 3.25 * 4 + 1.0 * 0 + 0.5 * 1  # 17.0
    assert figures.values["precision"] == pytest.approx(tp / predicted)
    assert figures.values["recall"] == pytest.approx(tp / gold)
    p, r = tp / predicted, tp / gold
    assert figures.values["f1"] == pytest.approx(2 * p * r / (p + r))
    assert figures.values["mentions"] == pytest.approx(17.0)
    assert figures.intervals == {}
    assert (figures.n_docs, figures.n_strata, figures.population_docs) == (4, 2, 6.5)
    one = weighted_ratio(per_doc[:, 2], per_doc[:, 1], design, bootstrap=0, seed=0)
    assert one.to_dict() == {"value": pytest.approx(tp / predicted), "interval": None}


def test_the_corpus_object_keeps_its_keys_in_order() -> None:
    """The figures in ``metrics``' order, then ``intervals`` and the design, as always written."""
    design = Design(np.array([2.0, 4.0]), np.array([0, 0]), 1, "1/p_incl")
    per_doc = np.array([[1.0, 2.0], [1.0, 1.0]])
    figures = corpus_figures(
        per_doc, lambda s: {"b": s[:, 1], "a": ratio(s[:, 0], s[:, 1])}, design, 50, seed=0
    )
    written = figures.to_dict()
    assert list(written) == ["b", "a", "intervals", "n_docs", "n_strata", "population_docs",
                             "weights"]  # fmt: skip
    assert list(written["intervals"]) == ["b", "a"]
    assert written["b"] == 8.0 and written["a"] == 0.75 and written["weights"] == "1/p_incl"
    assert figures.design() == {
        "n_docs": 2, "n_strata": 1, "population_docs": 6.0, "weights": "1/p_incl",
    }  # fmt: skip


def test_equal_p_incl_gives_the_sample_figures() -> None:
    documents = [
        Document(doc_id=f"d{i}", text="x", p_incl=0.2, stratum=f"s{i % 3}", batch=0)
        for i in range(12)
    ]
    per_doc = np.random.default_rng(1).integers(0, 6, size=(12, COLUMNS))
    per_doc[:, 2] = np.minimum(per_doc[:, 2], per_doc[:, :2].min(axis=1))
    design = read_design(documents)
    assert design is not None
    figures = corpus_figures(per_doc, _figures, design, bootstrap=0, seed=0)
    plain = _figures(per_doc.sum(axis=0)[None, :])
    for name in ("precision", "recall", "f1"):
        assert figures.values[name] == pytest.approx(float(plain[name][0]))
    assert figures.population_docs == pytest.approx(60.0)


def test_stratified_bootstrap_weights_average_to_the_design_weights() -> None:
    """Rao–Wu: each replicate's weights sum per cell to the cell's weight total on average, and
    a cell of one document keeps its weight in every replicate."""
    weights = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 10.0])
    cells = np.array([0, 0, 0, 1, 1, 2])
    design = Design(weights, cells, 3, "1/p_incl")
    per_doc = np.eye(6)
    figures = corpus_figures(
        per_doc, lambda s: {f"w{k}": s[:, k] for k in range(6)}, design, 4000, seed=5
    )
    # The single document's column is its weight in every replicate: a zero-width interval.
    assert figures.intervals["w5"] == [10.0, 10.0]
    for k in range(6):
        assert figures.values[f"w{k}"] == pytest.approx(weights[k])


def test_a_gold_without_p_incl_has_no_design() -> None:
    documents = [Document(doc_id="a", text="x"), Document(doc_id="b", text="x")]
    assert read_design(documents) is None
    ignored = read_design(documents, "ignore")
    assert ignored is not None and ignored.weights.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("p_values", "message"),
    [
        ((0.5, None, 0.5), "gold.json: document 2 ('d1') has no p_incl while document 1"),
        ((None, 0.5), "gold.json: document 1 ('d0') has no p_incl while document 2"),
        ((0.5, 0.0), "gold.json: document 2 ('d1') has p_incl 0.0, outside [1e-12, 1]"),
        ((1.5, 0.5), "gold.json: document 1 ('d0') has p_incl 1.5, outside [1e-12, 1]"),
        # Inside (0, 1], but its weight 1/p_incl is beyond float: refused, no warning, no inf.
        ((0.5, 1e-310), "gold.json: document 2 ('d1') has p_incl 1e-310, outside [1e-12, 1]"),
    ],
)
def test_mixed_or_out_of_range_p_incl_is_refused_unless_ignored(
    p_values: tuple[float | None, ...], message: str
) -> None:
    documents = [Document(doc_id=f"d{i}", text="x", p_incl=p) for i, p in enumerate(p_values)]
    with pytest.raises(DesignRefused) as caught:
        read_design(documents, source="gold.json")
    assert caught.value.setting == "design"
    assert message in caught.value.message
    # What to do about it is each door's to say: the library names no option or option value.
    assert "ignore" not in caught.value.message and "--" not in caught.value.message
    design = read_design(documents, "ignore", source="gold.json")
    assert design is not None and design.basis == "equal"
    assert design.weights.tolist() == [1.0] * len(p_values)


def test_batch_weights_sum_to_one_over_p_for_one_batch() -> None:
    p = np.array([0.1, 0.5, 1.0])
    assert batch_weights(p, np.zeros(3, dtype=int)).tolist() == pytest.approx([10.0, 2.0, 1.0])


# κ: two annotators label each document's mentions; they agree less on tail relations.
CATEGORIES = ("R1", "R2", "R3", "R4", "∅")


def kappa_corpus(corpus: Corpus, seed: int = 11) -> dict[str, list[tuple[str, str]]]:
    """Per document, the (A, B) label pairs of its gold mentions."""
    rng = np.random.default_rng(seed)
    pairs: dict[str, list[tuple[str, str]]] = {}
    for doc in corpus.docs:
        gold = int(corpus.counts[doc.doc_id][0])
        tail = any(int(m.entity_id[1:]) >= 10 for m in doc.mentions)
        agree, labels = (0.45, CATEGORIES) if tail else (0.9, CATEGORIES[:2])
        out = []
        for _ in range(gold):
            a = str(rng.choice(labels))
            b = a if rng.random() < agree else str(rng.choice(CATEGORIES))
            out.append((a, b))
        pairs[doc.doc_id] = out
    return pairs


def _kappa_of(pairs: dict[str, list[tuple[str, str]]], doc_ids: list[str]) -> AgreementReport:
    spans = [SpanPair(d, _hit(a), _hit(b)) for d in doc_ids for a, b in pairs[d]]
    return AgreementReport(len(doc_ids), 0, 0, spans, None, None, 0, None)


def _hit(label: str) -> Hit | None:
    return None if label == "∅" else Hit(a=0, b=1, surface="x", entity_id=label)


def test_corpus_kappa_recovers_the_corpus_kappa(corpus: Corpus) -> None:
    pairs = kappa_corpus(corpus)
    everything = [pair for doc in corpus.docs for pair in pairs[doc.doc_id]]
    truth = cohen_kappa(everything)
    assert truth is not None
    estimates, plain, covered = [], [], 0
    for rep in range(REPLICATES):
        documents, _ = sample_gold(corpus, rep, phase1=None, batches=2, reserve=True)
        design = read_design(documents)
        assert design is not None
        doc_ids = [d.doc_id for d in documents]
        figures = corpus_agreement(
            _kappa_of(pairs, doc_ids), doc_ids, None, design, 200, rep
        ).to_dict()
        estimates.append(figures["kappa_entity_id"])
        sample = cohen_kappa([pair for d in doc_ids for pair in pairs[d]])
        assert sample is not None
        plain.append(sample)
        low, high = figures["intervals"]["kappa_entity_id"]
        covered += low <= truth <= high
    assert abs(np.mean(estimates) / truth - 1) <= 0.02, (np.mean(estimates), truth)
    assert covered / REPLICATES >= 0.90, covered
    # The sample κ leans to the over-drawn tail's poor agreement: more than 10% low.
    assert np.mean(plain) / truth - 1 < -0.10, (np.mean(plain), truth)


def test_weighted_kappa_equals_scikit_learns_with_sample_weights() -> None:
    rng = np.random.default_rng(3)
    doc_ids = [f"d{i}" for i in range(30)]
    pairs = {
        d: [(str(rng.choice(CATEGORIES)), str(rng.choice(CATEGORIES[:3]))) for _ in range(4)]
        for d in doc_ids
    }
    documents = [
        Document(doc_id=d, text="x", p_incl=float(rng.choice([0.1, 0.5, 1.0])), stratum="s")
        for d in doc_ids
    ]
    design = read_design(documents)
    assert design is not None
    figures = corpus_agreement(_kappa_of(pairs, doc_ids), doc_ids, None, design, 0, 0).to_dict()
    a = [x for d in doc_ids for x, _ in pairs[d]]
    b = [y for d in doc_ids for _, y in pairs[d]]
    weights = [w for w, d in zip(design.weights, doc_ids, strict=True) for _ in pairs[d]]
    assert figures["kappa_entity_id"] == pytest.approx(
        cohen_kappa_score(a, b, sample_weight=weights)
    )
    # Equal weights: the plain κ of the same pairs.
    equal = read_design(documents, "ignore")
    assert equal is not None
    same = corpus_agreement(_kappa_of(pairs, doc_ids), doc_ids, None, equal, 0, 0).to_dict()
    assert same["kappa_entity_id"] == pytest.approx(cohen_kappa(list(zip(a, b, strict=True))))


def test_lone_documents_of_a_batch_share_one_bootstrap_cell() -> None:
    documents = [
        Document(doc_id=f"d{i}", text="x", p_incl=0.5, stratum=stratum, batch=0)
        for i, stratum in enumerate(("a", "a", "b", "c"))
    ]
    design = read_design(documents)
    assert design is not None
    assert design.cells.tolist() == [0, 0, 1, 1]  # b and c (one document each) pooled
    assert design.n_strata == 3


def test_equal_p_incl_gives_the_sample_span_f1() -> None:
    rng = np.random.default_rng(5)
    text = "x" * 200
    ids = ["RO.0002211", "PEL.000018", "PEL.000000"]

    def version(doc_id: str, p: float, spans: list[tuple[int, int, str]]) -> Document:
        hits = [Hit(a=a, b=b, surface=text[a:b], entity_id=e) for a, b, e in spans]
        return Document(doc_id=doc_id, text=text, ground_truth=hits, p_incl=p, stratum="s")

    first, second = [], []
    for i in range(20):
        starts = sorted(rng.choice(np.arange(0, 190, 10), size=4, replace=False))
        spans = [(int(s), int(s) + int(rng.integers(3, 9)), str(rng.choice(ids))) for s in starts]
        other = [(a + int(rng.integers(0, 2)), b, str(rng.choice(ids))) for a, b, _ in spans[1:]]
        first.append(version(f"d{i}", 0.25, spans))
        second.append(version(f"d{i}", 0.25, other))
    report = agreement(first, second, None)
    design = read_design(first)
    assert design is not None and design.population_docs == 80.0
    doc_ids = [d.doc_id for d in first]
    corpus = corpus_agreement(
        report, doc_ids, None, design, 0, 0, shared=list(zip(first, second, strict=True))
    ).to_dict()
    assert report.spans is not None
    for mode in ("strict", "lenient"):
        assert corpus[f"span_f1_{mode}"] == pytest.approx(report.spans.span_f1[mode].f1)
        labelled = report.spans.span_f1_labelled[mode].f1
        assert corpus[f"span_f1_labelled_{mode}"] == pytest.approx(labelled)


def test_hand_worked_part_of_two_batches() -> None:
    # The gold: batch 0 holds a, b (p .5) and c (p .25); batch 1 holds d, e (p .5). The part:
    # b (a third of batch 0) and d, e (all of batch 1).
    documents = [
        Document(doc_id="a", text="x", p_incl=0.5, stratum="s", batch=0),
        Document(doc_id="b", text="x", p_incl=0.5, stratum="s", batch=0),
        Document(doc_id="c", text="x", p_incl=0.25, stratum="t", batch=0),
        Document(doc_id="d", text="x", p_incl=0.5, stratum="s", batch=1),
        Document(doc_id="e", text="x", p_incl=0.5, stratum="t", batch=1),
    ]
    design = part_design(documents, ["e", "b", "d"])
    assert design is not None and design.basis == "1/p_incl"
    # α_0 = 3/5, α_1 = 2/5: in the gold b weighs .6/.5 + .4 = 1.6 and d, e .4/.5 = .8; the part
    # holds 1 of batch 0's 3 and 2 of batch 1's 2.
    assert design.weights.tolist() == pytest.approx([0.8, 1.6 * 3, 0.8])
    # b stands for batch 0's three (the gold's own Σ w is 7.6: equal only in expectation).
    assert design.population_docs == pytest.approx(6.4)
    assert design.n_strata == 2
    # Batch 1's two lone cells are pooled into one; batch 0's lone b is a cell of its own.
    assert design.cells.tolist() == [0, 1, 0]
    # Not a setting: a door words it as it is, never as its design option.
    with pytest.raises(NotInGold, match=r"^gold\.json: document 'f' is not among") as refused:
        part_design(documents, ["a", "f"], "gold.json")
    assert not isinstance(refused.value, SettingError)
    assert part_design([Document(doc_id="a", text="x")], ["a"]) is None


def test_a_part_of_unequal_batch_shares_estimates_the_corpus(corpus: Corpus) -> None:
    """Blind documents dealt over two batches in very different shares (6 of 126, then 40 of
    80), by the sampler's own draw: the part's weights recover the corpus size and recall."""
    truth = corpus_truth(corpus)
    sizes, recalls, own_sizes = [], [], []
    shares = (
        replace(SETTINGS, n_blind=6),
        replace(SETTINGS, n_primary=20, n_double=10, n_reserve=10, n_blind=40),
    )
    for rep in range(REPLICATES):
        order = list(corpus.docs)
        random.Random(f"order:{rep}").shuffle(order)
        taken: set[str] = set()
        gold, part = [], []
        for batch, settings in enumerate(shares):
            chosen = draw_batch(order, len(order), taken, replace(settings, seed=rep), batch)
            for d in chosen.drawn:
                taken.add(d.doc.doc_id)
                gold.append(Document(doc_id=d.doc.doc_id, text="x", p_incl=d.p_incl,
                                     stratum=d.stratum, batch=batch))  # fmt: skip
                if d.role == "blind":
                    part.append(d.doc.doc_id)
        design = part_design(gold, part)
        own = read_design([d for d in gold if d.doc_id in set(part)])
        assert design is not None and own is not None
        per_doc = np.array([corpus.counts[doc_id] for doc_id in part])
        sizes.append(design.population_docs)
        own_sizes.append(own.population_docs)
        recalls.append(
            corpus_figures(per_doc, _figures, design, bootstrap=0, seed=0).values["recall"]
        )
    assert abs(np.mean(sizes) / N_DOCS - 1) <= 0.03, np.mean(sizes)
    # Batch 0's six documents carry large weights, so the recall varies (SE ≈ 0.008 here):
    # unbiased means within three standard errors of the corpus recall.
    error = np.std(recalls) / np.sqrt(len(recalls))
    assert abs(np.mean(recalls) - truth["recall"]) <= 3 * error, (np.mean(recalls), error, truth)
    # Weighing the part as a gold of its own stands for a small share of the corpus only.
    assert np.mean(own_sizes) / N_DOCS < 0.6, np.mean(own_sizes)
