"""Theory lines: the error bounds and rates that the notebooks draw beside measurements.

Each formula lives here once, with the lecture it comes from. Units: *unnormalised*
(counts) unless a function says otherwise; pass ``n`` where offered to get the normalised
error (divide by the number of people n).

The lecture writes δ for the failure probability of an accuracy statement; to keep it
apart from the δ of (ε, δ)-DP this package calls it β.
"""

from __future__ import annotations

import numpy as np
from scipy import special

from ._validation import (
    check_array,
    check_choice,
    check_epsilon,
    check_integer,
    check_nonnegative,
    check_positive,
    check_probability,
)
from .mechanisms import laplace_scale, rr_keep_probability

__all__ = [
    "gaussian_laplace_crossover",
    "gaussian_max_error_bound",
    "dp_bit_guess_bound",
    "noisy_table_all_queries_mean_error",
    "rr_answer_variance",
    "rr_max_error_bound",
    "rr_report_range",
    "above_threshold_accuracy_bound",
    "above_threshold_scales",
    "numeric_sparse_scales",
    "numeric_sparse_share",
    "sparse_vector_scales",
    "advanced_composition_epsilon",
    "advanced_composition_per_query_epsilon",
    "exponential_mechanism_utility_bound",
    "laplace_advanced_composition_max_error_bound",
    "numeric_sparse_accuracy_bound",
    "optimal_composition_delta",
    "optimal_composition_epsilon",
    "sparse_vector_accuracy_bound",
    "composed_laplace_max_error_bound",
    "composed_laplace_sample_complexity",
    "laplace_expected_max_error",
    "laplace_linear_combination_tail_bound",
    "laplace_max_error_bound",
    "laplace_max_error_quantile",
    "laplace_max_error_tail",
    "laplace_variance",
    "noisy_histogram_max_error_bound",
    "rr_proportion_variance",
    "hedge_regret_bound",
    "mw_update_count_bound",
    "pmw_dwork_roth_alpha",
    "pmw_dwork_roth_error_bound",
    "pmw_dwork_roth_requirement",
    "pmw_notes_alpha",
    "pmw_notes_error_bound",
    "pmw_update_count_bound",
]


def _per_person(value, n):
    return value if n is None else value / check_positive(n, "n")


def laplace_variance(*, sensitivity: float, epsilon: float) -> float:
    """Var Lap(b) = 2b², b = Δf/ε: the expected squared error of each coordinate."""
    return 2.0 * laplace_scale(sensitivity=sensitivity, epsilon=epsilon) ** 2


def laplace_max_error_bound(*, k: int, beta: float, sensitivity: float, epsilon: float, n: float | None = None):
    """Theorem 3.8 (Lecture 3): P[‖f(x) − y‖∞ ≥ ln(k/β)·Δf/ε] ≤ β for the Laplace mechanism.

    Proof: P[|Zᵢ| ≥ t·b] = e^{−t}; with t = ln(k/β) each coordinate fails with
    probability β/k, and a union bound over the k coordinates gives β.

    Returns the error level ln(k/β)·Δf/ε (divided by ``n`` if given).
    """
    k = check_integer(k, "k", minimum=1)
    beta = check_probability(beta, "beta")
    return _per_person(np.log(k / beta) * laplace_scale(sensitivity=sensitivity, epsilon=epsilon), n)


def laplace_expected_max_error(*, k: int, sensitivity: float, epsilon: float, n: float | None = None):
    """E‖Z‖∞ = b·(1 + 1/2 + … + 1/k) for k i.i.d. Lap(b), b = Δf/ε.

    |Zᵢ| ~ Exp(b), and the maximum of k i.i.d. exponentials has mean b·H_k (Rényi's
    representation: the spacings of exponential order statistics are b/k, b/(k − 1), …, b).
    H_k = ψ(k + 1) + γ grows like ln k, the same rate as Theorem 3.8's level.
    """
    k = check_integer(k, "k", minimum=1)
    harmonic = special.digamma(k + 1) + np.euler_gamma
    return _per_person(laplace_scale(sensitivity=sensitivity, epsilon=epsilon) * harmonic, n)


