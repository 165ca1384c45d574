"""Exact output probabilities of AboveThreshold and the steps of its privacy proof.

The output of AboveThreshold on m queries is ⊥ᵏ⊤ for some k ∈ {0, …, m − 1}, or ⊥ᵐ.
Conditioning on the threshold noise ρ = z (Lecture 3, "The analysis of AboveThreshold"),

    Pr[⊥ᵏ⊤] = ∫ p_ρ(z) · ∏_{i<k} F(T + z − qᵢ) · (1 − F(T + z − q_k)) dz,
    Pr[⊥ᵐ]  = ∫ p_ρ(z) · ∏_{i<m} F(T + z − qᵢ) dz,

with F the CDF of the query noise. This module evaluates all m + 1 integrals at once by
Gauss–Legendre quadrature on segments that end at every kink of the integrand (z = 0
for the Laplace density of ρ, z = qᵢ − T for each Laplace CDF), so that each piece is
smooth and the rule converges to machine precision; the prefix products ∏_{i<k} F are
shared across k. The privacy loss of an outcome o between neighbours D, D′ is
ln(Pr[M(D) = o] / Pr[M(D′) = o]); ε-DP means it never exceeds ε in absolute value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from .._validation import (
    ArrayLike,
    check_answers_and_threshold,
    check_array,
    check_integer,
    check_neighbouring_answers,
    check_positive,
)
from .batch import above_threshold_scales

__all__ = [
    "PrivacyLoss",
    "ProofSteps",
    "above_threshold_pmf",
    "adversarial_pair",
    "generalized_above_threshold_pmf",
    "max_privacy_loss",
    "outcome_integrand",
    "privacy_loss",
    "proof_steps",
]

_NODES, _WEIGHTS = special.roots_legendre(24)
_TAIL = 1e-18  # threshold-noise mass left out on each side


class _Laplace:
    """Lap(loc, scale) with the methods the quadrature calls, computed exactly as ``scipy.stats.laplace``
    computes them (standardise, the same formulas, rescale), so the numbers are the same.

    A frozen ``scipy.stats`` distribution costs about half a millisecond to create and tens of
    microseconds per call in argument handling; notebook 04 evaluates hundreds of output
    distributions, each a dozen calls. :func:`_fast` swaps a frozen Laplace for this.
    """

    __slots__ = ("loc", "scale")

    def __init__(self, loc: float, scale: float):
        self.loc, self.scale = loc, scale

    def _standard(self, x: ArrayLike) -> np.ndarray:
        return (np.asarray(x, dtype=float) - self.loc) / self.scale

    @staticmethod
    def _standard_cdf(u: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.where(u > 0, 1.0 - 0.5 * np.exp(-u), 0.5 * np.exp(u))

    @staticmethod
    def _standard_ppf(probability: ArrayLike) -> np.ndarray:
        p = np.asarray(probability, dtype=float)
        return np.where(p > 0.5, -np.log(2 * (1 - p)), np.log(2 * p))

    def pdf(self, x: ArrayLike) -> np.ndarray:
        return 0.5 * np.exp(-abs(self._standard(x))) / self.scale

    def cdf(self, x: ArrayLike) -> np.ndarray:
        return self._standard_cdf(self._standard(x))

    def sf(self, x: ArrayLike) -> np.ndarray:
        return self._standard_cdf(-self._standard(x))

    def cdf_sf(self, x: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """``(cdf(x), sf(x))`` from one exponential: each is the tail ½e^(−|u|) on its side, 1 minus it on the other."""
        u = self._standard(x)
        tail = 0.5 * np.exp(-np.abs(u))
        above = u > 0
        return np.where(above, 1.0 - tail, tail), np.where(above, tail, 1.0 - tail)

    def ppf(self, p: ArrayLike) -> float | np.ndarray:
        return (self._standard_ppf(p) * self.scale + self.loc)[()]

    def isf(self, p: ArrayLike) -> float | np.ndarray:
        return (-self._standard_ppf(p) * self.scale + self.loc)[()]

    def median(self) -> float | np.ndarray:
        return self.ppf(0.5)

    def std(self) -> float:
        return float(np.sqrt(2 * self.scale * self.scale))


def _fast(noise: Any) -> Any:
    """A frozen ``scipy.stats.laplace`` as :class:`_Laplace` (the same numbers); any other noise unchanged."""
    dist = getattr(noise, "dist", None)
    if getattr(dist, "name", None) != "laplace" or not hasattr(noise, "kwds"):
        return noise
    # the Laplace has no shape parameters: stats.laplace(loc, scale), positionally or by keyword
    given = dict(zip(("loc", "scale"), noise.args, strict=False)) | noise.kwds
    loc, scale = given.get("loc", 0.0), given.get("scale", 1.0)
    scalars = np.isscalar(loc) and np.isscalar(scale)  # a bool, so that mypy does not narrow loc to str | bytes | …
    if not (scalars and np.isfinite(loc) and np.isfinite(scale) and scale > 0):
        return noise
    return _Laplace(float(loc), float(scale))


def _calibrated(epsilon: float, sensitivity: float) -> tuple[_Laplace, _Laplace]:
    """AboveThreshold's threshold and query noise, as :class:`_Laplace`.

    The scales are :func:`dpcourse.svt.above_threshold_scales`.
    """
    threshold_scale, query_scale = above_threshold_scales(epsilon=epsilon, sensitivity=sensitivity)
    return _Laplace(0.0, threshold_scale), _Laplace(0.0, query_scale)


def _query_cdf_sf(query_noise: Any, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if query_noise is None:  # no noise: qᵢ < T + z exactly when x = T + z − qᵢ > 0
        below = (x > 0).astype(float)
        return below, 1.0 - below
    if isinstance(query_noise, _Laplace):
        return query_noise.cdf_sf(x)
    return query_noise.cdf(x), query_noise.sf(x)


def _outcome_matrix(z: np.ndarray, q: np.ndarray, t: np.ndarray, query_noise: Any) -> np.ndarray:
    """Rows: nodes z; columns: Pr[⊥ᵏ⊤ | z] for k < m and Pr[⊥ᵐ | z] last."""
    cdf, sf = _query_cdf_sf(query_noise, t + z[:, None] - q)
    prefix = np.cumprod(cdf, axis=1)
    before = np.hstack([np.ones((z.size, 1)), prefix[:, :-1]])
    return np.hstack([before * sf, prefix[:, -1:]])


def _gauss_legendre(lo: ArrayLike, hi: ArrayLike, kinks: ArrayLike, max_piece: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on [lo, hi], split at every kink inside and into pieces no longer than ``max_piece``."""
    kinks = np.asarray(kinks, dtype=float)
    edges = np.unique(np.concatenate([[lo, hi], kinks[(kinks > lo) & (kinks < hi)]]))
    pieces = np.maximum(1, np.ceil(np.diff(edges) / max_piece).astype(int))
    # each stretch [a, b] cut into n equal pieces, a + j·(b − a)/n for j < n, all at once (no loop over stretches)
    first = np.repeat(np.cumsum(pieces) - pieces, pieces)
    step = np.repeat(np.diff(edges) / pieces, pieces)
    cuts = np.append(np.repeat(edges[:-1], pieces) + (np.arange(first.size) - first) * step, hi)
    half = np.diff(cuts) / 2
    mid = (cuts[:-1] + cuts[1:]) / 2
    return (mid[:, None] + half[:, None] * _NODES).ravel(), (half[:, None] * _WEIGHTS).ravel()


