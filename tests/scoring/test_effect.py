"""The effect figures against a simulation with a known truth (offline, no Label Studio).

Two strata with different inclusion probabilities (so the design weights matter) and a blind
annotator whose recall differs by stratum. Per true mention: the pre-annotator proposes it with
probability R; the person with candidates accepts a proposed one with probability P and finds an
unproposed one with probability Q_PRE; the blind person finds any with probability q_blind (by
stratum). False candidates are accepted with probability P_FALSE. Minutes: a Gamma sum of one
exponential per gold mention, mean MU_PRE or MU_BLIND. The final gold is the truth.
"""

from __future__ import annotations

import numpy as np
import pytest

from goldloop.formats.gold import Document, Hit
from goldloop.kb import KB
from goldloop.scoring.design import part_design
from goldloop.scoring.effect import (
    FIGURES,
    Crossing,
    PairedDocument,
    crossing,
    document_counts,
    effect_report,
)

R, P, P_FALSE, Q_PRE = 0.7, 0.9, 0.3, 0.3
FALSE_PER_DOC, MEAN_EXTRA = 0.5, 4.0  # spurious candidates; true mentions are 1 + Poisson(4)
MU_PRE, MU_BLIND = 0.5, 0.8
# The backend's other-occurrence proposals, submitted untouched: a share of the true mentions
# the candidates lack, and spurious ones.
PROPOSE, FALSE_PROPOSED = 0.4, 0.3
# stratum: (inclusion probability, sampled documents, the blind person's recall)
STRATA = {"a": (0.5, 150, 0.85), "b": (0.1, 150, 0.75)}
RELATION = "RO.0002213"


def _truth() -> dict[str, float]:
    """Each figure's value in the population the strata stand for (N_h = n_h / p_h)."""
    sizes = {s: n / p for s, (p, n, _) in STRATA.items()}
    total = sum(sizes.values())
    q_blind = sum(sizes[s] * q for s, (_, _, q) in STRATA.items()) / total
    mentions = 1 + MEAN_EXTRA
    recall_pre = R * P + (1 - R) * (PROPOSE + (1 - PROPOSE) * Q_PRE)
    true_proposed = mentions * (1 - R) * PROPOSE
    accepted = sum(sizes[s] * (mentions * R * P + FALSE_PER_DOC * P_FALSE) for s in STRATA)
    not_blind = sum(
        sizes[s] * (mentions * R * P * (1 - q) + FALSE_PER_DOC * P_FALSE)
        for s, (_, _, q) in STRATA.items()
    )
    return {
        "minutes_per_mention_pre": MU_PRE,
        "minutes_per_mention_blind": MU_BLIND,
        "minutes_saved_per_mention": MU_BLIND - MU_PRE,
        "time_saving": 1 - MU_PRE / MU_BLIND,
        "recall_pre": recall_pre,
        "recall_blind": q_blind,
        "recall_difference": recall_pre - q_blind,
        "accepted_not_blind": not_blind / accepted,
        "missed_too_pre": 1 - Q_PRE,
        "missed_too_blind": 1 - q_blind,
        "missed_too_difference": q_blind - Q_PRE,
        "proposed_in_gold": true_proposed / (true_proposed + FALSE_PROPOSED),
    }


def _hit(k: int) -> Hit:
    return Hit(a=10 * k, b=10 * k + 5, surface="x" * 5, entity_id=RELATION, direction="forward")


def simulate(seed: int) -> list[PairedDocument]:
    rng = np.random.default_rng(seed)
    paired = []
    for stratum, (p_incl, n, q_blind) in STRATA.items():
        for i in range(n):
            true = [_hit(k) for k in range(1 + rng.poisson(MEAN_EXTRA))]
            false = [_hit(100 + k) for k in range(rng.poisson(FALSE_PER_DOC))]
            proposed = [h for h in true if rng.random() < R]
            shown = proposed + false
            pre = [h for h in proposed if rng.random() < P]
            pre += [h for h in false if rng.random() < P_FALSE]
            unshown = [h for h in true if h not in proposed]
            offered = [h for h in unshown if rng.random() < PROPOSE]
            offered += [_hit(150 + k) for k in range(rng.poisson(FALSE_PROPOSED))]
            pre += [h.model_copy(update={"verdict": "proposed"}) for h in offered]
            pre += [h for h in unshown if h not in offered and rng.random() < Q_PRE]
            blind = [h for h in true if rng.random() < q_blind]
            document = Document(
                doc_id=f"{stratum}{i}", text="x" * 2000, p_incl=p_incl, stratum=stratum,
                batch=0, role="blind", ground_truth=true,
            )  # fmt: skip
            paired.append(
                PairedDocument(
                    document, shown, pre, blind,
                    minutes_pre=float(rng.gamma(len(true), MU_PRE)),
                    minutes_blind=float(rng.gamma(len(true), MU_BLIND)),
                )
            )  # fmt: skip
    return paired


