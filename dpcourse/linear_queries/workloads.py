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
    """The histogram x of ``records`` (integers in ``range(domain_size)``): x[u] = #{i : recordᵢ = u}."""
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
        """The Gram matrix WᵀW, shape ``(domain_size, domain_size)``; computed once, then cached (read-only)."""
        cached = self.__dict__.get("_gram")
        if cached is None:
            cached = np.asarray(self._compute_gram(), dtype=float)
            cached.flags.writeable = False
            self.__dict__["_gram"] = cached  # workloads are immutable, so the cache never goes stale
        return cached

    def _compute_gram(self) -> np.ndarray:
        raise NotImplementedError

    def answer(self, histogram_counts: ArrayLike) -> np.ndarray:
        """Unnormalised answers W x; ``histogram_counts`` may be ``(d,)`` or ``(trials, d)``."""
        raise NotImplementedError

    def column_counts(self) -> np.ndarray:
        """For 0/1 workloads: how many queries contain each cell (a column's L1 norm)."""
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
        """Normalised answers W x / n, with n = the total count of the histogram."""
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
        return int(self.queries.shape[0])

    @property
    def domain_size(self) -> int:
        return int(self.queries.shape[1])

    def matrix(self) -> np.ndarray:
        """W as a dense array."""
        w = self.queries
        return w.toarray() if isinstance(w, sparse.sparray) else w  # a csr_array or an ndarray after __post_init__

    def _compute_gram(self) -> np.ndarray:
        w = self.queries
        return (w.T @ w).toarray() if isinstance(w, sparse.sparray) else np.asarray(w.T @ w)

    def column_counts(self) -> np.ndarray:
        w = self.queries
        return np.asarray((abs(w) if isinstance(w, sparse.sparray) else np.abs(w)).sum(axis=0)).ravel()

    @property
    def l2_sensitivity(self) -> float:
        w = self.queries
        sq = w.multiply(w) if isinstance(w, sparse.sparray) else w**2
        return float(np.sqrt(np.max(np.asarray(sq.sum(axis=0)).ravel())))

    def answer(self, histogram_counts: ArrayLike) -> np.ndarray:
        x = self._check_histogram(histogram_counts)
        return np.asarray(self.queries @ x.T).T


def identity_workload(domain_size: int) -> MatrixWorkload:
    """The histogram workload: one counting query per cell (W = I), Δ₁ = Δ₂ = 1."""
    d = check_integer(domain_size, "domain_size", minimum=1)
    return MatrixWorkload(sparse.eye_array(d, format="csr"), name="identity")


def random_counting_workload(
    num_queries: int, domain_size: int, *, density: float = 0.5, rng: RngLike = None
) -> MatrixWorkload:
    """``num_queries`` random counting queries: each cell is in each query with probability ``density``.

    A counting query asks "how many people have a record in this subset of 𝒳?", a row of
    zeros and ones. With k such queries a person can be in all of them, so Δ₁ ≤ k and
    Δ₂ ≤ √k (attained when some cell is in every query).
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
        return (self.domain_size - np.arange(self.domain_size)).astype(float)

    def answer(self, histogram_counts: ArrayLike) -> np.ndarray:
        return np.cumsum(self._check_histogram(histogram_counts), axis=-1)


@dataclass(frozen=True, eq=False)
class AllRangeWorkload(Workload):
    """All d(d + 1)/2 interval queries φ_{s,t}(x) = #{records in [s, t]}, 0 ≤ s ≤ t < d.

    Never materialised: (WᵀW)_{jl} = (min(j, l) + 1)(d − max(j, l)) (the intervals containing
    both j and l), and cell j lies in (j + 1)(d − j) intervals, so the exact L1 sensitivity is
    max_j (j + 1)(d − j) = ⌈d/2⌉·⌊d/2 + 1⌋ ≈ d²/4, a quarter of the notes' loose bound d².
    Answers are listed by s, then t, from differences of prefix sums.

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
        j = np.arange(self.domain_size)
        return ((j + 1) * (self.domain_size - j)).astype(float)

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """The (s, t) of every query, in the order of :meth:`answer`."""
        s, t = np.triu_indices(self.domain_size)
        return s, t

    def answer(self, histogram_counts: ArrayLike) -> np.ndarray:
        x = self._check_histogram(histogram_counts)
        prefix = np.concatenate([np.zeros(x.shape[:-1] + (1,)), np.cumsum(x, axis=-1)], axis=-1)
        s, t = self.intervals()
        return prefix[..., t + 1] - prefix[..., s]


def prefix_workload(d: int) -> PrefixWorkload:
    """The d prefix (threshold) queries over a domain of size d."""
    return PrefixWorkload(check_integer(d, "d", minimum=1))


def all_range_workload(d: int) -> AllRangeWorkload:
    """All d(d + 1)/2 interval queries over a domain of size d."""
    return AllRangeWorkload(check_integer(d, "d", minimum=1))
