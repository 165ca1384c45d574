"""Theory lines of notebook 06's composition and selection: advanced and optimal composition,
and the exponential mechanism's utility bound; and notebook 02's limits of accuracy on all 2ⁿ subset queries.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._validation import (
    check_array,
    check_epsilon,
    check_integer,
    check_nonnegative,
    check_positive,
    check_probability,
    check_unit_interval_array,
)
from .theory import dp_bit_guess_bound, laplace_max_error_bound

__all__ = [
    "all_subsets_error_lower_bound",
    "rr_reports_all_subsets_error",
    "advanced_composition_epsilon",
    "advanced_composition_per_query_epsilon",
    "exponential_mechanism_utility_bound",
    "laplace_advanced_composition_max_error_bound",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
]


# --- Notebook 06: composition and selection ---
def advanced_composition_epsilon(*, epsilon0: float, k: int, delta: float) -> float:
    """Advanced composition (Dwork & Roth, Theorem 3.20): k ε₀-DP mechanisms are (ε, δ)-DP together with

        ε = ε₀√(2k ln(1/δ)) + kε₀(e^{ε₀} − 1),

    for every ε₀ > 0 and δ ∈ (0, 1), adaptively chosen. (Their Corollary 3.21, which picks
    ε₀ = ε/(2√(2k ln(1/δ))), is the version stated for ε < 1.) The online-PMW slides use it for
    the Laplace baseline: ε₀ ≈ ε/√(k ln(1/δ)) per query.

    Parameters
    ----------
    epsilon0 : float
        The ε₀ of each mechanism, > 0.
    k : int
        The number of mechanisms composed, ≥ 1.
    delta : float
        The δ ∈ (0, 1) the composition may add.

    Returns
    -------
    float
        The composed ε.

    Raises
    ------
    ValueError
        If ``epsilon0`` is not a finite number > 0, ``k`` is < 1, or ``delta`` is not in (0, 1).
    TypeError
        If ``k`` is not an integer, or ``epsilon0`` or ``delta`` is not a real number.
    """
    e0 = check_positive(epsilon0, "epsilon0")
    k = check_integer(k, "k", minimum=1)
    dlt = check_probability(delta, "delta")
    return float(e0 * np.sqrt(2 * k * np.log(1 / dlt)) + k * e0 * np.expm1(e0))


def advanced_composition_per_query_epsilon(*, epsilon: float, k: int, delta: float) -> float:
    """The largest ε₀ whose k-fold composition is (ε, δ)-DP by :func:`advanced_composition_epsilon`,
    or ε/k if that is larger (basic composition is valid too).

    The composed ε, g(ε₀) = ε₀√(2k ln(1/δ)) + kε₀(e^{ε₀} − 1), is convex and increasing, so Newton's
    method started right of the root (at ε₀ = ε/√(2k ln(1/δ)), where g ≥ ε) falls monotonically onto it;
    it stops when a step no longer moves ε₀ (machine precision, a handful of steps). Notebook 06 thus
    needs no scipy.optimize (importing it costs about 0.1 s).

    Parameters
    ----------
    epsilon : float
        The total ε the k-fold composition may spend, > 0.
    k : int
        The number of mechanisms composed, ≥ 1.
    delta : float
        The δ ∈ (0, 1) the composition may add.

    Returns
    -------
    float
        ε₀, at least ε/k.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0, ``k`` is < 1, or ``delta`` is not in (0, 1).
    TypeError
        If ``k`` is not an integer, or ``epsilon`` or ``delta`` is not a real number.
    """
    eps = check_epsilon(epsilon)
    k = check_integer(k, "k", minimum=1)
    dlt = check_probability(delta, "delta")
    slope = np.sqrt(2 * k * np.log(1 / dlt))
    e0 = eps / slope
    for _ in range(100):
        excess = e0 * slope + k * e0 * np.expm1(e0) - eps
        step = excess / (slope + k * (np.expm1(e0) + e0 * np.exp(e0)))
        if not step > 0 or e0 - step == e0:  # at the root (or a rounding below it, where g(ε₀) ≤ ε holds)
            break
        e0 -= step
    return float(max(e0, eps / k))


def optimal_composition_delta(epsilon: float, *, epsilon0: float, k: int) -> float:
    """The exact δ(ε) of the k-fold composition of ε₀-DP mechanisms in the worst case.

    The worst ε₀-DP mechanism for composition is randomized response (Kairouz, Oh & Viswanath
    2015): with i of the k reports pointing the "wrong" way, the privacy loss is (k − 2i)ε₀, and

        δ(ε) = Σᵢ C(k, i)·(e^{(k−i)ε₀} − e^{ε}·e^{iε₀})₊ / (1 + e^{ε₀})^k.

    Any composition of k ε₀-DP mechanisms is (ε, δ(ε))-DP, and no bound can do better, so
    δ(ε_adv) ≤ δ at ε_adv = :func:`advanced_composition_epsilon` checks Theorem 3.20 exactly.
    Evaluated in log space.

    Parameters
    ----------
    epsilon : float
        The ε at which δ is wanted, a finite number ≥ 0.
    epsilon0 : float
        The ε₀ of each mechanism, > 0.
    k : int
        The number of mechanisms composed, ≥ 1.

    Returns
    -------
    float
        δ(ε) ∈ [0, 1); 0 when ε ≥ kε₀.

    Raises
    ------
    ValueError
        If ``epsilon`` is not one finite number ≥ 0, ``epsilon0`` is not a finite number > 0, or ``k`` is < 1.
    TypeError
        If ``epsilon`` is not a number, ``epsilon0`` is not a real number, or ``k`` is not an integer.
    """
    e0 = check_positive(epsilon0, "epsilon0")
    k = check_integer(k, "k", minimum=1)
    eps = check_nonnegative(float(check_array(epsilon, "epsilon", ndim=0)), "epsilon")
    i = np.arange(k + 1)
    log_binom = special.gammaln(k + 1) - special.gammaln(i + 1) - special.gammaln(k - i + 1)
    log_norm = k * np.logaddexp(0.0, e0)
    high, low = (k - i) * e0, eps + i * e0
    positive = high > low
    terms = log_binom[positive] + high[positive] + np.log(-np.expm1(low[positive] - high[positive])) - log_norm
    return float(np.exp(special.logsumexp(terms))) if terms.size else 0.0


def optimal_composition_epsilon(delta: float, *, epsilon0: float, k: int) -> float:
    """The exact ε of the k-fold composition of ε₀-DP mechanisms at δ: the smallest ε with
    :func:`optimal_composition_delta` (ε) ≤ δ (Kairouz, Oh & Viswanath 2015).

    Between consecutive breakpoints (k − 2j)ε₀ the terms of δ(ε) that are positive do not change
    (those with i ≤ j), so there δ(ε) = A_j − e^{ε}·B_j with A_j = Σ_{i≤j} C(k, i)e^{(k−i)ε₀}/(1 + e^{ε₀})^k
    and B_j = Σ_{i≤j} C(k, i)e^{iε₀}/(1 + e^{ε₀})^k. δ(ε) falls continuously, so the answer is
    ε = ln((A_j − δ)/B_j) on the one interval where that value lands: exact, no root finding,
    sums in log space. 0 when δ(0) ≤ δ already.

    Parameters
    ----------
    delta : float
        The δ ∈ (0, 1) of the composition.
    epsilon0 : float
        The ε₀ of each mechanism, > 0.
    k : int
        The number of mechanisms composed, ≥ 1.

    Returns
    -------
    float
        The smallest ε ≥ 0 with δ(ε) ≤ δ; at most kε₀.

    Raises
    ------
    ValueError
        If ``delta`` is not in (0, 1), ``epsilon0`` is not a finite number > 0, or ``k`` is < 1.
    TypeError
        If ``k`` is not an integer, or ``delta`` or ``epsilon0`` is not a real number.
    """
    e0 = check_positive(epsilon0, "epsilon0")
    k = check_integer(k, "k", minimum=1)
    dlt = check_probability(delta, "delta")
    if optimal_composition_delta(0.0, epsilon0=e0, k=k) <= dlt:
        return 0.0
    i = np.arange((k + 1) // 2)  # terms that are positive at some ε ≥ 0: (k − 2i)ε₀ > 0
    log_binom = special.gammaln(k + 1) - special.gammaln(i + 1) - special.gammaln(k - i + 1)
    log_norm = k * np.logaddexp(0.0, e0)
    log_a = np.logaddexp.accumulate(log_binom + (k - i) * e0 - log_norm)
    log_b = np.logaddexp.accumulate(log_binom + i * e0 - log_norm)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        candidate = log_a + np.log1p(-dlt * np.exp(-log_a)) - log_b  # ln((A_j − δ)/B_j), NaN where A_j ≤ δ
    upper = (k - 2 * i) * e0  # interval j: [(k − 2j − 2)ε₀, (k − 2j)ε₀)
    lower = np.maximum(upper - 2 * e0, 0.0)
    inside = np.flatnonzero((candidate >= lower - 1e-12 * upper) & (candidate <= upper * (1 + 1e-12)))
    return float(max(candidate[inside[0]], 0.0))


def laplace_advanced_composition_max_error_bound(
    *, num_queries: int, beta: float, epsilon: float, delta: float, sensitivity: float = 1.0, n: float | None = None
) -> float:
    """Answering K queries with Lap(Δ/ε₀), ε₀ from advanced composition: all within ln(K/β)·Δ/ε₀ w.p. 1 − β.

    The online-PMW slides' second baseline: ε₀ ≈ ε/√(8K ln(1/δ)) gives error of order
    √(K ln(1/δ))·ln(K/β)/(nε), against K ln(K/β)/(nε) for basic composition
    (:func:`dpcourse.mechanisms.theory.composed_laplace_max_error_bound`). ε₀ is
    :func:`advanced_composition_per_query_epsilon`.

    Parameters
    ----------
    num_queries : int
        The number of queries K, ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    epsilon : float
        The total ε of the K answers, > 0.
    delta : float
        The δ ∈ (0, 1) that advanced composition adds.
    sensitivity : float, optional
        The sensitivity Δ of each query, > 0; 1 by default.
    n : float or None, optional
        The number of people; given, the error is divided by n (normalised), else it is in counts.

    Returns
    -------
    float
        The error level ln(K/β)·Δ/ε₀ (divided by ``n`` if given).

    Raises
    ------
    ValueError
        If ``num_queries`` is < 1, ``beta`` or ``delta`` is not in (0, 1), ``epsilon`` or ``sensitivity`` is
        not a finite number > 0, or ``n`` is given and is not a finite number > 0.
    TypeError
        If ``num_queries`` is not an integer, or another parameter is not a real number.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    e0 = advanced_composition_per_query_epsilon(epsilon=epsilon, k=k, delta=delta)
    return laplace_max_error_bound(k=k, beta=beta, sensitivity=sensitivity, epsilon=e0, n=n)


