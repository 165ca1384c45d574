"""The mechanisms' calibrations: the noise a mechanism needs for a privacy guarantee, as pure formulas.

Laplace's scale b = Δf/ε, the Gaussian σ (classic and analytic) and randomized response's
probability of telling the truth. The samplers (:mod:`dpcourse.mechanisms.noise`) and the theory
(:mod:`dpcourse.mechanisms.theory`) both need them, so they sit below both: this module imports
nothing of the package but ``dpcourse._validation``. :mod:`dpcourse.mechanisms` re-exports them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from .._validation import (
    ArrayLike,
    check_choice,
    check_epsilon,
    check_positive,
    check_positive_array,
    check_probability,
)

__all__ = ["GAUSSIAN_CALIBRATIONS", "analytic_gaussian_delta", "gaussian_sigma", "laplace_scale", "rr_keep_probability"]

GAUSSIAN_CALIBRATIONS = ("analytic", "classic")


def laplace_scale(*, sensitivity: float, epsilon: float) -> float:
    """The Laplace mechanism's scale b = Δf/ε (Lecture 2; Dwork & Roth, Def. 3.3).

    Parameters
    ----------
    sensitivity : float
        The L1 sensitivity Δf = max over neighbours ‖f(x) − f(y)‖₁, > 0.
    epsilon : float
        The privacy parameter ε > 0.

    Returns
    -------
    float
        The scale b = Δf/ε of the noise added to each coordinate.

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``sensitivity`` or ``epsilon`` is not a real number.
    """
    return check_positive(sensitivity, "sensitivity") / check_epsilon(epsilon)


def _classic_sigma(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    if epsilon >= 1:
        raise ValueError(
            "epsilon must be < 1 for the classic Gaussian calibration "
            f"σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth, Theorem A.1); got {epsilon!r}. "
            "Use calibration='analytic', which is valid for every ε > 0."
        )
    return l2_sensitivity * np.sqrt(2.0 * np.log(1.25 / delta)) / epsilon


def analytic_gaussian_delta(sigma: ArrayLike, *, l2_sensitivity: float, epsilon: float) -> Any:
    """The exact δ(σ) of the Gaussian mechanism with noise N(0, σ²) (Balle & Wang 2018, Thm. 8).

    δ(σ) = Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ); the mechanism is (ε, δ)-DP exactly
    when δ ≥ δ(σ). The second term is evaluated in log space so that large ε does not
    overflow.

    Parameters
    ----------
    sigma : float or array_like
        The noise standard deviation σ, > 0; an array gives δ(σ) for each of its entries.
    l2_sensitivity : float
        The L2 sensitivity Δ = max over neighbours ‖f(x) − f(y)‖₂, > 0.
    epsilon : float
        The privacy parameter ε, a finite number > 0.

    Returns
    -------
    float or numpy.ndarray
        δ(σ) ∈ [0, 1], shaped like ``sigma`` (a NumPy float for a single σ).

    Raises
    ------
    ValueError
        If an entry of ``sigma`` is not a finite number > 0 (or an array ``sigma`` is empty), or
        ``l2_sensitivity`` or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``sigma``, ``l2_sensitivity`` or ``epsilon`` is not made of real numbers.
    """
    s = check_positive_array(sigma, "sigma", ndim=None)
    return _analytic_delta(s, check_positive(l2_sensitivity, "l2_sensitivity"), check_epsilon(epsilon, allow_inf=False))


def _analytic_delta(s: Any, l2_sensitivity: float, epsilon: float) -> Any:
    a = l2_sensitivity / (2.0 * s)
    b = epsilon * s / l2_sensitivity
    return special.ndtr(a - b) - np.exp(epsilon + special.log_ndtr(-a - b))


def _analytic_sigma(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    from scipy import optimize  # on first use: importing scipy.optimize costs notebooks that never call it

    def excess(log_sigma: float) -> float:
        return float(_analytic_delta(np.exp(log_sigma), l2_sensitivity, epsilon) - delta)

    # δ(σ) falls from 1 (σ → 0) to 0 (σ → ∞); bracket the crossing on a log scale.
    lo = np.log(l2_sensitivity) - 1.0
    while excess(lo) <= 0:
        lo -= 2.0
    hi = lo + 2.0
    while excess(hi) > 0:
        hi += 2.0
    return float(np.exp(optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-14)))


def gaussian_sigma(*, l2_sensitivity: float, epsilon: float, delta: float, calibration: str = "analytic") -> float:
    """The noise standard deviation σ that makes the Gaussian mechanism (ε, δ)-DP.

    Parameters
    ----------
    l2_sensitivity : float
        Δ₂ = max over neighbours ‖f(x) − f(y)‖₂, > 0.
    epsilon : float
        ε > 0 (``"classic"`` requires ε < 1).
    delta : float
        δ ∈ (0, 1).
    calibration : {"analytic", "classic"}, optional
        ``"classic"``: σ = Δ₂·√(2 ln(1.25/δ))/ε (Dwork & Roth, Theorem A.1, valid for ε < 1).
        ``"analytic"`` (the default): the smallest σ with δ(σ) ≤ δ, where δ(σ) is the exact privacy
        profile of Balle & Wang (2018) (:func:`analytic_gaussian_delta`), found by root finding;
        never larger than the classic σ, and valid for every ε > 0.

    Returns
    -------
    float
        σ, in the units of ``l2_sensitivity``.

    Raises
    ------
    ValueError
        If ``l2_sensitivity`` or ``epsilon`` is not a finite number > 0, ``delta`` is not in (0, 1),
        ``calibration`` is not ``"analytic"`` or ``"classic"``, or ``calibration="classic"`` with ε ≥ 1.
    TypeError
        If ``l2_sensitivity``, ``epsilon`` or ``delta`` is not a real number.
    """
    l2 = check_positive(l2_sensitivity, "l2_sensitivity")
    eps = check_epsilon(epsilon)
    dlt = check_probability(delta, "delta")
    check_choice(calibration, "calibration", GAUSSIAN_CALIBRATIONS)
    if calibration == "classic":
        return _classic_sigma(l2, eps, dlt)
    return _analytic_sigma(l2, eps, dlt)


def rr_keep_probability(epsilon: float) -> float:
    """p = e^ε/(1 + e^ε), the probability that randomized response reports the true bit.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε, a finite number > 0.

    Returns
    -------
    float
        p, between ½ and 1; the report is flipped with probability 1 − p = 1/(1 + e^ε).

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0.
    TypeError
        If ``epsilon`` is not a real number.
    """
    return float(special.expit(check_epsilon(epsilon)))
