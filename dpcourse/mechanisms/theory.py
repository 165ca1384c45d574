"""Theory lines of notebooks 01 and 02: Laplace, randomized response and Gaussian error bounds.

Units: *unnormalised* (counts) unless a function says otherwise; pass ``n`` where offered to get
the normalised error. β is the failure probability of an accuracy statement (the lecture's δ).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from .._validation import (
    ArrayLike,
    check_array,
    check_epsilon,
    check_integer,
    check_nonnegative,
    check_positive,
    check_probability,
)
from .calibration import laplace_scale, rr_keep_probability

__all__ = [
    "composed_laplace_max_error_bound",
    "composed_laplace_sample_complexity",
    "dp_bit_guess_bound",
    "gaussian_laplace_crossover",
    "gaussian_max_error_bound",
    "laplace_expected_max_error",
    "laplace_linear_combination_tail_bound",
    "laplace_max_error_bound",
    "laplace_max_error_quantile",
    "laplace_max_error_tail",
    "laplace_variance",
    "noisy_histogram_max_error_bound",
    "noisy_table_all_queries_mean_error",
    "rr_answer_variance",
    "rr_max_error_bound",
    "rr_proportion_variance",
    "rr_report_range",
]


def _per_person(value: Any, n: float | None) -> float:
    return value if n is None else value / check_positive(n, "n")


def laplace_variance(*, sensitivity: float, epsilon: float) -> float:
    """Var Lap(b) = 2b², b = Δf/ε: the expected squared error of each coordinate.

    Parameters
    ----------
    sensitivity : float
        The L1 sensitivity Δf, > 0.
    epsilon : float
        The privacy parameter ε, > 0.

    Returns
    -------
    float
        2(Δf/ε)², in squared counts.

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``sensitivity`` or ``epsilon`` is not a real number.
    """
    return 2.0 * laplace_scale(sensitivity=sensitivity, epsilon=epsilon) ** 2


def laplace_max_error_bound(
    *, k: int, beta: float, sensitivity: float, epsilon: float, n: float | None = None
) -> float:
    """Theorem 3.8 (Lecture 3): P[‖f(x) − y‖∞ ≥ ln(k/β)·Δf/ε] ≤ β for the Laplace mechanism.

    Proof: P[|Zᵢ| ≥ t·b] = e^{−t}; with t = ln(k/β) each coordinate fails with
    probability β/k, and a union bound over the k coordinates gives β. At a fixed Δf the level
    grows only like ln|Q| in the number k = |Q| of queries.

    Parameters
    ----------
    k : int
        The number of coordinates (queries), ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    sensitivity : float
        The L1 sensitivity Δf, > 0.
    epsilon : float
        The privacy parameter ε, > 0.
    n : float or None, optional
        The number of people; given, the error is divided by n (normalised), else it is in counts.

    Returns
    -------
    float
        The error level ln(k/β)·Δf/ε (divided by ``n`` if given).

    Raises
    ------
    ValueError
        If ``k`` is < 1, ``beta`` is not in (0, 1), ``sensitivity`` or ``epsilon`` is not a finite number > 0,
        or ``n`` is given and is not a finite number > 0.
    TypeError
        If ``k`` is not an integer, or ``beta``, ``sensitivity``, ``epsilon`` or ``n`` is not a real number.
    """
    k = check_integer(k, "k", minimum=1)
    beta = check_probability(beta, "beta")
    return _per_person(np.log(k / beta) * laplace_scale(sensitivity=sensitivity, epsilon=epsilon), n)


def laplace_expected_max_error(*, k: int, sensitivity: float, epsilon: float, n: float | None = None) -> float:
    """E‖Z‖∞ = b·(1 + 1/2 + … + 1/k) for k i.i.d. Lap(b), b = Δf/ε.

    |Zᵢ| ~ Exp(b), and the maximum of k i.i.d. exponentials has mean b·H_k (Rényi's
    representation: the spacings of exponential order statistics are b/k, b/(k − 1), …, b).
    H_k = ψ(k + 1) + γ grows like ln k, the same rate as Theorem 3.8's level.

    Parameters
    ----------
    k : int
        The number of coordinates, ≥ 1.
    sensitivity : float
        The L1 sensitivity Δf, > 0.
    epsilon : float
        The privacy parameter ε, > 0.
    n : float or None, optional
        The number of people; given, the error is divided by n (normalised), else it is in counts.

    Returns
    -------
    float
        b·H_k (divided by ``n`` if given).

    Raises
    ------
    ValueError
        If ``k`` is < 1, ``sensitivity`` or ``epsilon`` is not a finite number > 0, or ``n`` is given and is not a
        finite number > 0.
    TypeError
        If ``k`` is not an integer, or ``sensitivity``, ``epsilon`` or ``n`` is not a real number.
    """
    k = check_integer(k, "k", minimum=1)
    harmonic = special.digamma(k + 1) + np.euler_gamma
    return _per_person(laplace_scale(sensitivity=sensitivity, epsilon=epsilon) * harmonic, n)


def laplace_max_error_tail(t: ArrayLike, *, k: int, sensitivity: float, epsilon: float) -> float | np.ndarray:
    """The exact tail P[‖Z‖∞ ≥ t] = 1 − (1 − e^{−t/b})ᵏ for k i.i.d. Lap(b), b = Δf/ε.

    Evaluated as −expm1(k·log1p(−e^{−t/b})) so that tiny tails keep their relative precision.

    Parameters
    ----------
    t : float or array_like
        The level, or an array of levels, each finite and ≥ 0, in counts.
    k : int
        The number of coordinates, ≥ 1.
    sensitivity : float
        The L1 sensitivity Δf, > 0.
    epsilon : float
        The privacy parameter ε, > 0.

    Returns
    -------
    float or numpy.ndarray
        P[‖Z‖∞ ≥ t]: a float for one level, else an array shaped like ``t``.

    Raises
    ------
    ValueError
        If an entry of ``t`` is negative or not finite, ``k`` is < 1, or ``sensitivity`` or ``epsilon`` is not a
        finite number > 0.
    TypeError
        If ``t`` is not numeric, ``k`` is not an integer, or ``sensitivity`` or ``epsilon`` is not a real number.
    """
    k = check_integer(k, "k", minimum=1)
    levels = check_array(t, "t", ndim=None, min_size=0)
    if np.any(levels < 0):
        raise ValueError("t must be >= 0")
    b = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    with np.errstate(divide="ignore"):  # t = 0 gives log1p(−1) = −∞ and the right tail, 1
        tail = -np.expm1(k * np.log1p(-np.exp(-levels / b)))
    return float(tail) if tail.ndim == 0 else tail


def laplace_max_error_quantile(
    *, k: int, beta: float, sensitivity: float, epsilon: float, n: float | None = None
) -> float:
    """The exact (1 − β) quantile of ‖Z‖∞: −b·ln(1 − (1 − β)^{1/k}), never above Theorem 3.8's level.

    Parameters
    ----------
    k : int
        The number of coordinates, ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    sensitivity : float
        The L1 sensitivity Δf, > 0.
    epsilon : float
        The privacy parameter ε, > 0.
    n : float or None, optional
        The number of people; given, the error is divided by n (normalised), else it is in counts.

    Returns
    -------
    float
        The level t with P[‖Z‖∞ ≥ t] = β, b = Δf/ε (divided by ``n`` if given).

    Raises
    ------
    ValueError
        If ``k`` is < 1, ``beta`` is not in (0, 1), ``sensitivity`` or ``epsilon`` is not a finite number > 0,
        or ``n`` is given and is not a finite number > 0.
    TypeError
        If ``k`` is not an integer, or ``beta``, ``sensitivity``, ``epsilon`` or ``n`` is not a real number.
    """
    k = check_integer(k, "k", minimum=1)
    beta = check_probability(beta, "beta")
    b = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    return _per_person(-b * np.log(-np.expm1(np.log1p(-beta) / k)), n)


def composed_laplace_max_error_bound(
    *, num_queries: int, beta: float, epsilon: float, sensitivity: float = 1.0, n: float | None = None
) -> float:
    """Answering K queries of sensitivity Δ each with Lap(KΔ/ε) (ε/K per query, basic composition).

    Lecture 3: with probability 1 − β every answer is within K·ln(K/β)·Δ/ε, so the
    normalised error is α = K ln(K/β)/(nε) for counting queries.

    Parameters
    ----------
    num_queries : int
        The number of queries K, ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    epsilon : float
        The total privacy parameter ε, > 0, split evenly over the K queries.
    sensitivity : float, optional
        The sensitivity Δ of each query, > 0; 1 by default.
    n : float or None, optional
        The number of people; given, the error is divided by n (normalised), else it is in counts.

    Returns
    -------
    float
        The error level K·ln(K/β)·Δ/ε (divided by ``n`` if given).

    Raises
    ------
    ValueError
        If ``num_queries`` is < 1, ``beta`` is not in (0, 1), ``epsilon`` or ``sensitivity`` is not a finite
        number > 0, or ``n`` is given and is not a finite number > 0.
    TypeError
        If ``num_queries`` is not an integer, or another parameter is not a real number.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    return laplace_max_error_bound(
        k=k, beta=beta, sensitivity=k * check_positive(sensitivity, "sensitivity"), epsilon=epsilon, n=n
    )