def _quadrature_nodes(
    q: np.ndarray, t: np.ndarray, threshold_noise: Any, query_noise: Any
) -> tuple[np.ndarray, np.ndarray]:
    shift = 0.0 if query_noise is None else query_noise.median()
    kinks = np.concatenate([[threshold_noise.median()], np.atleast_1d(q - t + shift)])
    scale = threshold_noise.std() if query_noise is None else min(threshold_noise.std(), query_noise.std())
    return _gauss_legendre(threshold_noise.ppf(_TAIL), threshold_noise.isf(_TAIL), kinks, scale)


def generalized_above_threshold_pmf(
    answers: ArrayLike, *, threshold: ArrayLike, threshold_noise: Any, query_noise: Any
) -> np.ndarray:
    """Exact Pr[⊥ᵏ⊤] (k = 0 … m − 1) and Pr[⊥ᵐ] for AboveThreshold with any noise distributions.

    With no threshold noise the probabilities are computed directly, without quadrature: no threshold
    noise means no integral.

    Parameters
    ----------
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D).
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    threshold_noise : scipy.stats frozen continuous distribution or None
        The distribution of ρ, added to the threshold; ``None`` for no noise.
    query_noise : scipy.stats frozen continuous distribution or None
        The distribution of each νᵢ, added to the answers; ``None`` for no noise.

    Returns
    -------
    numpy.ndarray
        Shape ``(m + 1,)``: entry k < m is Pr[⊥ᵏ⊤], the last Pr[⊥ᵐ]; they sum to 1.

    Raises
    ------
    ValueError
        If ``answers`` is not a non-empty 1-D array of finite numbers or ``threshold`` is neither one finite
        number nor one per query.
    TypeError
        If ``answers`` or ``threshold`` is not numeric.
    """
    q, t = check_answers_and_threshold(answers, threshold)
    threshold_noise, query_noise = _fast(threshold_noise), _fast(query_noise)
    if threshold_noise is None:
        return _outcome_matrix(np.zeros(1), q, t, query_noise)[0]
    z, w = _quadrature_nodes(q, t, threshold_noise, query_noise)
    pmf = (w * threshold_noise.pdf(z)) @ _outcome_matrix(z, q, t, query_noise)
    return np.clip(pmf, 0.0, None)


