"""Theory lines of notebook 06's multiplicative weights: Hedge's regret, MW and PMW update counts,
and Private MW's error bounds (the notes' and Dwork & Roth's calibrations).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._validation import check_choice, check_epsilon, check_integer, check_positive, check_probability
from ..mechanisms.theory import noisy_histogram_max_error_bound

__all__ = [
    "MW_UPDATE_STATEMENTS",
    "hedge_regret_bound",
    "mw_update_count_bound",
    "pmw_dwork_roth_alpha",
    "pmw_dwork_roth_error_bound",
    "pmw_dwork_roth_requirement",
    "pmw_notes_alpha",
    "pmw_notes_epsilon0",
    "pmw_notes_error_bound",
    "pmw_update_count_bound",
    "replace_one_histogram_max_error_bound",
]

# --- Notebook 06: Private Multiplicative Weights ---
MW_UPDATE_STATEMENTS = ("slides", "notes")


def hedge_regret_bound(*, num_experts: int, horizon: int, eta: float | None = None) -> float:
    """Hedge's regret bound after T rounds with N experts and losses in [−1, 1].

    Theorem 1.5 in the version this package proves: for losses in [−1, 1] and η ≤ 1,
    Σₜ xₜ·ℓₜ ≤ Σₜ ℓₜ(i*) + η Σₜ xₜ·ℓₜ² + ln N / η (the proof uses e^{−y} ≤ 1 − y + y², true
    for y = ηℓ ≥ −1). Lecture 3 states it for non-negative losses and any η > 0 (it writes ε);
    MW query release needs the signed losses ±q, hence this version (see :func:`dpcourse.pmw.multiplicative_weights`).
    With |ℓₜ(i)| ≤ 1 the middle term is at most ηT, so the regret is at most ln N/η + ηT.
    ``eta=None`` takes the tuned η = √(ln N / T) of Lecture 4, Theorem 4.1, for which the bound
    is 2√(T ln N); that tuning needs T in advance (circular when T is the number of MW updates,
    which is what the bound is used to count: notebook 06 uses the η-form with η = α/2 instead).

    Parameters
    ----------
    num_experts : int
        N ≥ 1.
    horizon : int
        T ≥ 1, the number of rounds.
    eta : float or None, optional
        The learning rate η ∈ (0, 1]; None (the default) takes the tuned η = √(ln N / T).

    Returns
    -------
    float
        ln N/η + ηT, or 2√(T ln N) for the tuned η.

    Raises
    ------
    ValueError
        If ``num_experts`` or ``horizon`` < 1, or ``eta`` is not in (0, 1].
    TypeError
        If ``num_experts`` or ``horizon`` is not an integer, or ``eta`` is not a real number.
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

    Parameters
    ----------
    domain_size : int
        |𝒳| ≥ 2.
    alpha : float
        The accuracy α > 0.
    statement : {"slides", "notes"}, optional
        Which statement (above); default ``"slides"``.

    Returns
    -------
    float
        4 ln|𝒳|/α² (slides) or ln|𝒳|/α² (notes), not rounded.

    Raises
    ------
    ValueError
        If ``domain_size`` < 2, ``alpha`` is not a finite number > 0, or ``statement`` is not one of
        :data:`MW_UPDATE_STATEMENTS`.
    TypeError
        If ``domain_size`` is not an integer or ``alpha`` is not a real number.
    """
    d = check_integer(domain_size, "domain_size", minimum=2)
    a = check_positive(alpha, "alpha")
    check_choice(statement, "statement", MW_UPDATE_STATEMENTS)
    return (4.0 if statement == "slides" else 1.0) * np.log(d) / a**2


def pmw_update_count_bound(*, domain_size: int, alpha: float) -> float:
    """N = 16 ln|𝒳|/α²: the most updates Private MW makes on its accuracy event (Lecture 4, Claim 3).

    Every update then has a gap |q·p̃ₜ − q·p| > α/2 and a correctly signed loss, so with
    η = α/4 the potential falls by ≥ α²/16 per update; equivalently T·α/2 ≤ 2√(T ln|𝒳|).

    Parameters
    ----------
    domain_size : int
        |𝒳| ≥ 2.
    alpha : float
        The accuracy α > 0.

    Returns
    -------
    float
        16 ln|𝒳|/α², not rounded (:class:`~dpcourse.pmw.PrivateMW` takes its floor, at least 1).

    Raises
    ------
    ValueError
        If ``domain_size`` < 2 or ``alpha`` is not a finite number > 0.
    TypeError
        If ``domain_size`` is not an integer or ``alpha`` is not a real number.
    """
    d = check_integer(domain_size, "domain_size", minimum=2)
    return 16.0 * np.log(d) / check_positive(alpha, "alpha") ** 2


def pmw_notes_epsilon0(*, n: float, alpha: float, num_queries: int, beta: float) -> float:
    """ε₀ = 16 ln(3k/β)/(nα): the per-round budget at which Lecture 4's Private MW is accurate at α (Claim 3).

    With probability ≥ 1 − β each of the ≤ 3k Laplace variables is below its scale times ln(3k/β);
    the query noise Lap(4/(nε₀)) is then below α/4 exactly when ε₀ ≥ 16 ln(3k/β)/(nα), so every
    update's gap keeps its sign and exceeds α/2 (Theorem 4.3, β written δ there). With
    N = :func:`pmw_update_count_bound` the curator spends ε = 2ε₀N, which is ε at
    α = :func:`pmw_notes_alpha`.

    Parameters
    ----------
    n : float
        The number of records n > 0.
    alpha : float
        The accuracy α > 0.
    num_queries : int
        k = |Q| ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).

    Returns
    -------
    float
        16 ln(3k/β)/(nα), the least ε₀ of the accuracy theorem.

    Raises
    ------
    ValueError
        If ``n`` or ``alpha`` is not a finite number > 0, ``num_queries`` < 1, or ``beta`` is not in (0, 1).
    TypeError
        If a number is not a real number, or ``num_queries`` is not an integer.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    beta = check_probability(beta, "beta")
    return float(16.0 * np.log(3 * k / beta) / (check_positive(n, "n") * check_positive(alpha, "alpha")))


