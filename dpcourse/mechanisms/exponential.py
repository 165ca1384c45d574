"""The exponential mechanism, exactly: its output distribution, its privacy loss, its utility.

Lecture 4, §4.2 (the notes defer the utility analysis to Lecture 5; we use Dwork & Roth,
Theorem 3.11). The samplers ``exponential_mechanism`` and ``report_noisy_max`` live in
:mod:`dpcourse.mechanisms.noise`; this module computes what they should produce, so that
notebook 06 can check the privacy proof step by step and measure the utility theorem on the
lecture's pricing example.

The notes define the mechanism as "Pr[r] ∝ exp(εu(x, r))/Δu", which has lost the factor
2Δu inside the exponent: their own proof, and McSherry & Talwar's mechanism, use
Pr[r] ∝ exp(εu(x, r)/(2Δu)). ``factor`` below is that 2 (``factor=1`` is the formula with the
2 missing, to show what it costs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special

from .._validation import ArrayLike, check_array, check_epsilon, check_integer, check_positive, check_positive_array

__all__ = [
    "ExponentialPrivacyLoss",
    "adversarial_scores",
    "exponential_mechanism_pmf",
    "exponential_privacy_loss",
    "pricing_revenue",
    "utility_gap_tail",
]


def _check_factor(factor: float) -> float:
    f = check_positive(factor, "factor")
    if f not in (1.0, 2.0):
        raise ValueError(
            f"factor must be 2 (the mechanism) or 1 (the notes' formula with the 2 missing); got {factor!r}"
        )
    return f


def exponential_mechanism_pmf(
    scores: ArrayLike, *, epsilon: float, sensitivity: float = 1.0, factor: float = 2.0
) -> np.ndarray:
    """Pr[M(x) = r] = exp(εu(x, r)/(factor·Δu)) / Σ_r′ exp(εu(x, r′)/(factor·Δu)), for every r.

    Computed as a softmax, so large scores do not overflow.

    Parameters
    ----------
    scores : array_like, shape (m,)
        The utilities u(x, r) over the m = |R| outcomes of the range R (finite).
    epsilon : float
        The privacy parameter ε, > 0.
    sensitivity : float, optional
        The sensitivity Δu of the utility, > 0; 1 by default.
    factor : {2, 1}, optional
        The 2 in the exponent's denominator: 2 (the default) is the mechanism, 1 the notes' formula
        with the 2 missing.

    Returns
    -------
    numpy.ndarray
        Pr[M(x) = r] for each r, shape ``(m,)``, summing to 1.

    Raises
    ------
    ValueError
        If ``scores`` is empty, not one-dimensional or not finite, ``epsilon`` or ``sensitivity`` is not a
        finite number > 0, or ``factor`` is neither 1 nor 2.
    TypeError
        If ``scores`` is not numeric, or ``epsilon``, ``sensitivity`` or ``factor`` is not a real number.

    Examples
    --------
    >>> exponential_mechanism_pmf([0.0, 2.0], epsilon=1.0).round(4).tolist()
    [0.2689, 0.7311]
    """
    u = check_array(scores, "scores", ndim=1)
    weight = check_epsilon(epsilon) / (_check_factor(factor) * check_positive(sensitivity, "sensitivity"))
    return special.softmax(weight * u)


@dataclass(frozen=True)
class ExponentialPrivacyLoss:
    """The exact privacy loss of the exponential mechanism on one pair of score vectors.

    Attributes
    ----------
    pmf_d : numpy.ndarray
        Pr[M(x) = r] for each outcome r.
    pmf_d_prime : numpy.ndarray
        Pr[M(y) = r] for each outcome r.
    loss : numpy.ndarray
        ln(Pr[M(x) = r]/Pr[M(y) = r]) per outcome.
    score_factor : float
        The proof's first factor, maxᵣ exp(ε(u(x, r) − u(y, r))/(2Δu)) (with ``factor`` for 2).
    normaliser_factor : float
        The proof's second factor, Σᵣ′ exp(εu(y, r′)/(2Δu)) / Σᵣ′ exp(εu(x, r′)/(2Δu)).
    """

    pmf_d: np.ndarray
    pmf_d_prime: np.ndarray
    loss: np.ndarray
    score_factor: float
    normaliser_factor: float

    @property
    def max_loss(self) -> float:
        """maxᵣ |loss|, in both directions."""
        return float(np.max(np.abs(self.loss)))


def exponential_privacy_loss(
    scores_d: ArrayLike, scores_d_prime: ArrayLike, *, epsilon: float, sensitivity: float = 1.0, factor: float = 2.0
) -> ExponentialPrivacyLoss:
    """The exponential mechanism's exact privacy loss on neighbours x, y, and the two factors of the lecture's proof.

    The proof writes Pr[M(x) = r]/Pr[M(y) = r] as (a) exp(ε(u(x, r) − u(y, r))/(2Δu)) times
    (b) the ratio of normalisers Σ exp(εu(y, ·)/(2Δu)) / Σ exp(εu(x, ·)/(2Δu)); each is at most
    e^{ε/2} because every score moves by at most Δu, so the ratio is at most e^ε. With
    ``factor=1`` each bound becomes e^ε and the loss can approach 2ε
    (:func:`adversarial_scores`).

    Parameters
    ----------
    scores_d : array_like, shape (m,)
        The utilities u(x, r) on x over the m = |R| outcomes (finite).
    scores_d_prime : array_like, shape (m,)
        The utilities u(y, r) on the neighbour y, each within ``sensitivity`` of ``scores_d``.
    epsilon : float
        The privacy parameter ε, > 0.
    sensitivity : float, optional
        The sensitivity Δu of the utility, > 0; 1 by default.
    factor : {2, 1}, optional
        The 2 in the exponent's denominator: 2 (the default) is the mechanism, 1 the notes' formula
        with the 2 missing.

    Returns
    -------
    ExponentialPrivacyLoss
        Both output distributions, the loss per outcome and the proof's two factors.

    Raises
    ------
    ValueError
        If ``scores_d`` is empty, not one-dimensional or not finite, ``scores_d_prime`` has another shape
        or is not finite, the two differ by more than ``sensitivity`` in some outcome, ``epsilon`` or
        ``sensitivity`` is not a finite number > 0, or ``factor`` is neither 1 nor 2.
    TypeError
        If the scores are not numeric, or ``epsilon``, ``sensitivity`` or ``factor`` is not a real number.
    """
    u = check_array(scores_d, "scores_d", ndim=1)
    v = check_array(scores_d_prime, "scores_d_prime", shape=u.shape)
    delta_u = check_positive(sensitivity, "sensitivity")
    if np.any(np.abs(u - v) > delta_u * (1 + 1e-12)):
        raise ValueError("scores_d and scores_d_prime must differ by at most sensitivity in every outcome")
    f = _check_factor(factor)
    weight = check_epsilon(epsilon) / (f * delta_u)
    log_pmf_d = weight * u - special.logsumexp(weight * u)
    log_pmf_d_prime = weight * v - special.logsumexp(weight * v)
    return ExponentialPrivacyLoss(
        np.exp(log_pmf_d),
        np.exp(log_pmf_d_prime),
        log_pmf_d - log_pmf_d_prime,
        float(np.exp(np.max(weight * (u - v)))),
        float(np.exp(special.logsumexp(weight * v) - special.logsumexp(weight * u))),
    )


def adversarial_scores(num_outcomes: int, *, sensitivity: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """u(x) = (Δ, 0, …, 0) and u(y) = (0, Δ, …, Δ): scores moving in opposite directions.

    Outcome 0 gains on x while every other outcome gains on y, so both factors of the proof
    are met at once: the loss of outcome 0 tends to ε (to 2ε without the factor 2) as |R| grows.

    Parameters
    ----------
    num_outcomes : int
        The size |R| of the range, ≥ 2.
    sensitivity : float, optional
        Δ, the amount every score moves, > 0; 1 by default.

    Returns
    -------
    tuple of (numpy.ndarray, numpy.ndarray)
        u(x) and u(y), each of shape ``(num_outcomes,)``.

    Raises
    ------
    ValueError
        If ``num_outcomes`` is < 2 or ``sensitivity`` is not a finite number > 0.
    TypeError
        If ``num_outcomes`` is not an integer or ``sensitivity`` is not a real number.
    """
    r = check_integer(num_outcomes, "num_outcomes", minimum=2)
    delta_u = check_positive(sensitivity, "sensitivity")
    d = np.zeros(r)
    d[0] = delta_u
    return d, delta_u - d


def pricing_revenue(valuations: ArrayLike, prices: ArrayLike) -> np.ndarray:
    """The lecture's pricing example: revenue u(x, p) = p · #{i : vᵢ ≥ p} at each price p.

    Consumer i buys one copy when the price is at most their valuation vᵢ. (The notes write
    the revenue as Σ_{pᵢ ≤ p} p, with the inequality reversed.) Adding or removing one consumer
    changes the revenue at price p by at most p, so Δu = max(prices), and every price's revenue
    moves in the same direction (a monotone utility).

    Parameters
    ----------
    valuations : array_like, shape (n,)
        Each consumer's valuation vᵢ (finite).
    prices : array_like, shape (m,)
        The prices p to evaluate, each > 0.

    Returns
    -------
    numpy.ndarray
        The revenue at each price, shape ``(m,)``.

    Raises
    ------
    ValueError
        If ``valuations`` or ``prices`` is empty, not one-dimensional or not finite, or a price is ≤ 0.
    TypeError
        If ``valuations`` or ``prices`` is not numeric.

    Examples
    --------
    >>> pricing_revenue([1, 3, 3, 5], [1, 3, 5]).tolist()
    [4.0, 9.0, 5.0]
    """
    v = np.sort(check_array(valuations, "valuations", ndim=1))
    p = check_positive_array(prices, "prices", ndim=1)
    buyers = v.size - np.searchsorted(v, p, side="left")
    return p * buyers


def utility_gap_tail(scores: ArrayLike, gaps: ArrayLike, *, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """Exact Pr[u(x, M(x)) ≤ OPT − g] for each gap g, from :func:`exponential_mechanism_pmf`.

    Compare :func:`dpcourse.mechanisms.exponential_mechanism_utility_bound`: at
    g = 2Δu(ln|R| + t)/ε this is at most e^{−t} (Dwork & Roth, Theorem 3.11).

    Parameters
    ----------
    scores : array_like, shape (m,)
        The utilities u(x, r) over the m = |R| outcomes (finite); OPT is their maximum.
    gaps : array_like
        The gaps g, a one-dimensional array of finite numbers.
    epsilon : float
        The privacy parameter ε, > 0.
    sensitivity : float, optional
        The sensitivity Δu of the utility, > 0; 1 by default.

    Returns
    -------
    numpy.ndarray
        Pr[u(x, M(x)) ≤ OPT − g] for each gap, shaped like ``gaps``.

    Raises
    ------
    ValueError
        If ``scores`` or ``gaps`` is empty, not one-dimensional or not finite, or ``epsilon`` or
        ``sensitivity`` is not a finite number > 0.
    TypeError
        If ``scores`` or ``gaps`` is not numeric, or ``epsilon`` or ``sensitivity`` is not a real number.
    """
    u = check_array(scores, "scores", ndim=1)
    g = check_array(gaps, "gaps", ndim=1)
    pmf = exponential_mechanism_pmf(u, epsilon=epsilon, sensitivity=sensitivity)
    below = u[None, :] <= u.max() - g[:, None]
    return below.astype(float) @ pmf
