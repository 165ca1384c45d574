"""Theory lines of notebook 04: the sparse vector technique's noise scales and accuracy bounds.

The calibration is theory (Dwork & Roth's scales, checked against advanced composition); the
samplers in :mod:`dpcourse.svt` draw with these scales and re-export them.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_choice, check_epsilon, check_integer, check_positive, check_probability
from ..mechanisms.composition import advanced_composition_epsilon

__all__ = [
    "above_threshold_accuracy_bound",
    "above_threshold_loss_bound",
    "above_threshold_scales",
    "numeric_sparse_accuracy_bound",
    "numeric_sparse_scales",
    "numeric_sparse_share",
    "sparse_vector_accuracy_bound",
    "sparse_vector_composed_epsilon",
    "sparse_vector_scales",
]


# --- Notebook 04: the sparse vector technique's noise scales ---
# The calibration is theory (Dwork & Roth's scales, checked against advanced composition); the samplers in
# dpcourse.svt draw with these scales and re-export them, so that bounds imports no sampler.
def above_threshold_scales(*, epsilon: float, sensitivity: float = 1.0) -> tuple[float, float]:
    """The scales (2Δ/ε, 4Δ/ε) of AboveThreshold's threshold and query noise (see :func:`above_threshold_noise`).

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε of the whole run, > 0.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).

    Returns
    -------
    tuple of float
        ``(threshold_scale, query_scale)`` = (2Δ/ε, 4Δ/ε), the Laplace scales of ρ and of each νᵢ.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite number > 0.
    TypeError
        If ``epsilon`` or ``sensitivity`` is not a real number.
    """
    eps = check_epsilon(epsilon)
    delta_q = check_positive(sensitivity, "sensitivity")
    return 2 * delta_q / eps, 4 * delta_q / eps


def sparse_vector_scales(
    *, epsilon: float, c: int, sensitivity: float = 1.0, delta: float = 0.0
) -> tuple[float, float]:
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

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε of the whole run (all c AboveThreshold runs), > 0.
    c : int
        The number of ⊤ answers before SparseVector halts, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    delta : float, optional
        0 (default) for basic composition, or δ in (0, 1) for advanced composition.

    Returns
    -------
    tuple of float
        ``(threshold_scale, query_scale)`` = (σ, 2σ).

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite number > 0, ``c`` is not an integer ≥ 1, ``delta``
        is neither 0 nor in (0, 1), or (δ > 0) Theorem 3.20 composes the c runs to more than ε.
    TypeError
        If a parameter is not a number of its kind (``c`` an integer, the others real).
    """
    eps = check_epsilon(epsilon)
    c = check_integer(c, "c", minimum=1)
    delta_q = check_positive(sensitivity, "sensitivity")
    if delta == 0:
        sigma = 2 * c * delta_q / eps
    else:
        dlt = check_probability(delta, "delta")
        sigma = delta_q * np.sqrt(32 * c * np.log(1 / dlt)) / eps
        composed = sparse_vector_composed_epsilon(epsilon=eps, c=c, delta=dlt)
        if composed > eps * (1 + 1e-12):
            raise ValueError(
                f"epsilon = {epsilon!r} is too large for SparseVector's advanced-composition calibration with "
                f"delta = {delta!r} and c = {c}: Theorem 3.20 gives {composed:.4g} > epsilon (Dwork & Roth state it "
                "for epsilon < 1); use delta=0 (basic composition)"
            )
    return sigma, 2 * sigma