def pmw_notes_alpha(*, n: float, epsilon: float, domain_size: int, num_queries: int, beta: float) -> float:
    """The smallest α at which Lecture 4's Private MW is ε-DP *and* accurate: α = (512 ln(3k/β) ln|𝒳|/(nε))^{1/3}.

    Accuracy needs ε₀ ≥ 16 ln(3k/β)/(nα) (:func:`pmw_notes_epsilon0`: all 3k Laplace variables small), privacy
    spends ε = 2ε₀N with N = 16 ln|𝒳|/α²; together ε ≥ 512 ln(3k/β) ln|𝒳|/(nα³)
    (Theorem 4.3, β written δ there). The count 3k holds for every N: k query noises, u ≤ min(N, k)
    released answers and at most min(u + 1, k) thresholds; the notes' route, 2N + k ≤ 3k, needs
    N ≤ k. The 512 belongs under the cube root, α = 8(…)^{1/3};
    the notes' statement of the theorem prints it outside (a slip).

    Parameters
    ----------
    n : float
        The number of records n > 0.
    epsilon : float
        The privacy parameter ε > 0.
    domain_size : int
        |𝒳| ≥ 2.
    num_queries : int
        k = |Q| ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).

    Returns
    -------
    float
        α = (512 ln(3k/β) ln|𝒳|/(nε))^{1/3}, normalised (it may exceed 1 when n is small).

    Raises
    ------
    ValueError
        If ``n`` or ``epsilon`` is not a finite number > 0, ``domain_size`` < 2, ``num_queries`` < 1, or
        ``beta`` is not in (0, 1).
    TypeError
        If a number is not a real number, or ``domain_size`` or ``num_queries`` is not an integer.
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

    Parameters
    ----------
    n : float
        The number of records n > 0.
    epsilon : float
        The privacy parameter ε > 0.
    domain_size : int
        |𝒳| ≥ 2.
    num_queries : int
        k = |Q| ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).

    Returns
    -------
    float
        (11/8)·α, normalised.

    Raises
    ------
    ValueError
        If ``n`` or ``epsilon`` is not a finite number > 0, ``domain_size`` < 2, ``num_queries`` < 1, or
        ``beta`` is not in (0, 1).
    TypeError
        If a number is not a real number, or ``domain_size`` or ``num_queries`` is not an integer.
    """
    return (
        11.0 / 8.0 * pmw_notes_alpha(n=n, epsilon=epsilon, domain_size=domain_size, num_queries=num_queries, beta=beta)
    )