def exponential_mechanism_utility_bound(*, num_outcomes: int, sensitivity: float, epsilon: float, t: float) -> float:
    """The exponential mechanism's utility (Dwork & Roth, Theorem 3.11; Lecture 4 §4.2 defers it to Lecture 5).

    With Pr[r] ∝ exp(εu(x, r)/(2Δu)) over a range of |R| outcomes,
    Pr[u(x, M(x)) ≤ OPT − 2Δu(ln|R| + t)/ε] ≤ e^{−t}. Returns the revenue (utility) gap
    2Δu(ln|R| + t)/ε. Proof: outcomes with u ≤ OPT − g each have weight at most e^{−εg/(2Δu)}
    times the optimum's, and there are at most |R| of them.

    Parameters
    ----------
    num_outcomes : int
        The size |R| of the range, ≥ 1.
    sensitivity : float
        The sensitivity Δu of the utility, > 0.
    epsilon : float
        The privacy parameter ε, > 0.
    t : float
        The tail parameter, a finite number ≥ 0: the gap is exceeded with probability at most e^{−t}.

    Returns
    -------
    float
        The utility gap 2Δu(ln|R| + t)/ε, in the units of the utility.

    Raises
    ------
    ValueError
        If ``num_outcomes`` is < 1, ``t`` is not one finite number ≥ 0, or ``sensitivity`` or ``epsilon`` is
        not a finite number > 0.
    TypeError
        If ``num_outcomes`` is not an integer, ``t`` is not a number, or ``sensitivity`` or ``epsilon`` is not
        a real number.
    """
    r = check_integer(num_outcomes, "num_outcomes", minimum=1)
    tt = float(check_array(t, "t", ndim=0))
    if tt < 0:
        raise ValueError(f"t must be >= 0; got {t!r}")
    return 2 * check_positive(sensitivity, "sensitivity") * (np.log(r) + tt) / check_epsilon(epsilon)


