"""The sparse vector technique: AboveThreshold, SparseVector and NumericSparse.

Lecture 3, "When there is a large number of queries, but only a few that are interesting".
Each algorithm comes in two forms:

* a **batch** form for a fixed list of query answers, vectorised over trials: one
  ``(trials, m)`` draw of query noise and one draw of threshold noise per trial;
* an **online** form for adaptively chosen queries, answering one at a time (Private
  Multiplicative Weights uses these), which refuses further queries with
  :class:`HaltedError` once it has halted (in :mod:`dpcourse.svt.online`, re-exported here).

Outputs use the one coding of :mod:`dpcourse.svt.variants`: :data:`TOP` (+∞) for ⊤,
:data:`BOTTOM` (−∞) for ⊥, :data:`HALTED` (NaN) for a query that was not answered because the
algorithm had halted, and a finite number for a released value; :func:`dpcourse.svt.variants.format_outputs`
prints a row as ⊥/⊤/·/number.

Noise mechanisms are ``scipy.stats`` frozen continuous distributions (``stats.laplace(scale=b)``),
so that the sampler here and the exact probabilities in :mod:`dpcourse.audit` share one
description of the noise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import ArrayLike, RngLike, as_generator, check_answers_and_threshold, check_integer, check_trials
from ..mechanisms.noise import laplace_maximum
from .specs import BOTTOM, HALTED, TOP
from .theory import above_threshold_scales, numeric_sparse_scales, sparse_vector_scales

__all__ = [
    "NONE_ABOVE",
    "AboveThresholdResult",
    "NumericSparseResult",
    "SparseVectorResult",
    "above_threshold",
    "above_threshold_noise",
    "accuracy_margins",
    "generalized_above_threshold",
    "numeric_sparse",
    "sparse_accuracy_margins",
    "sparse_vector",
]

NONE_ABOVE = -1
"""``first_above`` value of a trial in which no query came out ⊤."""


# --------------------------------------------------------------------------------------
# Calibration
# --------------------------------------------------------------------------------------
def above_threshold_noise(*, epsilon: float, sensitivity: float = 1.0) -> tuple[Any, Any]:
    """AboveThreshold's two noise distributions: threshold Lap(2Δ/ε) and queries Lap(4Δ/ε).

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε of the whole run, > 0.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).

    Returns
    -------
    tuple
        ``(threshold_noise, query_noise)`` as ``scipy.stats`` frozen Laplace distributions, with the
        scales of :func:`above_threshold_scales`.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite number > 0.
    TypeError
        If ``epsilon`` or ``sensitivity`` is not a real number.

    Notes
    -----
    **Privacy.** The threshold noise is ε/2-DP for a sensitivity-Δ shift, and the noise of the query
    that comes out ⊤ is ε/2-DP for a shift of 2Δ (the query moves by Δ and the fictitious query
    q̃ = q + Δ by another Δ); the ⊥ answers cost nothing after the change of variables u = z + Δ.
    Total: ε (Lecture 3; Dwork & Roth, Theorem 3.23).
    """
    from scipy import stats  # on first use: notebooks that only sample (PMW) need not import scipy.stats

    threshold_scale, query_scale = above_threshold_scales(epsilon=epsilon, sensitivity=sensitivity)
    return stats.laplace(scale=threshold_scale), stats.laplace(scale=query_scale)


# --------------------------------------------------------------------------------------
# Batch forms
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AboveThresholdResult:
    """What AboveThreshold output in each trial.

    Attributes
    ----------
    first_above : numpy.ndarray of int
        Per trial, the index of the first ⊤, or :data:`NONE_ABOVE` (−1) if every answer was ⊥.
        Shape ``()`` for one run, ``(trials,)`` for many.
    num_queries : int
        m, the number of queries offered.
    """

    first_above: np.ndarray
    num_queries: int

    @property
    def outcome(self) -> np.ndarray:
        """The outcome index k of ⊥ᵏ⊤ (0 … m − 1), with m standing for "all ⊥".

        This is the indexing of :func:`dpcourse.svt.above_threshold_pmf`.
        """
        return np.where(self.first_above == NONE_ABOVE, self.num_queries, self.first_above)

    def outcome_counts(self) -> np.ndarray:
        """How many trials ended in each outcome.

        Returns
        -------
        numpy.ndarray of int
            Length m + 1: entry k counts the trials that output ⊥ᵏ⊤, the last entry those that output ⊥ᵐ
            (the indexing of :attr:`outcome`).
        """
        return np.bincount(np.atleast_1d(self.outcome), minlength=self.num_queries + 1)

    def outputs(self) -> np.ndarray:
        """The answer stream coded :data:`BOTTOM`, :data:`TOP`, :data:`HALTED`.

        Returns
        -------
        numpy.ndarray of float
            Shape ``(m,)`` for one run, ``(trials, m)`` for many: −∞ (⊥) before the first ⊤, +∞ (⊤) at it,
            NaN (halted) after it.
        """
        index = np.arange(self.num_queries)
        first = np.asarray(self.outcome)[..., None]
        return np.where(index < first, BOTTOM, np.where(index == first, TOP, HALTED))


def generalized_above_threshold(
    answers: ArrayLike,
    *,
    threshold: ArrayLike,
    threshold_noise: Any,
    query_noise: Any,
    rng: RngLike = None,
    trials: int | None = None,
) -> AboveThresholdResult:
    """AboveThreshold with its two noise-adding mechanisms as parameters (Lecture 3's generalisation).

    Parameters
    ----------
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D).
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    threshold_noise : scipy.stats frozen distribution or None
        M₁, the noise ρ added to the threshold; ``None`` adds none.
    query_noise : scipy.stats frozen distribution or None
        M₂, the noise νᵢ added to each answer; ``None`` adds none.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent runs, ≥ 1; None (default) for one run.

    Returns
    -------
    AboveThresholdResult
        ``first_above`` per trial (−1 when every answer was ⊥): shape ``()`` for one run, ``(trials,)``
        for many.

    Raises
    ------
    ValueError
        If ``answers`` is not a non-empty 1-D array of finite numbers, ``threshold`` is neither one finite
        number nor one per query, ``trials`` is not an integer ≥ 1, or ``rng`` is a negative seed.
    TypeError
        If ``answers`` or ``threshold`` is not numeric, ``trials`` is not an integer, or ``rng`` is not a seed,
        ``SeedSequence`` or ``Generator``.

    Notes
    -----
    **Privacy.** If M₁ is ε/2-DP for sensitivity-Δ queries and M₂ is ε/2-DP for sensitivity-2Δ queries,
    the result is ε-DP for sensitivity-Δ queries (the lecture's proof; notebook 04 checks each step).
    """
    q, t = check_answers_and_threshold(answers, threshold)
    trials = check_trials(trials)
    gen = as_generator(rng)
    rows = 1 if trials is None else trials
    rho = np.zeros((rows, 1)) if threshold_noise is None else threshold_noise.rvs(size=(rows, 1), random_state=gen)
    nu = 0.0 if query_noise is None else query_noise.rvs(size=(rows, q.size), random_state=gen)
    above = q + nu >= t + rho
    first = np.where(above.any(axis=1), above.argmax(axis=1), NONE_ABOVE)
    return AboveThresholdResult(first[0] if trials is None else first, int(q.size))


def above_threshold(
    answers: ArrayLike,
    *,
    threshold: ArrayLike,
    epsilon: float,
    sensitivity: float = 1.0,
    rng: RngLike = None,
    trials: int | None = None,
) -> AboveThresholdResult:
    """AboveThreshold (Lecture 3, Algorithm 1; Dwork & Roth, Algorithm 1), vectorised over trials.

    T̂ = T + Lap(2Δ/ε); for each query i, νᵢ ~ Lap(4Δ/ε); output ⊤ and halt at the first i with
    qᵢ(D) + νᵢ ≥ T̂, ⊥ before it. One ``(trials, m)`` draw covers all trials.

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
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent runs, ≥ 1; None (default) for one run.

    Returns
    -------
    AboveThresholdResult
        ``first_above`` per trial (−1 when every answer was ⊥).

    Raises
    ------
    ValueError
        If ``epsilon`` or ``sensitivity`` is not a finite number > 0, or as
        :func:`generalized_above_threshold` for ``answers``, ``threshold``, ``trials`` and ``rng``.
    TypeError
        If a parameter is not of its kind (see :func:`generalized_above_threshold`).

    Notes
    -----
    **Privacy.** ε-DP for sensitivity-Δ queries: the threshold noise pays ε/2 and the ⊤ answer's noise
    ε/2 (see :func:`above_threshold_noise`).

    Examples
    --------
    >>> r = above_threshold([0.0, 0.0, 50.0], threshold=25.0, epsilon=5.0, rng=0, trials=4)
    >>> r.first_above.tolist()
    [2, 2, 2, 2]
    >>> r.outputs()[0].tolist()
    [-inf, -inf, inf]
    """
    threshold_noise, query_noise = above_threshold_noise(epsilon=epsilon, sensitivity=sensitivity)
    return generalized_above_threshold(
        answers, threshold=threshold, threshold_noise=threshold_noise, query_noise=query_noise, rng=rng, trials=trials
    )


def accuracy_margins(
    num_queries: int, *, epsilon: float, sensitivity: float = 1.0, rng: RngLike = None, trials: int = 10_000
) -> np.ndarray:
    """Per trial, the smallest margin α at which AboveThreshold answers the hard case correctly.

    The hard case has k − 1 answers at T − α followed by one at T + α. With threshold noise ρ
    and query noise ν, the output is the correct ⊥^{k−1}⊤ exactly when
    α > maxᵢ<k νᵢ − ρ and α ≥ ρ − ν_k, so the smallest such α is max(maxᵢ<k νᵢ − ρ, ρ − ν_k)
    (for k = 1, just ρ − ν₁). Its (1 − β)-quantile over trials is the α at which the algorithm
    is (α, β)-accurate on this input; compare :func:`dpcourse.svt.above_threshold_accuracy_bound`.
    Only the largest of the k − 1 low queries' noises matters, so it is drawn directly
    (:func:`dpcourse.mechanisms.laplace_maximum`): three draws a trial whatever k.

    Parameters
    ----------
    num_queries : int
        The number k of queries of the hard case, ≥ 1.
    epsilon : float
        The privacy parameter ε, > 0.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int, optional
        Number of independent runs, ≥ 1 (default 10 000).

    Returns
    -------
    numpy.ndarray
        Shape ``(trials,)``: each trial's smallest correct margin α, in the units of the query answers.

    Raises
    ------
    ValueError
        If ``num_queries`` or ``trials`` is not an integer ≥ 1, ``epsilon`` or ``sensitivity`` is not a finite
        number > 0, or ``rng`` is a negative seed.
    TypeError
        If a parameter is not a number of its kind, or ``rng`` is not a seed, ``SeedSequence`` or ``Generator``.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    trials = check_integer(trials, "trials", minimum=1)
    threshold_scale, query_scale = above_threshold_scales(epsilon=epsilon, sensitivity=sensitivity)
    gen = as_generator(rng)
    rho = gen.laplace(0.0, threshold_scale, size=trials)
    margin = rho - gen.laplace(0.0, query_scale, size=trials)
    return np.maximum(margin, laplace_maximum(k - 1, scale=query_scale, rng=gen, size=trials) - rho)


def sparse_accuracy_margins(
    num_queries: int,
    *,
    c: int,
    epsilon: float,
    sensitivity: float = 1.0,
    delta: float = 0.0,
    numeric: bool = False,
    rng: RngLike = None,
    trials: int = 10_000,
) -> np.ndarray:
    """Per trial, the smallest α at which SparseVector (``numeric=True``: NumericSparse) answers a hard case correctly.

    The hard case is :func:`accuracy_margins`' repeated c times: k queries in c consecutive
    blocks (as equal as possible), each block's last query at T + α and the others at T − α.
    Run j of the algorithm starts right after the (j − 1)-th ⊤, so with threshold noise ρⱼ
    the output is correct exactly when α > νᵢ − ρⱼ for every low query of block j and
    α ≥ ρⱼ − ν for its high query; NumericSparse must also release each high query within α,
    |υⱼ| ≤ α. The smallest such α is the maximum of those terms. Its (1 − β)-quantile is
    the α at which the algorithm is (α, β)-accurate here; compare
    :func:`dpcourse.svt.sparse_vector_accuracy_bound` and
    :func:`dpcourse.svt.numeric_sparse_accuracy_bound` (at most c queries are above T − α,
    as the theorems require). The scales are the mechanisms' own; each block's largest low-query
    noise is drawn directly (:func:`dpcourse.mechanisms.laplace_maximum`): a few draws per block, not per query.

    Parameters
    ----------
    num_queries : int
        The number k of queries of the hard case, ≥ 1.
    c : int
        The number of ⊤ answers before the algorithm halts (and of blocks), in [1, k].
    epsilon : float
        The privacy parameter ε of the whole run, > 0.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    delta : float, optional
        0 (default) for basic composition, or δ in (0, 1) for advanced composition.
    numeric : bool, optional
        False (default) for SparseVector, True for NumericSparse (with Dwork & Roth's budget split).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int, optional
        Number of independent runs, ≥ 1 (default 10 000).

    Returns
    -------
    numpy.ndarray
        Shape ``(trials,)``: each trial's smallest correct margin α, in the units of the query answers.

    Raises
    ------
    ValueError
        If ``num_queries`` or ``trials`` is not an integer ≥ 1, ``c`` is not an integer in [1, ``num_queries``],
        ``epsilon`` or ``sensitivity`` is not a finite number > 0, ``delta`` is neither 0 nor in (0, 1) or is
        too large for advanced composition at this ε (see :func:`sparse_vector_scales`), or ``rng`` is a
        negative seed.
    TypeError
        If a parameter is not a number of its kind, or ``rng`` is not a seed, ``SeedSequence`` or ``Generator``.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    c = check_integer(c, "c", minimum=1, maximum=k)
    trials = check_integer(trials, "trials", minimum=1)
    if numeric:
        threshold_scale, query_scale, numeric_scale = numeric_sparse_scales(
            epsilon=epsilon, c=c, sensitivity=sensitivity, delta=delta
        )
    else:
        threshold_scale, query_scale = sparse_vector_scales(epsilon=epsilon, c=c, sensitivity=sensitivity, delta=delta)
    gen = as_generator(rng)
    ends = np.linspace(0, k, c + 1).round().astype(int)
    low_queries = np.diff(ends) - 1  # each block: its queries at T − α (all but the last)
    rho = gen.laplace(0.0, threshold_scale, size=(trials, c))
    margin = rho - gen.laplace(0.0, query_scale, size=(trials, c))
    margin = np.maximum(margin, laplace_maximum(low_queries, scale=query_scale, rng=gen, size=(trials, c)) - rho)
    margin = margin.max(axis=1)
    if numeric:
        margin = np.maximum(margin, np.abs(gen.laplace(0.0, numeric_scale, size=(trials, c))).max(axis=1))
    return margin


@dataclass(frozen=True)
class SparseVectorResult:
    """Outputs of SparseVector.

    Attributes
    ----------
    outputs : numpy.ndarray of float
        The answers coded :data:`TOP` (⊤), :data:`BOTTOM` (⊥) and :data:`HALTED`; shape ``(m,)`` for one run,
        ``(trials, m)`` for many.
    """

    outputs: np.ndarray

    @property
    def num_above(self) -> np.ndarray:
        """How many ⊤ each trial produced (at most c)."""
        return np.sum(self.outputs == TOP, axis=-1)


@dataclass(frozen=True)
class NumericSparseResult(SparseVectorResult):
    """Outputs of NumericSparse: as SparseVector, plus the released noisy answers.

    Attributes
    ----------
    outputs : numpy.ndarray of float
        The answers coded :data:`TOP` (⊤), :data:`BOTTOM` (⊥) and :data:`HALTED`; shape ``(m,)`` for one run,
        ``(trials, m)`` for many.
    values : numpy.ndarray of float
        Same shape: the released noisy answer where ``outputs`` is ⊤, NaN elsewhere.
    """

    values: np.ndarray


def _sparse_core(
    q: np.ndarray,
    t: np.ndarray,
    *,
    c: int,
    threshold_scale: float,
    query_scale: float,
    gen: np.random.Generator,
    trials: int | None,
) -> np.ndarray:
    rows = 1 if trials is None else trials
    m = q.size
    outputs = np.full((rows, m), HALTED)
    start = np.zeros(rows, dtype=np.int64)  # first query the current AboveThreshold run sees
    index = np.arange(m)
    nu = gen.laplace(0.0, query_scale, size=(rows, m))
    for _ in range(c):  # one fresh AboveThreshold run per discovery (a loop over c, not over trials)
        rho = gen.laplace(0.0, threshold_scale, size=(rows, 1))
        live = index >= start[:, None]
        above = (q + nu >= t + rho) & live
        hit = above.any(axis=1)
        first = np.where(hit, above.argmax(axis=1), m)
        answered_bottom = live & (index < first[:, None])
        outputs[answered_bottom] = BOTTOM
        outputs[hit, first[hit]] = TOP
        start = np.where(hit, first + 1, m)
        if not np.any(start < m):
            break
    return outputs


def sparse_vector(
    answers: ArrayLike,
    *,
    threshold: ArrayLike,
    epsilon: float,
    c: int,
    sensitivity: float = 1.0,
    delta: float = 0.0,
    rng: RngLike = None,
    trials: int | None = None,
) -> SparseVectorResult:
    """SparseVector (Lecture 3; Dwork & Roth, Algorithm 2): up to c discoveries with ε/c each.

    Runs AboveThreshold with budget ε/c, and after each ⊤ starts a new run (fresh threshold
    noise) on the remaining queries; halts after the c-th ⊤. By basic composition the whole
    is c·(ε/c) = ε-DP (with δ > 0, advanced composition; see :func:`sparse_vector_scales`, whose
    caveat applies: Dwork & Roth state that calibration for ε < 1, and it is checked, not assumed).
    One draw of query noise covers all trials.

    Parameters
    ----------
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D).
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    epsilon : float
        The privacy parameter ε of the whole run, > 0.
    c : int
        The number of ⊤ answers after which it halts, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    delta : float, optional
        0 (default) for basic composition, or δ in (0, 1) for advanced composition.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent runs, ≥ 1; None (default) for one run.

    Returns
    -------
    SparseVectorResult
        Outputs coded :data:`TOP`, :data:`BOTTOM`, :data:`HALTED`, shape ``(m,)`` or ``(trials, m)``.

    Raises
    ------
    ValueError
        If ``answers`` is not a non-empty 1-D array of finite numbers, ``threshold`` is neither one finite
        number nor one per query, ``c`` or ``trials`` is not an integer ≥ 1, ``epsilon`` or ``sensitivity`` is
        not a finite number > 0, ``delta`` is neither 0 nor in (0, 1) or is too large for advanced composition
        at this ε (see :func:`sparse_vector_scales`), or ``rng`` is a negative seed.
    TypeError
        If a parameter is not a number (or array of numbers) of its kind, or ``rng`` is not a seed,
        ``SeedSequence`` or ``Generator``.
    """
    q, t = check_answers_and_threshold(answers, threshold)
    c = check_integer(c, "c", minimum=1)
    threshold_scale, query_scale = sparse_vector_scales(epsilon=epsilon, c=c, sensitivity=sensitivity, delta=delta)
    trials = check_trials(trials)
    outputs = _sparse_core(
        q, t, c=c, threshold_scale=threshold_scale, query_scale=query_scale, gen=as_generator(rng), trials=trials
    )
    return SparseVectorResult(outputs[0] if trials is None else outputs)


def numeric_sparse(
    answers: ArrayLike,
    *,
    threshold: ArrayLike,
    epsilon: float,
    c: int,
    sensitivity: float = 1.0,
    delta: float = 0.0,
    numeric_share: float | None = None,
    rng: RngLike = None,
    trials: int | None = None,
) -> NumericSparseResult:
    """NumericSparse (Dwork & Roth, Algorithm 3): SparseVector plus a noisy value for each ⊤.

    Budget split (see :func:`numeric_sparse_scales`): (1 − s)·ε for the comparisons and s·ε
    for the released values, s = ``numeric_share`` (default: Dwork & Roth's, 1/9 for δ = 0 and
    1/(√512 + 1) for δ > 0). The values are qᵢ(D) + Lap(σ(2sε)) (Lap(cΔ/(sε)) for δ = 0), fresh
    noise independent of the comparison.

    Parameters
    ----------
    answers : array_like, shape (m,)
        The query answers q₁(D), …, q_m(D).
    threshold : float or array_like, shape (m,)
        T (or one threshold per query).
    epsilon : float
        The privacy parameter ε of the whole run, > 0.
    c : int
        The number of ⊤ answers (released values) after which it halts, ≥ 1.
    sensitivity : float, optional
        The sensitivity Δ of every query, > 0 (default 1).
    delta : float, optional
        0 (default) for basic composition, or δ in (0, 1) for advanced composition.
    numeric_share : float or None, optional
        The share s of ε for the released values, in (0, 1); None (default) for Dwork & Roth's.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent runs, ≥ 1; None (default) for one run.

    Returns
    -------
    NumericSparseResult
        Outputs coded as :func:`sparse_vector`'s and the released values (NaN where not ⊤), each of shape
        ``(m,)`` or ``(trials, m)``.

    Raises
    ------
    ValueError
        As :func:`sparse_vector`, and if ``numeric_share`` is not in (0, 1).
    TypeError
        As :func:`sparse_vector`.
    """
    q, t = check_answers_and_threshold(answers, threshold)
    c = check_integer(c, "c", minimum=1)
    threshold_scale, query_scale, numeric_scale = numeric_sparse_scales(
        epsilon=epsilon, c=c, sensitivity=sensitivity, delta=delta, numeric_share=numeric_share
    )
    trials = check_trials(trials)
    gen = as_generator(rng)
    outputs = _sparse_core(q, t, c=c, threshold_scale=threshold_scale, query_scale=query_scale, gen=gen, trials=trials)
    noisy = q + gen.laplace(0.0, numeric_scale, size=outputs.shape)
    values = np.where(outputs == TOP, noisy, np.nan)
    if trials is None:
        return NumericSparseResult(outputs[0], values[0])
    return NumericSparseResult(outputs, values)