def above_threshold_pmf(
    answers: ArrayLike, *, threshold: ArrayLike, epsilon: float, sensitivity: float = 1.0
) -> np.ndarray:
    """Exact output distribution of :func:`dpcourse.svt.above_threshold`, length m + 1.

    Accurate to about 1e-15 absolute (24-point Gauss–Legendre on smooth pieces no longer than the
    noise scale).

    Parameters
    ----------
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D).
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    epsilon : float
        The privacy parameter ε, > 0.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).

    Returns
    -------
    numpy.ndarray
        Shape ``(m + 1,)``: entry k < m is Pr[output = ⊥ᵏ⊤]; the last entry is Pr[all m answers ⊥].

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite number > 0, ``answers`` is not a non-empty 1-D array
        of finite numbers, or ``threshold`` is neither one finite number nor one per query.
    TypeError
        If a parameter is not a number (or array of numbers).

    Examples
    --------
    >>> p = above_threshold_pmf([0.0, 1.0, 2.0], threshold=1.0, epsilon=1.0)
    >>> p.shape, round(float(p.sum()), 12)
    ((4,), 1.0)
    """
    threshold_noise, query_noise = _calibrated(epsilon, sensitivity)
    return generalized_above_threshold_pmf(
        answers, threshold=threshold, threshold_noise=threshold_noise, query_noise=query_noise
    )


def outcome_integrand(
    z: ArrayLike,
    outcome: int,
    answers: ArrayLike,
    *,
    threshold: ArrayLike,
    threshold_noise: Any,
    query_noise: Any,
) -> np.ndarray:
    """The integrand p_ρ(z)·Pr[outcome | ρ = z] of one outcome (k < m: ⊥ᵏ⊤; k = m: all ⊥), at points ``z``.

    Parameters
    ----------
    z : float or array_like, shape (n,)
        Values of the threshold noise ρ, finite.
    outcome : int
        The outcome k, in [0, m]: ⊥ᵏ⊤ for k < m, all ⊥ for k = m.
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D).
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    threshold_noise : scipy.stats frozen continuous distribution
        The distribution of ρ (its density p_ρ is the integrand's first factor).
    query_noise : scipy.stats frozen continuous distribution or None
        The distribution of each νᵢ; ``None`` for no noise.

    Returns
    -------
    numpy.ndarray
        The integrand at each point, shape ``(n,)`` (``(1,)`` for one number).

    Raises
    ------
    ValueError
        If ``answers`` is not a non-empty 1-D array of finite numbers, ``threshold`` is neither one finite
        number nor one per query, ``z`` is not a non-empty array of finite numbers of dimension 0 or 1, or
        ``outcome`` is not an integer in [0, m].
    TypeError
        If ``answers``, ``threshold`` or ``z`` is not numeric, or ``outcome`` is not an integer.
    """
    q, t = check_answers_and_threshold(answers, threshold)
    z = np.atleast_1d(check_array(z, "z", ndim=(0, 1)))
    outcome = check_integer(outcome, "outcome", minimum=0, maximum=q.size)
    threshold_noise, query_noise = _fast(threshold_noise), _fast(query_noise)
    return threshold_noise.pdf(z) * _outcome_matrix(z, q, t, query_noise)[:, outcome]


