"""Cohen's κ between two annotators, checked against scikit-learn."""

from __future__ import annotations

import math
import random
import warnings

import pytest
from sklearn.metrics import cohen_kappa_score

from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB
from goldloop.scoring.agreement import NONE, AgreementError, agreement, cohen_kappa

TEXT = (
    "IL-6 regulates TNF. TNF is expressed in liver. X associates Y. A inhibits B and C activates D."
)
#       0         1         2         3         4         5         6         7         8         9


def sk_kappa(a: list[str], b: list[str]) -> float | None:
    """scikit-learn's κ, with its undefined case (NaN) read as None."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = float(cohen_kappa_score(a, b))
    return None if math.isnan(value) else value


def hit(a: int, b: int, entity_id: str, direction: str | None = "forward") -> Hit:
    return Hit(a=a, b=b, surface=TEXT[a:b], entity_id=entity_id, direction=direction)


def doc(doc_id: str, *hits: Hit, text: str = TEXT) -> Document:
    return Document(doc_id=doc_id, text=text, ground_truth=list(hits))


@pytest.mark.parametrize("seed", range(25))
def test_kappa_matches_scikit_learn(seed: int) -> None:
    rng = random.Random(seed)
    categories = [NONE, "RO.0002211", "PEL.000018", "PEL.000000", "RO.0002292"][: rng.randint(2, 5)]
    n = rng.randint(2, 60)
    pairs = [(rng.choice(categories), rng.choice(categories)) for _ in range(n)]
    # Bias rater B towards rater A so κ ranges over positive values too.
    pairs = [(a, a if rng.random() < 0.6 else b) for a, b in pairs]
    a, b = zip(*pairs, strict=True)
    expected = sk_kappa(list(a), list(b))
    ours = cohen_kappa(pairs)
    if expected is None:
        assert ours is None
    else:
        assert ours == pytest.approx(expected, abs=1e-12)


def test_kappa_over_a_single_category_is_undefined() -> None:
    pairs = [("RO.0002211", "RO.0002211")] * 5
    assert sk_kappa([a for a, _ in pairs], [b for _, b in pairs]) is None
    assert cohen_kappa(pairs) is None
    assert cohen_kappa([]) is None


def test_kappa_is_zero_or_negative_when_raters_disagree_beyond_chance() -> None:
    assert cohen_kappa([("x", "y"), ("y", "x")]) == pytest.approx(-1.0)


def test_report_keys_counts_and_kappa(kb: KB) -> None:
    gold_a = [
        doc(
            "d1",
            hit(5, 14, "RO.0002211"),  # regulates — B agrees
            hit(27, 39, "RO.0002206", "inverse"),  # expressed in — B names the converse
            hit(50, 60, "PEL.000040", "symmetric"),  # associated with ≡ associates (tier 1)
            hit(65, 73, "PEL.000018"),  # inhibits — B says activates
        ),
        doc("d2", hit(5, 14, "RO.0002211")),  # only A marked it
        doc("only-in-a", hit(5, 14, "RO.0002211")),
    ]
    gold_b = [
        doc(
            "d1",
            hit(5, 19, "RO.0002211"),  # "regulates TNF": overlaps A's span
            hit(30, 39, "RO.0002292", "forward"),  # expresses
            hit(52, 60, "PEL.000002", "symmetric"),
            hit(65, 73, "PEL.000000"),
            hit(84, 93, "PEL.000000"),  # only B marked it
        ),
        doc("d2"),
        doc("only-in-b"),
    ]
    report = agreement(gold_a, gold_b, kb)
    data = report.to_dict()
    assert list(data) == [
        "n_docs_shared", "n_pairs", "n_span_matched", "n_only_a", "n_only_b",
        "kappa_entity_id", "kappa_entity_id_folded", "n_direction_pairs", "kappa_direction",
        "confusion", "span_f1", "span_f1_labelled", "alpha_u", "alpha_u_interval", "incomplete",
        "per_relation", "per_direction", "span_bootstrap",
    ]  # fmt: skip
    assert (data["n_docs_shared"], report.n_docs_only_a, report.n_docs_only_b) == (2, 1, 1)
    assert (data["n_pairs"], data["n_span_matched"], data["n_only_a"], data["n_only_b"]) == (
        6,
        4,
        1,
        1,
    )

    raw_a = ["RO.0002211", "RO.0002206", "PEL.000040", "PEL.000018", NONE, "RO.0002211"]
    raw_b = ["RO.0002211", "RO.0002292", "PEL.000002", "PEL.000000", "PEL.000000", NONE]
    folded_a = ["RO.0002211", "RO.0002292", "PEL.000002", "PEL.000018", NONE, "RO.0002211"]
    assert sorted(zip(raw_a, raw_b, strict=True)) == sorted(
        (p.a.entity_id if p.a else NONE, p.b.entity_id if p.b else NONE) for p in report.pairs
    )
    assert data["kappa_entity_id"] == pytest.approx(sk_kappa(raw_a, raw_b))
    assert data["kappa_entity_id_folded"] == pytest.approx(sk_kappa(folded_a, raw_b))
    assert data["kappa_entity_id_folded"] > data["kappa_entity_id"]

    # Direction pairs: regulates (forward/forward), expressed in ↔ expresses (both forward once
    # folded), and the symmetric relation, which agrees in any direction. The dispute over
    # inhibits/activates is left out.
    assert data["n_direction_pairs"] == 3
    assert data["kappa_direction"] == 1.0

    assert data["confusion"]["PEL.000018"] == {"PEL.000000": 1}
    assert data["confusion"][NONE] == {"PEL.000000": 1}
    assert data["confusion"]["RO.0002211"] == {NONE: 1, "RO.0002211": 1}


def test_direction_kappa_counts_a_pure_direction_dispute(kb: KB) -> None:
    gold_a = [doc("d", hit(5, 14, "RO.0002211", "forward"), hit(65, 73, "PEL.000018", "forward"))]
    gold_b = [doc("d", hit(5, 14, "RO.0002211", "inverse"), hit(65, 73, "PEL.000018", "forward"))]
    report = agreement(gold_a, gold_b, kb)
    assert report.n_direction_pairs == 2
    assert report.kappa_direction == pytest.approx(
        sk_kappa(["forward", "forward"], ["inverse", "forward"])
    )
    assert report.kappa_entity_id == 1.0


def test_without_a_kb_only_raw_kappa(kb: KB) -> None:
    gold_a = [doc("d", hit(5, 14, "RO.0002211"), hit(65, 73, "PEL.000018"))]
    gold_b = [doc("d", hit(5, 14, "RO.0002211"), hit(65, 73, "PEL.000000"))]
    report = agreement(gold_a, gold_b, None)
    assert report.kappa_entity_id_folded is None
    assert report.kappa_entity_id == pytest.approx(
        sk_kappa(["RO.0002211", "PEL.000018"], ["RO.0002211", "PEL.000000"])
    )


def test_one_document_with_two_texts_is_refused() -> None:
    with pytest.raises(AgreementError, match="d1"):
        agreement([doc("d1")], [doc("d1", text=TEXT + " more")], None)


def test_direction_kappa_symmetric_agrees_any_way_and_one_category_is_undefined(kb: KB) -> None:
    hits_a = [hit(5, 14, "RO.0002211"), hit(65, 73, "PEL.000018"), hit(50, 60, "PEL.000002", "na")]
    hits_b = [hit(5, 14, "RO.0002211"), hit(65, 73, "PEL.000018"), hit(50, 60, "PEL.000002", None)]
    report = agreement([doc("d", *hits_a)], [doc("d", *hits_b)], kb)
    assert report.n_direction_pairs == 3
    assert report.kappa_direction == 1.0
    forward_only = agreement([doc("d", *hits_a[:2])], [doc("d", *hits_b[:2])], kb)
    assert forward_only.n_direction_pairs == 2
    assert forward_only.kappa_direction is None  # one category: undefined, not 1


def test_category_pairs_read_in_one_pass_equal_each_rule_applied_alone(kb: KB) -> None:
    """The three κ's pairs from one pass over the span pairs (folds from the labeller) equal
    the ids as written, ``kb.fold_id`` of each, and the direction rule written out with
    ``fold_answer``: a symmetric relation agrees in any direction, others where both give one."""
    from goldloop.scoring.agreement import SpanPair, category_pairs
    from goldloop.scoring.folding import fold_answer
    from goldloop.scoring.span_table import Labeller

    rng = random.Random(4)
    ids = [r.entity_id for r in kb]
    symmetric = [r.entity_id for r in kb if r.is_symmetric]
    assert symmetric and any(not r.is_canonical for r in kb)  # both kinds are drawn below
    directions = ["forward", "inverse", "symmetric", "na", None]

    def drawn() -> Hit:
        entity_id = rng.choice(symmetric if rng.random() < 0.3 else ids)
        return Hit(a=0, b=1, entity_id=entity_id, direction=rng.choice(directions))

    pairs = []
    for _ in range(400):
        a = drawn() if rng.random() < 0.9 else None
        b = (Hit(**{**a.model_dump(), "direction": rng.choice(directions)}) if a and
             rng.random() < 0.5 else drawn()) if rng.random() < 0.9 else None  # fmt: skip
        pairs.append(SpanPair("d", a, b))
    pairs.append(SpanPair("d", None, None))
    raw, folded, found = category_pairs(pairs, Labeller(kb))

    def side(hit: Hit | None, fold: bool) -> str:
        return NONE if hit is None else kb.fold_id(hit.entity_id) if fold else hit.entity_id

    assert raw == [(side(p.a, False), side(p.b, False)) for p in pairs]
    assert folded == [(side(p.a, True), side(p.b, True)) for p in pairs]
    expected = []
    for p in pairs:
        if p.a is None or p.b is None:
            continue
        (id_a, dir_a), (id_b, dir_b) = (
            fold_answer(kb, h.entity_id, h.direction) for h in (p.a, p.b)
        )
        if id_a != id_b:
            continue
        relation = kb.get(str(id_a))
        if relation is not None and relation.is_symmetric:
            expected.append(("symmetric", "symmetric"))
        elif dir_a is not None and dir_b is not None:
            expected.append((dir_a, dir_b))
    assert found == expected
    assert len(expected) > 50 and ("symmetric", "symmetric") in expected


@pytest.mark.parametrize("seed", range(12))
def test_report_pairs_and_kappas_equal_the_matchers_pair_by_pair(kb: KB, seed: int) -> None:
    """The report reads most documents' span pairs off their overlaps and counts its κ and
    confusion from category codes: the same pairs as ``pair_spans`` (the greedy matcher per
    document), in its order, and the same κ and confusion (rows and cells in the order the pairs
    meet them) as ``cohen_kappa`` and ``category_pairs`` on those pairs; on documents with nested,
    overlapping, repeated and empty spans, ids spelled ∅ or like a direction, unknown ids."""
    from collections import Counter

    from goldloop.scoring.agreement import category_pairs, pair_spans
    from goldloop.scoring.span_table import Labeller

    rng = random.Random(seed)
    ids = [*[r.entity_id for r in kb][:40], NONE, "forward", "NOT.AN.ID"]
    text = " " * 200
    docs_a, docs_b = [], []
    for d in range(30):
        messy = rng.random() < 0.4
        sides: list[list[Hit]] = [[], []]
        for side in sides:
            for slot in range(rng.randrange(7)):
                a = rng.randrange(100) if messy else 15 * slot + rng.randrange(5)
                b = a + (rng.choice([0, 1, 4, 9, 30]) if messy else rng.randint(1, 9))
                direction = rng.choice(["forward", "inverse", None])
                side.append(Hit(a=a, b=b, entity_id=rng.choice(ids), direction=direction))
            if side and rng.random() < 0.2:  # one span twice, another relation
                side.append(side[0].model_copy(update={"entity_id": rng.choice(ids)}))
        if not messy:  # B near A's spans, often the same relation
            sides[1] = [
                h.model_copy(update={"a": h.a + rng.choice([0, 0, 1]), "b": h.b})
                if rng.random() < 0.6
                else h.model_copy(update={"entity_id": rng.choice(ids)})
                for h in sides[0]
                if rng.random() < 0.8
            ]
            rng.shuffle(sides[1])
        docs_a.append(Document(doc_id=f"d{d}", text=text, ground_truth=sides[0]))
        docs_b.append(Document(doc_id=f"d{d}", text=text, ground_truth=sides[1]))
    for the_kb in (kb, None):
        report = agreement(docs_a, docs_b, the_kb, n_boot=0)
        expected, *_ = pair_spans(docs_a, docs_b)
        assert [(p.doc_id, p.a, p.b) for p in report.pairs] == [
            (p.doc_id, p.a, p.b) for p in expected
        ]
        for x, y in zip(report.pairs, expected, strict=True):
            assert x.a is y.a and x.b is y.b  # the documents' own hits
        raw, folded, directions = category_pairs(expected, Labeller(the_kb))
        assert report.kappa_entity_id == cohen_kappa(raw)
        assert report.kappa_entity_id_folded == (cohen_kappa(folded) if the_kb else None)
        assert report.kappa_direction == cohen_kappa(directions)
        assert report.n_direction_pairs == len(directions)
        rows: dict[str, list[str]] = {}
        for a, b in folded if the_kb else raw:
            rows.setdefault(a, []).append(b)
        confusion = [(a, list(Counter(row).items())) for a, row in rows.items()]
        assert [(a, list(row.items())) for a, row in report.confusion.items()] == confusion