def sparse_vector_composed_epsilon(*, epsilon: float, c: int, delta: float) -> float:
    """What Theorem 3.20 gives for SparseVector's c runs at the δ > 0 calibration of :func:`sparse_vector_scales`.

    Each run is ε′-DP with ε′ = ε/√(8c ln(1/δ)) (Dwork & Roth, Theorem 3.25); Theorem 3.20 composes the c
    runs to ε′√(2c ln(1/δ)) + cε′(e^{ε′} − 1) = ε/2 + cε′(e^{ε′} − 1) (:func:`advanced_composition_epsilon`).
    Corollary 3.21, from which the calibration comes, *charges* the runs the whole ε: that is its
    conservative bookkeeping (valid for ε < 1), not what the runs cost. The result is below ε whenever
    cε′(e^{ε′} − 1) ≤ ε/2 (every ε ≤ 1, and much larger ε when δ is small) and above it for large ε with
    large δ, where :func:`sparse_vector_scales` refuses.

    Parameters
    ----------
    epsilon : float
        The ε the calibration is for, > 0.
    c : int
        The number of AboveThreshold runs, ≥ 1.
    delta : float
        The δ of advanced composition, in (0, 1).

    Returns
    -------
    float
        The total ε that Theorem 3.20 gives for the c runs.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0, ``c`` is not an integer ≥ 1 or ``delta`` is not in (0, 1).
    TypeError
        If a parameter is not a number of its kind (``c`` an integer, the others real).
    """
    eps = check_epsilon(epsilon)
    c = check_integer(c, "c", minimum=1)
    dlt = check_probability(delta, "delta")
    return advanced_composition_epsilon(epsilon0=eps / np.sqrt(8 * c * np.log(1 / dlt)), k=c, delta=dlt)


def numeric_sparse_share(delta: float = 0.0) -> float:
    """Dwork & Roth's share s of NumericSparse's budget for the released values (Algorithm 3).

    δ = 0: ε₁ = 8ε/9 for the comparisons and ε₂ = 2ε/9, so s = 1/9. δ > 0:
    ε₁ = √512/(√512 + 1)·ε and ε₂ = 2ε/(√512 + 1), so s = 1/(√512 + 1) ≈ 0.0424. The
    δ > 0 split is the one behind the constant (√512 + 1) of Theorem 3.28, hence behind
    the slides' 2 + 32√2 = 2(1 + √512) for online PMW; the δ = 0 split there would make the
    comparison noise 9√512/(8(√512 + 1)) ≈ 1.077 times larger than the theorem assumes.

    Parameters
    ----------
    delta : float, optional
        0 (default) for the pure-DP split, or δ in (0, 1) for the advanced-composition split.

    Returns
    -------
    float
        The share s: 1/9 for δ = 0, 1/(√512 + 1) for δ > 0.

    Raises
    ------
    ValueError
        If ``delta`` is neither 0 nor in (0, 1).
    TypeError
        If ``delta`` is not a real number.
    """
    if delta == 0:
        return 1 / 9
    check_probability(delta, "delta")
    return 1 / (np.sqrt(512) + 1)


def numeric_sparse_scales(
    *, epsilon: float, c: int, sensitivity: float = 1.0, delta: float = 0.0, numeric_share: float | None = None
) -> tuple[float, float, float]:
    """Noise scales of NumericSparse (Dwork & Roth, Algorithm 3): (threshold, query, numeric).

    With σ(ε′) the SparseVector scale of :func:`sparse_vector_scales`, the comparisons run
    SparseVector with ε₁ = (1 − s)·ε (threshold Lap(σ(ε₁)), queries Lap(2σ(ε₁))), and each of the
    c released values gets fresh Lap(σ(ε₂)) noise with ε₂ = 2sε. ``numeric_share=None`` takes
    Dwork & Roth's s for this δ (:func:`numeric_sparse_share`): s = 1/9 for δ = 0 (ε₁ = 8ε/9,
    ε₂ = 2ε/9; the released values then cost ε/9 in all, c answers of sensitivity Δ with noise
    2cΔ/ε₂ each) and s = 1/(√512 + 1) for δ > 0 (ε₁ = √512 ε/(√512 + 1), ε₂ = 2ε/(√512 + 1)).
    For δ > 0, Corollary 3.21 *charges* the comparisons ε₁ and the values ε₂/2, which add up to ε;
    these are the corollary's conservative charges, not what the parts cost: Theorem 3.20 composes
    each part to about half its charge (:func:`sparse_vector_composed_epsilon`). The lecture's
    "twice the budget" is s = ½. With δ > 0 each part uses δ/2 (Dwork & Roth's ln(2/δ)), so the
    whole is (ε, δ)-DP.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε of the whole run, > 0.
    c : int
        The number of ⊤ answers (and released values) before NumericSparse halts, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    delta : float, optional
        0 (default) for basic composition, or δ in (0, 1) for advanced composition.
    numeric_share : float or None, optional
        The share s of ε for the released values, in (0, 1); None (default) takes :func:`numeric_sparse_share`.

    Returns
    -------
    tuple of float
        ``(threshold_scale, query_scale, numeric_scale)``.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite number > 0, ``c`` is not an integer ≥ 1, ``delta``
        is neither 0 nor in (0, 1), ``numeric_share`` is not in (0, 1), or (δ > 0) a part's ε is too large for
        advanced composition (see :func:`sparse_vector_scales`).
    TypeError
        If a parameter is not a number of its kind (``c`` an integer, the others real).
    """
    share = numeric_sparse_share(delta) if numeric_share is None else check_probability(numeric_share, "numeric_share")
    eps = check_epsilon(epsilon)
    part_delta = 0.0 if delta == 0 else check_probability(delta, "delta") / 2
    threshold_scale, query_scale = sparse_vector_scales(
        epsilon=(1 - share) * eps, c=c, sensitivity=sensitivity, delta=part_delta
    )
    numeric_scale, _ = sparse_vector_scales(epsilon=2 * share * eps, c=c, sensitivity=sensitivity, delta=part_delta)
    return threshold_scale, query_scale, numeric_scale