def privacy_loss(p: ArrayLike, q: ArrayLike) -> np.ndarray:
    """ln(p/q) per outcome: +∞ where only p is positive, −∞ where only q is, 0 where both are 0.

    Parameters
    ----------
    p : float or array_like, shape (n,)
        The outcome probabilities on D, finite and ≥ 0.
    q : float or array_like, shape (n,)
        The outcome probabilities on D′, the same shape, finite and ≥ 0.

    Returns
    -------
    numpy.ndarray
        The privacy loss of each outcome, shaped like ``p``.

    Raises
    ------
    ValueError
        If ``p`` or ``q`` is empty, has a non-finite or negative entry, or has more than one dimension, or
        their shapes differ.
    TypeError
        If ``p`` or ``q`` is not numeric.
    """
    p = check_array(p, "p", ndim=(0, 1), min_size=1)
    q = check_array(q, "q", ndim=(0, 1), min_size=1)
    if p.shape != q.shape or np.any(p < 0) or np.any(q < 0):
        raise ValueError("p and q must be non-negative arrays of the same shape")
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.log(p) - np.log(q)
    return np.where((p == 0) & (q == 0), 0.0, loss)


@dataclass(frozen=True)
class PrivacyLoss:
    """The exact outcome probabilities on two neighbours and the privacy loss of each outcome.

    Attributes
    ----------
    pmf_d : numpy.ndarray
        Pr[M(D) = o] for each outcome o, shape ``(m + 1,)`` (indexed as :func:`above_threshold_pmf`).
    pmf_d_prime : numpy.ndarray
        Pr[M(D′) = o], the same shape.
    loss : numpy.ndarray
        ln(Pr[M(D) = o]/Pr[M(D′) = o]) for each outcome (see :func:`privacy_loss`).
    worst_outcome : int
        The outcome of largest |loss| among those resolved (probability above 1e-12 on one side at least).
    max_loss : float
        That largest |loss|.
    """

    pmf_d: np.ndarray
    pmf_d_prime: np.ndarray
    loss: np.ndarray
    worst_outcome: int
    max_loss: float


_CALIBRATED = "calibrated"