def composed_laplace_sample_complexity(*, num_queries: int, alpha: float, beta: float, epsilon: float) -> float:
    """The n that makes :func:`composed_laplace_max_error_bound` (normalised) equal α: n = K ln(K/β)/(αε).

    For counting queries (Δ = 1).

    Parameters
    ----------
    num_queries : int
        The number of queries K, ≥ 1.
    alpha : float
        The normalised error α wanted, > 0.
    beta : float
        The failure probability β ∈ (0, 1).
    epsilon : float
        The total privacy parameter ε, > 0.

    Returns
    -------
    float
        n = K ln(K/β)/(αε), not rounded.

    Raises
    ------
    ValueError
        If ``num_queries`` is < 1, ``alpha`` or ``epsilon`` is not a finite number > 0, or ``beta`` is not
        in (0, 1).
    TypeError
        If ``num_queries`` is not an integer, or another parameter is not a real number.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    alpha = check_positive(alpha, "alpha")
    beta = check_probability(beta, "beta")
    return k * np.log(k / beta) / (alpha * check_epsilon(epsilon))


def laplace_linear_combination_tail_bound(*, l2_norm: float, linf_norm: float, scale: float, beta: float) -> float:
    """A level t with P[|Σᵢ aᵢZᵢ| ≥ t] ≤ β for Zᵢ ~ Lap(b) i.i.d. (Chernoff, sub-exponential).

    Since E e^{λZ} = 1/(1 − λ²b²) ≤ e^{2λ²b²} for |λ|b ≤ ½, Chernoff's bound with λ ≤ 1/(2b‖a‖∞)
    gives P[|Σ aᵢZᵢ| ≥ t] ≤ 2 exp(2λ²b²‖a‖₂² − λt). The optimal λ = t/(4b²‖a‖₂²) yields
    t = 2b‖a‖₂√(2 ln(2/β)) when admissible; the boundary λ always yields
    t = 2b‖a‖∞ ln(2/β) + b‖a‖₂²/‖a‖∞. The smaller valid level is returned.
    This is the "sub-exponential tail" behind the noisy-histogram rate O(√|𝒳| log(1/β)/ε) of Lecture 3.

    Parameters
    ----------
    l2_norm : float
        ‖a‖₂ of the coefficients, > 0.
    linf_norm : float
        ‖a‖∞ of the coefficients, > 0 (at most ``l2_norm`` for real coefficients; not checked).
    scale : float
        The Laplace scale b of each Zᵢ, > 0.
    beta : float
        The failure probability β ∈ (0, 1).

    Returns
    -------
    float
        The level t, in the units of b.

    Raises
    ------
    ValueError
        If ``l2_norm``, ``linf_norm`` or ``scale`` is not a finite number > 0, or ``beta`` is not in (0, 1).
    TypeError
        If a parameter is not a real number.
    """
    l2 = check_positive(l2_norm, "l2_norm")
    linf = check_positive(linf_norm, "linf_norm")
    b = check_positive(scale, "scale")
    log_term = np.log(2.0 / check_probability(beta, "beta"))
    boundary = 2 * b * linf * log_term + b * l2**2 / linf
    gaussian_regime = 2 * b * l2 * np.sqrt(2 * log_term)
    return float(gaussian_regime if gaussian_regime <= 2 * b * l2**2 / linf else boundary)


def noisy_histogram_max_error_bound(
    *, domain_size: int, num_queries: int, beta: float, epsilon: float, n: float | None = None
) -> float:
    """Answering |Q| queries q ∈ [0, 1]^|𝒳| from the Laplace-noised histogram (Lap(1/ε) per cell).

    Every answer's error is q·Z; with ‖q‖₂ ≤ √|𝒳| and ‖q‖∞ ≤ 1, the sub-exponential tail of
    :func:`laplace_linear_combination_tail_bound` at β/|Q| and a union bound give a level that
    holds for all |Q| queries at once with probability 1 − β, of order √|𝒳|·√log(|Q|/β)/ε
    (Lecture 3's "Laplace mechanism to release contingency table").

    Parameters
    ----------
    domain_size : int
        The number of histogram cells |𝒳|, ≥ 1.
    num_queries : int
        The number of queries |Q|, ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    epsilon : float
        The privacy parameter ε, > 0.
    n : float or None, optional
        The number of people; given, the error is divided by n (normalised), else it is in counts.

    Returns
    -------
    float
        The error level for all |Q| queries at once (divided by ``n`` if given).

    Raises
    ------
    ValueError
        If ``domain_size`` or ``num_queries`` is < 1, ``beta`` is not in (0, 1), ``epsilon`` is not a finite
        number > 0, or ``n`` is given and is not a finite number > 0.
    TypeError
        If ``domain_size`` or ``num_queries`` is not an integer, or another parameter is not a real number.
    """
    d = check_integer(domain_size, "domain_size", minimum=1)
    q = check_integer(num_queries, "num_queries", minimum=1)
    beta = check_probability(beta, "beta")
    level = laplace_linear_combination_tail_bound(
        l2_norm=np.sqrt(d), linf_norm=1.0, scale=1.0 / check_epsilon(epsilon), beta=beta / q
    )
    return _per_person(level, n)


def rr_proportion_variance(*, n: int, epsilon: float) -> float:
    """Var of the randomized-response proportion estimate: e^ε / (n (e^ε − 1)²).

    Each debiased report has variance p(1 − p)/(2p − 1)² = e^ε/(e^ε − 1)², p = e^ε/(1 + e^ε).

    Parameters
    ----------
    n : int
        The number of people, ≥ 1.
    epsilon : float
        The privacy parameter ε, > 0.

    Returns
    -------
    float
        The variance of the estimated proportion (normalised, so in proportion² units).

    Raises
    ------
    ValueError
        If ``n`` is < 1 or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``n`` is not an integer or ``epsilon`` is not a real number.
    """
    n = check_integer(n, "n", minimum=1)
    p = rr_keep_probability(epsilon)
    return p * (1 - p) / ((2 * p - 1) ** 2 * n)


# --- Notebook 02: randomized response vs Laplace vs Gaussian ---
def rr_report_range(epsilon: float) -> float:
    """Width of a debiased randomized-response report's range, 1/(2p − 1) = (e^ε + 1)/(e^ε − 1).

    Hoeffding's inequality needs it (Lecture 3); it is about 2/ε for small ε.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε, > 0.

    Returns
    -------
    float
        (e^ε + 1)/(e^ε − 1), > 1.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0.
    TypeError
        If ``epsilon`` is not a real number.
    """
    return 1.0 / np.tanh(check_epsilon(epsilon) / 2)


def rr_max_error_bound(*, n: int, num_queries: int, beta: float, epsilon: float) -> float:
    """Normalised error of |Q| counting queries answered from one randomized-response report per person.

    A query's answer is (1/n) Σᵢ aᵢ x̂ᵢ with aᵢ ∈ {0, 1}; each term ranges over an interval of
    width aᵢ·R, R = (e^ε + 1)/(e^ε − 1), so Hoeffding gives P[|error| ≥ t] ≤ 2 exp(−2nt²/R²).
    A union bound over the |Q| queries at β/|Q| each (Lecture 3):

        max over Q of |error| ≤ R·√(ln(2|Q|/β)/(2n))  with probability 1 − β,

    which is O(√log(|Q|/β)/(√n·ε)) for ε ≤ 1. The rate holds because one report per person
    serves every query (the queries are post-processing of the reports).

    Parameters
    ----------
    n : int
        The number of people, ≥ 1.
    num_queries : int
        The number of queries |Q|, ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    epsilon : float
        The privacy parameter ε, > 0.

    Returns
    -------
    float
        R·√(ln(2|Q|/β)/(2n)), a normalised error.

    Raises
    ------
    ValueError
        If ``n`` or ``num_queries`` is < 1, ``beta`` is not in (0, 1), or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``n`` or ``num_queries`` is not an integer, or ``beta`` or ``epsilon`` is not a real number.
    """
    n = check_integer(n, "n", minimum=1)
    k = check_integer(num_queries, "num_queries", minimum=1)
    beta = check_probability(beta, "beta")
    return rr_report_range(epsilon) * np.sqrt(np.log(2 * k / beta) / (2 * n))


def rr_answer_variance(*, people_in_query: float, n: int, epsilon: float) -> float:
    """Exact variance of a randomized-response answer (1/n)Σᵢ aᵢx̂ᵢ: (Σᵢ aᵢ)·e^ε/((e^ε − 1)² n²).

    Every debiased report has variance e^ε/(e^ε − 1)², whatever the true bit.

    Parameters
    ----------
    people_in_query : float
        Σᵢ aᵢ, the number of people the query counts, 0 ≤ Σᵢ aᵢ ≤ n.
    n : int
        The number of people, ≥ 1.
    epsilon : float
        The privacy parameter ε, > 0.

    Returns
    -------
    float
        The variance of the normalised answer.

    Raises
    ------
    ValueError
        If ``n`` is < 1, ``people_in_query`` is not a finite number in [0, n], or ``epsilon`` is not a finite
        number > 0.
    TypeError
        If ``n`` is not an integer, or ``people_in_query`` or ``epsilon`` is not a real number.
    """
    n = check_integer(n, "n", minimum=1)
    people = check_nonnegative(people_in_query, "people_in_query")
    if people > n:
        raise ValueError(f"people_in_query must be at most n = {n}; got {people_in_query!r}")
    return people * rr_proportion_variance(n=1, epsilon=epsilon) / n**2


def gaussian_max_error_bound(*, sigma: float, num_queries: int, beta: float) -> float:
    """The level σ·Φ⁻¹(1 − β/(2k)) that k Gaussian errors N(0, σ²) all stay below with probability ≥ 1 − β.

    (Union bound.)

    Parameters
    ----------
    sigma : float
        The noise standard deviation σ, > 0.
    num_queries : int
        The number of queries k, ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).

    Returns
    -------
    float
        σ·Φ⁻¹(1 − β/(2k)), in the units of σ.

    Raises
    ------
    ValueError
        If ``sigma`` is not a finite number > 0, ``num_queries`` is < 1, or ``beta`` is not in (0, 1).
    TypeError
        If ``num_queries`` is not an integer, or ``sigma`` or ``beta`` is not a real number.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    # Φ⁻¹(1 − p) = −Φ⁻¹(p) = scipy.stats.norm.isf(p), without importing scipy.stats
    return check_positive(sigma, "sigma") * float(-special.ndtri(check_probability(beta, "beta") / (2 * k)))


