"""An independent reference for ``scoring.ppi_corpus``: ``ppi_py.ppi_mean_ci`` (ppi-python, MIT,
aangelopoulos/ppi_py, ``ppi_py/ppi.py``) for a one-dimensional mean with equal weights, rewritten
in numpy from its published source: the package is not a dependency (it pulls statsmodels,
scikit-learn and numba for one formula). Same steps: the λ = 1 estimate, gradients centred on
it, ``_calc_lam_glm``'s λ (clipped to [0, 1]), then the estimate and its normal interval with
population standard deviations (``ddof=0``). Checked once against ppi-python 0.2.3 itself
(installed in a scratch environment): on ``test_ppi_corpus``'s three cross-check data sets and
λ ∈ {tuned, 0, 0.4, 1}, ``ppi_corpus_figures`` and ``ppi_py.ppi_mean_ci`` /
``ppi_mean_pointestimate`` differed by at most 2e-11."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np


def ppi_mean_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """``_calc_lam_glm`` for a mean (identity inverse Hessian, ``clip=True``)."""
    n, big_n = len(y), len(yhat_unlabelled)
    theta = yhat_unlabelled.mean() + (y - yhat).mean()
    grads, grads_hat = y - theta, yhat - theta
    grads_unlabelled = yhat_unlabelled - theta
    cov = 2 * np.mean((grads - grads.mean()) * (grads_hat - grads_hat.mean()))
    var = np.cov(np.concatenate([grads_hat, grads_unlabelled]))
    return float(np.clip(cov / (2 * (1 + n / big_n) * var), 0, 1))


def ppi_mean_ci(
    y: np.ndarray,
    yhat: np.ndarray,
    yhat_unlabelled: np.ndarray,
    alpha: float = 0.05,
    lam: float | None = None,
) -> tuple[float, float, float, float]:
    """(estimate, low, high, λ) as ``ppi_py.ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha, lam)``
    with its estimate (``ppi_mean_pointestimate`` at the same λ)."""
    if lam is None:
        lam = ppi_mean_lambda(y, yhat, yhat_unlabelled)
    n, big_n = len(y), len(yhat_unlabelled)
    estimate = float((lam * yhat_unlabelled).mean() + (y - lam * yhat).mean())
    imputed_std = (lam * yhat_unlabelled).std() / np.sqrt(big_n)
    rectifier_std = (y - lam * yhat).std() / np.sqrt(n)
    half = NormalDist().inv_cdf(1 - alpha / 2) * float(np.sqrt(imputed_std**2 + rectifier_std**2))
    return estimate, estimate - half, estimate + half, lam
