"""The online-PMW slides' baselines and the error summary that compares them with Private MW.

* :class:`LaplacePerQuery`, the Laplace mechanism on each query with ε split by basic or
  (δ > 0) advanced composition (:func:`per_query_epsilon`);
* :class:`NoisyHistogram`, Laplace noise on x once, every query answered from it;
* :func:`release_errors`, the errors of Private MW and both baselines on one workload.

They share the curator interface of :class:`dpcourse.pmw.PrivateMW`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_array,
    check_epsilon,
    check_histogram,
    check_integer,
    check_probability,
)
from ..mechanisms import composition
from ..mechanisms.noise import laplace_mechanism, laplace_scale
from . import theory
from .conjunctions import ConjunctionWorkload, _as_query
from .private_mw import BudgetExhaustedError, PrivateMW, run_stream_then_synthetic

#: L1 sensitivity of a histogram when neighbours replace one record: one count −1, another +1.
REPLACE_ONE_HISTOGRAM_SENSITIVITY = 2.0

__all__ = [
    "REPLACE_ONE_HISTOGRAM_SENSITIVITY",
    "LaplacePerQuery",
    "NoisyHistogram",
    "ReleaseErrors",
    "per_query_epsilon",
    "release_errors",
]


# --------------------------------------------------------------------------------------
# Baselines
# --------------------------------------------------------------------------------------
def per_query_epsilon(*, epsilon: float, num_queries: int, delta: float = 0.0) -> float:
    """The ε₀ each of k Laplace answers may use so that all k together are (ε, δ)-DP.

    δ = 0: ε₀ = ε/k (basic composition). δ > 0: the largest ε₀ with
    ε₀√(2k ln(1/δ)) + kε₀(e^{ε₀} − 1) ≤ ε (advanced composition, Dwork & Roth Theorem 3.20),
    or ε/k if that is larger (:func:`composition.advanced_composition_per_query_epsilon`).

    Parameters
    ----------
    epsilon : float
        The total budget ε > 0 of the k answers.
    num_queries : int
        k ≥ 1.
    delta : float, optional
        0 (the default: basic composition) or δ ∈ (0, 1) (advanced composition).

    Returns
    -------
    float
        ε₀, the budget of each answer.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0, ``num_queries`` < 1, or a non-zero ``delta`` is not in
        (0, 1).
    TypeError
        If ``epsilon`` or ``delta`` is not a real number, or ``num_queries`` is not an integer.
    """
    eps = check_epsilon(epsilon)
    k = check_integer(num_queries, "num_queries", minimum=1)
    if delta == 0:
        return eps / k
    return composition.advanced_composition_per_query_epsilon(epsilon=eps, k=k, delta=check_probability(delta, "delta"))


class LaplacePerQuery:
    """Baseline: answer each of at most k queries with q·p + Lap(1/(nε₀)), ε₀ from :func:`per_query_epsilon`.

    With probability 1 − β all k answers are within ln(k/β)/(nε₀) (Theorem 3.8): k ln(k/β)/(nε)
    for δ = 0 (Lecture 3 / :func:`mechanisms_theory.composed_laplace_max_error_bound`).

    Parameters
    ----------
    histogram : array_like, shape (|𝒳|,)
        Counts x ≥ 0 with n = Σ x > 0; answers are normalised, q·x/n.
    epsilon : float
        The total budget ε > 0 of all k answers.
    num_queries : int
        k ≥ 1, the number of queries the curator will answer.
    delta : float, optional
        0 (the default: basic composition) or δ ∈ (0, 1) (advanced composition).
    rng : int, numpy.random.Generator or None, optional
        Seed or generator for the noise, drawn one answer at a time.

    Raises
    ------
    ValueError
        If ``histogram`` is not a finite 1-D array of counts ≥ 0 with a positive total, ``epsilon`` is not
        a finite number > 0, ``num_queries`` < 1, a non-zero ``delta`` is not in (0, 1), or ``rng`` is a
        negative seed.
    TypeError
        If ``histogram`` is not an array of numbers, ``epsilon`` or ``delta`` is not a real number,
        ``num_queries`` is not an integer, or ``rng`` is not a seed or a Generator.

    Notes
    -----
    **Privacy.** Each answer is ε₀-DP (sensitivity 1/n); k of them compose to ε (basic) or (ε, δ)
    (advanced composition). The (k + 1)-th query is refused with :class:`BudgetExhaustedError`.
    """

    def __init__(
        self, histogram: ArrayLike, *, epsilon: float, num_queries: int, delta: float = 0.0, rng: RngLike = None
    ):
        x = check_histogram(histogram)
        self.domain_size, self.n = int(x.size), float(x.sum())
        self._p = x / self.n
        self.epsilon, self.delta = check_epsilon(epsilon), float(delta)
        self.num_queries = check_integer(num_queries, "num_queries", minimum=1)
        self.epsilon_per_query = per_query_epsilon(epsilon=epsilon, num_queries=num_queries, delta=delta)
        self.noise_scale = laplace_scale(sensitivity=1.0 / self.n, epsilon=self.epsilon_per_query)
        self._rng = as_generator(rng)
        self.answered = 0

    @property
    def privacy_spent(self) -> float:
        """ε₀ × answered for δ = 0; ε once started for δ > 0 (the composition is for all k)."""
        if self.delta > 0:
            return self.epsilon if self.answered else 0.0
        return self.epsilon_per_query * self.answered

    def answer(self, query: Any) -> float:
        """Release q·p + Lap(1/(nε₀)) for one linear query.

        Parameters
        ----------
        query : array_like, sparse matrix or ConjunctionQuery
            A linear query over the curator's universe: a vector in [0, 1]^|𝒳|, a 1 × |𝒳| sparse row, or a
            :class:`~dpcourse.pmw.conjunctions.ConjunctionQuery` over |𝒳| cells.

        Returns
        -------
        float
            The noisy normalised answer.

        Raises
        ------
        BudgetExhaustedError
            If ``num_queries`` queries have been answered already.
        ValueError
            If ``query`` has the wrong shape or universe, or an entry outside [0, 1] or not finite.
        TypeError
            If ``query`` is not made of numbers.
        """
        if self.answered >= self.num_queries:
            raise BudgetExhaustedError(f"LaplacePerQuery has answered its num_queries = {self.num_queries} queries")
        q = _as_query(query, self.domain_size)
        self.answered += 1
        # laplace_mechanism(q·p, sensitivity=1/n, epsilon=ε₀) without re-checking its arguments per query
        return float(q.dot(self._p) + self._rng.laplace(0.0, self.noise_scale))


class NoisyHistogram:
    """Baseline: release x̂ = x + Lap(2/ε) per cell once; answer every query as q·x̂/n.

    Notebook 06's neighbours differ in one record *replaced* (n stays public, so the normalised
    answers q·x/n have sensitivity 1/n): replacing a record moves one count down by 1 and another
    up by 1, so x has L1 sensitivity 2 (:data:`REPLACE_ONE_HISTOGRAM_SENSITIVITY`) and the noise
    is Lap(2/ε) per cell. (Lap(1/ε) is the add/remove-one calibration; under replace-one it is
    only 2ε-DP.) The error on q is q·Z/n, of order √|𝒳|/(nε)
    (:func:`dpcourse.pmw.replace_one_histogram_max_error_bound`).

    The noise is drawn once, when the curator is made (``noisy_histogram`` holds x̂).

    Parameters
    ----------
    histogram : array_like, shape (|𝒳|,)
        Counts x ≥ 0 with n = Σ x > 0.
    epsilon : float
        The privacy parameter ε > 0.
    rng : int, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Raises
    ------
    ValueError
        If ``histogram`` is not a finite 1-D array of counts ≥ 0 with a positive total, ``epsilon`` is not
        a finite number > 0, or ``rng`` is a negative seed.
    TypeError
        If ``histogram`` is not an array of numbers, ``epsilon`` is not a real number, or ``rng`` is not a
        seed or a Generator.

    Notes
    -----
    **Privacy.** x has L1 sensitivity 2 under replace-one neighbours, so x̂ = x + Lap(2/ε)ⁿ is ε-DP
    (Laplace mechanism, Lecture 3); answers are post-processing, unlimited in number.
    """

    def __init__(self, histogram: ArrayLike, *, epsilon: float, rng: RngLike = None):
        x = check_histogram(histogram)
        self.domain_size, self.n = int(x.size), float(x.sum())
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = REPLACE_ONE_HISTOGRAM_SENSITIVITY
        self.noise_scale = laplace_scale(sensitivity=self.sensitivity, epsilon=self.epsilon)
        self.noisy_histogram = np.asarray(
            laplace_mechanism(x, sensitivity=self.sensitivity, epsilon=self.epsilon, rng=rng)
        )
        self._estimate = self.noisy_histogram / self.n
        self.answered = 0

    @property
    def privacy_spent(self) -> float:
        return self.epsilon

    def answer(self, query: Any) -> float:
        """q·x̂/n, the answer from the noisy histogram (post-processing: free, never refused).

        Parameters
        ----------
        query : array_like, sparse matrix or ConjunctionQuery
            A linear query over the curator's universe: a vector in [0, 1]^|𝒳|, a 1 × |𝒳| sparse row, or a
            :class:`~dpcourse.pmw.conjunctions.ConjunctionQuery` over |𝒳| cells.

        Returns
        -------
        float
            The normalised answer.

        Raises
        ------
        ValueError
            If ``query`` has the wrong shape or universe, or an entry outside [0, 1] or not finite.
        TypeError
            If ``query`` is not made of numbers.
        """
        answer = _as_query(query, self.domain_size).dot(self._estimate)
        self.answered += 1  # only once the query is known to be valid: a refused query is not an answer
        return answer


@dataclass(frozen=True)
class ReleaseErrors:
    """Max absolute errors of the three curators on one workload (normalised answers).

    All three are scored on every query of the workload. PMW's refused queries (after its
    update budget ran out) are scored with the answer the analyst gets for free from the
    synthetic data, q·p̃ (post-processing, no accuracy guarantee); ``pmw_answered`` says how
    many PMW actually answered.

    Attributes
    ----------
    pmw : float
        Private MW's max absolute error over the workload.
    laplace : float
        The Laplace-per-query baseline's max absolute error (basic composition, ε/k each).
    histogram : float
        The noisy histogram's max absolute error.
    alpha : float
        The α Private MW was calibrated with.
    updates : int
        How many updates Private MW made.
    max_updates : int
        N, the updates its budget pays for.
    pmw_privacy_spent : float
        Private MW's after-the-fact account of the ε it spent (:attr:`PrivateMW.privacy_spent`).
    pmw_answered : int
        How many queries Private MW answered before refusing (k if it never refused).
    """

    pmw: float
    laplace: float
    histogram: float
    alpha: float
    updates: int
    max_updates: int
    pmw_privacy_spent: float
    pmw_answered: int


def release_errors(
    histogram: ArrayLike,
    workload: ConjunctionWorkload,
    *,
    epsilon: float,
    alpha: float | None = None,
    beta: float = 0.05,
    rng: RngLike = None,
    truth: ArrayLike | None = None,
) -> ReleaseErrors:
    """Answer every query of ``workload`` with PMW, Laplace per query and the noisy histogram; max errors.

    ``alpha=None`` takes Theorem 4.3's α (:func:`theory.pmw_notes_alpha`), capped at 1: PMW
    calibrated as the notes prescribe. The Laplace baseline uses basic composition (ε/k each),
    drawn in one vectorised call; the noisy histogram is :class:`NoisyHistogram` (Lap(2/ε) per cell:
    replace-one neighbours, the relation PMW's sensitivity 1/n assumes). ``truth``
    (the exact answers) may be passed to save recomputing them.

    Scoring: like with like, every method on every query. If PMW refuses the tail of the
    stream, those queries are answered from its final synthetic data (free post-processing)
    and count in its error, rather than being dropped.

    Parameters
    ----------
    histogram : array_like, shape (|𝒳|,)
        Counts x ≥ 0 with n = Σ x > 0 over |𝒳| ≥ 2 cells.
    workload : ConjunctionWorkload
        The k queries, over a universe of |𝒳| cells, asked in order.
    epsilon : float
        The budget ε > 0 each of the three methods gets.
    alpha : float or None, optional
        Private MW's α ∈ (0, 1]; None (the default) takes Theorem 4.3's, capped at 1.
    beta : float, optional
        β ∈ (0, 1) of the theorem's α and of Private MW's calibration (default 0.05).
    rng : int, numpy.random.Generator or None, optional
        Seed or generator; one generator draws Private MW's noise, then the Laplace answers, then the
        histogram's noise.
    truth : array_like, shape (k,), optional
        The exact normalised answers q·x/n, if already computed.

    Returns
    -------
    ReleaseErrors
        The three max errors and Private MW's account of its run.

    Raises
    ------
    ValueError
        If ``histogram`` is not a finite 1-D array of at least two counts ≥ 0 with a positive total,
        ``workload`` is over another universe, ``truth`` does not have shape (k,), ``epsilon`` is not a
        finite number > 0, ``alpha`` is not in (0, 1], ``beta`` is not in (0, 1), or ``rng`` is a negative
        seed.
    TypeError
        If an array is not made of numbers, a number is not a real number, or ``rng`` is not a seed or a
        Generator.
    """
    x = check_histogram(histogram, min_cells=2)
    k = len(workload)
    gen = as_generator(rng)
    n = float(x.sum())
    if alpha is None:
        alpha = min(1.0, theory.pmw_notes_alpha(n=n, epsilon=epsilon, domain_size=x.size, num_queries=k, beta=beta))
    truth = workload.answers(x / n) if truth is None else check_array(truth, "truth", shape=(k,))
    curator = PrivateMW(x, epsilon=epsilon, alpha=alpha, beta=beta, max_queries=k, rng=gen)
    answers = run_stream_then_synthetic(curator, workload)
    laplace = laplace_mechanism(truth, sensitivity=k / n, epsilon=epsilon, rng=gen)
    noisy = NoisyHistogram(x, epsilon=epsilon, rng=gen)
    from_histogram = workload.answers(noisy.noisy_histogram / n)
    return ReleaseErrors(
        float(np.max(np.abs(answers - truth))),
        float(np.max(np.abs(laplace - truth))),
        float(np.max(np.abs(from_histogram - truth))),
        float(alpha),
        curator.updates,
        curator.max_updates,
        curator.privacy_spent,
        curator.answered,
    )