# --- Notebook 02: constant accuracy on all 2ⁿ subset queries ---


def all_subsets_error_lower_bound(*, epsilon: float, delta: float = 0.0) -> float:
    """(1 − δ)/(4(1 + e^ε)): below this normalised error on all 2ⁿ subset sums, no (ε, δ)-DP release is accurate.

    Dinur & Nissim (2003): from answers to all 2ⁿ subset sums over n secret bits within αn, any
    x̂ consistent with them disagrees with x on at most 4αn bits, so an attacker recovers a
    fraction 1 − 4α. For uniformly random bits a DP output lets any attacker guess a bit with
    probability at most (e^ε + δ)/(1 + e^ε) (:func:`dp_bit_guess_bound`), so
    1 − 4α ≤ (e^ε + δ)/(1 + e^ε), i.e. α ≥ (1 − δ)/(4(1 + e^ε)). Stated for a mechanism accurate with
    probability near 1 (with failure probability β the same argument loses β).

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε, > 0.
    delta : float, optional
        The privacy parameter δ: 0 (the default) or a number in (0, 1).

    Returns
    -------
    float
        (1 − δ)/(4(1 + e^ε)), a normalised error.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0, or ``delta`` is neither 0 nor in (0, 1).
    TypeError
        If ``epsilon`` or ``delta`` is not a real number.
    """
    return (1 - dp_bit_guess_bound(epsilon=epsilon, delta=delta)) / 4


