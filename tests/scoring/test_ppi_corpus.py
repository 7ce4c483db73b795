"""Prediction-powered corpus figures (``scoring.ppi_corpus``): the cross-check against
``ppi_py``'s mean (``ppi_reference``), a hand-worked two-batch case of the batch rule, the
classical case, and seeded simulations with a known truth (the issue's four scenarios)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from goldloop.scoring.bootstrap import f1, ratio
from goldloop.scoring.design import Design, batch_weights, corpus_figures
from goldloop.scoring.ppi_corpus import ppi_corpus_figures
from tests.scoring.ppi_reference import ppi_mean_ci


def _detection(s: np.ndarray) -> dict[str, np.ndarray]:
    """Columns: gold mentions, predicted, matched (as ``regimes``' end-to-end counts)."""
    precision, recall = ratio(s[:, 2], s[:, 1]), ratio(s[:, 2], s[:, 0])
    return {"precision": precision, "recall": recall, "f1": f1(precision, recall)}


def _mean(s: np.ndarray) -> dict[str, np.ndarray]:
    """A mean per document: column 0 over column 1 (each document's 1)."""
    return {"mean": ratio(s[:, 0], s[:, 1])}


def _one_cell(weights: np.ndarray, strata: np.ndarray | None = None) -> Design:
    labels = np.zeros(len(weights), dtype=int) if strata is None else strata
    cells = np.unique(labels, return_inverse=True)[1]
    return Design(weights, cells, len(set(labels.tolist())), "1/p_incl", labels.astype(str))


@pytest.mark.parametrize("lam", [None, 0.0, 0.4, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_unstratified_equal_weights_agree_with_ppi_py(lam: float | None, seed: int) -> None:
    """A mean with equal weights, one stratum: the estimate, the interval and the tuned λ agree
    with ``ppi_py.ppi_mean_ci`` (its published steps, ``ppi_reference``) to 1e-6."""
    rng = np.random.default_rng(seed)
    n, m, pool = 300, 5000, 60_000
    truth = rng.poisson(3.0, n + m).astype(float)
    guess = truth + rng.normal(0, 1.2, n + m) + 0.4  # a biased, noisy pre-annotator
    y, yhat, unlabelled = truth[:n], guess[:n], guess[n:]
    ones_h, ones_s = np.ones(n), np.ones(m)
    figures = ppi_corpus_figures(
        np.column_stack([y, ones_h]),
        np.column_stack([yhat, ones_h]),
        np.column_stack([unlabelled, ones_s]),
        _mean,
        _one_cell(np.full(n, pool / n)),
        _one_cell(np.full(m, pool / m)),
        lam=lam,
        bounds=None,
    )
    estimate, low, high, their_lam = ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=lam)
    assert figures.values["mean"] == pytest.approx(estimate, abs=1e-6)
    assert figures.intervals["mean"] == pytest.approx([low, high], abs=1e-6)
    assert figures.lambdas["mean"]["0"] == pytest.approx(their_lam, abs=1e-6)
    if lam is None:
        assert 0 < their_lam < 1  # the tuned case really tunes


def test_two_batches_combine_as_the_batch_rule_says() -> None:
    """Hand-worked. Human part: batch 0 holds d1, d2 (p_incl 0.5), batch 1 holds d3, d4
    (p_incl 0.25), so α = (1/2, 1/2) and the weights are α_0/p + α_1 = 1 + 1/2 = 1.5 for batch
    0 and α_1/p = 2 for batch 1 (``batch_weights``). Surrogate part: four documents, weight 2.
    Counts (mentions x, and 1 per document):

        human   x (gold)  x (pre-annotation)      surrogate   x (pre-annotation)
        d1      4         3                       s1          2
        d2      2         2                       s2          5
        d3      6         5                       s3          3
        d4      0         1                       s4          2

    With λ = 1/2 fixed: T̂_x = Σ w (y − λ f) + λ Σ v f
        = 1.5·(4 − 1.5) + 1.5·(2 − 1) + 2·(6 − 2.5) + 2·(0 − 0.5) + 0.5·2·12 = 23.25,
    T̂_1 = Σ w (1 − λ) + λ Σ v = 7·0.5 + 0.5·8 = 7.5, the mean 23.25 / 7.5 = 3.1.
    Variance (cells = batches): with the mean θ, u = (x − θ)/T̂_1 and w(u − λr) per document is
    w·(y − λf − (1 − λ)θ)/T̂_1; its within-batch spread plus the surrogate's λv(f − θ)/T̂_1."""
    weights = batch_weights(np.array([0.5, 0.5, 0.25, 0.25]), np.array([0, 0, 1, 1]))
    assert weights.tolist() == [1.5, 1.5, 2.0, 2.0]
    human = Design(weights, np.array([0, 0, 1, 1]), 1, "1/p_incl", np.array(["a"] * 4))
    surrogate = Design(np.full(4, 2.0), np.zeros(4, dtype=int), 1, "1/p_incl", np.array(["a"] * 4))
    y, f, s = np.array([4.0, 2, 6, 0]), np.array([3.0, 2, 5, 1]), np.array([2.0, 5, 3, 2])
    one = np.ones(4)
    figures = ppi_corpus_figures(
        np.column_stack([y, one]),
        np.column_stack([f, one]),
        np.column_stack([s, one]),
        _mean,
        human,
        surrogate,
        lam=0.5,
        bounds=None,
    )
    theta = 3.1
    assert figures.values["mean"] == pytest.approx(theta, abs=1e-9)
    x = weights * (y - 0.5 * f - 0.5 * theta) / 7.5
    spread_h = sum(((x[b] - x[b].mean()) ** 2).sum() for b in (slice(0, 2), slice(2, 4)))
    xs = 0.5 * 2.0 * (s - theta) / 7.5
    variance = spread_h + ((xs - xs.mean()) ** 2).sum()
    assert figures.standard_errors["mean"] == pytest.approx(np.sqrt(variance), rel=1e-6)
    assert figures.population_docs == 7.0  # Σ w: the human part's design, as ``corpus`` says


def test_lambda_zero_is_the_classical_design_estimate() -> None:
    """λ = 0: the value is the ``corpus`` object's (Hájek) figure, the effective documents are
    the human documents, and the surrogate part changes nothing."""
    rng = np.random.default_rng(3)
    n = 200
    gold = rng.poisson(4, n)
    matched = rng.binomial(gold, 0.7)
    y = np.column_stack([gold, matched + rng.poisson(1, n), matched])
    strata = rng.integers(0, 3, n)
    design = _one_cell(np.array([5.0, 10.0, 20.0])[strata], strata)
    figures = ppi_corpus_figures(y, y, y[:50], _detection, design, _one_cell(np.ones(50)), lam=0)
    classical = corpus_figures(y, _detection, design, bootstrap=0, seed=0)
    for name in ("precision", "recall", "f1"):
        assert figures.values[name] == pytest.approx(classical.values[name], abs=1e-9)
        assert figures.effective_docs[name] == pytest.approx(n)
        assert figures.lambdas[name] == {"0": 0.0, "1": 0.0, "2": 0.0}


def test_strata_the_other_part_lacks_get_no_correction() -> None:
    """A gold stratum without surrogate documents gets λ = 0 (it has nothing to stand in), and
    surrogate documents of a stratum without people are left out (nothing would correct them):
    with no stratum in common, PPI is the classical estimate, whatever the surrogate holds."""
    rng = np.random.default_rng(5)
    y = np.column_stack([rng.poisson(4, 40), rng.poisson(4, 40), rng.poisson(2, 40)])
    y[:, 2] = np.minimum(y[:, 2], y[:, :2].min(axis=1))
    human = _one_cell(np.full(40, 5.0), np.array([0, 1] * 20))
    elsewhere = _one_cell(np.full(30, 2.0), np.full(30, 7))
    apart = ppi_corpus_figures(y, y, y[:30] * 3, _detection, human, elsewhere)
    classical = ppi_corpus_figures(y, y, y[:30] * 3, _detection, human, elsewhere, lam=0.0)
    assert apart.to_dict() == classical.to_dict()
    assert apart.lambdas["f1"] == {"0": 0.0, "1": 0.0}
    shared = _one_cell(np.full(30, 2.0), np.array([1] * 30))
    half = ppi_corpus_figures(y, y, y[:30], _detection, human, shared)
    assert half.lambdas["f1"]["0"] == 0.0 < half.lambdas["f1"]["1"]


def test_the_ppi_object_has_the_corpus_keys_then_its_own() -> None:
    rng = np.random.default_rng(4)
    y = np.column_stack([rng.poisson(4, 30), rng.poisson(4, 30), rng.poisson(2, 30)])
    y[:, 2] = np.minimum(y[:, 2], y[:, :2].min(axis=1))
    design = _one_cell(np.full(30, 10.0))
    written = ppi_corpus_figures(y, y, y, _detection, design, design).to_dict()
    classical = corpus_figures(y, _detection, design, bootstrap=20, seed=0).to_dict()
    assert list(written)[: len(classical)] == list(classical)
    assert list(written)[len(classical) :] == ["lambda", "effective_docs", "surrogate_docs"]
    # A pre-annotation equal to the gold on a surrogate part of the same n documents: PPI++'s λ
    # is m / (n + m) = 1/2 but for ppi_py's two variances (ddof 0 over 1 of the 2n pooled):
    # (2n − 1) / 4n; the variance halves, so the effective documents double.
    assert written["lambda"]["f1"]["0"] == pytest.approx(59 / 120, abs=1e-6)
    assert written["effective_docs"]["f1"] == pytest.approx(60, abs=0.2)


# --- Simulations with a known truth ------------------------------------------------------------

POOL = 24_000
STRATA = (9000, 7000, 5000, 3000)  # documents per stratum: 24,000 in all
HUMAN = 150  # human documents drawn per stratum (600 in all; unequal weights)
SURROGATE = 2000  # surrogate documents drawn per stratum (8,000 in all)
SEEDS = 200


@dataclass(frozen=True)
class Pool:
    """Per document: its stratum, its counts against the truth and against the pre-annotation
    (gold mentions, predicted, matched), the system's predictions being the same in both."""

    strata: np.ndarray
    truth: np.ndarray
    stand_in: np.ndarray


def _pool(annotator: Callable[[np.random.Generator, np.ndarray, int], np.ndarray]) -> Pool:
    """A synthetic pool whose strata differ in mention rate and system quality; the
    ``annotator`` gives the pre-annotation's counts for stratum ``h``'s documents."""
    rng = np.random.default_rng(2024)
    strata, truth, stand_in = [], [], []
    for h, size in enumerate(STRATA):
        gold = rng.poisson((1.0, 2.5, 4.0, 6.0)[h], size)
        tp = rng.binomial(gold, (0.85, 0.7, 0.6, 0.45)[h])
        fp = rng.poisson((0.3, 0.6, 1.0, 1.8)[h], size)
        counts = np.column_stack([gold, tp + fp, tp, fp])
        strata.append(np.full(size, h))
        truth.append(counts[:, :3])
        stand_in.append(annotator(rng, counts, h))
    return Pool(np.concatenate(strata), np.concatenate(truth), np.concatenate(stand_in))


def _noisy(keep: float, agree_fp: float, extra: float) -> Callable[..., np.ndarray]:
    """A pre-annotator that finds each true mention with probability ``keep``, marks a system's
    false positive with probability ``agree_fp`` and adds Poisson(``extra``) mentions."""

    def annotate(rng: np.random.Generator, counts: np.ndarray, h: int) -> np.ndarray:
        gold, predicted, tp, fp = counts.T
        kept_tp = rng.binomial(tp, keep)
        kept_other = rng.binomial(gold - tp, keep)
        agreed = rng.binomial(fp, agree_fp)
        mentions = kept_tp + kept_other + agreed + rng.poisson(extra, len(gold))
        return np.column_stack([mentions, predicted, kept_tp + agreed])

    return annotate


def _useless(rng: np.random.Generator, counts: np.ndarray, h: int) -> np.ndarray:
    """Independent of the document and its stratum: the same mention counts everywhere."""
    mentions = rng.poisson(3.0, len(counts))
    predicted = counts[:, 1]
    return np.column_stack(
        [mentions, predicted, np.minimum(rng.binomial(mentions, 0.5), predicted)]
    )


def _biased(rng: np.random.Generator, counts: np.ndarray, h: int) -> np.ndarray:
    """Good in strata 0 and 1; in strata 2 and 3 it misses most mentions and invents others."""
    return (_noisy(0.88, 0.12, 0.3) if h < 2 else _noisy(0.3, 0.6, 2.5))(rng, counts, h)


SCENARIOS = {
    "good": _noisy(0.88, 0.12, 0.3),
    "mediocre": _noisy(0.35, 0.4, 2.0),
    "useless": _useless,
    "biased": _biased,
}


@dataclass(frozen=True)
class Outcome:
    coverage: dict[str, float]
    width_ratio: dict[str, float]  # mean PPI width over mean classical width
    correlation: float  # of the gold-mention counts, pre-annotation against truth, over the pool


def _simulate(name: str) -> Outcome:
    pool = _pool(SCENARIOS[name])
    target = {k: float(v[0]) for k, v in _detection(pool.truth.sum(axis=0)[None, :]).items()}
    covered = dict.fromkeys(target, 0)
    widths: dict[str, list[float]] = {k: [0.0, 0.0] for k in target}
    starts = np.cumsum((0, *STRATA))
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        human, part = [], []
        for h, size in enumerate(STRATA):
            human.append(starts[h] + rng.choice(size, HUMAN, replace=False))
            part.append(starts[h] + rng.choice(size, SURROGATE, replace=False))
        rows_h, rows_s = np.concatenate(human), np.concatenate(part)
        sizes = np.array(STRATA, dtype=float)
        design_h = _one_cell(sizes[pool.strata[rows_h]] / HUMAN, pool.strata[rows_h])
        design_s = _one_cell(sizes[pool.strata[rows_s]] / SURROGATE, pool.strata[rows_s])
        args = (
            pool.truth[rows_h], pool.stand_in[rows_h], pool.stand_in[rows_s], _detection,
            design_h, design_s,
        )  # fmt: skip
        ppi = ppi_corpus_figures(*args)
        classical = ppi_corpus_figures(*args, lam=0.0)
        for k, truth in target.items():
            low, high = ppi.intervals[k]
            assert low is not None and high is not None
            covered[k] += low <= truth <= high
            c_low, c_high = classical.intervals[k]
            assert c_low is not None and c_high is not None
            widths[k][0] += high - low
            widths[k][1] += c_high - c_low
    return Outcome(
        coverage={k: v / SEEDS for k, v in covered.items()},
        width_ratio={k: w[0] / w[1] for k, w in widths.items()},
        correlation=float(np.corrcoef(pool.truth[:, 0], pool.stand_in[:, 0])[0, 1]),
    )


# Scenario → (the pre-annotation's correlation with the truth: low, high; the largest mean
# F1 width over the classical design interval's). The bar: coverage ≥ 93% everywhere,
# width ≤ 0.7× with the good surrogate and ≤ 1.05× with the useless one.
BARS = {
    "good": ((0.88, 0.95), 0.7),
    "mediocre": ((0.4, 0.6), 1.0),
    "useless": ((-0.05, 0.05), 1.05),
    "biased": ((0.3, 0.9), 1.0),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_simulated_coverage_and_width(scenario: str) -> None:
    """Scenario ``scenario``, figure F1 (precision and recall too): a pool of 24,000 documents in
    four strata of different mention rates and system quality; per seed (200) a stratified human
    part of 600 documents (150 a stratum, unequal weights) and an independent surrogate part of
    8,000; the PPI 95% interval covers the pool's own figure in ≥ 93% of seeds, and its mean
    width over the classical design interval's (λ = 0) stays under the scenario's bar."""
    outcome = _simulate(scenario)
    (low, high), bar = BARS[scenario]
    assert low <= outcome.correlation <= high, outcome
    assert min(outcome.coverage.values()) >= 0.93, outcome
    assert outcome.width_ratio["f1"] <= bar, outcome
    print(scenario, outcome)  # the measured figures, for the record (pytest -s)