def max_privacy_loss(
    answers_d: ArrayLike,
    answers_d_prime: ArrayLike,
    *,
    threshold: ArrayLike,
    epsilon: float,
    sensitivity: float = 1.0,
    threshold_noise: Any = _CALIBRATED,
    query_noise: Any = _CALIBRATED,
) -> PrivacyLoss:
    """The largest |ln(Pr[M(D) = o]/Pr[M(D′) = o])| over all outcomes o of AboveThreshold.

    The answers on D and D′ must be neighbouring: |qᵢ(D) − qᵢ(D′)| ≤ Δ for every i.
    ``threshold_noise``/``query_noise`` default to AboveThreshold's calibration for ε and Δ;
    pass a ``scipy.stats`` distribution (or ``None`` for no noise) to study a broken variant.
    Outcomes with probability below 1e-12 on both sides are left out of the maximum, since
    their ratio is not resolved by the quadrature.

    Parameters
    ----------
    answers_d : array_like, shape (m,)
        The query answers on D, finite.
    answers_d_prime : array_like, shape (m,)
        The same queries' answers on D′, each within Δ of its answer on D.
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    epsilon : float
        The privacy parameter ε of the calibration, > 0 (checked even when both noises are given).
    sensitivity : float, optional
        The sensitivity Δ, > 0 (default 1).
    threshold_noise : scipy.stats frozen continuous distribution or None, optional
        The distribution of ρ; by default Lap(2Δ/ε), AboveThreshold's own.
    query_noise : scipy.stats frozen continuous distribution or None, optional
        The distribution of each νᵢ; by default Lap(4Δ/ε), AboveThreshold's own.

    Returns
    -------
    PrivacyLoss
        Both output distributions, the loss of every outcome, and the worst outcome and its |loss|.

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not a finite number > 0, the answers are not two non-empty 1-D
        arrays of finite numbers of the same shape that differ by at most Δ in every query, or ``threshold`` is
        neither one finite number nor one per query.
    TypeError
        If a parameter is not a number (or array of numbers).
    """
    delta_q = check_positive(sensitivity, "sensitivity")
    a, b = check_neighbouring_answers(answers_d, answers_d_prime, delta_q)
    default_threshold, default_query = _calibrated(epsilon, delta_q)
    rho = default_threshold if threshold_noise is _CALIBRATED else threshold_noise
    nu = default_query if query_noise is _CALIBRATED else query_noise
    p = generalized_above_threshold_pmf(a, threshold=threshold, threshold_noise=rho, query_noise=nu)
    q = generalized_above_threshold_pmf(b, threshold=threshold, threshold_noise=rho, query_noise=nu)
    loss = privacy_loss(p, q)
    resolved = np.maximum(p, q) > 1e-12
    magnitude = np.where(resolved, np.abs(loss), 0.0)
    worst = int(np.argmax(magnitude))
    return PrivacyLoss(p, q, loss, worst, float(magnitude[worst]))