def pmw_dwork_roth_requirement(
    alpha: float, *, n: float, epsilon: float, domain_size: int, num_queries: int, beta: float, delta: float = 0.0
) -> float:
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
    √8·α < 3α: the 3α level still covers every answer released while the c updates last, but the
    update-count argument, which wants released answers within α, is not covered by Theorem 4.15 as
    stated, so nothing guarantees the c updates outlast the stream (once spent, no query is answered).

    Parameters
    ----------
    alpha : float
        The accuracy α > 0 at which R is evaluated.
    n : float
        The number of records n > 0.
    epsilon : float
        The privacy parameter ε > 0.
    domain_size : int
        |𝒳| ≥ 2.
    num_queries : int
        k = |Q| ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    delta : float, optional
        0 (the default: Theorem 4.14) or δ ∈ (0, 1) (Theorem 4.15).

    Returns
    -------
    float
        R(α), normalised; the theorem holds at α when α ≥ R(α).

    Raises
    ------
    ValueError
        If ``alpha``, ``n`` or ``epsilon`` is not a finite number > 0, ``domain_size`` < 2, ``num_queries``
        < 1, or ``beta`` or a non-zero ``delta`` is not in (0, 1).
    TypeError
        If a number is not a real number, or ``domain_size`` or ``num_queries`` is not an integer.
    """
    a = check_positive(alpha, "alpha")
    big_a, p, c = _dwork_roth_terms(n, epsilon, domain_size, num_queries, beta, delta)
    return float(c * (big_a - 2 * np.log(a)) / a ** (p - 1))


def _dwork_roth_terms(
    n: float, epsilon: float, domain_size: int, num_queries: int, beta: float, delta: float
) -> tuple[float, float, float]:
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


def pmw_dwork_roth_alpha(
    *, n: float, epsilon: float, domain_size: int, num_queries: int, beta: float, delta: float = 0.0
) -> float:
    """The smallest α with α ≥ R(α) (:func:`pmw_dwork_roth_requirement`), in closed form.

    α − R(α) increases with α (R falls), so the crossing is unique. With A = ln k + ln(32L/β) and
    v = A − 2 ln α, the equation α = R(α) reads αᵖ = C·v, i.e. v·e^{pv/2} = e^{pA/2}/C, where
    p = 3, C = 36L/(εn) for δ = 0 and p = 2, C = (2 + 32√2)√(L ln(2/δ))/(εn) for δ > 0. So
    v = (2/p)·W((p/(2C))·e^{pA/2}) with Lambert's W, and α = e^{(A − v)/2}: exact, and a
    hundred times faster than root finding (notebook 06 evaluates it thousands of times).

    Parameters
    ----------
    n : float
        The number of records n > 0.
    epsilon : float
        The privacy parameter ε > 0.
    domain_size : int
        |𝒳| ≥ 2.
    num_queries : int
        k = |Q| ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    delta : float, optional
        0 (the default: Theorem 4.14) or δ ∈ (0, 1) (Theorem 4.15).

    Returns
    -------
    float
        The smallest α with α ≥ R(α), normalised (it may exceed 1 when n is small).

    Raises
    ------
    ValueError
        If ``n`` or ``epsilon`` is not a finite number > 0, ``domain_size`` < 2, ``num_queries`` < 1, or
        ``beta`` or a non-zero ``delta`` is not in (0, 1).
    TypeError
        If a number is not a real number, or ``domain_size`` or ``num_queries`` is not an integer.
    """
    big_a, p, c = _dwork_roth_terms(n, epsilon, domain_size, num_queries, beta, delta)
    v = (2 / p) * _lambert_w_of_exp(np.log(p / (2 * c)) + p * big_a / 2)
    alpha = float(np.exp((big_a - v) / 2))
    # the smallest α that *meets* α ≥ R(α): if rounding left α a hair below R(α), R(α) meets it (R falls)
    need = pmw_dwork_roth_requirement(
        alpha, n=n, epsilon=epsilon, domain_size=domain_size, num_queries=num_queries, beta=beta, delta=delta
    )
    return max(alpha, need)


def _lambert_w_of_exp(z: float) -> float:
    """W(eᶻ) for real z, without overflow: w + ln w = z, solved by Newton steps from a close start."""
    w = float(special.lambertw(np.exp(z)).real) if z < 500 else z - np.log(z)
    for _ in range(4 if z >= 500 else 0):
        w -= (w + np.log(w) - z) / (1 + 1 / w)
    return w


def pmw_dwork_roth_error_bound(
    *, n: float, epsilon: float, domain_size: int, num_queries: int, beta: float, delta: float = 0.0
) -> float:
    """3α at the smallest admissible α: the slides' accuracy theorem for OnlineMW (δ = 0 and δ > 0).

    Answers from the synthetic data err by ≤ T + α = 3α (threshold T = 2α); released answers
    by ≤ α. Up to constants this is (ln|𝒳| ln|Q|/(nε))^{1/3} for δ = 0 and
    (√(ln|𝒳| ln(1/δ)) ln|Q|/(nε))^{1/2} for δ > 0.

    Parameters
    ----------
    n : float
        The number of records n > 0.
    epsilon : float
        The privacy parameter ε > 0.
    domain_size : int
        |𝒳| ≥ 2.
    num_queries : int
        k = |Q| ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    delta : float, optional
        0 (the default: Theorem 4.14) or δ ∈ (0, 1) (Theorem 4.15).

    Returns
    -------
    float
        3α at α = :func:`pmw_dwork_roth_alpha`, normalised.

    Raises
    ------
    ValueError
        If ``n`` or ``epsilon`` is not a finite number > 0, ``domain_size`` < 2, ``num_queries`` < 1, or
        ``beta`` or a non-zero ``delta`` is not in (0, 1).
    TypeError
        If a number is not a real number, or ``domain_size`` or ``num_queries`` is not an integer.
    """
    return 3.0 * pmw_dwork_roth_alpha(
        n=n, epsilon=epsilon, domain_size=domain_size, num_queries=num_queries, beta=beta, delta=delta
    )


def replace_one_histogram_max_error_bound(
    *, domain_size: int, num_queries: int, beta: float, epsilon: float, n: float | None = None
) -> float:
    """The noisy histogram's error level when neighbours replace one record (notebook 06's relation).

    Replacing a record moves two counts by 1 each, so the histogram's L1 sensitivity is 2 and the
    ε-DP noisy histogram adds Lap(2/ε) per cell (:class:`dpcourse.pmw.NoisyHistogram`): the level of
    :func:`noisy_histogram_max_error_bound` (which is for Lap(1/ε), add/remove-one) at ε/2, i.e. the
    scale doubled. With probability 1 − β all |Q| answers are within it (normalised when n is given).

    Parameters
    ----------
    domain_size : int
        |𝒳| ≥ 1.
    num_queries : int
        |Q| ≥ 1.
    beta : float
        The failure probability β ∈ (0, 1).
    epsilon : float
        The privacy parameter ε > 0 of the whole histogram.
    n : float or None, optional
        The number of records n > 0; None (the default) gives the level in counts.

    Returns
    -------
    float
        The error level, in counts, or normalised (divided by n) when ``n`` is given.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``n`` is not a finite number > 0, ``domain_size`` or ``num_queries`` < 1, or
        ``beta`` is not in (0, 1).
    TypeError
        If a number is not a real number, or ``domain_size`` or ``num_queries`` is not an integer.
    """
    return noisy_histogram_max_error_bound(
        domain_size=domain_size, num_queries=num_queries, beta=beta, epsilon=check_epsilon(epsilon) / 2, n=n
    )