# --- Notebook 04: AboveThreshold ---
def above_threshold_loss_bound(*, threshold_scale: float, query_scale: float, sensitivity: float = 1.0) -> float:
    """Δ/a + 2Δ/b: the proof's bound on the privacy loss of AboveThreshold with noises Lap(a) and Lap(b).

    The threshold noise Lap(a) pays once for shifting the threshold by Δ (step 2 of the proof: the
    factor e^{Δ/a}); the ⊥ answers cost nothing more; the ⊤ answer's noise Lap(b) pays for the
    fictitious query q̃ = q_{k+1} + Δ, which moves by up to 2Δ between neighbours (step 4: e^{2Δ/b}).
    With AboveThreshold's own a = 2Δ/ε and b = 4Δ/ε the bound is ε/2 + ε/2 = ε (Lecture 3; Dwork &
    Roth, Theorem 3.23). The adversarial pair of :func:`dpcourse.svt.adversarial_pair`
    reaches it as the number of queries grows.

    Parameters
    ----------
    threshold_scale : float
        The scale a of the threshold noise, > 0.
    query_scale : float
        The scale b of each query's noise, > 0.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).

    Returns
    -------
    float
        The bound Δ/a + 2Δ/b on the privacy loss.

    Raises
    ------
    ValueError
        If a scale or ``sensitivity`` is not a finite number > 0.
    TypeError
        If a parameter is not a real number.
    """
    a = check_positive(threshold_scale, "threshold_scale")
    b = check_positive(query_scale, "query_scale")
    delta_q = check_positive(sensitivity, "sensitivity")
    return float(delta_q / a + 2 * delta_q / b)


