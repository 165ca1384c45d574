"""Exact output probabilities: AboveThreshold, its proof steps, and the SVT variants of notebook 05.

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

The same conditioning gives the probability of any output pattern of the variants of Lyu,
Su & Li (:func:`variant_pattern_probability`), and with it each variant's counterexample and
its exact loss (:func:`counterexample`, :func:`exact_variant_loss`). The empirical side,
running a mechanism and testing its claim, is :mod:`dpcourse.audit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy import integrate, special

from ._validation import (
    check_answers_and_threshold,
    check_array,
    check_choice,
    check_integer,
    check_neighbouring_answers,
    check_positive,
)
from .data import DIRECTORY, load_table
from .svt import above_threshold_scales
from .svt_variants import VARIANTS

__all__ = [
    "PrivacyLoss",
    "ProofSteps",
    "above_threshold_pmf",
    "adversarial_pair",
    "counterexample",
    "exact_variant_loss",
    "generalized_above_threshold_pmf",
    "max_privacy_loss",
    "outcome_integrand",
    "privacy_loss",
    "proof_steps",
    "variant_pattern_probability",
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

    def _standard(self, x):
        return (np.asarray(x, dtype=float) - self.loc) / self.scale

    @staticmethod
    def _standard_cdf(u):
        with np.errstate(over="ignore"):
            return np.where(u > 0, 1.0 - 0.5 * np.exp(-u), 0.5 * np.exp(u))

    @staticmethod
    def _standard_ppf(p):
        p = np.asarray(p, dtype=float)
        return np.where(p > 0.5, -np.log(2 * (1 - p)), np.log(2 * p))

    def pdf(self, x):
        return 0.5 * np.exp(-abs(self._standard(x))) / self.scale

    def cdf(self, x):
        return self._standard_cdf(self._standard(x))

    def sf(self, x):
        return self._standard_cdf(-self._standard(x))

    def ppf(self, p):
        return (self._standard_ppf(p) * self.scale + self.loc)[()]

    def isf(self, p):
        return (-self._standard_ppf(p) * self.scale + self.loc)[()]

    def median(self):
        return self.ppf(0.5)

    def std(self):
        return float(np.sqrt(2 * self.scale * self.scale))


def _fast(noise):
    """A frozen ``scipy.stats.laplace`` as :class:`_Laplace` (the same numbers); any other noise unchanged."""
    dist = getattr(noise, "dist", None)
    if getattr(dist, "name", None) != "laplace" or not hasattr(noise, "kwds"):
        return noise
    # the Laplace has no shape parameters: stats.laplace(loc, scale), positionally or by keyword
    given = dict(zip(("loc", "scale"), noise.args)) | noise.kwds
    loc, scale = given.get("loc", 0.0), given.get("scale", 1.0)
    if not (np.isscalar(loc) and np.isscalar(scale) and np.isfinite(loc) and np.isfinite(scale) and scale > 0):
        return noise
    return _Laplace(float(loc), float(scale))


def _calibrated(epsilon, sensitivity):
    """AboveThreshold's threshold and query noise (:func:`dpcourse.svt.above_threshold_scales`), as :class:`_Laplace`."""
    threshold_scale, query_scale = above_threshold_scales(epsilon=epsilon, sensitivity=sensitivity)
    return _Laplace(0.0, threshold_scale), _Laplace(0.0, query_scale)


def _query_cdf_sf(query_noise, x):
    if query_noise is None:  # no noise: qᵢ < T + z exactly when x = T + z − qᵢ > 0
        below = (x > 0).astype(float)
        return below, 1.0 - below
    return query_noise.cdf(x), query_noise.sf(x)


def _outcome_matrix(z, q, t, query_noise):
    """Rows: nodes z; columns: Pr[⊥ᵏ⊤ | z] for k < m and Pr[⊥ᵐ | z] last."""
    cdf, sf = _query_cdf_sf(query_noise, t + z[:, None] - q)
    prefix = np.cumprod(cdf, axis=1)
    before = np.hstack([np.ones((z.size, 1)), prefix[:, :-1]])
    return np.hstack([before * sf, prefix[:, -1:]])