def rr_reports_all_subsets_error(*, epsilon: float, ones_fraction: float = 1.0) -> float:
    """Largest normalised error over all 2ⁿ subset sums answered from raw randomized-response reports.

    Each person reports their bit, flipped with probability q = 1/(1 + e^ε), and every subset sum is
    answered by the sum of the reports (no debiasing). The error of subset S is
    (#{i ∈ S: 0 reported as 1} − #{i ∈ S: 1 reported as 0})/n, so the worst S takes every person of one
    kind: the largest error is max(F₀, F₁)/n, with F₀ ~ Bin(n₀, q), F₁ ~ Bin(n₁, q) the flips of the n₀
    zeros and the n₁ ones. Returns max(f, 1 − f)·q, f = ``ones_fraction``: its mean when all bits are
    equal (the worst case, q = 1/(1 + e^ε)), and otherwise the mean up to O(1/√n). It is below ½, what
    answering |S|/2 without looking at the data can promise, for every ε > 0, and within a factor 4 of
    :func:`all_subsets_error_lower_bound` at δ = 0 (notebook 02).

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε of the reports, > 0.
    ones_fraction : float, optional
        The fraction f ∈ [0, 1] of people whose bit is 1; 1 by default (all bits equal).

    Returns
    -------
    float
        max(f, 1 − f)/(1 + e^ε), a normalised error.

    Raises
    ------
    ValueError
        If ``ones_fraction`` is not one number in [0, 1], or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``ones_fraction`` is not a number or ``epsilon`` is not a real number.
    """
    f = float(check_unit_interval_array(ones_fraction, "ones_fraction", ndim=0))
    return max(f, 1 - f) / (1 + np.exp(check_epsilon(epsilon)))
