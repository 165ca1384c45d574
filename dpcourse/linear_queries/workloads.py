"""Linear queries over a histogram, and the workloads built from them.

A dataset of n people with records in a finite universe 𝒳 is summarised by its histogram
x ∈ ℕ^|𝒳| (Lecture 3, "histogram representation"). A linear query is a vector
q ∈ [0, 1]^|𝒳|; its unnormalised answer is q·x and its normalised answer q·x/n. A workload
is a matrix W whose rows are queries, answered all at once as W x.

Adding or removing one person changes x by a standard basis vector, so the L1
sensitivity of x ↦ W x is the largest L1 norm of a *column* of W and the L2 sensitivity
the largest L2 norm of a column (``linear_queries_trees_factorization_notes``, ① and ②).
Normalised answers divide both by n.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import sparse

from .._validation import ArrayLike, RngLike, as_generator, check_array, check_integer, check_probability

__all__ = [
    "AllRangeWorkload",
    "MatrixWorkload",
    "PrefixWorkload",
    "all_range_workload",
    "prefix_workload",
    "Workload",
    "histogram",
    "identity_workload",
    "random_counting_workload",
]


def histogram(records: ArrayLike, domain_size: int) -> np.ndarray:
    """The histogram x of ``records`` (integers in ``range(domain_size)``): x[u] = #{i : recordᵢ = u}.

    Parameters
    ----------
    records : array_like of int, shape (n,)
        One record per person, each a cell of the universe: whole numbers in 0 … ``domain_size`` − 1.
        May be empty (n = 0).
    domain_size : int
        The size |𝒳| of the universe, ≥ 1.

    Returns
    -------
    numpy.ndarray
        The counts x, integers of shape ``(domain_size,)``, summing to n.

    Raises
    ------
    ValueError
        If ``domain_size`` < 1, or ``records`` is not 1-dimensional, contains NaN or ∞, or holds a value
        that is not a whole number in [0, ``domain_size`` − 1].
    TypeError
        If ``domain_size`` is not an integer or ``records`` is not an array of numbers.
    """
    d = check_integer(domain_size, "domain_size", minimum=1)
    values = check_array(records, "records", ndim=1, min_size=0)
    if values.size and (np.any(values != np.floor(values)) or values.min() < 0 or values.max() >= d):
        raise ValueError(f"records must be integers in [0, {d - 1}]")
    return np.bincount(values.astype(np.int64), minlength=d)


class Workload:
    """A set of linear queries over a universe of ``domain_size`` cells.

    Subclasses provide ``num_queries``, ``domain_size``, :meth:`gram` (WᵀW) and
    :meth:`answer`; those that can afford it also provide :meth:`matrix`. Everything the
    error formulas need (sensitivities, Gram matrix) is available without materialising W.
    """

    if TYPE_CHECKING:  # read-only to their users; subclasses provide fields or properties

        @property
        def num_queries(self) -> int: ...

        @property
        def domain_size(self) -> int: ...

    def gram(self) -> np.ndarray:
        """The Gram matrix WᵀW, shape ``(domain_size, domain_size)``; computed once, then cached (read-only).

        Returns
        -------
        numpy.ndarray
            WᵀW as a read-only float array; (WᵀW)ⱼₗ is Σ over queries of Wᵢⱼ·Wᵢₗ.
        """
        cached = self.__dict__.get("_gram")
        if cached is None:
            cached = np.asarray(self._compute_gram(), dtype=float)
            cached.flags.writeable = False
            self.__dict__["_gram"] = cached  # workloads are immutable, so the cache never goes stale
        return cached

    def _compute_gram(self) -> np.ndarray:
        raise NotImplementedError

    def answer(self, histogram_counts: ArrayLike) -> np.ndarray:
        """Unnormalised answers W x; ``histogram_counts`` may be ``(d,)`` or ``(trials, d)``.

        Parameters
        ----------
        histogram_counts : array_like, shape (d,) or (trials, d)
            The histogram x (counts, not fractions), or one histogram per row.

        Returns
        -------
        numpy.ndarray
            W x, shape ``(num_queries,)`` or ``(trials, num_queries)``.

        Raises
        ------
        NotImplementedError
            Always, on the base class: each subclass answers its own queries.
        """
        raise NotImplementedError

    def column_counts(self) -> np.ndarray:
        """For 0/1 workloads: how many queries contain each cell (a column's L1 norm).

        Returns
        -------
        numpy.ndarray
            One float per cell, shape ``(domain_size,)``.

        Raises
        ------
        NotImplementedError
            Always, on the base class: each subclass counts its own columns.
        """
        raise NotImplementedError

    @property
    def l1_sensitivity(self) -> float:
        """Δ₁ of x ↦ W x: the largest column L1 norm."""
        return float(np.max(self.column_counts()))

    @property
    def l2_sensitivity(self) -> float:
        """Δ₂ of x ↦ W x: the largest column L2 norm, √max diag(WᵀW)."""
        return float(np.sqrt(np.max(np.diag(self.gram()))))

    def normalized_answer(self, histogram_counts: ArrayLike) -> np.ndarray:
        """Normalised answers W x / n, with n = the total count of the histogram.

        Parameters
        ----------
        histogram_counts : array_like, shape (d,) or (trials, d)
            The histogram x, or one histogram per row; each row is divided by its own total n.

        Returns
        -------
        numpy.ndarray
            W x / n, shape ``(num_queries,)`` or ``(trials, num_queries)``.

        Raises
        ------
        ValueError
            If ``histogram_counts`` is not 1- or 2-dimensional, contains NaN or ∞, has a row whose total
            is not positive, or does not have ``domain_size`` cells on its last axis.
        TypeError
            If ``histogram_counts`` is not an array of numbers.
        """
        x = check_array(histogram_counts, "histogram_counts", ndim=(1, 2))
        n = x.sum(axis=-1, keepdims=True)
        if np.any(n <= 0):
            raise ValueError("histogram_counts must have a positive total (n ≥ 1) to normalise")
        return self.answer(x) / (n if x.ndim == 2 else n[0])

    def _check_histogram(self, histogram_counts: ArrayLike) -> np.ndarray:
        x = check_array(histogram_counts, "histogram_counts", ndim=(1, 2))
        if x.shape[-1] != self.domain_size:
            raise ValueError(
                f"histogram_counts must have {self.domain_size} cells on its last axis; got shape {x.shape}"
            )
        return x


@dataclass(frozen=True, eq=False)
class MatrixWorkload(Workload):
    """A workload given by an explicit (dense or sparse) query matrix W of shape ``(k, d)``.

    Parameters
    ----------
    queries : numpy.ndarray or scipy.sparse array, shape (k, d)
        W, one query per row and one cell per column, with finite entries and k, d ≥ 1. Stored as a
        float ndarray, or as a ``scipy.sparse.csr_array`` when a sparse matrix is given.
    name : str, optional
        A label for tables and legends (default ``"workload"``).

    Raises
    ------
    ValueError
        If ``queries`` is not 2-dimensional, is empty or contains NaN or ∞.
    TypeError
        If a dense ``queries`` is not an array of numbers.

    Examples
    --------
    >>> w = identity_workload(4)
    >>> w.num_queries, w.l1_sensitivity, w.l2_sensitivity
    (4, 1.0, 1.0)
    >>> w.answer([3, 0, 2, 5]).tolist()
    [3.0, 0.0, 2.0, 5.0]
    """

    queries: np.ndarray | sparse.sparray
    name: str = "workload"

    def __post_init__(self) -> None:
        w: Any = self.queries
        if sparse.issparse(w):
            w = sparse.csr_array(w, dtype=float)
            if w.ndim != 2 or min(w.shape) < 1:
                raise ValueError(f"queries must be a non-empty 2-dimensional matrix; got shape {w.shape}")
            if not np.all(np.isfinite(w.data)):
                raise ValueError("queries must contain only finite numbers (no NaN or inf)")
        else:
            w = check_array(w, "queries", ndim=2)
        object.__setattr__(self, "queries", w)

    @property
    def num_queries(self) -> int:
        """k, the number of rows of W."""
        return int(self.queries.shape[0])

    @property
    def domain_size(self) -> int:
        """d, the number of columns (cells) of W."""
        return int(self.queries.shape[1])

    def matrix(self) -> np.ndarray:
        """W as a dense array.

        Returns
        -------
        numpy.ndarray
            W, shape ``(num_queries, domain_size)``: a new array when W is stored sparse, the stored array
            itself (not a copy) when it is dense.
        """
        w = self.queries
        return w.toarray() if isinstance(w, sparse.sparray) else w  # a csr_array or an ndarray after __post_init__

    def _compute_gram(self) -> np.ndarray:
        w = self.queries
        return (w.T @ w).toarray() if isinstance(w, sparse.sparray) else np.asarray(w.T @ w)

    def column_counts(self) -> np.ndarray:
        """The L1 norm Σᵢ |Wᵢⱼ| of each column j: for a 0/1 workload, how many queries contain cell j.

        Returns
        -------
        numpy.ndarray
            One float per cell, shape ``(domain_size,)``.
        """
        w = self.queries
        return np.asarray((abs(w) if isinstance(w, sparse.sparray) else np.abs(w)).sum(axis=0)).ravel()

    @property
    def l2_sensitivity(self) -> float:
        w = self.queries
        sq = w.multiply(w) if isinstance(w, sparse.sparray) else w**2
        return float(np.sqrt(np.max(np.asarray(sq.sum(axis=0)).ravel())))

    def answer(self, histogram_counts: ArrayLike) -> np.ndarray:
        """Unnormalised answers W x, for one histogram or one per row.

        Parameters
        ----------
        histogram_counts : array_like, shape (d,) or (trials, d)
            The histogram x (counts), or one histogram per row.

        Returns
        -------
        numpy.ndarray
            W x, shape ``(num_queries,)`` or ``(trials, num_queries)``.

        Raises
        ------
        ValueError
            If ``histogram_counts`` is not 1- or 2-dimensional, contains NaN or ∞, or does not have
            ``domain_size`` cells on its last axis.
        TypeError
            If ``histogram_counts`` is not an array of numbers.
        """
        x = self._check_histogram(histogram_counts)
        return np.asarray(self.queries @ x.T).T


def identity_workload(domain_size: int) -> MatrixWorkload:
    """The histogram workload: one counting query per cell (W = I), Δ₁ = Δ₂ = 1.

    Parameters
    ----------
    domain_size : int
        The number of cells d, ≥ 1.

    Returns
    -------
    MatrixWorkload
        The d × d identity, stored sparse, named ``"identity"``.

    Raises
    ------
    ValueError
        If ``domain_size`` < 1.
    TypeError
        If ``domain_size`` is not an integer.
    """
    d = check_integer(domain_size, "domain_size", minimum=1)
    return MatrixWorkload(sparse.eye_array(d, format="csr"), name="identity")


def random_counting_workload(
    num_queries: int, domain_size: int, *, density: float = 0.5, rng: RngLike = None
) -> MatrixWorkload:
    """``num_queries`` random counting queries: each cell is in each query with probability ``density``.

    A counting query asks "how many people have a record in this subset of 𝒳?", a row of
    zeros and ones. With k such queries a person can be in all of them, so Δ₁ ≤ k and
    Δ₂ ≤ √k (attained when some cell is in every query).

    Parameters
    ----------
    num_queries : int
        The number of queries k, ≥ 1.
    domain_size : int
        The number of cells d, ≥ 1.
    density : float, optional
        The probability that a cell is in a query, independently for every entry, in the open interval
        (0, 1) (default ½).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the draw.

    Returns
    -------
    MatrixWorkload
        A dense 0/1 matrix of shape ``(num_queries, domain_size)``, named ``"random counting"``.

    Raises
    ------
    ValueError
        If ``num_queries`` or ``domain_size`` < 1, ``density`` is not in (0, 1), or ``rng`` is a negative seed.
    TypeError
        If ``num_queries`` or ``domain_size`` is not an integer, ``density`` is not a number, or ``rng`` is
        not a seed, a SeedSequence or a Generator.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    d = check_integer(domain_size, "domain_size", minimum=1)
    p = check_probability(density, "density")
    w = (as_generator(rng).random((k, d)) < p).astype(float)
    return MatrixWorkload(w, name="random counting")


# --- Notebook 03: interval (threshold) queries, never materialised ---
@dataclass(frozen=True, eq=False)
class PrefixWorkload(Workload):
    """The d prefix queries φ_{0,t}: "how many records are ≤ t?", t = 0 … d − 1.

    Row t of W is (1, …, 1, 0, …, 0) with t + 1 ones. Never materialised: answers are cumulative
    sums, and (WᵀW)_{jl} = d − max(j, l) (the prefixes containing both cells j and l).

    Parameters
    ----------
    domain_size : int
        The number of cells d, ≥ 1 (not checked here: :func:`prefix_workload` checks it).

    Examples
    --------
    >>> w = prefix_workload(4)
    >>> w.answer([1, 0, 2, 3]).tolist()
    [1.0, 1.0, 3.0, 6.0]
    >>> w.l1_sensitivity
    4.0
    """

    domain_size: int

    @property
    def num_queries(self) -> int:
        return self.domain_size

    def _compute_gram(self) -> np.ndarray:
        index = np.arange(self.domain_size, dtype=float)
        return self.domain_size - np.maximum.outer(index, index)

    def column_counts(self) -> np.ndarray:
        """How many prefixes contain each cell: d − j for cell j.

        Returns
        -------
        numpy.ndarray
            (d, d − 1, …, 1) as floats, shape ``(domain_size,)``.
        """
        return (self.domain_size - np.arange(self.domain_size)).astype(float)

    def answer(self, histogram_counts: ArrayLike) -> np.ndarray:
        """The prefix counts x₀ + … + xₜ for t = 0 … d − 1: cumulative sums along the last axis.

        Parameters
        ----------
        histogram_counts : array_like, shape (d,) or (trials, d)
            The histogram x (counts), or one histogram per row.

        Returns
        -------
        numpy.ndarray
            Shape ``(d,)`` or ``(trials, d)``, like ``histogram_counts``.

        Raises
        ------
        ValueError
            If ``histogram_counts`` is not 1- or 2-dimensional, contains NaN or ∞, or does not have
            ``domain_size`` cells on its last axis.
        TypeError
            If ``histogram_counts`` is not an array of numbers.
        """
        return np.cumsum(self._check_histogram(histogram_counts), axis=-1)


@dataclass(frozen=True, eq=False)
class AllRangeWorkload(Workload):
    """All d(d + 1)/2 interval queries φ_{s,t}(x) = #{records in [s, t]}, 0 ≤ s ≤ t < d.

    Never materialised: (WᵀW)_{jl} = (min(j, l) + 1)(d − max(j, l)) (the intervals containing
    both j and l), and cell j lies in (j + 1)(d − j) intervals, so the exact L1 sensitivity is
    max_j (j + 1)(d − j) = ⌈d/2⌉·⌊d/2 + 1⌋ ≈ d²/4, a quarter of the notes' loose bound d².
    Answers are listed by s, then t, from differences of prefix sums.

    Parameters
    ----------
    domain_size : int
        The number of cells d, ≥ 1 (not checked here: :func:`all_range_workload` checks it).

    Examples
    --------
    >>> w = all_range_workload(3)
    >>> w.num_queries, w.l1_sensitivity
    (6, 4.0)
    >>> w.answer([1, 2, 4]).tolist()
    [1.0, 3.0, 7.0, 2.0, 6.0, 4.0]
    """

    domain_size: int

    @property
    def num_queries(self) -> int:
        return self.domain_size * (self.domain_size + 1) // 2

    def _compute_gram(self) -> np.ndarray:
        index = np.arange(self.domain_size, dtype=float)
        upper = np.triu(np.outer(index + 1, self.domain_size - index))  # (j + 1)(d − l) for j ≤ l
        return upper + np.triu(upper, 1).T

    def column_counts(self) -> np.ndarray:
        """How many intervals contain each cell: (j + 1)(d − j) for cell j.

        Returns
        -------
        numpy.ndarray
            One float per cell, shape ``(domain_size,)``.
        """
        j = np.arange(self.domain_size)
        return ((j + 1) * (self.domain_size - j)).astype(float)

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """The (s, t) of every query, in the order of :meth:`answer`.

        Returns
        -------
        s, t : numpy.ndarray
            The first and last cell of each interval, integer arrays of shape ``(d(d + 1)/2,)``, ordered
            by s, then t.
        """
        s, t = np.triu_indices(self.domain_size)
        return s, t

    def answer(self, histogram_counts: ArrayLike) -> np.ndarray:
        """The counts xₛ + … + xₜ of every interval [s, t], in the order of :meth:`intervals`.

        Parameters
        ----------
        histogram_counts : array_like, shape (d,) or (trials, d)
            The histogram x (counts), or one histogram per row.

        Returns
        -------
        numpy.ndarray
            Shape ``(d(d + 1)/2,)`` or ``(trials, d(d + 1)/2)``.

        Raises
        ------
        ValueError
            If ``histogram_counts`` is not 1- or 2-dimensional, contains NaN or ∞, or does not have
            ``domain_size`` cells on its last axis.
        TypeError
            If ``histogram_counts`` is not an array of numbers.
        """
        x = self._check_histogram(histogram_counts)
        prefix = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(x, axis=-1)], axis=-1)
        s, t = self.intervals()
        return prefix[..., t + 1] - prefix[..., s]


def prefix_workload(d: int) -> PrefixWorkload:
    """The d prefix (threshold) queries over a domain of size d.

    Parameters
    ----------
    d : int
        The domain size, ≥ 1.

    Returns
    -------
    PrefixWorkload
        The workload, never materialised.

    Raises
    ------
    ValueError
        If ``d`` < 1.
    TypeError
        If ``d`` is not an integer.
    """
    return PrefixWorkload(check_integer(d, "d", minimum=1))


def all_range_workload(d: int) -> AllRangeWorkload:
    """All d(d + 1)/2 interval queries over a domain of size d.

    Parameters
    ----------
    d : int
        The domain size, ≥ 1.

    Returns
    -------
    AllRangeWorkload
        The workload, never materialised.

    Raises
    ------
    ValueError
        If ``d`` < 1.
    TypeError
        If ``d`` is not an integer.
    """
    return AllRangeWorkload(check_integer(d, "d", minimum=1))