def _gauss_legendre(lo: float, hi: float, kinks, max_piece: float):
    """Nodes and weights on [lo, hi], split at every kink inside and into pieces no longer than ``max_piece``."""
    kinks = np.asarray(kinks, dtype=float)
    edges = np.unique(np.concatenate([[lo, hi], kinks[(kinks > lo) & (kinks < hi)]]))
    pieces = np.maximum(1, np.ceil(np.diff(edges) / max_piece).astype(int))
    cuts = np.concatenate([np.linspace(a, b, n + 1)[:-1] for a, b, n in zip(edges[:-1], edges[1:], pieces)] + [[hi]])
    half = np.diff(cuts) / 2
    mid = (cuts[:-1] + cuts[1:]) / 2
    return (mid[:, None] + half[:, None] * _NODES).ravel(), (half[:, None] * _WEIGHTS).ravel()


def _quadrature_nodes(q, t, threshold_noise, query_noise):
    shift = 0.0 if query_noise is None else query_noise.median()
    kinks = np.concatenate([[threshold_noise.median()], np.atleast_1d(q - t + shift)])
    scale = threshold_noise.std() if query_noise is None else min(threshold_noise.std(), query_noise.std())
    return _gauss_legendre(threshold_noise.ppf(_TAIL), threshold_noise.isf(_TAIL), kinks, scale)


def generalized_above_threshold_pmf(answers, *, threshold, threshold_noise, query_noise) -> np.ndarray:
    """Exact Pr[⊥ᵏ⊤] (k = 0 … m − 1) and Pr[⊥ᵐ] for AboveThreshold with any noise distributions.

    ``threshold_noise`` and ``query_noise`` are ``scipy.stats`` frozen continuous
    distributions, or ``None`` for no noise (then the probabilities are computed directly,
    without quadrature: no threshold noise means no integral).
    """
    q, t = check_answers_and_threshold(answers, threshold)
    threshold_noise, query_noise = _fast(threshold_noise), _fast(query_noise)
    if threshold_noise is None:
        return _outcome_matrix(np.zeros(1), q, t, query_noise)[0]
    z, w = _quadrature_nodes(q, t, threshold_noise, query_noise)
    pmf = (w * threshold_noise.pdf(z)) @ _outcome_matrix(z, q, t, query_noise)
    return np.clip(pmf, 0.0, None)


def above_threshold_pmf(answers, *, threshold, epsilon: float, sensitivity: float = 1.0) -> np.ndarray:
    """Exact output distribution of :func:`dpcourse.svt.above_threshold`, length m + 1.

    Entry k < m is Pr[output = ⊥ᵏ⊤]; the last entry is Pr[all m answers ⊥]. Accurate to
    about 1e-15 absolute (24-point Gauss–Legendre on smooth pieces no longer than the noise scale).

    Examples
    --------
    >>> p = above_threshold_pmf([0.0, 1.0, 2.0], threshold=1.0, epsilon=1.0)
    >>> p.shape, round(float(p.sum()), 12)
    ((4,), 1.0)
    """
    threshold_noise, query_noise = _calibrated(epsilon, sensitivity)
    return generalized_above_threshold_pmf(answers, threshold=threshold, threshold_noise=threshold_noise,
                                           query_noise=query_noise)


def outcome_integrand(z, outcome: int, answers, *, threshold, threshold_noise, query_noise) -> np.ndarray:
    """The integrand p_ρ(z)·Pr[outcome | ρ = z] of one outcome (k < m: ⊥ᵏ⊤; k = m: all ⊥), at points ``z``."""
    q, t = check_answers_and_threshold(answers, threshold)
    z = np.atleast_1d(check_array(z, "z", ndim=(0, 1)))
    outcome = check_integer(outcome, "outcome", minimum=0, maximum=q.size)
    threshold_noise, query_noise = _fast(threshold_noise), _fast(query_noise)
    return threshold_noise.pdf(z) * _outcome_matrix(z, q, t, query_noise)[:, outcome]