def above_threshold_accuracy_bound(*, num_queries: int, beta: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """α = 8Δ(ln k + ln(2/β))/ε: AboveThreshold's (α, β)-accuracy on k queries (Dwork & Roth, Theorem 3.24).

    Accuracy means: with probability 1 − β, AboveThreshold does not halt on any query with
    qᵢ(D) < T − α, and it halts by the first query with qᵢ(D) ≥ T + α (if there is one
    among the k). Both hold when |ρ| < α/2 and every |νᵢ| < α/2. With ρ ~ Lap(2Δ/ε),
    Pr[|ρ| ≥ α/2] = e^{−αε/(4Δ)}; with νᵢ ~ Lap(4Δ/ε), Pr[maxᵢ |νᵢ| ≥ α/2] ≤ k·e^{−αε/(8Δ)}.
    At α = 8Δ ln(2k/β)/ε the second is β/2 and the first smaller still, so the union bound gives β.

    Parameters
    ----------
    num_queries : int
        The number k of queries, ≥ 1.
    beta : float
        The failure probability β, in (0, 1).
    epsilon : float
        The privacy parameter ε, > 0.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).

    Returns
    -------
    float
        The accuracy α, in the units of the query answers.

    Raises
    ------
    ValueError
        If ``num_queries`` is not an integer ≥ 1, ``beta`` is not in (0, 1), or ``epsilon`` or ``sensitivity``
        is not a finite number > 0.
    TypeError
        If a parameter is not a number of its kind (``num_queries`` an integer, the others real).
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    beta = check_probability(beta, "beta")
    return 8 * check_positive(sensitivity, "sensitivity") * (np.log(k) + np.log(2 / beta)) / check_epsilon(epsilon)


def sparse_vector_accuracy_bound(
    *, num_queries: int, c: int, beta: float, epsilon: float, delta: float = 0.0, sensitivity: float = 1.0
) -> float:
    """SparseVector's (α, β)-accuracy on k queries with at most c above T − α (Dwork & Roth, Theorem 3.26).

    δ = 0: α = 8cΔ(ln k + ln(2c/β))/ε. δ > 0: α = √(512 c ln(1/δ))·Δ(ln k + ln(2c/β))/ε.
    Proof: each of the c AboveThreshold runs has budget ε′ (ε/c, or ε/√(8c ln(1/δ)) with
    advanced composition) and is accurate at failure probability β/c
    (:func:`above_threshold_accuracy_bound` with β/c and ε′); a union bound over the runs gives β.

    Parameters
    ----------
    num_queries : int
        The number k of queries, ≥ 1.
    c : int
        The number of ⊤ answers before SparseVector halts, ≥ 1.
    beta : float
        The failure probability β, in (0, 1).
    epsilon : float
        The privacy parameter ε of the whole run, > 0.
    delta : float, optional
        0 (default) for basic composition, or δ in (0, 1) for advanced composition.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).

    Returns
    -------
    float
        The accuracy α, in the units of the query answers.

    Raises
    ------
    ValueError
        If ``num_queries`` or ``c`` is not an integer ≥ 1, ``beta`` is not in (0, 1), ``delta`` is neither 0
        nor in (0, 1), or ``epsilon`` or ``sensitivity`` is not a finite number > 0.
    TypeError
        If a parameter is not a number of its kind (``num_queries`` and ``c`` integers, the others real).
    """
    c = check_integer(c, "c", minimum=1)
    eps = check_epsilon(epsilon)
    if delta == 0:
        per_run = eps / c
    else:
        per_run = eps / np.sqrt(8 * c * np.log(1 / check_probability(delta, "delta")))
    return above_threshold_accuracy_bound(
        num_queries=num_queries, beta=check_probability(beta, "beta") / c, epsilon=per_run, sensitivity=sensitivity
    )


def numeric_sparse_accuracy_bound(
    *,
    num_queries: int,
    c: int,
    beta: float,
    epsilon: float,
    delta: float = 0.0,
    sensitivity: float = 1.0,
    part: str = "both",
) -> float:
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

    Parameters
    ----------
    num_queries : int
        The number k of queries, ≥ 1.
    c : int
        The number of ⊤ answers before NumericSparse halts, ≥ 1.
    beta : float
        The failure probability β, in (0, 1).
    epsilon : float
        The privacy parameter ε of the whole run, > 0.
    delta : float, optional
        0 (default) for basic composition, or δ in (0, 1) for advanced composition.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    part : {"both", "comparisons", "values"}, optional
        Which level to return (see above).

    Returns
    -------
    float
        The accuracy α, in the units of the query answers.

    Raises
    ------
    ValueError
        If ``part`` is not one of the three, ``num_queries`` or ``c`` is not an integer ≥ 1, ``beta`` is not in
        (0, 1), ``delta`` is neither 0 nor in (0, 1), ``epsilon`` or ``sensitivity`` is not a finite number
        > 0, or (δ > 0) a part's ε is too large for advanced composition (see :func:`sparse_vector_scales`).
    TypeError
        If a parameter is not a number of its kind (``num_queries`` and ``c`` integers, the others real).
    """
    check_choice(part, "part", ("both", "comparisons", "values"))
    eps = check_epsilon(epsilon)
    beta = check_probability(beta, "beta")
    share = numeric_sparse_share(delta)
    comparisons = sparse_vector_accuracy_bound(
        num_queries=num_queries,
        c=c,
        beta=beta / 2,
        epsilon=(1 - share) * eps,
        delta=0.0 if delta == 0 else delta / 2,
        sensitivity=sensitivity,
    )
    _, _, numeric_scale = numeric_sparse_scales(epsilon=eps, c=c, sensitivity=sensitivity, delta=delta)
    values = numeric_scale * np.log(2 * c / beta)
    return {"comparisons": comparisons, "values": values, "both": max(comparisons, values)}[part]
