"""Private Multiplicative Weights (PMW): the online curator and its stream runners.

Lecture 4 (Private MW, Theorem 4.3) and the online-PMW slides (Dwork & Roth's
OnlineMultiplicativeWeights via NumericSparse, Theorems 4.10, 4.14, 4.15). Private MW is due to
Hardt & Rothblum, "A multiplicative weights mechanism for privacy-preserving data analysis"
(FOCS 2010).

Curators share one interface: ``answer(query) -> float``, ``privacy_spent``, ``answered``
(:class:`PrivateMW` here, the Laplace baselines in :mod:`dpcourse.pmw.baselines`);
:func:`run_stream` feeds any of them a stream of queries. An interaction with an adaptive
analyst is one run; each curator draws its noise as the queries arrive, so the unit of
vectorisation is a query, not a trial.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from scipy import sparse

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_array,
    check_choice,
    check_epsilon,
    check_histogram,
    check_integer,
    check_positive,
    check_probability,
    check_unit_interval_array,
)
from ..mechanisms.noise import laplace_scale
from ..svt.batch import numeric_sparse_scales
from ..svt.online import HaltedError, OnlineNumericSparse, OnlineSparseVector
from . import theory
from .conjunctions import ConjunctionQuery, ConjunctionWorkload, _as_query
from .multiplicative_weights import _kl

__all__ = [
    "CALIBRATIONS",
    "BudgetExhaustedError",
    "PMWHistory",
    "PrivateMW",
    "run_stream",
    "run_stream_then_synthetic",
    "run_stream_with_potential",
]

CALIBRATIONS = ("notes", "dwork_roth")

#: What :func:`run_stream` asks: a conjunction workload, a sparse matrix, a list of query objects, or a dense array.
QueryStream: TypeAlias = ConjunctionWorkload | ArrayLike | Sequence[Any]


class BudgetExhaustedError(HaltedError):
    """A curator refuses a query: its update budget (or its query budget) is spent."""


# --------------------------------------------------------------------------------------
# Private Multiplicative Weights
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PMWHistory:
    """What a curator released, query by query (never the true answers: they are private).

    Attributes
    ----------
    answers : numpy.ndarray
        The released answers, one per query answered (refused queries are not recorded).
    synthetic_answers : numpy.ndarray
        What the synthetic data said, q·p̃ₜ, before each query.
    updated : numpy.ndarray of bool
        Whether each query triggered an update (a paid answer).
    """

    answers: np.ndarray
    synthetic_answers: np.ndarray
    updated: np.ndarray


class PrivateMW:
    """Private Multiplicative Weights: an online curator for adaptively chosen linear queries.

    For each query the curator compares the synthetic answer q·p̃ₜ with the true q·p through
    the sparse vector core (:mod:`dpcourse.svt`). If they agree, it releases q·p̃ₜ, which
    costs no privacy; if not, it releases a Laplace-noised q·p and moves p̃ towards p with
    the MW update (:func:`mw_update`). Two calibrations:

    ``calibration="notes"`` (Lecture 4, Theorem 4.3; δ = 0 only)
        N = ⌊16 ln|𝒳|/α²⌋ updates, ε₀ = ε/(2N). Each round is an AboveThreshold run with
        budget ε₀ (sensitivity 1/n, which assumes n public: neighbours replace one record) on
        |q·p̃ₜ − q·p| with threshold α: noisy threshold
        α + Lap(2/(nε₀)), query noise Lap(4/(nε₀)); the N rounds are run by one
        :class:`~dpcourse.svt.OnlineSparseVector` (c = N, budget Nε₀). On ⊤ it releases
        y = q·p + Lap(1/(nε₀)), updates with ℓ = sign(q·p̃ₜ − y)·q and η = α/4,
        and the next query starts a fresh run. Accurate (:func:`theory.pmw_notes_error_bound`)
        when ε₀ ≥ 16 ln(3k/β)/(nα).

    ``calibration="dwork_roth"`` (the slides' OnlineMultiplicativeWeights; Dwork & Roth Algorithm 5)
        Theorem 4.14 for δ = 0 and 4.15 for δ > 0. c = ⌊4 ln|𝒳|/α²⌋ updates, η = α/2, one
        :class:`~dpcourse.svt.OnlineNumericSparse`
        (ε, c, sensitivity 1/n, Dwork & Roth's budget split: ε₁ = 8ε/9 for δ = 0,
        ε₁ = √512 ε/(√512 + 1) for δ > 0) fed the two queries q·p − q·p̃ₜ and q·p̃ₜ − q·p (the
        second only if the first was ⊥) with threshold T = 2α. A numeric answer a gives
        y = q·p̃ₜ + a (resp. − a) and an update. For δ > 0 both parts of the core use
        σ(ε′) = √(32c ln(2/δ))/ε′ (δ/2 each), as in Dwork & Roth's NumericSparse, and the whole
        is (ε, δ)-DP; the δ > 0 split is the one behind the slides' constant 2 + 32√2.
        The slides set the threshold to twice NumericSparse's accuracy level,
        T = 18c(ln 2|Q| + ln(4c/β))/(εn) for δ = 0, i.e. T = 2R(α); that equals 2α only at the
        smallest admissible α (α = R(α)). For larger α this package keeps T = 2α, which keeps
        both steps of the proof (a ⊤ means a gap ≥ T − R(α) ≥ α, a ⊥ a gap < T + R(α) ≤ 3α).
        Accurate to 3α when α ≥ R(α) (:func:`theory.pmw_dwork_roth_requirement`).

    Once the update budget is spent (N, resp. c updates), or ``max_queries`` answered, the
    curator refuses: :meth:`answer` raises :class:`BudgetExhaustedError`, and no further
    privacy is spent. :meth:`synthetic_answer` still answers from p̃ (post-processing,
    free), with no accuracy guarantee.

    Parameters
    ----------
    histogram : array_like, shape (|𝒳|,)
        Counts x ≥ 0 with n = Σ x > 0; |𝒳| ≥ 2.
    epsilon : float
        Total privacy budget ε > 0.
    alpha : float
        Accuracy parameter α ∈ (0, 1].
    beta : float, optional
        Failure probability β ∈ (0, 1) of the accuracy statement (default 0.05).
    delta : float, optional
        0 (the default), or δ ∈ (0, 1) (``"dwork_roth"`` only).
    max_queries : int, optional
        |Q| ≥ 1. When given, the curator answers at most this many queries (the accuracy
        statement covers |Q| queries) and reports ``guaranteed_error``.
    rng : int, numpy.random.Generator or None, optional
        Seed or generator for all the curator's noise, drawn as the queries arrive.
    calibration : {"notes", "dwork_roth"}, optional
        Default ``"notes"`` for δ = 0, ``"dwork_roth"`` for δ > 0.

    Raises
    ------
    ValueError
        If ``histogram`` is not a finite 1-D array of at least two counts ≥ 0 with a positive total,
        ``epsilon`` is not a finite number > 0, ``alpha`` is not in (0, 1], ``beta`` or a non-zero
        ``delta`` is not in (0, 1), ``max_queries`` < 1, ``calibration`` is unknown, ``delta`` > 0 with
        ``calibration="notes"``, or ``rng`` is a negative seed.
    TypeError
        If ``histogram`` is not an array of numbers, a number is not a real number, ``max_queries`` is
        not an integer, or ``rng`` is not a seed or a Generator.

    Notes
    -----
    **Privacy.** notes: each round costs ε₀ for its AboveThreshold run and ε₀ for the Laplace release;
    at most N rounds, so ε = 2ε₀N by basic composition (Lecture 4). dwork_roth: the data are
    touched only through NumericSparse, which is (ε, δ)-DP (Dwork & Roth, Theorem 4.13).
    Everything else (the synthetic answers, p̃) is post-processing.

    Examples
    --------
    >>> pmw = PrivateMW([30, 10, 50, 10], epsilon=1e4, alpha=0.2, rng=0)
    >>> round(pmw.answer([1, 0, 1, 0]), 2), pmw.updates, pmw.max_updates
    (0.8, 1, 554)
    """

    def __init__(
        self,
        histogram: ArrayLike,
        *,
        epsilon: float,
        alpha: float,
        beta: float = 0.05,
        delta: float = 0.0,
        max_queries: int | None = None,
        rng: RngLike = None,
        calibration: str | None = None,
    ):
        x = check_histogram(histogram, min_cells=2)
        self.domain_size = int(x.size)
        self.n = float(x.sum())
        self._p = x / self.n
        self.epsilon = check_epsilon(epsilon)
        self.alpha = check_positive(alpha, "alpha")
        if self.alpha > 1:
            raise ValueError(f"alpha must be in (0, 1] (answers are normalised); got {alpha!r}")
        self.beta = check_probability(beta, "beta")
        self.delta = 0.0 if delta == 0 else check_probability(delta, "delta")
        self.max_queries = None if max_queries is None else check_integer(max_queries, "max_queries", minimum=1)
        if calibration is None:
            calibration = "notes" if self.delta == 0 else "dwork_roth"
        self.calibration = check_choice(calibration, "calibration", CALIBRATIONS)
        if self.calibration == "notes" and self.delta > 0:
            raise ValueError(
                "delta must be 0 with calibration='notes' (Lecture 4 is pure ε-DP); "
                "use calibration='dwork_roth' for δ > 0"
            )
        self._rng = as_generator(rng)
        self.sensitivity = 1.0 / self.n
        if self.calibration == "notes":
            self.max_updates = max(
                1, int(np.floor(theory.pmw_update_count_bound(domain_size=self.domain_size, alpha=self.alpha)))
            )
            self.epsilon0: float | None = self.epsilon / (2 * self.max_updates)
            self.eta = self.alpha / 4
            self.threshold = self.alpha
            # N AboveThreshold rounds with ε₀ each, threshold α: SparseVector with c = N and budget Nε₀ = ε/2
            # (threshold noise Lap(2cΔ/(Nε₀)) = Lap(2/(nε₀)), query noise Lap(4/(nε₀)); a fresh threshold per round).
            self._sparse = OnlineSparseVector(
                threshold=self.threshold,
                epsilon=self.max_updates * self.epsilon0,
                c=self.max_updates,
                sensitivity=self.sensitivity,
                rng=self._rng,
            )
            self.noise_scales = {
                "threshold": 2 * self.sensitivity / self.epsilon0,
                "query": 4 * self.sensitivity / self.epsilon0,
                "release": laplace_scale(sensitivity=self.sensitivity, epsilon=self.epsilon0),
            }
        else:
            self.max_updates = max(
                1, int(np.floor(theory.mw_update_count_bound(domain_size=self.domain_size, alpha=self.alpha)))
            )
            self.epsilon0 = None
            self.eta = self.alpha / 2
            self.threshold = 2 * self.alpha
            self._sparse = OnlineNumericSparse(
                threshold=self.threshold,
                epsilon=self.epsilon,
                c=self.max_updates,
                sensitivity=self.sensitivity,
                delta=self.delta,
                rng=self._rng,
            )
            scales = numeric_sparse_scales(
                epsilon=self.epsilon, c=self.max_updates, sensitivity=self.sensitivity, delta=self.delta
            )
            self.noise_scales = dict(zip(("threshold", "query", "release"), map(float, scales), strict=False))
        self._synthetic = np.full(self.domain_size, 1.0 / self.domain_size)
        self.updates = 0
        self.answered = 0
        self._laplace_releases = 0
        self._answers: list[float] = []
        self._synthetic_answers: list[float] = []
        self._updated: list[bool] = []

    # -- state ---------------------------------------------------------------------------
    @property
    def synthetic(self) -> np.ndarray:
        """A copy of the current synthetic distribution p̃ₜ (public: it is post-processing)."""
        return self._synthetic.copy()

    @property
    def exhausted(self) -> bool:
        """True when the curator refuses further queries."""
        if self.max_queries is not None and self.answered >= self.max_queries:
            return True
        return self._sparse.halted

    @property
    def privacy_spent(self) -> float:
        """ε spent so far (never above ``epsilon``; δ, when > 0, is spent from the first query).

        notes: ε₀ per round started (the SparseVector core's account) + ε₀ per Laplace release.
        dwork_roth: the NumericSparse core's own account ((1 − s)ε/c per comparison run started
        plus sε/c per released value, s = 1/9; ε once started when δ > 0).

        This is an after-the-fact, data-dependent account of one run, not the curator's
        privacy guarantee: the number of updates depends on the data, so a run that stopped
        at 0.01 is not "0.01-DP". The guarantee is ``epsilon`` (and ``delta``), whatever the run.
        """
        if not self.answered:
            return 0.0
        if self.calibration == "notes":
            assert self.epsilon0 is not None  # set for the notes calibration (narrows the type for mypy)
            return self._sparse.privacy_spent + self.epsilon0 * self._laplace_releases
        return self._sparse.privacy_spent

    @property
    def history(self) -> PMWHistory:
        return PMWHistory(
            np.array(self._answers), np.array(self._synthetic_answers), np.array(self._updated, dtype=bool)
        )

    @property
    def guaranteed_error(self) -> float | None:
        """The theorem's error level if (ε, n, |Q| = max_queries, β) meet its condition for this α, else None.

        notes: 11α/8 when ε₀ ≥ 16 ln(3|Q|/β)/(nα); dwork_roth: 3α when α ≥ R(α).
        """
        if self.max_queries is None:
            return None
        if self.calibration == "notes":
            assert self.epsilon0 is not None  # set for the notes calibration (narrows the type for mypy)
            need = theory.pmw_notes_epsilon0(n=self.n, alpha=self.alpha, num_queries=self.max_queries, beta=self.beta)
            return 11 * self.alpha / 8 if self.epsilon0 >= need else None
        need = theory.pmw_dwork_roth_requirement(
            self.alpha,
            n=self.n,
            epsilon=self.epsilon,
            domain_size=self.domain_size,
            num_queries=self.max_queries,
            beta=self.beta,
            delta=self.delta,
        )
        return 3 * self.alpha if self.alpha >= need else None

    # -- answering -----------------------------------------------------------------------
    def synthetic_answer(self, query: Any) -> float:
        """q·p̃ₜ: an answer from the synthetic data alone (free, no accuracy guarantee).

        It answers after the curator refuses too, and is not recorded in :attr:`history`.

        Parameters
        ----------
        query : array_like, sparse matrix or ConjunctionQuery
            A linear query over the curator's universe: a vector in [0, 1]^|𝒳|, a 1 × |𝒳| sparse row, or a
            :class:`~dpcourse.pmw.conjunctions.ConjunctionQuery` over |𝒳| cells.

        Returns
        -------
        float
            The normalised answer q·p̃ₜ.

        Raises
        ------
        ValueError
            If ``query`` has the wrong shape or universe, or an entry outside [0, 1] or not finite.
        TypeError
            If ``query`` is not made of numbers.
        """
        return _as_query(query, self.domain_size).dot(self._synthetic)

    def answer(self, query: Any) -> float:
        """Release an answer to one linear query (normalised, in [0, 1] up to noise).

        Either the synthetic answer q·p̃ₜ (free) or, when the sparse vector core finds it too far
        from q·p, a noisy answer that also updates p̃ (see the class docstring).

        Parameters
        ----------
        query : array_like, sparse matrix or ConjunctionQuery
            A linear query over the curator's universe: a vector in [0, 1]^|𝒳|, a 1 × |𝒳| sparse row, or a
            :class:`~dpcourse.pmw.conjunctions.ConjunctionQuery` over |𝒳| cells.

        Returns
        -------
        float
            The released answer, recorded in :attr:`history`.

        Raises
        ------
        BudgetExhaustedError
            When the update budget or ``max_queries`` is spent.
        ValueError
            If ``query`` has the wrong shape or universe, or an entry outside [0, 1] or not finite.
        TypeError
            If ``query`` is not made of numbers.
        """
        return self._answer(_as_query(query, self.domain_size), None)

    def _answer(self, q: Any, true_value: float | None) -> float:
        """:meth:`answer` for a query already wrapped, given q·p when the stream's true answers were summed
        at once (:func:`run_stream`), else computing it."""
        if self.exhausted:
            if self.max_queries is not None and self.answered >= self.max_queries:
                raise BudgetExhaustedError(f"PrivateMW has answered max_queries = {self.max_queries} queries")
            raise BudgetExhaustedError(
                f"PrivateMW has made all {self.max_updates} updates its privacy budget pays for; it answers no "
                "more queries (synthetic_answer(query) answers from p̃ for free, without an accuracy guarantee)"
            )
        synthetic_value = q.dot(self._synthetic)
        if true_value is None:
            true_value = q.dot(self._p)
        if self.calibration == "notes":
            released = self._answer_notes(synthetic_value, true_value)
        else:
            released = self._answer_dwork_roth(synthetic_value, true_value)
        updated = released is not None
        if released is not None:
            q.scale(self._synthetic, -self.eta * np.sign(synthetic_value - released))
            self._synthetic /= self._synthetic.sum()
            self.updates += 1
        else:
            released = synthetic_value
        self.answered += 1
        self._answers.append(released)
        self._synthetic_answers.append(synthetic_value)
        self._updated.append(updated)
        return released

    def _answer_notes(self, synthetic_value: float, true_value: float) -> float | None:
        if not self._sparse.test(abs(synthetic_value - true_value)):
            return None
        self._laplace_releases += 1
        return float(true_value + self._rng.laplace(0.0, self.noise_scales["release"]))  # laplace_mechanism's draw

    def _answer_dwork_roth(self, synthetic_value: float, true_value: float) -> float | None:
        above = self._sparse.test(true_value - synthetic_value)
        if above is not None:  # the second comparison is skipped: this query is already paid for
            return synthetic_value + above
        below = self._sparse.test(synthetic_value - true_value)
        return None if below is None else synthetic_value - below


def run_stream(curator: Any, queries: QueryStream, *, stop_when_exhausted: bool = True) -> np.ndarray:
    """Ask ``curator`` every query of ``queries`` in order; the released answers (NaN once it refuses).

    A loop over queries is the nature of an online curator: each answer may depend on the
    previous ones.

    Parameters
    ----------
    curator : PrivateMW, LaplacePerQuery or NoisyHistogram
        Any curator with ``domain_size`` and ``answer(query) -> float``; it keeps its state (a second
        stream continues where this one stopped).
    queries : ConjunctionWorkload, sparse matrix, list of query objects, or array_like (k, |𝒳|)
        The stream, checked against the curator's universe before the first query is asked: a workload
        over |𝒳| cells, a sparse matrix with |𝒳| columns, a list of ConjunctionQuery objects or sparse rows,
        or a dense array of entries in [0, 1].
    stop_when_exhausted : bool, optional
        True (the default): stop at the first refusal, leaving the rest NaN. False: let the curator's
        :class:`BudgetExhaustedError` propagate.

    Returns
    -------
    numpy.ndarray
        Shape (k,): the released answers in stream order, NaN from the first refused query on.

    Raises
    ------
    ValueError
        If ``queries`` is over another universe, has the wrong shape, or has an entry outside [0, 1] or
        not finite (a query object in a list is checked when it is asked).
    TypeError
        If a dense ``queries`` is not made of numbers.
    BudgetExhaustedError
        If the curator refuses a query and ``stop_when_exhausted`` is False.
    """
    stream = _query_stream(queries, curator.domain_size)
    ask = _asker(curator, queries)
    out = np.full(len(stream), np.nan)
    for i, query in enumerate(stream):
        try:
            out[i] = ask(i, query)
        except BudgetExhaustedError:
            if not stop_when_exhausted:
                raise
            break
    return out


def run_stream_then_synthetic(curator: PrivateMW, workload: ConjunctionWorkload) -> np.ndarray:
    """:func:`run_stream` over a workload, then the queries the curator refused answered from its final synthetic
    data: q·p̃, free post-processing without the accuracy guarantee (:meth:`PrivateMW.synthetic_answer`).

    Every query gets an answer, so PMW's error over the whole workload compares like with like with a baseline
    that answers them all.

    Parameters
    ----------
    curator : PrivateMW
        The curator, with ``max_queries`` at least ``len(workload)`` or none; it keeps its state.
    workload : ConjunctionWorkload
        The queries, over the curator's universe, asked in order.

    Returns
    -------
    numpy.ndarray
        Shape (k,): the released answers, then q·p̃ for each query from the first refused one on.

    Raises
    ------
    ValueError
        If ``workload`` is over another universe.
    TypeError
        If ``curator`` is not a :class:`PrivateMW` or ``workload`` not a :class:`ConjunctionWorkload`.
    """
    if not isinstance(curator, PrivateMW):
        raise TypeError(f"curator must be a PrivateMW; got {type(curator).__name__}")
    if not isinstance(workload, ConjunctionWorkload):
        raise TypeError(f"workload must be a ConjunctionWorkload; got {type(workload).__name__}")
    answers = run_stream(curator, workload)
    refused = curator.answered
    if refused < len(workload):
        answers[refused:] = workload.answers(curator.synthetic)[refused:]
    return answers


def _asker(curator: Any, queries: QueryStream) -> Callable[[int, Any], float]:
    """``(i, query) -> curator.answer(query)``. For a :class:`PrivateMW` asked a whole workload, the true
    answers q·p are summed at once (:meth:`ConjunctionWorkload.answers`: the same strided sums, bit for
    bit, one per distinct query), which the curator would otherwise sum one query at a time."""
    if not (isinstance(curator, PrivateMW) and isinstance(queries, ConjunctionWorkload)):
        return lambda _, query: curator.answer(query)
    truth = queries.answers(curator._p).tolist()
    domain_size = curator.domain_size
    return lambda i, query: curator._answer(_as_query(query, domain_size), truth[i])


def _query_stream(queries: QueryStream, domain_size: int) -> ConjunctionWorkload | np.ndarray | list[Any]:
    """A stream of queries checked before the first is asked: a workload, a sparse matrix, a list of
    query objects (possibly empty), or a dense ``(k, |𝒳|)`` array of entries in [0, 1]."""
    if isinstance(queries, ConjunctionWorkload):
        if queries.domain_size != domain_size:
            raise ValueError(
                f"queries must be over a universe of {domain_size} cells; this workload has {queries.domain_size}"
            )
        return list(queries)  # the workload's own (cached) query objects, indexed once per stream
    if sparse.issparse(queries):
        rows = sparse.csr_array(queries, dtype=float)
        if rows.ndim != 2 or rows.shape[1] != domain_size:
            raise ValueError(f"queries must have shape (k, {domain_size}); got {rows.shape}")
        return [rows[[i]] for i in range(rows.shape[0])]
    if isinstance(queries, (list, tuple)) and all(
        isinstance(q, ConjunctionQuery) or sparse.issparse(q) for q in queries
    ):
        return list(queries)  # each query object is checked when it is asked
    return check_unit_interval_array(queries, "queries", shape=(None, domain_size))


def run_stream_with_potential(curator: PrivateMW, queries: QueryStream, p: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """As :func:`run_stream`, also returning KL(p‖p̃ₜ) after each query (how close the synthetic data has come).

    ``p`` is the true distribution x/n (reading it makes this for teaching, not release); p̃ moves only on updates.

    Parameters
    ----------
    curator : PrivateMW
        The curator to ask; it keeps its state.
    queries : ConjunctionWorkload, sparse matrix, list of query objects, or array_like (k, |𝒳|)
        The stream, as for :func:`run_stream`.
    p : array_like, shape (|𝒳|,)
        The true distribution the potential is measured against.

    Returns
    -------
    answers : numpy.ndarray
        Shape (k,): the released answers, NaN from the first refused query on (the stream stops there).
    potential : numpy.ndarray
        Shape (k,): KL(p‖p̃) after each answered query, NaN where ``answers`` is.

    Raises
    ------
    ValueError
        If ``p`` does not have shape (|𝒳|,) or has an entry that is not finite, or ``queries`` is not a
        valid stream over the curator's universe (as for :func:`run_stream`).
    TypeError
        If ``p`` or a dense ``queries`` is not made of numbers.
    """
    target = check_array(p, "p", shape=(curator.domain_size,))
    stream = _query_stream(queries, curator.domain_size)
    ask = _asker(curator, queries)
    out, potential = np.full(len(stream), np.nan), np.full(len(stream), np.nan)
    current, updates = _kl(target, curator._synthetic), curator.updates
    for i, query in enumerate(stream):
        try:
            out[i] = ask(i, query)
        except BudgetExhaustedError:
            break
        if curator.updates != updates:
            current, updates = _kl(target, curator._synthetic), curator.updates
        potential[i] = current
    return out, potential