def test_the_counts_of_one_document_by_hand() -> None:
    gold = [_hit(0), _hit(1), _hit(2)]
    document = Document(doc_id="d", text="x" * 100, ground_truth=gold)
    # candidates 0, 1 and a false 9; the person with them keeps 0 and 9 and finds 2; blind: 1, 2
    one = PairedDocument(document, [_hit(0), _hit(1), _hit(9)], [_hit(0), _hit(9), _hit(2)],
                         [_hit(1), _hit(2)], 3.0, None)  # fmt: skip
    counts = dict(zip(
        ("minutes_pre", "minutes_blind", "gold_timed", "gold", "found_pre", "found_blind",
         "accepted", "accepted_not_blind", "missed_by_candidates", "missed_too_pre",
         "missed_too_blind", "proposed", "proposed_in_gold"),
        document_counts(one), strict=True,
    ))  # fmt: skip
    assert counts == {
        "minutes_pre": 0, "minutes_blind": 0, "gold_timed": 0,  # one side untimed: no minutes
        "gold": 3, "found_pre": 2, "found_blind": 2,
        "accepted": 2, "accepted_not_blind": 2,  # 0 and 9: blind marked neither
        "missed_by_candidates": 1, "missed_too_pre": 0, "missed_too_blind": 0,
        "proposed": 0, "proposed_in_gold": 0,
    }  # fmt: skip
    # 2 proposed (submitted untouched) and 7 proposed wrongly: the machine showed 2, so it is no
    # miss of the candidates; the proposals are counted apart.
    proposed = [h.model_copy(update={"verdict": "proposed"}) for h in (_hit(2), _hit(7))]
    two = PairedDocument(document, [_hit(0), _hit(1)], [_hit(0), *proposed], [_hit(1)], 1.0, 2.0)
    assert list(document_counts(two)) == [1, 2, 3, 3, 2, 1, 1, 1, 0, 0, 0, 2, 1]


def test_the_estimates_recover_a_known_truth_within_their_intervals(kb: KB) -> None:
    report = effect_report(simulate(1), kb, bootstrap=600, seed=2).to_dict()
    truth = _truth()
    assert report["paired_documents"] == 300 == report["timed_pairs"]
    # The report's JSON keys, in the order the effect report has always written them.
    assert list(report) == ["paired_documents", "timed_pairs", "annotators", "crossing",
                            "figures", "alpha_u", "design", "bootstrap"]  # fmt: skip
    assert list(report["design"]) == ["n_docs", "n_strata", "population_docs", "weights"]
    assert list(report["crossing"]) == [
        "crossed",
        "only_with_candidates",
        "only_without_candidates",
    ]
    assert list(report["figures"]) == list(FIGURES)
    assert {tuple(f) for f in report["figures"].values()} == {("value", "interval", "estimates")}
    assert report["design"]["weights"] == "1/p_incl" and report["design"]["n_strata"] == 2
    for name, value in truth.items():
        figure = report["figures"][name]
        low, high = figure["interval"]
        assert low <= value <= high, (name, value, figure)
        assert low < figure["value"] < high
    # The design weights matter: the unweighted blind recall (the strata's plain mean, 0.80)
    # is not what the corpus figure estimates.
    assert abs(report["figures"]["recall_blind"]["value"] - truth["recall_blind"]) < 0.02
    assert set(report["figures"]) == set(FIGURES)
    assert all(report["figures"][name]["estimates"] for name in FIGURES)


@pytest.mark.slow
def test_intervals_cover_the_truth_at_about_their_level(kb: KB) -> None:
    """Over repeated simulations each 95% interval holds the truth in most runs: a wrong
    weight or a bootstrap that ignores the strata would miss far more often."""
    truth = _truth()
    runs = 24
    covered = dict.fromkeys(truth, 0)
    for seed in range(runs):
        figures = effect_report(simulate(100 + seed), None, bootstrap=300, seed=seed).figures
        for name, value in truth.items():
            low, high = figures[name].interval
            covered[name] += low <= value <= high
    # 95% nominal: 24 runs give at least 19 covered with probability > 0.99 per figure.
    assert all(n >= 19 for n in covered.values()), covered
    assert sum(covered.values()) / (runs * len(truth)) == pytest.approx(0.95, abs=0.05)