def privacy_loss(p, q) -> np.ndarray:
    """ln(p/q) per outcome: +∞ where only p is positive, −∞ where only q is, 0 where both are 0."""
    p = check_array(p, "p", ndim=(0, 1), min_size=1)
    q = check_array(q, "q", ndim=(0, 1), min_size=1)
    if p.shape != q.shape or np.any(p < 0) or np.any(q < 0):
        raise ValueError("p and q must be non-negative arrays of the same shape")
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = np.log(p) - np.log(q)
    return np.where((p == 0) & (q == 0), 0.0, loss)


@dataclass(frozen=True)
class PrivacyLoss:
    """The exact outcome probabilities on two neighbours and the privacy loss of each outcome."""

    pmf_d: np.ndarray
    pmf_d_prime: np.ndarray
    loss: np.ndarray
    worst_outcome: int
    max_loss: float


_CALIBRATED = "calibrated"


def max_privacy_loss(answers_d, answers_d_prime, *, threshold, epsilon: float, sensitivity: float = 1.0,
                     threshold_noise=_CALIBRATED, query_noise=_CALIBRATED) -> PrivacyLoss:
    """The largest |ln(Pr[M(D) = o]/Pr[M(D′) = o])| over all outcomes o of AboveThreshold.

    The answers on D and D′ must be neighbouring: |qᵢ(D) − qᵢ(D′)| ≤ Δ for every i.
    ``threshold_noise``/``query_noise`` default to AboveThreshold's calibration for ε and Δ;
    pass a ``scipy.stats`` distribution (or ``None`` for no noise) to study a broken variant.
    Outcomes with probability below 1e-12 on both sides are left out of the maximum, since
    their ratio is not resolved by the quadrature.
    """
    delta_q = check_positive(sensitivity, "sensitivity")
    a, b = check_neighbouring_answers(answers_d, answers_d_prime, delta_q)
    default_threshold, default_query = _calibrated(epsilon, delta_q)
    noise = dict(threshold=threshold,
                 threshold_noise=default_threshold if threshold_noise is _CALIBRATED else threshold_noise,
                 query_noise=default_query if query_noise is _CALIBRATED else query_noise)
    p = generalized_above_threshold_pmf(a, **noise)
    q = generalized_above_threshold_pmf(b, **noise)
    loss = privacy_loss(p, q)
    resolved = np.maximum(p, q) > 1e-12
    magnitude = np.where(resolved, np.abs(loss), 0.0)
    worst = int(np.argmax(magnitude))
    return PrivacyLoss(p, q, loss, worst, float(magnitude[worst]))