def laplace_max_error_tail(t, *, k: int, sensitivity: float, epsilon: float):
    """The exact tail P[‖Z‖∞ ≥ t] = 1 − (1 − e^{−t/b})ᵏ for k i.i.d. Lap(b), b = Δf/ε.

    ``t`` may be an array of levels (each ≥ 0). Evaluated as −expm1(k·log1p(−e^{−t/b}))
    so that tiny tails keep their relative precision.
    """
    k = check_integer(k, "k", minimum=1)
    levels = check_array(t, "t", ndim=None, min_size=0)
    if np.any(levels < 0):
        raise ValueError("t must be >= 0")
    b = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    with np.errstate(divide="ignore"):  # t = 0 gives log1p(−1) = −∞ and the right tail, 1
        tail = -np.expm1(k * np.log1p(-np.exp(-levels / b)))
    return float(tail) if tail.ndim == 0 else tail


def laplace_max_error_quantile(*, k: int, beta: float, sensitivity: float, epsilon: float, n: float | None = None):
    """The exact (1 − β) quantile of ‖Z‖∞: −b·ln(1 − (1 − β)^{1/k}), never above Theorem 3.8's level."""
    k = check_integer(k, "k", minimum=1)
    beta = check_probability(beta, "beta")
    b = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    return _per_person(-b * np.log(-np.expm1(np.log1p(-beta) / k)), n)


