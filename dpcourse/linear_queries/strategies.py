"""Strategy matrices for workload factorization: identity, prefix, hierarchical tree, Haar wavelet.

A strategy A (d columns, one per cell of the histogram x) is what the matrix mechanism answers
with noise; :func:`l1_sensitivity` gives ‖A‖₁ for add/remove or replace-one neighbours. The
b-ary hierarchical tree (Hay, Rastogi, Miklau & Suciu 2010; Qardaji, Yang & Li 2013) also
answers an interval from its canonical decomposition (:func:`canonical_decomposition`,
:func:`answer_by_decomposition`); the Haar wavelet is Privelet's (Xiao, Wang & Gehrke 2010).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse

from .._validation import ArrayLike, check_array, check_choice, check_integer

__all__ = [
    "NEIGHBOURS",
    "NOISES",
    "Strategy",
    "answer_by_decomposition",
    "canonical_decomposition",
    "hierarchical_strategy",
    "identity_strategy",
    "l1_sensitivity",
    "prefix_strategy",
    "wavelet_strategy",
]


NOISES = ("laplace", "gaussian")
NEIGHBOURS = ("add_remove", "replace_one")


@dataclass(frozen=True, eq=False)
class Strategy:
    """A strategy matrix A (``scipy.sparse`` CSR, one column per cell), with its sensitivities.

    Hierarchical strategies also keep their tree: ``level_sizes[ℓ]`` cells per node at level ℓ
    (leaves are level 0), ``branching`` and whether the root is measured. Rows are ordered
    level by level from the leaves, nodes left to right. Nothing is checked here: the builders
    (:func:`identity_strategy`, :func:`prefix_strategy`, :func:`hierarchical_strategy`,
    :func:`wavelet_strategy`) make consistent strategies.

    Parameters
    ----------
    matrix : scipy.sparse.csr_array, shape (m, d)
        A, one strategy query per row and one cell per column.
    name : str
        A label for tables and legends; the least-squares solver and the shipped table of exact
        errors also recognise the built-in strategies by it (with a check of the matrix).
    branching : int or None, optional
        The branching b of a hierarchical strategy; None (the default) for any other strategy.
    level_sizes : tuple of int, optional
        For a tree, the number of cells per node at each level, leaves (1) first; empty otherwise.
    include_root : bool, optional
        For a tree, whether the root (the total) is measured; default True.
    """

    matrix: sparse.csr_array
    name: str
    branching: int | None = None
    level_sizes: tuple[int, ...] = ()
    include_root: bool = True

    @property
    def domain_size(self) -> int:
        """d, the number of columns (cells) of A."""
        return int(self.matrix.shape[1])

    @property
    def num_queries(self) -> int:
        """m, the number of rows of A."""
        return int(self.matrix.shape[0])

    @property
    def l1_sensitivity(self) -> float:
        """‖A‖₁: the largest column L1 norm (adding or removing one record changes A x by one column)."""
        return float(self._column_sums(np.abs).max())

    @property
    def l2_sensitivity(self) -> float:
        """‖A‖₂: the largest column L2 norm (the L2 sensitivity under add/remove)."""
        return float(np.sqrt(self._column_sums(np.square).max()))

    def _column_sums(self, entrywise: Any) -> np.ndarray:
        """Σ over each column of ``entrywise`` applied to the stored entries: one bincount, no sparse copy."""
        a = self.matrix if getattr(self.matrix, "format", None) == "csr" else sparse.csr_array(self.matrix)
        return np.bincount(a.indices, weights=entrywise(a.data), minlength=self.domain_size)

    @property
    def is_tree(self) -> bool:
        """Whether this is a hierarchical strategy (it has a ``branching``)."""
        return self.branching is not None

    def level_counts(self) -> list[int]:
        """Number of nodes at each level, leaves first (the root level last, if measured).

        Returns
        -------
        list of int
            ⌈d / size⌉ for each ``size`` in ``level_sizes``; empty for a strategy that is not a tree.
        """
        d = self.domain_size
        return [-(-d // size) for size in self.level_sizes]

    def gram(self) -> np.ndarray:
        """AᵀA as a dense array.

        For a tree, (AᵀA)_{jl} is the number of levels at which cells j and l share a node,
        built level by level (faster than the sparse product, whose result is dense).

        Returns
        -------
        numpy.ndarray
            AᵀA as floats, shape ``(d, d)``, computed afresh on every call.
        """
        if not self.is_tree:
            return (self.matrix.T @ self.matrix).toarray()
        cells = np.arange(self.domain_size)
        gram = np.zeros((self.domain_size, self.domain_size))
        for size in self.level_sizes:
            node = cells // size
            gram += node[:, None] == node[None, :]
        return gram


def l1_sensitivity(strategy: Strategy, *, neighbours: str = "add_remove") -> float:
    """The L1 sensitivity of x ↦ A x under one of two neighbouring relations.

    ``"add_remove"``: neighbours differ by one record added or removed (the lecture's
    ‖x − y‖₁ ≤ 1, notebook 01), so x moves by one basis vector e_u and Δ₁ = maxᵤ ‖A eᵤ‖₁,
    the largest column L1 norm (:attr:`Strategy.l1_sensitivity`).

    ``"replace_one"``: neighbours have the same n and differ in one record's value (the notes'
    data x ∈ 𝒰ⁿ), so x moves by eᵤ − e_v and Δ₁ = max_{u ≠ v} ‖A eᵤ − A e_v‖₁, at most twice
    the add/remove value (triangle inequality). For a tree with its root, two cells under
    different children of the root are in different nodes at every level below it, so
    Δ₁ = 2·(levels − 1): exactly 2 log₂ d for the binary tree over d = 2ʰ cells, where the
    add/remove value is log₂ d + 1.

    For strategies with entries in {−1, 0, 1} (all of this module's) the pairwise distances
    come from Gram matrices, Σᵢ|aᵢᵤ − aᵢᵥ| = ‖aᵤ‖₁ + ‖aᵥ‖₁ − (AᵀA)ᵤᵥ − (|A|ᵀ|A|)ᵤᵥ, in blocks
    of rows; other strategies are compared pair by pair (guarded against large d).

    Parameters
    ----------
    strategy : Strategy
        The strategy A.
    neighbours : {"add_remove", "replace_one"}, optional
        The neighbouring relation (default ``"add_remove"``).

    Returns
    -------
    float
        Δ₁ of x ↦ A x under ``neighbours`` (0 for replace-one on a single cell).

    Raises
    ------
    TypeError
        If ``strategy`` is not a :class:`Strategy`.
    ValueError
        If ``neighbours`` is unknown, or for replace-one on a strategy with an entry outside {−1, 0, 1} whose
        pairwise comparison would take more than 10⁹ operations (rows × d²).

    Examples
    --------
    >>> tree = hierarchical_strategy(8)
    >>> l1_sensitivity(tree), l1_sensitivity(tree, neighbours="replace_one")
    (4.0, 6.0)
    """
    if not isinstance(strategy, Strategy):
        raise TypeError(f"strategy must be a Strategy; got {type(strategy).__name__}")
    check_choice(neighbours, "neighbours", NEIGHBOURS)
    if neighbours == "add_remove":
        return strategy.l1_sensitivity
    a = strategy.matrix.tocsc()
    d = strategy.domain_size
    if d < 2:
        return 0.0  # no two different cells to swap a record between
    column_norms = np.asarray(abs(a).sum(axis=0)).ravel()
    best, block = 0.0, 512
    if np.all(np.isin(a.data, (-1.0, 0.0, 1.0))):
        absolute = abs(a)
        for start in range(0, d, block):
            stop = min(start + block, d)
            signed = (a[:, start:stop].T @ a).toarray()
            unsigned = (absolute[:, start:stop].T @ absolute).toarray()
            distances = column_norms[start:stop, None] + column_norms[None, :] - signed - unsigned
            best = max(best, float(distances.max()))
        return best
    if a.shape[0] * d * d > 10**9:
        raise ValueError(
            f"strategy is too large for the pairwise replace-one sensitivity of a general matrix "
            f"({a.shape[0]} rows × d = {d} cells); use entries in {{-1, 0, 1}}"
        )
    dense = a.toarray()
    for u in range(d):
        best = max(best, float(np.abs(dense - dense[:, [u]]).sum(axis=0).max()))
    return best


def _csr(
    rows: ArrayLike, cols: ArrayLike, values: ArrayLike, shape: tuple[int, int], name: str, **tree: Any
) -> Strategy:
    matrix = sparse.csr_array((np.asarray(values, dtype=float), (rows, cols)), shape=shape)
    return Strategy(matrix, name, **tree)


def identity_strategy(d: int) -> Strategy:
    """Answer every cell (the histogram): A = I, ‖A‖₁ = 1.

    Parameters
    ----------
    d : int
        The number of cells, ≥ 1.

    Returns
    -------
    Strategy
        The d × d identity, named ``"identity"``.

    Raises
    ------
    ValueError
        If ``d`` < 1.
    TypeError
        If ``d`` is not an integer.
    """
    d = check_integer(d, "d", minimum=1)
    return Strategy(sparse.eye_array(d, format="csr"), "identity")


def prefix_strategy(d: int) -> Strategy:
    """Answer the d prefix sums: ‖A‖₁ = d (the first cell is in every prefix); any interval is a difference of two.

    Parameters
    ----------
    d : int
        The number of cells, ≥ 1.

    Returns
    -------
    Strategy
        The d × d lower triangle of ones (row t is the prefix ending at cell t), named ``"prefix"``.

    Raises
    ------
    ValueError
        If ``d`` < 1.
    TypeError
        If ``d`` is not an integer.
    """
    d = check_integer(d, "d", minimum=1)
    rows, cols = np.tril_indices(d)
    return _csr(rows, cols, np.ones(rows.size), (d, d), "prefix")


def hierarchical_strategy(d: int, branching: int = 2, include_root: bool = True) -> Strategy:
    """The b-ary tree of intervals: leaves are cells; a node at level ℓ covers b^ℓ consecutive cells.

    Works for any d ≥ 1 (the last node of a level covers what is left) and any b ≥ 2. Each cell
    is in one node per level, so ‖A‖₁ = the number of levels, ⌈log_b d⌉ + 1 with the root, when
    neighbours add or remove a record (replace-one: 2⌈log_b d⌉, see :func:`l1_sensitivity`).

    Parameters
    ----------
    d : int
        The number of cells, ≥ 1.
    branching : int, optional
        The branching b, ≥ 2 (default 2).
    include_root : bool, optional
        Whether to measure the root (the total of all cells); default True. Without it the top level is
        the one below the root (a single cell, d = 1, keeps its one level).

    Returns
    -------
    Strategy
        The tree's rows level by level from the leaves, with ``branching``, ``level_sizes`` and
        ``include_root`` set, named ``"b-ary tree"`` (``"b-ary tree (no root)"`` without the root).

    Raises
    ------
    ValueError
        If ``d`` < 1 or ``branching`` < 2.
    TypeError
        If ``d`` or ``branching`` is not an integer, or ``include_root`` is not a bool.
    """
    d = check_integer(d, "d", minimum=1)
    b = check_integer(branching, "branching", minimum=2)
    if not isinstance(include_root, bool):
        raise TypeError(f"include_root must be True or False; got {include_root!r}")
    sizes = [1]
    while sizes[-1] < d:
        sizes.append(sizes[-1] * b)
    if not include_root and len(sizes) > 1:
        sizes = sizes[:-1]
    # Rows level by level, nodes left to right: a node's cells are consecutive, so the column indices are the
    # cells 0 … d − 1 once per level and each row's length is its node's size (the last node of a level is cut at d).
    lengths = [np.minimum(size, d - np.arange(0, d, size)) for size in sizes]
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(lengths))])
    offset = indptr.size - 1
    matrix = sparse.csr_array((np.ones(d * len(sizes)), np.tile(np.arange(d), len(sizes)), indptr), shape=(offset, d))
    name = f"{b}-ary tree" + ("" if include_root else " (no root)")
    return Strategy(matrix, name, branching=b, level_sizes=tuple(sizes), include_root=include_root)


def wavelet_strategy(d: int) -> Strategy:
    """The (unnormalised) Haar wavelet: the total, and for every node of the binary tree, left half − right half.

    d rows for d cells (square and invertible); each cell is in the total and in one row per
    level above it, so ‖A‖₁ = 1 + ⌈log₂ d⌉. For d not a power of two the halves are split as evenly as possible.

    Parameters
    ----------
    d : int
        The number of cells, ≥ 1.

    Returns
    -------
    Strategy
        The d × d matrix with entries in {−1, 0, 1}, the total first, named ``"Haar wavelet"``.

    Raises
    ------
    ValueError
        If ``d`` < 1.
    TypeError
        If ``d`` is not an integer.
    """
    d = check_integer(d, "d", minimum=1)
    rows, cols, values = [np.zeros(d, dtype=int)], [np.arange(d)], [np.ones(d)]
    stack, row = [(0, d)], 1
    while stack:
        lo, hi = stack.pop()
        if hi - lo < 2:
            continue
        mid = lo + (hi - lo + 1) // 2
        rows.append(np.full(hi - lo, row))
        cols.append(np.arange(lo, hi))
        values.append(np.r_[np.ones(mid - lo), -np.ones(hi - mid)])
        row += 1
        stack += [(lo, mid), (mid, hi)]
    return _csr(np.concatenate(rows), np.concatenate(cols), np.concatenate(values), (row, d), "Haar wavelet")


# --------------------------------------------------------------------------------------
# Canonical decomposition of an interval on the tree
# --------------------------------------------------------------------------------------
def canonical_decomposition(strategy: Strategy, s: int, t: int) -> list[tuple[int, int]]:
    """The fewest tree nodes whose intervals partition [s, t]: a list of (level, index).

    Climbing from the leaves, at each level take the nodes at the two ends of what is left until
    both ends line up with the next level's nodes; at most 2(b − 1) nodes per level, so at most
    2(b − 1)·⌈log_b d⌉ in all.

    Parameters
    ----------
    strategy : Strategy
        A hierarchical strategy (:func:`hierarchical_strategy`).
    s, t : int
        The first and last cell of the interval, 0 ≤ s ≤ t ≤ d − 1.

    Returns
    -------
    list of tuple of (int, int)
        The nodes as (level, index within the level), leaves at level 0, sorted.

    Raises
    ------
    ValueError
        If ``strategy`` is not a tree, or ``s`` or ``t`` is outside 0 ≤ s ≤ t ≤ d − 1.
    TypeError
        If ``s`` or ``t`` is not an integer.
    """
    if not strategy.is_tree:
        raise ValueError(f"strategy must be a hierarchical strategy; got {strategy.name!r}")
    d = strategy.domain_size
    s = check_integer(s, "s", minimum=0, maximum=d - 1)
    t = check_integer(t, "t", minimum=s, maximum=d - 1)
    lo, hi, nodes = s, t + 1, []
    sizes = strategy.level_sizes
    for level, size in enumerate(sizes):
        if lo >= hi:
            break
        if level == len(sizes) - 1:  # top level: every node left inside [lo, hi)
            nodes += [(level, j) for j in range(lo // size, -(-hi // size))]
            break
        parent = sizes[level + 1]
        while lo < hi and lo % parent:  # the left end, up to the next parent boundary
            nodes.append((level, lo // size))
            lo = min(lo + size, d)
        while lo < hi and hi % parent and hi != d:  # the right end (the last, truncated parent counts as aligned)
            hi -= size
            nodes.append((level, hi // size))
    return sorted(nodes)


def answer_by_decomposition(strategy: Strategy, noisy_answers: ArrayLike, s: int, t: int) -> np.ndarray:
    """The interval [s, t] answered by summing the noisy answers of its canonical nodes (no least squares).

    Parameters
    ----------
    strategy : Strategy
        A hierarchical strategy (:func:`hierarchical_strategy`).
    noisy_answers : array_like, shape (m,) or (trials, m)
        The noisy answers to the strategy's m rows, in its row order (NaN and ∞ pass through).
    s, t : int
        The first and last cell of the interval, 0 ≤ s ≤ t ≤ d − 1.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        The interval's estimate: one number, or shape ``(trials,)``.

    Raises
    ------
    ValueError
        If ``strategy`` is not a tree, ``s`` or ``t`` is outside 0 ≤ s ≤ t ≤ d − 1, or ``noisy_answers`` is
        not 1- or 2-dimensional, is empty or does not have one entry per strategy row on its last axis.
    TypeError
        If ``s`` or ``t`` is not an integer, or ``noisy_answers`` is not an array of numbers.
    """
    offsets = np.concatenate([[0], np.cumsum(strategy.level_counts())])
    rows = [offsets[level] + index for level, index in canonical_decomposition(strategy, s, t)]
    answers = check_array(noisy_answers, "noisy_answers", ndim=(1, 2), finite=False)
    if answers.shape[-1] != strategy.num_queries:
        raise ValueError(
            f"noisy_answers must have one entry per strategy row ({strategy.num_queries}) on the last "
            f"axis; got shape {answers.shape}"
        )
    return answers[..., rows].sum(axis=-1)