def gaussian_laplace_crossover(*, epsilon: float, delta: float, calibration: str = "analytic") -> float:
    """The number of queries k beyond which Gaussian noise has the smaller mean squared error.

    For k counting queries a person can be in all of them: Δ₁ = k and Δ₂ = √k. Laplace's mean
    squared error per query is 2(k/ε)² (the notes' 2k²/(ε²n²), unnormalised); Gaussian's is
    σ(Δ₂ = √k)² = k·σ₁², since σ is linear in Δ₂ (σ₁ = σ at Δ₂ = 1). They cross at
    k* = ε²σ₁²/2; with the classic σ₁² = 2 ln(1.25/δ)/ε² this is k* = ln(1.25/δ).

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε, > 0 (< 1 with ``calibration="classic"``).
    delta : float
        The privacy parameter δ ∈ (0, 1) of the Gaussian mechanism.
    calibration : {"analytic", "classic"}, optional
        How σ₁ is chosen, as in :func:`dpcourse.mechanisms.calibration.gaussian_sigma`; ``"analytic"`` by default.

    Returns
    -------
    float
        k* = ε²σ₁²/2, not rounded.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0, ``delta`` is not in (0, 1), or ``calibration`` is unknown
        or ``"classic"`` with ε ≥ 1.
    TypeError
        If ``epsilon`` or ``delta`` is not a real number.
    """
    from .calibration import gaussian_sigma

    sigma_one = gaussian_sigma(l2_sensitivity=1.0, epsilon=epsilon, delta=delta, calibration=calibration)
    return check_epsilon(epsilon) ** 2 * sigma_one**2 / 2