def composed_laplace_max_error_bound(
    *, num_queries: int, beta: float, epsilon: float, sensitivity: float = 1.0, n: float | None = None
):
    """Answering K queries of sensitivity Δ each with Lap(KΔ/ε) (ε/K per query, basic composition).

    Lecture 3: with probability 1 − β every answer is within K·ln(K/β)·Δ/ε, so the
    normalised error is α = K ln(K/β)/(nε) for counting queries.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    return laplace_max_error_bound(k=k, beta=beta, sensitivity=k * check_positive(sensitivity, "sensitivity"), epsilon=epsilon, n=n)


def composed_laplace_sample_complexity(*, num_queries: int, alpha: float, beta: float, epsilon: float) -> float:
    """The n that makes :func:`composed_laplace_max_error_bound` (normalised) equal α: n = K ln(K/β)/(αε)."""
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
):
    """Answering |Q| queries q ∈ [0, 1]^|𝒳| from the Laplace-noised histogram (Lap(1/ε) per cell).

    Every answer's error is q·Z; with ‖q‖₂ ≤ √|𝒳| and ‖q‖∞ ≤ 1, the sub-exponential tail of
    :func:`laplace_linear_combination_tail_bound` at β/|Q| and a union bound give a level that
    holds for all |Q| queries at once with probability 1 − β, of order √|𝒳|·√log(|Q|/β)/ε
    (Lecture 3's "Laplace mechanism to release contingency table").
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
    """
    n = check_integer(n, "n", minimum=1)
    p = rr_keep_probability(epsilon)
    return p * (1 - p) / ((2 * p - 1) ** 2 * n)


# --- Notebook 04: the sparse vector technique's noise scales ---
# The calibration is theory (Dwork & Roth's scales, checked against advanced composition); the samplers in
# dpcourse.svt draw with these scales and re-export them, so that bounds imports no sampler.
def above_threshold_scales(*, epsilon: float, sensitivity: float = 1.0) -> tuple[float, float]:
    """The scales (2Δ/ε, 4Δ/ε) of AboveThreshold's threshold and query noise (see :func:`above_threshold_noise`)."""
    eps = check_epsilon(epsilon)
    delta_q = check_positive(sensitivity, "sensitivity")
    return 2 * delta_q / eps, 4 * delta_q / eps


def sparse_vector_scales(*, epsilon: float, c: int, sensitivity: float = 1.0, delta: float = 0.0):
    """Threshold and query noise scales of SparseVector (Dwork & Roth, Algorithm 2).

    With δ = 0, each of the c AboveThreshold runs gets ε/c (basic composition): threshold
    noise Lap(σ), query noise Lap(2σ) with σ = 2cΔ/ε. With δ > 0, advanced composition
    lets each run use σ = Δ·√(32 c ln(1/δ))/ε, i.e. ε′ = ε/√(8c ln(1/δ)) per run, and the
    whole is (ε, δ)-DP (Dwork & Roth, Theorem 3.25).

    Caveat (δ > 0): Dwork & Roth derive this σ from their Corollary 3.21, which is stated
    for ε < 1. What the proof needs is Theorem 3.20's inequality
    ε′√(2c ln(1/δ)) + cε′(e^{ε′} − 1) ≤ ε; the first term is ε/2 here, so it holds whenever
    cε′(e^{ε′} − 1) ≤ ε/2, which is true for every ε ≤ 1 and for much larger ε too when δ is
    small. This function checks the inequality itself (:func:`advanced_composition_epsilon`)
    and raises ``ValueError`` when it fails (large ε with large δ), rather than return a
    calibration that is not (ε, δ)-DP. Advanced composition also only pays off for many
    runs: its σ is smaller than basic composition's 2cΔ/ε only when c > 8 ln(1/δ).
    """
    eps = check_epsilon(epsilon)
    c = check_integer(c, "c", minimum=1)
    delta_q = check_positive(sensitivity, "sensitivity")
    if delta == 0:
        sigma = 2 * c * delta_q / eps
    else:
        dlt = check_probability(delta, "delta")
        sigma = delta_q * np.sqrt(32 * c * np.log(1 / dlt)) / eps
        composed = advanced_composition_epsilon(epsilon0=2 * delta_q / sigma, k=c, delta=dlt)
        if composed > eps * (1 + 1e-12):
            raise ValueError(
                f"epsilon = {epsilon!r} is too large for SparseVector's advanced-composition calibration with "
                f"delta = {delta!r} and c = {c}: Theorem 3.20 gives {composed:.4g} > epsilon (Dwork & Roth state it "
                "for epsilon < 1); use delta=0 (basic composition)")
    return sigma, 2 * sigma


def numeric_sparse_share(delta: float = 0.0) -> float:
    """Dwork & Roth's share s of NumericSparse's budget for the released values (Algorithm 3).

    δ = 0: ε₁ = 8ε/9 for the comparisons and ε₂ = 2ε/9, so s = 1/9. δ > 0:
    ε₁ = √512/(√512 + 1)·ε and ε₂ = 2ε/(√512 + 1), so s = 1/(√512 + 1) ≈ 0.0424. The
    δ > 0 split is the one behind the constant (√512 + 1) of Theorem 3.28, hence behind
    the slides' 2 + 32√2 = 2(1 + √512) for online PMW; the δ = 0 split there would make the
    comparison noise 9√512/(8(√512 + 1)) ≈ 1.077 times larger than the theorem assumes.
    """
    if delta == 0:
        return 1 / 9
    check_probability(delta, "delta")
    return 1 / (np.sqrt(512) + 1)


def numeric_sparse_scales(*, epsilon: float, c: int, sensitivity: float = 1.0, delta: float = 0.0,
                          numeric_share: float | None = None):
    """Noise scales of NumericSparse (Dwork & Roth, Algorithm 3): (threshold, query, numeric).

    With σ(ε′) the SparseVector scale of :func:`sparse_vector_scales`, the comparisons run
    SparseVector with ε₁ = (1 − s)·ε (threshold Lap(σ(ε₁)), queries Lap(2σ(ε₁))), and each of the
    c released values gets fresh Lap(σ(ε₂)) noise with ε₂ = 2sε. ``numeric_share=None`` takes
    Dwork & Roth's s for this δ (:func:`numeric_sparse_share`): s = 1/9 for δ = 0 (ε₁ = 8ε/9,
    ε₂ = 2ε/9; the released values then cost ε/9 in all, c answers of sensitivity Δ with noise
    2cΔ/ε₂ each) and s = 1/(√512 + 1) for δ > 0 (ε₁ = √512 ε/(√512 + 1), ε₂ = 2ε/(√512 + 1); by
    advanced composition the values cost about ε₂/2, the comparisons ε₁). The lecture's "twice
    the budget" is s = ½. With δ > 0 each part uses δ/2 (Dwork & Roth's ln(2/δ)), so the whole
    is (ε, δ)-DP.
    """
    share = numeric_sparse_share(delta) if numeric_share is None else check_probability(numeric_share,
                                                                                          "numeric_share")
    eps = check_epsilon(epsilon)
    part_delta = 0.0 if delta == 0 else check_probability(delta, "delta") / 2
    threshold_scale, query_scale = sparse_vector_scales(epsilon=(1 - share) * eps, c=c, sensitivity=sensitivity,
                                                        delta=part_delta)
    numeric_scale, _ = sparse_vector_scales(epsilon=2 * share * eps, c=c, sensitivity=sensitivity, delta=part_delta)
    return threshold_scale, query_scale, numeric_scale


# --- Notebook 04: AboveThreshold ---
def above_threshold_accuracy_bound(*, num_queries: int, beta: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """α = 8Δ(ln k + ln(2/β))/ε: AboveThreshold's (α, β)-accuracy on k queries (Dwork & Roth, Theorem 3.24).

    Accuracy means: with probability 1 − β, AboveThreshold does not halt on any query with
    qᵢ(D) < T − α, and it halts by the first query with qᵢ(D) ≥ T + α (if there is one
    among the k). Both hold when |ρ| < α/2 and every |νᵢ| < α/2. With ρ ~ Lap(2Δ/ε),
    Pr[|ρ| ≥ α/2] = e^{−αε/(4Δ)}; with νᵢ ~ Lap(4Δ/ε), Pr[maxᵢ |νᵢ| ≥ α/2] ≤ k·e^{−αε/(8Δ)}.
    At α = 8Δ ln(2k/β)/ε the second is β/2 and the first smaller still, so the union bound gives β.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    beta = check_probability(beta, "beta")
    return 8 * check_positive(sensitivity, "sensitivity") * (np.log(k) + np.log(2 / beta)) / check_epsilon(epsilon)


def sparse_vector_accuracy_bound(*, num_queries: int, c: int, beta: float, epsilon: float, delta: float = 0.0,
                                 sensitivity: float = 1.0) -> float:
    """SparseVector's (α, β)-accuracy on k queries with at most c above T − α (Dwork & Roth, Theorem 3.26).

    δ = 0: α = 8cΔ(ln k + ln(2c/β))/ε. δ > 0: α = √(512 c ln(1/δ))·Δ(ln k + ln(2c/β))/ε.
    Proof: each of the c AboveThreshold runs has budget ε′ (ε/c, or ε/√(8c ln(1/δ)) with
    advanced composition) and is accurate at failure probability β/c
    (:func:`above_threshold_accuracy_bound` with β/c and ε′); a union bound over the runs gives β.
    """
    c = check_integer(c, "c", minimum=1)
    eps = check_epsilon(epsilon)
    if delta == 0:
        per_run = eps / c
    else:
        per_run = eps / np.sqrt(8 * c * np.log(1 / check_probability(delta, "delta")))
    return above_threshold_accuracy_bound(num_queries=num_queries, beta=check_probability(beta, "beta") / c,
                                          epsilon=per_run, sensitivity=sensitivity)


def numeric_sparse_accuracy_bound(*, num_queries: int, c: int, beta: float, epsilon: float, delta: float = 0.0,
                                  sensitivity: float = 1.0, part: str = "both") -> float:
    """NumericSparse's (α, β)-accuracy on k queries with at most c above T − α (Dwork & Roth, Theorem 3.28).

    ``part="comparisons"`` is the theorem's α: SparseVector's bound at β/2 with ε₁ and δ/2,

    * δ = 0 (ε₁ = 8ε/9): α = 9cΔ(ln k + ln(4c/β))/ε;
    * δ > 0 (ε₁ = √512 ε/(√512 + 1)): α = (√512 + 1)√(c ln(2/δ))·Δ(ln k + ln(4c/β))/ε.

    ``part="values"``: the level σ(ε₂)·ln(2c/β) that all c released values' Laplace noise stays
    below with probability 1 − β/2 (the second half of the theorem's proof). For δ = 0 it is
    9cΔ ln(2c/β)/ε, below the theorem's α. For δ > 0, σ(ε₂) = √(32c ln(2/δ))/ε₂ makes it
    √8·(√512 + 1)√(c ln(2/δ))·Δ ln(2c/β)/ε, which exceeds the theorem's α whenever
    √8 ln(2c/β) > ln k + ln(4c/β): Theorem 3.28 as stated for δ > 0 does not cover the
    released values (our reading of the calibration; notebook 04 measures it).
    ``part="both"`` (default) returns the larger, the level the proof supports.
    """
    check_choice(part, "part", ("both", "comparisons", "values"))
    eps = check_epsilon(epsilon)
    beta = check_probability(beta, "beta")
    share = numeric_sparse_share(delta)
    comparisons = sparse_vector_accuracy_bound(num_queries=num_queries, c=c, beta=beta / 2, epsilon=(1 - share) * eps,
                                               delta=0.0 if delta == 0 else delta / 2, sensitivity=sensitivity)
    _, _, numeric_scale = numeric_sparse_scales(epsilon=eps, c=c, sensitivity=sensitivity, delta=delta)
    values = numeric_scale * np.log(2 * c / beta)
    return {"comparisons": comparisons, "values": values, "both": max(comparisons, values)}[part]


# --- Notebook 06: composition and selection ---
def advanced_composition_epsilon(*, epsilon0: float, k: int, delta: float) -> float:
    """Advanced composition (Dwork & Roth, Theorem 3.20): k ε₀-DP mechanisms are (ε, δ)-DP together with

        ε = ε₀√(2k ln(1/δ)) + kε₀(e^{ε₀} − 1),

    for every ε₀ > 0 and δ ∈ (0, 1), adaptively chosen. (Their Corollary 3.21, which picks
    ε₀ = ε/(2√(2k ln(1/δ))), is the version stated for ε < 1.) The online-PMW slides use it for
    the Laplace baseline: ε₀ ≈ ε/√(k ln(1/δ)) per query.
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
    upper = (k - 2 * i) * e0                                   # interval j: [(k − 2j − 2)ε₀, (k − 2j)ε₀)
    lower = np.maximum(upper - 2 * e0, 0.0)
    inside = np.flatnonzero((candidate >= lower - 1e-12 * upper) & (candidate <= upper * (1 + 1e-12)))
    return float(max(candidate[inside[0]], 0.0))


def laplace_advanced_composition_max_error_bound(*, num_queries: int, beta: float, epsilon: float, delta: float,
                                                 sensitivity: float = 1.0, n: float | None = None) -> float:
    """Answering K queries with Lap(Δ/ε₀), ε₀ from advanced composition: all within ln(K/β)·Δ/ε₀ w.p. 1 − β.

    The online-PMW slides' second baseline: ε₀ ≈ ε/√(8K ln(1/δ)) gives error of order
    √(K ln(1/δ))·ln(K/β)/(nε), against K ln(K/β)/(nε) for basic composition
    (:func:`composed_laplace_max_error_bound`). ε₀ is :func:`advanced_composition_per_query_epsilon`.
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
    """
    r = check_integer(num_outcomes, "num_outcomes", minimum=1)
    tt = float(check_array(t, "t", ndim=0))
    if tt < 0:
        raise ValueError(f"t must be >= 0; got {t!r}")
    return 2 * check_positive(sensitivity, "sensitivity") * (np.log(r) + tt) / check_epsilon(epsilon)


# --- Notebook 02: randomized response vs Laplace vs Gaussian ---
def rr_report_range(epsilon: float) -> float:
    """Width of a debiased randomized-response report's range, 1/(2p − 1) = (e^ε + 1)/(e^ε − 1).

    Hoeffding's inequality needs it (Lecture 3); it is about 2/ε for small ε.
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
    """
    n = check_integer(n, "n", minimum=1)
    k = check_integer(num_queries, "num_queries", minimum=1)
    beta = check_probability(beta, "beta")
    return rr_report_range(epsilon) * np.sqrt(np.log(2 * k / beta) / (2 * n))


def rr_answer_variance(*, people_in_query: float, n: int, epsilon: float) -> float:
    """Exact variance of a randomized-response answer (1/n)Σᵢ aᵢx̂ᵢ: (Σᵢ aᵢ)·e^ε/((e^ε − 1)² n²).

    Every debiased report has variance e^ε/(e^ε − 1)², whatever the true bit.
    """
    n = check_integer(n, "n", minimum=1)
    people = check_nonnegative(people_in_query, "people_in_query")
    if people > n:
        raise ValueError(f"people_in_query must be at most n = {n}; got {people_in_query!r}")
    return people * rr_proportion_variance(n=1, epsilon=epsilon) / n**2


def gaussian_max_error_bound(*, sigma: float, num_queries: int, beta: float) -> float:
    """The level σ·Φ⁻¹(1 − β/(2k)) that k Gaussian errors N(0, σ²) all stay below with probability ≥ 1 − β (union bound)."""
    k = check_integer(num_queries, "num_queries", minimum=1)
    # Φ⁻¹(1 − p) = −Φ⁻¹(p) = scipy.stats.norm.isf(p), without importing scipy.stats
    return check_positive(sigma, "sigma") * float(-special.ndtri(check_probability(beta, "beta") / (2 * k)))


def gaussian_laplace_crossover(*, epsilon: float, delta: float, calibration: str = "analytic") -> float:
    """The number of queries k beyond which Gaussian noise has the smaller mean squared error.

    For k counting queries a person can be in all of them: Δ₁ = k and Δ₂ = √k. Laplace's mean
    squared error per query is 2(k/ε)² (the notes' 2k²/(ε²n²), unnormalised); Gaussian's is
    σ(Δ₂ = √k)² = k·σ₁², since σ is linear in Δ₂ (σ₁ = σ at Δ₂ = 1). They cross at
    k* = ε²σ₁²/2; with the classic σ₁² = 2 ln(1.25/δ)/ε² this is k* = ln(1.25/δ).
    """
    from .mechanisms import gaussian_sigma

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
    """
    g = check_integer(num_types, "num_types", minimum=1)
    return _per_person((g / 2 + np.sqrt(g / np.pi)) / check_epsilon(epsilon), n)


def dp_bit_guess_bound(*, epsilon: float, delta: float = 0.0) -> float:
    """(e^ε + δ)/(1 + e^ε): the most often any attacker can guess a uniformly random bit from an (ε, δ)-DP output.

    Neighbours differ in that bit. With s₁ = P[guess 1 | bit 1] and s₀ = P[guess 0 | bit 0], DP
    gives s₁ ≤ e^ε(1 − s₀) + δ and s₀ ≤ e^ε(1 − s₁) + δ; adding them, the success (s₀ + s₁)/2 is
    at most (e^ε + δ)/(1 + e^ε). Randomized response attains it at δ = 0. Against the
    reconstruction attacks (notebook 02) this is why no DP mechanism is blatantly non-private.
    """
    eps = check_epsilon(epsilon)
    d = check_probability(delta, "delta") if delta else 0.0
    return float((np.exp(eps) + d) / (1 + np.exp(eps)))


# --- Notebook 06: Private Multiplicative Weights ---
MW_UPDATE_STATEMENTS = ("slides", "notes")


def hedge_regret_bound(*, num_experts: int, horizon: int, eta: float | None = None) -> float:
    """Hedge's regret bound after T rounds with N experts and losses in [−1, 1].

    Theorem 1.5 in the version this package proves: for losses in [−1, 1] and η ≤ 1,
    Σₜ xₜ·ℓₜ ≤ Σₜ ℓₜ(i*) + η Σₜ xₜ·ℓₜ² + ln N / η (the proof uses e^{−y} ≤ 1 − y + y², true
    for y = ηℓ ≥ −1). Lecture 3 states it for non-negative losses and any η > 0 (it writes ε);
    MW query release needs the signed losses ±q, hence this version (see :func:`dpcourse.pmw.hedge`).
    With |ℓₜ(i)| ≤ 1 the middle term is at most ηT, so the regret is at most ln N/η + ηT.
    ``eta=None`` takes the tuned η = √(ln N / T) of Lecture 4, Theorem 4.1, for which the bound
    is 2√(T ln N); that tuning needs T in advance (circular when T is the number of MW updates,
    which is what the bound is used to count: notebook 06 uses the η-form with η = α/2 instead).
    """
    n_exp = check_integer(num_experts, "num_experts", minimum=1)
    t = check_integer(horizon, "horizon", minimum=1)
    if eta is None:
        return 2.0 * np.sqrt(t * np.log(n_exp))
    eta = check_positive(eta, "eta")
    if eta > 1:
        raise ValueError(f"eta must be in (0, 1] for the bound with losses in [−1, 1]; got {eta!r}")
    return np.log(n_exp) / eta + eta * t


def mw_update_count_bound(*, domain_size: int, alpha: float, statement: str = "slides") -> float:
    """How many updates MW query release (no privacy, exact answers) can make at accuracy α.

    ``statement="slides"``: 4 ln|𝒳|/α² (Dwork–Roth Theorem 4.10 in the online-PMW slides,
    with η = α/2; the potential KL(p‖p̃ₜ) starts ≤ ln|𝒳|, stays ≥ 0 and falls by ≥ α²/4 per
    update). The Lecture 4 regret argument gives the same: Tα ≤ 2√(T ln|𝒳|) ⇒ T ≤ 4 ln|𝒳|/α².

    ``statement="notes"``: ln|𝒳|/α², the number the Lecture 4 notes print at the end of that
    argument (an arithmetic slip: squaring Tα ≤ 2√(T ln|𝒳|) gives the factor 4). Drawn in
    notebook 06 for comparison; it is not a valid bound in general.
    """
    d = check_integer(domain_size, "domain_size", minimum=2)
    a = check_positive(alpha, "alpha")
    check_choice(statement, "statement", MW_UPDATE_STATEMENTS)
    return (4.0 if statement == "slides" else 1.0) * np.log(d) / a**2


def pmw_update_count_bound(*, domain_size: int, alpha: float) -> float:
    """N = 16 ln|𝒳|/α²: the most updates Private MW makes on its accuracy event (Lecture 4, Claim 3).

    Every update then has a gap |q·p̃ₜ − q·p| > α/2 and a correctly signed loss, so with
    η = α/4 the potential falls by ≥ α²/16 per update; equivalently T·α/2 ≤ 2√(T ln|𝒳|).
    """
    d = check_integer(domain_size, "domain_size", minimum=2)
    return 16.0 * np.log(d) / check_positive(alpha, "alpha") ** 2


def pmw_notes_alpha(*, n: float, epsilon: float, domain_size: int, num_queries: int, beta: float) -> float:
    """The smallest α at which Lecture 4's Private MW is ε-DP *and* accurate: α = (512 ln(3k/β) ln|𝒳|/(nε))^{1/3}.

    Accuracy needs ε₀ ≥ 16 ln(3k/β)/(nα) (all 3k Laplace variables small, Claim 3), privacy
    spends ε = 2ε₀N with N = 16 ln|𝒳|/α²; together ε ≥ 512 ln(3k/β) ln|𝒳|/(nα³)
    (Theorem 4.3, β written δ there). The 512 belongs under the cube root, α = 8(…)^{1/3};
    the notes' statement of the theorem prints it outside (a slip).
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    d = check_integer(domain_size, "domain_size", minimum=2)
    beta = check_probability(beta, "beta")
    nn = check_positive(n, "n")
    return float(np.cbrt(512.0 * np.log(3 * k / beta) * np.log(d) / (nn * check_epsilon(epsilon))))


def pmw_notes_error_bound(*, n: float, epsilon: float, domain_size: int, num_queries: int, beta: float) -> float:
    """Theorem 4.3 (Lecture 4) with this package's constant: w.p. ≥ 1 − β every answer is within (11/8)·α.

    α = :func:`pmw_notes_alpha`. The 11/8 is ours, not the lecture's. The notes' Claim 2 bounds
    every Laplace variable by the largest scale's level, (4/(nε₀)) ln(3k/β) = α/4, which gives
    α + α/4 + α/4 = 1.5α as written; their theorem then states 1.25α (a slip: it drops one of
    the two noise terms). We apply the union bound per scale instead: each of the ≤ 3k Laplace
    variables is below *its own* scale times ln(3k/β) (still failure probability β/(3k) each),
    so the query noise Lap(4/(nε₀)) is < α/4, the threshold noise Lap(2/(nε₀)) < α/8 and the
    released noise Lap(1/(nε₀)) < α/16. An answer from the synthetic data then errs by
    < α + α/4 + α/8 = 11α/8, a released one by < α/16.
    """
    return 11.0 / 8.0 * pmw_notes_alpha(n=n, epsilon=epsilon, domain_size=domain_size, num_queries=num_queries,
                                        beta=beta)


def pmw_dwork_roth_requirement(alpha: float, *, n: float, epsilon: float, domain_size: int, num_queries: int,
                               beta: float, delta: float = 0.0) -> float:
    """The right-hand side R(α) of the slides' accuracy theorems (Dwork & Roth, Theorems 4.14 and 4.15).

    OnlineMW via NumericSparse answers every query within 3α, with probability ≥ 1 − β, for any
    α ≥ R(α), where with L = ln|𝒳| and k = |Q| (normalised by ‖x‖₁ = n):

    * δ = 0: R(α) = 36 L (ln k + ln(32 L/(α²β))) / (ε α² n);
    * δ > 0: R(α) = (2 + 32√2) √(L ln(2/δ)) (ln k + ln(32 L/(α²β))) / (ε α n).

    Both come from NumericSparse's accuracy (9c(ln k′ + ln(4c/β))/ε, resp.
    (√512 + 1)√(c ln(2/δ))(ln k′ + ln(4c/β))/ε, :func:`numeric_sparse_accuracy_bound` with
    ``part="comparisons"``) with c = 4L/α² updates and k′ = 2|Q| queries; 2 + 32√2 = 2(1 + √512).
    The δ > 0 constant belongs to Dwork & Roth's δ > 0 split ε₁ = √512 ε/(√512 + 1), which
    :class:`dpcourse.pmw.PrivateMW` uses (:func:`numeric_sparse_share`).

    Caveat (δ > 0): the released values' noise is larger than this level by up to √8
    (see :func:`numeric_sparse_accuracy_bound`), so a released answer errs by less than
    √8·α < 3α: the 3α level still covers every released answer, but the update-count argument,
    which wants released answers within α, is not covered by Theorem 4.15 as stated.
    """
    a = check_positive(alpha, "alpha")
    big_a, p, c = _dwork_roth_terms(n, epsilon, domain_size, num_queries, beta, delta)
    return float(c * (big_a - 2 * np.log(a)) / a ** (p - 1))


def _dwork_roth_terms(n, epsilon, domain_size, num_queries, beta, delta) -> tuple[float, float, float]:
    """(A, p, C) of Dwork & Roth's requirement R(α) = C·(A − 2 ln α)/α^{p−1}, with L = ln|𝒳| and
    A = ln k + ln(32L/β): p = 3, C = 36L/(εn) for δ = 0 (Theorem 4.14); p = 2,
    C = (2 + 32√2)√(L ln(2/δ))/(εn) for δ > 0 (Theorem 4.15)."""
    nn = check_positive(n, "n")
    eps = check_epsilon(epsilon)
    big_l = np.log(check_integer(domain_size, "domain_size", minimum=2))
    k = check_integer(num_queries, "num_queries", minimum=1)
    big_a = np.log(k) + np.log(32 * big_l / check_probability(beta, "beta"))
    if delta == 0:
        return big_a, 3.0, 36 * big_l / (eps * nn)
    dlt = check_probability(delta, "delta")
    return big_a, 2.0, (2 + 32 * np.sqrt(2)) * np.sqrt(big_l * np.log(2 / dlt)) / (eps * nn)


def pmw_dwork_roth_alpha(*, n: float, epsilon: float, domain_size: int, num_queries: int, beta: float,
                         delta: float = 0.0) -> float:
    """The smallest α with α ≥ R(α) (:func:`pmw_dwork_roth_requirement`), in closed form.

    α − R(α) increases with α (R falls), so the crossing is unique. With A = ln k + ln(32L/β) and
    v = A − 2 ln α, the equation α = R(α) reads αᵖ = C·v, i.e. v·e^{pv/2} = e^{pA/2}/C, where
    p = 3, C = 36L/(εn) for δ = 0 and p = 2, C = (2 + 32√2)√(L ln(2/δ))/(εn) for δ > 0. So
    v = (2/p)·W((p/(2C))·e^{pA/2}) with Lambert's W, and α = e^{(A − v)/2}: exact, and a
    hundred times faster than root finding (notebook 06 evaluates it thousands of times).
    """
    big_a, p, c = _dwork_roth_terms(n, epsilon, domain_size, num_queries, beta, delta)
    v = (2 / p) * _lambert_w_of_exp(np.log(p / (2 * c)) + p * big_a / 2)
    alpha = float(np.exp((big_a - v) / 2))
    # the smallest α that *meets* α ≥ R(α): if rounding left α a hair below R(α), R(α) meets it (R falls)
    need = pmw_dwork_roth_requirement(alpha, n=n, epsilon=epsilon, domain_size=domain_size, num_queries=num_queries,
                                      beta=beta, delta=delta)
    return max(alpha, need)


def _lambert_w_of_exp(z: float) -> float:
    """W(eᶻ) for real z, without overflow: w + ln w = z, solved by Newton steps from a close start."""
    w = float(special.lambertw(np.exp(z)).real) if z < 500 else z - np.log(z)
    for _ in range(4 if z >= 500 else 0):
        w -= (w + np.log(w) - z) / (1 + 1 / w)
    return w


def pmw_dwork_roth_error_bound(*, n: float, epsilon: float, domain_size: int, num_queries: int, beta: float,
                               delta: float = 0.0) -> float:
    """3α at the smallest admissible α: the slides' accuracy theorem for OnlineMW (δ = 0 and δ > 0).

    Answers from the synthetic data err by ≤ T + α = 3α (threshold T = 2α); released answers
    by ≤ α. Up to constants this is (ln|𝒳| ln|Q|/(nε))^{1/3} for δ = 0 and
    (√(ln|𝒳| ln(1/δ)) ln|Q|/(nε))^{1/2} for δ > 0.
    """
    return 3.0 * pmw_dwork_roth_alpha(n=n, epsilon=epsilon, domain_size=domain_size, num_queries=num_queries,
                                      beta=beta, delta=delta)
