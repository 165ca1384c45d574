"""Linear queries over a histogram: dense, sparse, and conjunctions over {0, 1}^d.

A linear query is a vector q ∈ [0, 1]^|𝒳| with normalised answer q·p. Queries may be given as a
dense vector, a 1 × |𝒳| ``scipy.sparse`` row, or a :class:`ConjunctionQuery` (a k-way marginal
cell over 𝒳 = {0, 1}^d, stored as a few small integers and evaluated on a strided view, so
neither the query nor its support is ever materialised). ``_as_query`` wraps each form in one
small interface (dot, support, scale) that the MW step uses; every per-query step costs
O(|support of q|). Also the random conjunction workloads and product-distribution histograms
that notebook 06 runs on.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_array,
    check_integer,
    check_positive,
    check_size,
    check_unit_interval_array,
)

__all__ = [
    "ConjunctionQuery",
    "ConjunctionWorkload",
    "conjunction_workload",
    "product_histogram",
]


# --------------------------------------------------------------------------------------
# Linear queries: dense, sparse, conjunctions
# --------------------------------------------------------------------------------------
def _checked_conjunctions(
    num_bits: int, attributes: ArrayLike, values: ArrayLike
) -> tuple[int, np.ndarray, np.ndarray]:
    """``(d, attributes, values)`` of conjunctions, one per row (``int8`` arrays of the same shape), checked:
    d bits (1 to 30), attributes distinct bit positions in [0, d − 1] within a row, values 0 or 1."""
    d = check_integer(num_bits, "num_bits", minimum=1, maximum=30)
    attrs = check_array(attributes, "attributes", ndim=2, min_size=0)
    vals = check_array(values, "values", shape=attrs.shape, min_size=0)
    if np.any(attrs != np.round(attrs)) or np.any(attrs < 0) or np.any(attrs > d - 1):
        raise ValueError(f"attributes must be bit positions, integers in [0, {d - 1}]")
    if np.any((vals != 0) & (vals != 1)):
        raise ValueError("values must be 0 or 1")
    if attrs.shape[1] > 1 and np.any(np.diff(np.sort(attrs, axis=1), axis=1) == 0):
        raise ValueError("attributes must be distinct bit positions in each query")
    return d, attrs.astype(np.int8), vals.astype(np.int8)


@dataclass(frozen=True)
class ConjunctionQuery:
    """q(u) = 1 if bit ``attributes[j]`` of u equals ``values[j]`` for every j, else 0, over 𝒳 = {0, 1}^d.

    A w-way marginal cell ("how many people have attribute 3 = 1 and attribute 7 = 0?").
    Stored as 2w small integers; :meth:`view` returns its support as a strided view of any
    vector over 𝒳 (cell u has bit j = (u >> j) & 1), so q·v is ``view(v).sum()``.

    Attributes
    ----------
    num_bits : int
        d, the number of binary attributes, 1 to 30 (|𝒳| = 2^d).
    attributes : tuple of int
        The w distinct bit positions the query looks at, each in [0, d − 1] (w may be 0: the query
        counting everyone).
    values : tuple of int
        The value, 0 or 1, each of those bits must take (one per attribute).

    Raises
    ------
    ValueError
        If ``num_bits`` is not in [1, 30], an attribute is not a bit position in [0, d − 1] or appears
        twice, a value is not 0 or 1, or ``values`` and ``attributes`` differ in length.
    TypeError
        If ``num_bits`` is not an integer, or the attributes or values are not numbers.

    Examples
    --------
    >>> q = ConjunctionQuery(3, (0,), (1,))
    >>> q.dense().tolist()
    [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0]
    """

    num_bits: int
    attributes: tuple[int, ...]
    values: tuple[int, ...]

    def __post_init__(self) -> None:
        d, attrs, vals = _checked_conjunctions(self.num_bits, [self.attributes], [self.values])
        object.__setattr__(self, "num_bits", d)
        object.__setattr__(self, "attributes", tuple(attrs[0].tolist()))
        object.__setattr__(self, "values", tuple(vals[0].tolist()))

    @classmethod
    def _checked(cls, num_bits: int, attributes: tuple[int, ...], values: tuple[int, ...]) -> ConjunctionQuery:
        """A query from parts already checked (a row of a :class:`ConjunctionWorkload`), without checking again."""
        query = object.__new__(cls)
        object.__setattr__(query, "num_bits", num_bits)
        object.__setattr__(query, "attributes", attributes)
        object.__setattr__(query, "values", values)
        return query

    @property
    def domain_size(self) -> int:
        return 2**self.num_bits

    def _layout(self) -> tuple[tuple[int, ...], tuple]:
        """The shape to view a vector over 𝒳 in, and the index that picks the support (computed once per query)."""
        layout = self.__dict__.get("_layout_cache")
        if layout is None:
            shape, index, high = [], [], self.num_bits
            for a, v in sorted(zip(self.attributes, self.values, strict=False), reverse=True):
                shape += [2 ** (high - a - 1), 2]
                index += [slice(None), v]
                high = a
            shape.append(2**high)
            index.append(slice(None))
            layout = (tuple(shape), tuple(index))
            object.__setattr__(self, "_layout_cache", layout)
        return layout

    def view(self, vector: np.ndarray) -> np.ndarray:
        """The entries of ``vector`` (contiguous, length 2^d) on the query's support, as a writable view.

        Parameters
        ----------
        vector : numpy.ndarray, shape (2^d,)
            A C-contiguous vector over 𝒳 (not checked: this is the per-query inner loop).

        Returns
        -------
        numpy.ndarray
            A view of the 2^(d − w) entries the query counts (shaped by the query's strides); writing to
            it writes into ``vector``.
        """
        shape, index = self._layout()
        return vector.reshape(shape)[index]

    def dense(self) -> np.ndarray:
        """q as a dense 0/1 vector of length 2^d.

        Returns
        -------
        numpy.ndarray
            Shape (2^d,), float: 1.0 on the query's support, 0.0 elsewhere.
        """
        q = np.zeros(self.domain_size)
        self.view(q)[...] = 1.0
        return q


@dataclass(frozen=True)
class ConjunctionWorkload:
    """k conjunction queries over {0, 1}^d, stored as two ``(k, w)`` int8 arrays (2kw bytes in all).

    Indexing (``workload[i]``) and iteration give :class:`ConjunctionQuery` objects, the same object
    for a row each time; ``len(workload)`` is k.

    Attributes
    ----------
    num_bits : int
        d, the number of binary attributes, 1 to 30 (|𝒳| = 2^d).
    attributes : numpy.ndarray of int8, shape (k, w)
        Row i holds the w distinct bit positions of query i, each in [0, d − 1].
    values : numpy.ndarray of int8, shape (k, w)
        Row i holds the value, 0 or 1, each of those bits must take.

    Raises
    ------
    ValueError
        If ``num_bits`` is not in [1, 30], ``attributes`` is not 2-D, ``values`` does not have its shape,
        an attribute is not a bit position in [0, d − 1] or repeats within a row, or a value is not 0 or 1.
    TypeError
        If ``num_bits`` is not an integer, or the attributes or values are not numbers.
    """

    num_bits: int
    attributes: np.ndarray
    values: np.ndarray

    def __post_init__(self) -> None:
        """Check every row once, as :class:`ConjunctionQuery` does, so that indexing need not check again."""
        d, attrs, vals = _checked_conjunctions(self.num_bits, self.attributes, self.values)
        object.__setattr__(self, "num_bits", d)
        object.__setattr__(self, "attributes", attrs)
        object.__setattr__(self, "values", vals)

    def __len__(self) -> int:
        return int(self.attributes.shape[0])

    def __getitem__(self, i: int) -> ConjunctionQuery:
        i = operator.index(i)  # one query; a slice would not be a row
        k = self.attributes.shape[0]
        if not -k <= i < k:
            raise IndexError(f"query index {i} out of range for a workload of {k} queries")
        i %= k
        # the same object each time: a stream is asked again and again (PMW and its baselines, a notebook's
        # sweeps), and each query computes its strided view's layout once
        cache = self.__dict__.setdefault("_queries", {})
        query = cache.get(i)
        if query is None:
            query = cache[i] = ConjunctionQuery._checked(
                self.num_bits, tuple(self.attributes[i].tolist()), tuple(self.values[i].tolist())
            )
        return query

    def __iter__(self) -> Iterator[ConjunctionQuery]:
        queries = self.__dict__.get("_all")
        if queries is None:  # every query object once, then the same list for each pass over the stream
            queries = [self[i] for i in range(len(self))]
            object.__setattr__(self, "_all", queries)
        return iter(queries)

    @property
    def domain_size(self) -> int:
        return 2**self.num_bits

    def answers(self, vector: ArrayLike) -> np.ndarray:
        """q·v for every query: one strided sum per distinct query, shared by the queries that repeat it.

        Parameters
        ----------
        vector : array_like, shape (2^d,)
            A vector over 𝒳: a distribution p gives the normalised answers, a histogram x the counts.

        Returns
        -------
        numpy.ndarray
            Shape (k,): q_i·v for each query i, in the workload's order.

        Raises
        ------
        ValueError
            If ``vector`` does not have shape (2^d,) or has an entry that is not finite.
        TypeError
            If ``vector`` is not an array of numbers.
        """
        v = np.ascontiguousarray(check_array(vector, "vector", shape=(self.domain_size,)))
        if len(self) == 0:
            return np.zeros(0)
        # a query is its attribute set and the values on it, each a bit mask of at most 30 bits: one key of 60
        bits = np.left_shift(np.int64(1), self.attributes.astype(np.int64))
        keys = (bits.sum(axis=1) << 30) | (bits * self.values).sum(axis=1)
        _, first, which = np.unique(keys, return_index=True, return_inverse=True)
        distinct = np.array([_as_query(self[i], v.size).dot(v) for i in first.tolist()], dtype=float)
        return distinct[which.ravel()]

    def matrix(self) -> np.ndarray:
        """The dense ``(k, 2^d)`` query matrix (for small universes only).

        Returns
        -------
        numpy.ndarray
            Shape (k, 2^d), float: row i is query i's 0/1 vector (:meth:`ConjunctionQuery.dense`).
        """
        return np.vstack([q.dense() for q in self])


def conjunction_workload(
    num_queries: int, num_bits: int, *, width: int = 2, rng: RngLike = None
) -> ConjunctionWorkload:
    """``num_queries`` random w-way conjunctions: w distinct attributes and a random value for each.

    Each query's attributes are a uniformly random w-subset of the d bits, its values fair coin flips.

    Parameters
    ----------
    num_queries : int
        k ≥ 1, the number of queries.
    num_bits : int
        d ∈ [1, 30], the number of binary attributes (|𝒳| = 2^d).
    width : int, optional
        w ∈ [1, d], the number of attributes each query fixes (default 2: 2-way marginals).
    rng : int, numpy.random.Generator or None, optional
        Seed or generator for the draw.

    Returns
    -------
    ConjunctionWorkload
        The k queries, in the order drawn.

    Raises
    ------
    ValueError
        If ``num_queries`` < 1, ``num_bits`` is not in [1, 30], ``width`` is not in [1, d], or ``rng`` is a
        negative seed.
    TypeError
        If ``num_queries``, ``num_bits`` or ``width`` is not an integer, or ``rng`` is not a seed or a
        Generator.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    d = check_integer(num_bits, "num_bits", minimum=1, maximum=30)
    w = check_integer(width, "width", minimum=1, maximum=d)
    gen = as_generator(rng)
    attrs = np.argsort(gen.random((k, d)), axis=1)[:, :w].astype(np.int8)
    vals = gen.integers(0, 2, size=(k, w), dtype=np.int8)
    return ConjunctionWorkload(d, attrs, vals)


def product_histogram(n: int, num_bits: int, *, rng: RngLike = None, skew: float = 0.4) -> np.ndarray:
    """Counts of n records drawn from a product distribution on {0, 1}^d (bit j is 1 w.p. ½ + U(−skew, skew)).

    A dataset that is far from uniform (so MW has something to learn), drawn with one
    multinomial over the 2^d cells.

    Parameters
    ----------
    n : int
        The number of records, ≥ 1.
    num_bits : int
        d, the number of binary attributes (the histogram has 2^d cells): at most 21 in practice, where
        the cells' bit table still fits in 1 GiB.
    rng : int, numpy.random.Generator or None, optional
        Seed or generator; one draw picks the bits' probabilities, a second the records.
    skew : float, optional
        How far each bit's probability of 1 may fall from ½, in (0, 0.5) (default 0.4).

    Returns
    -------
    numpy.ndarray
        Shape (2^d,), float: the count of records in each cell u (bit j of u is (u >> j) & 1),
        summing to n.

    Raises
    ------
    ValueError
        If ``n`` < 1, ``num_bits`` is not in [1, 24] or is above 21 (the cells' bit table would need more
        than 1 GiB), ``skew`` is not in (0, 0.5), or ``rng`` is a negative seed.
    TypeError
        If ``n`` or ``num_bits`` is not an integer, ``skew`` is not a real number, or ``rng`` is not a seed
        or a Generator.
    """
    nn = check_integer(n, "n", minimum=1)
    d = check_integer(num_bits, "num_bits", minimum=1, maximum=24)
    s = check_positive(skew, "skew")
    if s >= 0.5:
        raise ValueError(f"skew must be in (0, 0.5); got {skew!r}")
    check_size(3 * 8 * d * 2**d, "num_bits")  # the 2^d × d bit table and its two products
    gen = as_generator(rng)
    ones = 0.5 + gen.uniform(-s, s, size=d)
    bits = (np.arange(2**d)[:, None] >> np.arange(d)) & 1
    probs = np.exp(bits @ np.log(ones) + (1 - bits) @ np.log1p(-ones))
    return gen.multinomial(nn, probs / probs.sum()).astype(float)


class _Dense:
    __slots__ = ("q",)

    def __init__(self, q: Any):
        self.q = q

    def dot(self, v: np.ndarray) -> float:
        return float(self.q @ v)

    def scale(self, w: np.ndarray, coef: float) -> None:
        w *= np.exp(coef * self.q)


class _Sparse:
    __slots__ = ("idx", "data")

    def __init__(self, idx: np.ndarray, data: np.ndarray):
        self.idx, self.data = idx, data

    def dot(self, v: np.ndarray) -> float:
        return float(v[self.idx] @ self.data)

    def scale(self, w: np.ndarray, coef: float) -> None:
        w[self.idx] *= np.exp(coef * self.data)


class _Conj:
    """A conjunction's strided view, laid out once per query (PMW asks the same query objects again and again)."""

    __slots__ = ("shape", "index", "domain_size")

    def __init__(self, q: ConjunctionQuery):
        self.shape, self.index = q._layout()
        self.domain_size = q.domain_size

    def dot(self, v: np.ndarray) -> float:
        return float(np.add.reduce(v.reshape(self.shape)[self.index], axis=None))  # = .sum(), one call less

    def scale(self, w: np.ndarray, coef: float) -> None:
        support = w.reshape(self.shape)[self.index]
        support *= np.exp(coef)


def _as_query(query: Any, domain_size: int) -> _Dense | _Sparse | _Conj:
    """Validate a query (dense vector, 1 × |𝒳| sparse row, or ConjunctionQuery) and wrap it."""
    if isinstance(query, ConjunctionQuery):
        wrapped = query.__dict__.get("_wrapped")  # checked when the query was made; wrapped once
        if wrapped is None:
            wrapped = _Conj(query)
            object.__setattr__(query, "_wrapped", wrapped)
        if wrapped.domain_size != domain_size:
            raise ValueError(f"query must be over a universe of {domain_size} cells; this one has {query.domain_size}")
        return wrapped
    if sparse.issparse(query):
        row = sparse.csr_array(query, dtype=float)
        if row.shape != (1, domain_size):
            raise ValueError(f"query must have shape (1, {domain_size}) as a sparse row; got {row.shape}")
        data = check_unit_interval_array(row.data, "query", min_size=0)
        return _Sparse(row.indices, data)
    q = check_unit_interval_array(query, "query", shape=(domain_size,))
    return _Dense(q)