def noisy_table_all_queries_mean_error(*, num_types: int, epsilon: float, n: float | None = None) -> float:
    """About the mean of the largest error over **all 2ᴳ** type-subset queries answered from one noisy table.

    With c̃ = c + Z, Z_g ~ Lap(1/ε), the error of q_S is Σ_{g ∈ S} Z_g, and the worst S takes every
    cell of one sign: max_S |Σ_{g ∈ S} Z_g| = (Σ_g |Z_g| + |Σ_g Z_g|)/2. E Σ|Z_g| = G/ε exactly;
    Σ Z_g has variance 2G/ε², and its normal approximation gives E|Σ Z_g| ≈ √(2G)·√(2/π)/ε, so

        E max_S |error| ≈ (G/2 + √(G/π))/ε       (divided by ``n`` if given),

    O(G/(εn)) normalised whatever the number of queries (notebook 02; the approximation error
    is O(1/√G) relative to the second term).

    Parameters
    ----------
    num_types : int
        The number of types (table cells) G, ≥ 1.
    epsilon : float
        The privacy parameter ε, > 0.
    n : float or None, optional
        The number of people; given, the error is divided by n (normalised), else it is in counts.

    Returns
    -------
    float
        (G/2 + √(G/π))/ε (divided by ``n`` if given).

    Raises
    ------
    ValueError
        If ``num_types`` is < 1, ``epsilon`` is not a finite number > 0, or ``n`` is given and is not a finite
        number > 0.
    TypeError
        If ``num_types`` is not an integer, or ``epsilon`` or ``n`` is not a real number.
    """
    g = check_integer(num_types, "num_types", minimum=1)
    return _per_person((g / 2 + np.sqrt(g / np.pi)) / check_epsilon(epsilon), n)