def adversarial_pair(num_queries: int, *, sensitivity: float = 1.0):
    """The lecture's hard case: q(D) = (0, …, 0, Δ) and q(D′) = (Δ, …, Δ, 0).

    On D′ every early query is Δ higher (more likely to stop early) and the last is Δ lower;
    the outcome ⊥^{m−1}⊤ is then as much less likely on D′ as the proof allows.
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


def proof_steps(answers_d, answers_d_prime, outcome: int, *, threshold: float, epsilon: float,
                sensitivity: float = 1.0, grid_points: int = 4001) -> ProofSteps:
    """Check the steps of the proof that Pr[M(D) = ⊥ᵏ⊤] ≤ e^ε Pr[M(D′) = ⊥ᵏ⊤] on concrete inputs."""
    delta_q = check_positive(sensitivity, "sensitivity")
    a, b = check_neighbouring_answers(answers_d, answers_d_prime, delta_q)
    k = check_integer(outcome, "outcome", minimum=0, maximum=a.size - 1)  # k of ⊥ᵏ⊤
    rho, nu = _calibrated(epsilon, delta_q)
    t = float(check_array(threshold, "threshold", ndim=0))
    z = np.linspace(rho.ppf(1e-9), rho.isf(1e-9), grid_points)

    exact = generalized_above_threshold_pmf(a, threshold=t, threshold_noise=rho, query_noise=nu)[k]
    # u = z + Δ: integrate p_ρ(u − Δ)·Pr[⊥ᵏ⊤ | ρ = u − Δ] over u with adaptive quadrature (independent of
    # the Gauss–Legendre rule above), breaking at the shifted kinks.
    kinks = np.sort(np.concatenate([[0.0], a - t])) + delta_q
    lo, hi = rho.ppf(_TAIL) + delta_q, rho.isf(_TAIL) + delta_q
    inside = kinks[(kinks > lo) & (kinks < hi)]
    shifted = sum(
        integrate.quad(lambda u: outcome_integrand(u - delta_q, k, a, threshold=t, threshold_noise=rho,
                                                   query_noise=nu)[0], left, right, epsabs=1e-14, epsrel=1e-12)[0]
        for left, right in zip(np.r_[lo, inside], np.r_[inside, hi])
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



# --- Notebook 05: the SVT variants of Lyu, Su & Li ---
def _laplace_cdf(x, scale):
    if scale == 0:  # no noise: q + 0 < T + z exactly when x = T + z − q > 0
        return (np.asarray(x) > 0).astype(float)
    x = np.asarray(x, dtype=float)
    half = 0.5 * np.exp(-np.abs(x) / scale)
    return np.where(x < 0, half, 1.0 - half)


def _pattern_items(pattern, m):
    items = list(pattern)
    if len(items) != m:
        raise ValueError(f"pattern must have one entry per query ({m}); got {len(items)}")
    kinds = []
    for item in items:
        if isinstance(item, (tuple, list)):
            lo, hi = float(item[0]), float(item[1])
            if not lo < hi:
                raise ValueError(f"a numeric event (lo, hi) needs lo < hi; got {item!r}")
            kinds.append(("number", lo, hi))
        elif np.isnan(item):
            kinds.append(("halted",))
        elif np.isposinf(item):
            kinds.append(("top",))
        elif np.isneginf(item):
            kinds.append(("bottom",))
        else:
            raise ValueError("pattern entries are -inf (⊥), inf (⊤), nan (not answered) or (lo, hi) for a released number")
    return kinds


def variant_pattern_probability(variant, answers, pattern, *, threshold, epsilon: float, c: int,
                                sensitivity: float = 1.0) -> float:
    """Exact probability that a variant's output matches ``pattern``, by quadrature over the threshold noise.

    ``pattern`` has one entry per query: −∞ (⊥), +∞ (⊤), NaN (not answered) or ``(lo, hi)``,
    the event that the released number lies in [lo, hi]. Given the threshold noise ρ = z the
    answers are independent; for Alg. 3 the released qᵢ + νᵢ is the compared value, so the event
    is νᵢ ∈ [max(Tᵢ + z, lo) − qᵢ, hi − qᵢ]; Alg. 2's re-drawn threshold makes each stretch up to
    and including a ⊤ an independent integral. A pattern the stopping rule cannot produce has
    probability 0.
    """
    v = VARIANTS[check_choice(variant, "variant", sorted(VARIANTS))] if isinstance(variant, str) else variant
    spec = v.spec(check_positive(epsilon, "epsilon"), check_integer(c, "c", minimum=1),
                  check_positive(sensitivity, "sensitivity"))
    q, t = check_answers_and_threshold(answers, threshold)
    kinds = _pattern_items(pattern, q.size)
    tops = np.cumsum([k[0] in ("top", "number") for k in kinds])
    for i, kind in enumerate(kinds):
        stopped = spec.c is not None and i > 0 and tops[i - 1] >= spec.c
        if (kind[0] == "halted") != stopped:
            return 0.0
        if kind[0] == "number" and spec.numeric == "none" or kind[0] == "top" and spec.numeric != "none":
            return 0.0
    live = [i for i, kind in enumerate(kinds) if kind[0] != "halted"]
    segments, current = [], []
    for i in live:
        current.append(i)
        if spec.redraw_scale is not None and kinds[i][0] in ("top", "number"):
            segments.append(current)
            current = []
    if current:
        segments.append(current)
    probability = 1.0
    for number, segment in enumerate(segments):
        scale_rho = spec.threshold_scale if number == 0 or spec.redraw_scale is None else spec.redraw_scale
        kinks = [0.0] + [q[i] - t[i] for i in segment]
        # a released-number event [lo, hi] bends the integrand where T + z meets either end
        kinks += [kinds[i][j] - t[i] for i in segment if kinds[i][0] == "number" for j in (1, 2)]
        piece = scale_rho if spec.query_scale == 0 else min(scale_rho, spec.query_scale)
        # ρ's density is below e^{-45} beyond ±45 scales: integrate there only
        z, w = _gauss_legendre(-45 * scale_rho, 45 * scale_rho, kinks, piece)
        integrand = 0.5 / scale_rho * np.exp(-np.abs(z) / scale_rho)
        for i in segment:
            kind, x = kinds[i], t[i] + z - q[i]
            below = _laplace_cdf(x, spec.query_scale)
            if kind[0] == "bottom":
                integrand = integrand * below
            elif kind[0] == "top":
                integrand = integrand * (1.0 - below)
            elif spec.numeric == "compared":
                upper = _laplace_cdf(kind[2] - q[i], spec.query_scale)
                lower = _laplace_cdf(np.maximum(t[i] + z, kind[1]) - q[i], spec.query_scale)
                integrand = integrand * np.clip(upper - lower, 0.0, None)
            else:
                released = _laplace_cdf(kind[2] - q[i], spec.numeric_scale) - _laplace_cdf(kind[1] - q[i], spec.numeric_scale)
                integrand = integrand * (1.0 - below) * released
        probability *= float(np.clip(w @ integrand, 0.0, 1.0))
    return probability


def counterexample(variant_key: str, num_queries: int, *, c: int = 1, sensitivity: float = 1.0):
    """A neighbouring pair and an output event that show each variant's worst case.

    Returns ``(answers_d, answers_d_prime, threshold, pattern)`` for
    :func:`variant_pattern_probability`:

    * alg1, svt_s: (0^{m−c}, Δ^c) / (Δ^{m−c}, 0^c) and ⊥^{m−c}⊤^c. The m − c early ⊥ are
      paid for once by the threshold noise (ε₁) and each of the c late ⊤ by its query noise
      (ε₂/c), so the loss tends to ε₁ + ε₂ = ε as m grows. For c = 1 this is the lecture's
      adversarial pair (0, …, 0, Δ) / (Δ, …, Δ, 0) and ⊥^{m−1}⊤; for c ≥ 2 that pair and
      event stay below ε (at c = 2 they tend to 0.75ε for Alg. 1), since only one ⊤ pays;
    * alg2: c blocks, each the lecture's pair and ⊥^{L−1}⊤ on its stretch of L ≈ m/c queries:
      Alg. 2 redraws the threshold after every ⊤, so each block is an AboveThreshold run of
      its own with ε/c, and the loss tends to ε;
    * alg5: the lecture's pair and ⊥^{m−1}⊤ (for any c): impossible on D′, the loss is infinite;
    * alg3: all answers 0 on D and Δ on D′, and ⊥^{m−1} followed by a released number ≤ T − Δ:
      the low number pins the threshold, and each ⊥ adds ε/(2c) of loss;
    * alg4: (0^{m−c}, Δ^c) / (Δ^{m−c}, 0^c) and ⊥^{m−c}⊤^c: the loss tends to (1 + 6c)ε/4;
    * alg6: the X shape (Δ^k, 0^k) / (0^k, Δ^k) with k = ⌊m/2⌋ and ⊤^k⊥^k: the loss grows with k.
    """
    m = check_integer(num_queries, "num_queries", minimum=1)
    c = check_integer(c, "c", minimum=1)
    delta_q = check_positive(sensitivity, "sensitivity")
    bottom, top = -np.inf, np.inf
    if variant_key == "alg5" or variant_key in ("alg1", "svt_s") and c == 1:
        d, d_prime = adversarial_pair(m, sensitivity=delta_q)
        return d, d_prime, 0.5 * delta_q, [bottom] * (m - 1) + [top]
    if variant_key == "alg2":
        if m < c:
            raise ValueError(f"num_queries must be an integer in [c, inf] for alg2's counterexample; got {num_queries!r}")
        sizes = np.full(c, m // c)
        sizes[0] += m % c
        blocks = [adversarial_pair(int(size), sensitivity=delta_q) for size in sizes]
        pattern = [x for size in sizes for x in [bottom] * (int(size) - 1) + [top]]
        return np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks]), 0.5 * delta_q, pattern
    if variant_key == "alg3":
        return np.zeros(m), np.full(m, delta_q), 0.0, [bottom] * (m - 1) + [(-1e9 * delta_q, -1.0 * delta_q)]
    if variant_key in ("alg1", "svt_s", "alg4"):
        k = max(m - c, 0)
        d = np.r_[np.zeros(k), np.full(m - k, delta_q)]
        d_prime = np.r_[np.full(k, delta_q), np.zeros(m - k)]
        return d, d_prime, 0.5 * delta_q, [bottom] * k + [top] * (m - k)
    if variant_key == "alg6":
        k = max(m // 2, 1)
        d = np.r_[np.full(k, delta_q), np.zeros(m - k)]
        d_prime = np.r_[np.zeros(k), np.full(m - k, delta_q)]
        return d, d_prime, 0.5 * delta_q, [top] * k + [bottom] * (m - k)
    raise ValueError(f"variant_key must be one of 'alg1' … 'alg6', 'svt_s'; got {variant_key!r}")


def exact_variant_loss(variant_key: str, num_queries: int, *, epsilon: float, c: int = 1,
                       sensitivity: float = 1.0) -> tuple[float, float, float]:
    """(loss, Pr on D, Pr on D′) of :func:`counterexample`'s event, exactly; loss = ∞ when Pr on D′ is 0.

    The losses notebook 05 and its panel show at ε = 1 come from the shipped table
    (:data:`VARIANT_LOSS_TABLE`, the same numbers): an entry is used only when the variant's noise
    and the counterexample it was computed from match today's exactly.
    """
    stored = _stored_variant_loss(variant_key, num_queries, epsilon, c, sensitivity)
    if stored is not None:
        return stored
    return _computed_variant_loss(variant_key, num_queries, epsilon=epsilon, c=c, sensitivity=sensitivity)


def _computed_variant_loss(variant_key, num_queries, *, epsilon, c, sensitivity):
    d, d_prime, threshold, pattern = counterexample(variant_key, num_queries, c=c, sensitivity=sensitivity)
    kw = dict(threshold=threshold, epsilon=epsilon, c=c, sensitivity=sensitivity)
    p = variant_pattern_probability(variant_key, d, pattern, **kw)
    q = variant_pattern_probability(variant_key, d_prime, pattern, **kw)
    return (float(privacy_loss(np.array([p]), np.array([q]))[0]) if p > 0 else 0.0), p, q


# --------------------------------------------------------------------------------------
# Shipped exact losses: every variant's counterexample at ε = 1, as notebook 05 and its panel show them
# --------------------------------------------------------------------------------------
VARIANT_LOSS_TABLE = DIRECTORY / "variant_losses.npz"
VARIANT_LOSS_TABLE_MAX_QUERIES = 42  # notebook 05's Alg. 4 curves reach m = c + 39 for c ≤ 3; the panel m ≤ 40
VARIANT_LOSS_TABLE_CS = (1, 2, 3, 4, 5)  # the panel's c slider
VARIANT_LOSS_TABLE_LONG = 150  # notebook 05: Alg. 1, Alg. 2 and SVT-S reach ε at m = 150, c = 1, 2, 3


def _variant_loss_fingerprint(variant_key, num_queries, epsilon, c, sensitivity) -> np.ndarray:
    """Numbers that change if the variant's noise or its counterexample does: ε, Δ, the noise scales and
    stopping rule, the threshold, and weighted sums of both inputs and of the event."""
    spec = VARIANTS[variant_key].spec(epsilon, c, sensitivity)
    d, d_prime, threshold, pattern = counterexample(variant_key, num_queries, c=c, sensitivity=sensitivity)
    codes = np.array([x[0] + 2 * x[1] if isinstance(x, (tuple, list)) else {-np.inf: 1.0, np.inf: 2.0}.get(x, 3.0)
                      for x in pattern])
    weights = np.arange(1.0, d.size + 1)
    return np.array([num_queries, c, epsilon, sensitivity, spec.threshold_scale, spec.query_scale,
                     spec.redraw_scale or 0.0, spec.c or 0, ("none", "compared", "fresh").index(spec.numeric),
                     spec.numeric_scale, threshold, d @ weights, d_prime @ weights, codes @ weights])


@lru_cache(maxsize=1)
def _variant_loss_table() -> dict:
    table = load_table(VARIANT_LOSS_TABLE.name)
    return dict(zip(table["keys"].tolist(), table["rows"])) if table else {}


def _stored_variant_loss(variant_key, num_queries, epsilon, c, sensitivity):
    """(loss, p, p′) from the shipped table when an entry matches exactly; None otherwise (then it is computed)."""
    if not isinstance(variant_key, str) or variant_key not in VARIANTS or epsilon != 1.0 or sensitivity != 1.0:
        return None
    entry = _variant_loss_table().get(f"{variant_key}-{num_queries}-{c}")
    if entry is None or not np.array_equal(entry[3:], _variant_loss_fingerprint(variant_key, num_queries, epsilon, c,
                                                                                sensitivity)):
        return None
    return float(entry[0]), float(entry[1]), float(entry[2])


def write_variant_loss_table(path: Path = VARIANT_LOSS_TABLE, max_queries: int = VARIANT_LOSS_TABLE_MAX_QUERIES,
                             cs=VARIANT_LOSS_TABLE_CS, long: int | None = VARIANT_LOSS_TABLE_LONG) -> Path:
    """Compute :func:`exact_variant_loss` at ε = 1, Δ = 1 for every variant, every c in ``cs`` and every m up to
    ``max_queries`` (m ≥ c for Alg. 2), and for Alg. 1, Alg. 2 and SVT-S at m = ``long``, c = 1, 2, 3; store
    each (loss, p, p′) with its fingerprint. ``python -m dpcourse.data`` runs this; ``tests/test_exact.py``
    recomputes part of it and compares."""
    cases = [(key, m, c) for key in VARIANTS for c in cs for m in range(1, max_queries + 1) if key != "alg2" or m >= c]
    if long is not None:
        cases += [(key, long, c) for key in ("alg1", "alg2", "svt_s") for c in (1, 2, 3)]
    rows = [np.concatenate([_computed_variant_loss(key, m, epsilon=1.0, c=c, sensitivity=1.0),
                            _variant_loss_fingerprint(key, m, 1.0, c, 1.0)]) for key, m, c in cases]
    path.parent.mkdir(parents=True, exist_ok=True)
    # one array of keys and one of rows (loss, p, p′, fingerprint …): a zip entry per case would take longer to load
    np.savez_compressed(path, keys=np.array([f"{key}-{m}-{c}" for key, m, c in cases]), rows=np.vstack(rows))
    return path