def adversarial_pair(num_queries: int, *, sensitivity: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The notebook's own hard case (not in the lectures): q(D) = (0, …, 0, Δ) and q(D′) = (Δ, …, Δ, 0).

    On D′ every early query is Δ higher (more likely to stop early) and the last is Δ lower;
    the outcome ⊥^{m−1}⊤ is then as much less likely on D′ as the proof allows.

    Parameters
    ----------
    num_queries : int
        The number m of queries, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ, > 0 (default 1).

    Returns
    -------
    tuple of numpy.ndarray
        ``(answers_d, answers_d_prime)``, each of shape ``(m,)``.

    Raises
    ------
    ValueError
        If ``num_queries`` is not an integer ≥ 1 or ``sensitivity`` is not a finite number > 0.
    TypeError
        If ``num_queries`` is not an integer or ``sensitivity`` is not a real number.
    """
    m = check_integer(num_queries, "num_queries", minimum=1)
    sensitivity = check_positive(sensitivity, "sensitivity")
    d = np.zeros(m)
    d[-1] = sensitivity
    d_prime = np.full(m, sensitivity)
    d_prime[-1] = 0.0
    return d, d_prime


@dataclass(frozen=True)
class ProofSteps:
    """Each inequality of the AboveThreshold proof, evaluated on a grid of threshold-noise values z.

    Attributes
    ----------
    change_of_variables_gap : float
        |∫ integrand(z) dz − ∫ integrand(u − Δ) du|: the substitution u = z + Δ changes nothing.
    threshold_factor : float
        max_z p_ρ(z − Δ)/p_ρ(z), which the proof bounds by e^{ε/2}.
    bottom_factor_min_gain : float
        min over z and i < k of F(T + z + Δ − qᵢ(D′)) − F(T + z − qᵢ(D)) ≥ 0: the ⊥ factors only grow.
    top_factor : float
        max_z Pr[q_k(D) + ν ≥ T + z] / Pr[q_k(D′) + ν ≥ T + z + Δ], bounded by e^{ε/2} via q̃ = q_k + Δ.
    half_epsilon_bound : float
        e^{ε/2}.
    """

    change_of_variables_gap: float
    threshold_factor: float
    bottom_factor_min_gain: float
    top_factor: float
    half_epsilon_bound: float


def proof_steps(
    answers_d: ArrayLike,
    answers_d_prime: ArrayLike,
    outcome: int,
    *,
    threshold: float,
    epsilon: float,
    sensitivity: float = 1.0,
    grid_points: int = 4001,
) -> ProofSteps:
    """Check the steps of the proof that Pr[M(D) = ⊥ᵏ⊤] ≤ e^ε Pr[M(D′) = ⊥ᵏ⊤] on concrete inputs.

    The noises are AboveThreshold's own for ε and Δ; the factors are maxima over ``grid_points`` values of z
    spread evenly between the threshold noise's 1e-9 and 1 − 1e-9 quantiles.

    Parameters
    ----------
    answers_d : array_like, shape (m,)
        The query answers on D, finite.
    answers_d_prime : array_like, shape (m,)
        The same queries' answers on D′, each within Δ of its answer on D.
    outcome : int
        The k of the outcome ⊥ᵏ⊤, in [0, m − 1].
    threshold : float
        The threshold T, one finite number.
    epsilon : float
        The privacy parameter ε, > 0.
    sensitivity : float, optional
        The sensitivity Δ, > 0 (default 1).
    grid_points : int, optional
        The number of values of z the factors are maximised over, ≥ 1 (default 4001).

    Returns
    -------
    ProofSteps
        Each step's number, beside e^{ε/2}.

    Raises
    ------
    ValueError
        If ``sensitivity`` or ``epsilon`` is not a finite number > 0, the answers are not two non-empty 1-D
        arrays of finite numbers of the same shape that differ by at most Δ in every query, ``outcome`` is not
        an integer in [0, m − 1], ``threshold`` is not one finite number, or ``grid_points`` is not an
        integer ≥ 1.
    TypeError
        If a parameter is not a number (or array of numbers) of its kind.
    """
    delta_q = check_positive(sensitivity, "sensitivity")
    a, b = check_neighbouring_answers(answers_d, answers_d_prime, delta_q)
    k = check_integer(outcome, "outcome", minimum=0, maximum=a.size - 1)  # k of ⊥ᵏ⊤
    rho, nu = _calibrated(epsilon, delta_q)
    t = float(check_array(threshold, "threshold", ndim=0))
    z = np.linspace(rho.ppf(1e-9), rho.isf(1e-9), check_integer(grid_points, "grid_points", minimum=1))

    exact = generalized_above_threshold_pmf(a, threshold=t, threshold_noise=rho, query_noise=nu)[k]
    # u = z + Δ: integrate p_ρ(u − Δ)·Pr[⊥ᵏ⊤ | ρ = u − Δ] over u with adaptive quadrature (independent of
    # the Gauss–Legendre rule above), breaking at the shifted kinks.
    kinks = np.sort(np.concatenate([[0.0], a - t])) + delta_q
    lo, hi = rho.ppf(_TAIL) + delta_q, rho.isf(_TAIL) + delta_q
    inside = kinks[(kinks > lo) & (kinks < hi)]
    from scipy import integrate  # on first use: notebooks that never check a proof need not import it (0.2 s)

    shifted = sum(
        integrate.quad(
            lambda u: outcome_integrand(u - delta_q, k, a, threshold=t, threshold_noise=rho, query_noise=nu)[0],
            left,
            right,
            epsabs=1e-14,
            epsrel=1e-12,
        )[0]
        for left, right in zip(np.r_[lo, inside], np.r_[inside, hi], strict=False)
    )
    threshold_factor = float(np.max(rho.pdf(z - delta_q) / rho.pdf(z)))
    gain = nu.cdf(t + z[:, None] + delta_q - b[:k]) - nu.cdf(t + z[:, None] - a[:k])
    top = nu.sf(t + z - a[k]) / nu.sf(t + z + delta_q - b[k])
    return ProofSteps(
        change_of_variables_gap=float(abs(exact - shifted)),
        threshold_factor=threshold_factor,
        bottom_factor_min_gain=float(gain.min()) if k else 0.0,
        top_factor=float(np.max(top)),
        half_epsilon_bound=float(np.exp(epsilon / 2)),
    )