def dp_bit_guess_bound(*, epsilon: float, delta: float = 0.0) -> float:
    """(e^ε + δ)/(1 + e^ε): the most often any attacker can guess a uniformly random bit from an (ε, δ)-DP output.

    Neighbours differ in that bit. With s₁ = P[guess 1 | bit 1] and s₀ = P[guess 0 | bit 0], DP
    gives s₁ ≤ e^ε(1 − s₀) + δ and s₀ ≤ e^ε(1 − s₁) + δ; adding them, the success (s₀ + s₁)/2 is
    at most (e^ε + δ)/(1 + e^ε). Randomized response attains it at δ = 0. Against the
    reconstruction attacks (notebook 02) this is why no DP mechanism is blatantly non-private.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε, > 0.
    delta : float, optional
        The privacy parameter δ: 0 (the default, pure ε-DP) or a number in (0, 1).

    Returns
    -------
    float
        (e^ε + δ)/(1 + e^ε), the largest possible probability of a correct guess.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0, or ``delta`` is neither 0 nor in (0, 1).
    TypeError
        If ``epsilon`` or ``delta`` is not a real number.
    """
    eps = check_epsilon(epsilon)
    d = check_probability(delta, "delta") if delta else 0.0
    return float((np.exp(eps) + d) / (1 + np.exp(eps)))