def test_agreement_between_the_conditions_is_the_suites(kb: KB) -> None:
    paired = simulate(3)[:40]
    report = effect_report(paired, kb, bootstrap=200, seed=0).to_dict()
    pairs = n_same = n_pre = n_blind = 0
    for p in paired:
        pre = {(h.a, h.b) for h in p.pre}
        blind = {(h.a, h.b) for h in p.blind}
        n_same += len(pre & blind)
        n_pre += len(pre)
        n_blind += len(blind)
        pairs += 1
    # Equal-length spans never overlap here, so strict and lenient pair the same spans; every
    # p_incl is 0.5 in stratum a (the first 40 documents): the weights cancel.
    expected = 2 * n_same / (n_pre + n_blind)
    assert pairs == 40
    assert report["figures"]["span_f1_strict"]["value"] == pytest.approx(expected)
    assert report["figures"]["span_f1_lenient"]["value"] == pytest.approx(expected)
    assert report["alpha_u"]["spans"]["value"] is not None


def _doc(doc_id: str, batch: int, p_incl: float, gold: list[Hit] | None = None) -> Document:
    return Document(doc_id=doc_id, text="x" * 100, p_incl=p_incl, stratum="s", batch=batch,
                    role="blind", ground_truth=gold or [])  # fmt: skip


def test_two_batches_of_different_blind_shares_weigh_as_the_design_given_by_hand(kb: KB) -> None:
    # The pairs weigh by the design the caller gives (a campaign's: studio.campaign_agreement's
    # campaign_design, part_design over its draw). The draw here: batch 0 holds 4 documents (p .5), one paired (a quarter); batch 1 holds 2 (p .25),
    # one paired (a half).
    one = _doc("one", 0, 0.5, [_hit(0), _hit(1)])
    two = _doc("two", 1, 0.25, [_hit(0), _hit(1), _hit(2)])
    gold = [one, *(_doc(f"b0-{i}", 0, 0.5) for i in range(3)), two, _doc("b1-0", 1, 0.25)]
    paired = [
        PairedDocument(one, [_hit(0)], [_hit(0), _hit(1)], [_hit(0)], 1.0, 2.0),
        PairedDocument(two, [_hit(0)], [_hit(0)], [_hit(0), _hit(1), _hit(2)], 3.0, 3.0),
    ]
    design = part_design(gold, [p.document.doc_id for p in paired])
    report = effect_report(paired, kb, design=design, bootstrap=20, seed=0).to_dict()
    # In the draw (α_0 = 4/6, α_1 = 2/6): batch 0 weighs α_0/.5 + α_1 = 5/3, batch 1 α_1/.25 = 4/3.
    # A paired document stands for its batch: times 4/1 and 2/1, so 20/3 and 8/3.
    w_one, w_two = 20 / 3, 8 / 3
    gold_mentions = 2 * w_one + 3 * w_two  # 64/3
    figures = {name: f["value"] for name, f in report["figures"].items()}
    assert figures["recall_blind"] == pytest.approx((1 * w_one + 3 * w_two) / gold_mentions)
    assert figures["recall_blind"] == pytest.approx(44 / 64)
    assert figures["recall_pre"] == pytest.approx((2 * w_one + 1 * w_two) / gold_mentions)
    assert figures["minutes_per_mention_pre"] == pytest.approx(
        (1 * w_one + 3 * w_two) / gold_mentions
    )
    assert figures["minutes_per_mention_blind"] == pytest.approx(1.0)
    # The pairs stand for the gold's documents: Σ w is the gold's own, 4·5/3 + 2·4/3.
    assert report["design"]["population_docs"] == pytest.approx(28 / 3)
    # Batch shares taken from the blind documents themselves (1/2 each: weights 1.5 and 2) would
    # give 7.5 / 9 instead.
    assert abs(figures["recall_blind"] - 7.5 / 9) > 0.1
    # Without a design, the pairs are the whole sample (the batch shares are theirs).
    alone = effect_report(paired, kb, bootstrap=20, seed=0).figures["recall_blind"].value
    assert alone == pytest.approx(7.5 / 9)


def test_crossing_names_who_did_one_condition_only(kb: KB) -> None:
    doc = _doc("d", 0, 0.5, [_hit(0)])

    def pair(pre: str, blind: str) -> PairedDocument:
        return PairedDocument(doc, [], [_hit(0)], [_hit(0)], 1.0, 1.0, pre, blind)

    assert crossing([pair("alice", "bob"), pair("bob", "alice")]).to_dict() == {
        "crossed": True, "only_with_candidates": [], "only_without_candidates": [],
    }  # fmt: skip
    # carol worked only blind and alice only with candidates: person and condition confounded.
    assert crossing([pair("alice", "bob"), pair("bob", "carol")]) == Crossing(
        crossed=False, only_with_candidates=["alice"], only_without_candidates=["carol"]
    )
    assert crossing([pair("alice", "bob"), pair("", "alice")]).crossed is None
    report = effect_report([pair("alice", "bob")] * 2, kb, bootstrap=10, seed=0)
    assert report.crossing.crossed is False
