"""Workload factorization: answer a strategy A with noise, reconstruct the workload W by least squares.

The linear-queries notes end with: *given a target workload of queries, what is the best
subset to answer?* The **matrix mechanism** (Li, Hay, Rastogi, Miklau & McGregor 2010)
answers a strategy matrix A (d columns, one per cell of the histogram x) with the Laplace
mechanism, y = A x + Lap(‖A‖₁/ε) (‖A‖₁ = the largest column L1 norm, the sensitivity of
x ↦ A x when neighbours add or remove one record; :func:`l1_sensitivity` also gives the
replace-one value), or the Gaussian mechanism with ‖A‖₂, then estimates x̂ = A⁺y by least squares and
answers the workload as W x̂. Its expected total squared error is, with b = ‖A‖₁/ε,

    E‖W x̂ − W x‖² = 2b² · trace(WᵀW (AᵀA)⁻¹)   (Laplace; σ² · trace(…) for Gaussian),

which needs W only through its Gram matrix WᵀW, so workloads with millions of queries never
have to be written down.

Strategies here: the identity (the histogram), prefix sums, the b-ary hierarchical tree
(Hay, Rastogi, Miklau & Suciu 2010; Qardaji, Yang & Li 2013) and the Haar wavelet
(Privelet, Xiao, Wang & Gehrke 2010).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.linalg
from scipy import sparse
from scipy.sparse import linalg as sparse_linalg

from ._validation import (
    as_generator,
    check_array,
    check_choice,
    check_epsilon,
    check_integer,
    check_probability,
    check_size,
    check_trials,
)
from .data import DIRECTORY, load_table
from .mechanisms import gaussian_sigma
from .queries import Workload

__all__ = [
    "NOISES",
    "Strategy",
    "answer_by_decomposition",
    "canonical_decomposition",
    "expected_error",
    "hierarchical_strategy",
    "identity_strategy",
    "l1_sensitivity",
    "least_squares",
    "matrix_mechanism",
    "NEIGHBOURS",
    "noise_variance",
    "prefix_strategy",
    "sampled_error",
    "svd_lower_bound",
    "tree_least_squares",
    "wavelet_strategy",
]

NOISES = ("laplace", "gaussian")
NEIGHBOURS = ("add_remove", "replace_one")


@dataclass(frozen=True, eq=False)
class Strategy:
    """A strategy matrix A (``scipy.sparse`` CSR, one column per cell), with its sensitivities.

    Hierarchical strategies also keep their tree: ``level_sizes[ℓ]`` cells per node at level ℓ
    (leaves are level 0), ``branching`` and whether the root is measured. Rows are ordered
    level by level from the leaves, nodes left to right.
    """

    matrix: sparse.csr_array
    name: str
    branching: int | None = None
    level_sizes: tuple[int, ...] = ()
    include_root: bool = True

    @property
    def domain_size(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def num_queries(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def l1_sensitivity(self) -> float:
        """‖A‖₁: the largest column L1 norm (adding or removing one record changes A x by one column)."""
        return float(np.max(np.asarray(abs(self.matrix).sum(axis=0)).ravel()))

    @property
    def l2_sensitivity(self) -> float:
        """‖A‖₂: the largest column L2 norm (the L2 sensitivity under add/remove)."""
        return float(np.sqrt(np.max(np.asarray(self.matrix.multiply(self.matrix).sum(axis=0)).ravel())))

    @property
    def is_tree(self) -> bool:
        return self.branching is not None

    def level_counts(self) -> list[int]:
        """Number of nodes at each level, leaves first (the root level last, if measured)."""
        d = self.domain_size
        return [-(-d // size) for size in self.level_sizes]

    def gram(self) -> np.ndarray:
        """AᵀA as a dense array.

        For a tree, (AᵀA)_{jl} is the number of levels at which cells j and l share a node,
        built level by level (faster than the sparse product, whose result is dense).
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
        raise ValueError(f"strategy is too large for the pairwise replace-one sensitivity of a general matrix "
                         f"({a.shape[0]} rows × d = {d} cells); use entries in {{-1, 0, 1}}")
    dense = a.toarray()
    for u in range(d):
        best = max(best, float(np.abs(dense - dense[:, [u]]).sum(axis=0).max()))
    return best


def _csr(rows, cols, values, shape, name, **tree) -> Strategy:
    matrix = sparse.csr_array((np.asarray(values, dtype=float), (rows, cols)), shape=shape)
    return Strategy(matrix, name, **tree)


def identity_strategy(d: int) -> Strategy:
    """Answer every cell (the histogram): A = I, ‖A‖₁ = 1."""
    d = check_integer(d, "d", minimum=1)
    return Strategy(sparse.eye_array(d, format="csr"), "identity")


def prefix_strategy(d: int) -> Strategy:
    """Answer the d prefix sums: ‖A‖₁ = d (the first cell is in every prefix); any interval is a difference of two."""
    d = check_integer(d, "d", minimum=1)
    rows, cols = np.tril_indices(d)
    return _csr(rows, cols, np.ones(rows.size), (d, d), "prefix")


def hierarchical_strategy(d: int, branching: int = 2, include_root: bool = True) -> Strategy:
    """The b-ary tree of intervals: leaves are cells; a node at level ℓ covers b^ℓ consecutive cells.

    Works for any d ≥ 1 (the last node of a level covers what is left) and any b ≥ 2. Each cell
    is in one node per level, so ‖A‖₁ = the number of levels, ⌈log_b d⌉ + 1 with the root, when
    neighbours add or remove a record (replace-one: 2⌈log_b d⌉, see :func:`l1_sensitivity`).
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
    cells = np.arange(d)
    rows, offset = [], 0
    for size in sizes:
        rows.append(offset + cells // size)
        offset += -(-d // size)
    rows = np.concatenate(rows)
    cols = np.tile(cells, len(sizes))
    name = f"{b}-ary tree" + ("" if include_root else " (no root)")
    return _csr(rows, cols, np.ones(rows.size), (offset, d), name, branching=b, level_sizes=tuple(sizes),
                include_root=include_root)


def wavelet_strategy(d: int) -> Strategy:
    """The (unnormalised) Haar wavelet: the total, and for every node of the binary tree, left half − right half.

    d rows for d cells (square and invertible); each cell is in the total and in one row per
    level above it, so ‖A‖₁ = 1 + ⌈log₂ d⌉. For d not a power of two the halves are split as evenly as possible.
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
# Noise and least squares
# --------------------------------------------------------------------------------------
def noise_variance(strategy: Strategy, *, epsilon: float, noise: str = "laplace", delta: float | None = None) -> float:
    """Variance of the noise on each strategy answer: 2(‖A‖₁/ε)² (Laplace) or σ² with Δ₂ = ‖A‖₂ (Gaussian, analytic)."""
    check_choice(noise, "noise", NOISES)
    eps = check_epsilon(epsilon)
    if delta is not None:  # only the Gaussian uses δ, but a δ given is checked either way
        check_probability(delta, "delta")
    if noise == "laplace":
        return 2.0 * (strategy.l1_sensitivity / eps) ** 2
    return gaussian_sigma(l2_sensitivity=strategy.l2_sensitivity, epsilon=eps,
                          delta=check_probability(delta, "delta")) ** 2


def tree_least_squares(strategy: Strategy, noisy_answers) -> np.ndarray:
    """Least-squares cell estimates from noisy answers of a hierarchical strategy, in O(number of nodes).

    Two passes over the tree (Hay, Rastogi, Miklau & Suciu 2010, generalised to any tree):
    bottom-up, each node's estimate from its own subtree combines its measurement with the sum
    of its children's estimates, weighted by inverse variance; top-down, the difference between
    a node's final estimate and the sum of its children's subtree estimates is shared among the
    children in proportion to their variances. This is exact Gaussian belief propagation on a
    tree, so it equals least squares (tests check it against ``scipy``'s solver); on a complete
    b-ary tree it reduces to Hay et al.'s formulas.

    ``noisy_answers`` has shape ``(num_queries,)`` or ``(trials, num_queries)``; returns ``(…, d)``.
    """
    if not strategy.is_tree:
        raise ValueError(f"strategy must be a hierarchical strategy; got {strategy.name!r}")
    y = check_array(noisy_answers, "noisy_answers", ndim=(1, 2))
    if y.shape[-1] != strategy.num_queries:
        raise ValueError(f"noisy_answers must have {strategy.num_queries} entries on the last axis; got {y.shape}")
    single = y.ndim == 1
    y = np.atleast_2d(y)
    b, counts = strategy.branching, strategy.level_counts()
    levels = np.split(y, np.cumsum(counts)[:-1], axis=1)
    # without a root, the top level's nodes have no parent and are simply estimated independently
    z, var = [levels[0]], [np.ones(counts[0])]
    child_starts, sums, sum_vars = [], [], []
    for level in range(1, len(counts)):
        starts = np.arange(0, counts[level - 1], b)
        s = np.add.reduceat(z[-1], starts, axis=1)
        vs = np.add.reduceat(var[-1], starts)
        child_starts.append(starts)
        sums.append(s)
        sum_vars.append(vs)
        weight = 1.0 / (1.0 + 1.0 / vs)  # measurement variance 1, children's sum variance vs
        z.append(weight * levels[level] + (1 - weight) * s)
        var.append(weight)
    estimate = z[-1]
    for level in range(len(counts) - 1, 0, -1):
        parent = np.arange(counts[level - 1]) // b
        residual = estimate - sums[level - 1]
        estimate = z[level - 1] + (var[level - 1] / sum_vars[level - 1][parent]) * residual[:, parent]
    return estimate[0] if single else estimate


def least_squares(strategy: Strategy, noisy_answers) -> np.ndarray:
    """x̂ = A⁺y for ``noisy_answers`` y of shape ``(m,)`` or ``(trials, m)``.

    Trees use :func:`tree_least_squares` (O(d)); square strategies are inverted with a sparse LU
    factorisation; anything else solves the normal equations AᵀA x̂ = Aᵀy by Cholesky.
    """
    if strategy.is_tree:
        return tree_least_squares(strategy, noisy_answers)
    y = check_array(noisy_answers, "noisy_answers", ndim=(1, 2))
    if y.shape[-1] != strategy.num_queries:
        raise ValueError(f"noisy_answers must have {strategy.num_queries} entries on the last axis; got {y.shape}")
    a = strategy.matrix
    if a.shape[0] == a.shape[1]:
        return sparse_linalg.splu(a.tocsc()).solve(np.ascontiguousarray(y.T)).T
    factor = scipy.linalg.cho_factor(strategy.gram())
    return scipy.linalg.cho_solve(factor, (a.T @ y.T)).T


def matrix_mechanism(histogram, strategy: Strategy, *, epsilon: float, noise: str = "laplace",
                     delta: float | None = None, rng=None, trials: int | None = None) -> np.ndarray:
    """Answer ``strategy`` with noise and return the least-squares estimate x̂ of the histogram.

    Answer any workload from it with ``workload.answer(x̂)``. Shape ``(d,)`` or ``(trials, d)``.

    Privacy
    -------
    For neighbours that add or remove one record, A x has L1 sensitivity ‖A‖₁ and L2
    sensitivity ‖A‖₂, so Lap(‖A‖₁/ε) noise is ε-DP and
    Gaussian noise calibrated to ‖A‖₂ is (ε, δ)-DP; x̂ and every answer from it are post-processing.
    """
    x = check_array(histogram, "histogram", ndim=1)
    if x.size != strategy.domain_size:
        raise ValueError(f"histogram must have {strategy.domain_size} cells; got {x.size}")
    sd = np.sqrt(noise_variance(strategy, epsilon=epsilon, noise=noise, delta=delta))
    shape = (1 if trials is None else check_trials(trials), strategy.num_queries)
    gen = as_generator(rng)
    z = gen.laplace(0.0, sd / np.sqrt(2), size=shape) if noise == "laplace" else gen.normal(0.0, sd, size=shape)
    estimate = least_squares(strategy, strategy.matrix @ x + z)
    return estimate[0] if trials is None else estimate


def _check_match(workload: Workload, strategy: Strategy):
    if workload.domain_size != strategy.domain_size:
        raise ValueError(f"workload and strategy must share the domain size; got {workload.domain_size} and "
                         f"{strategy.domain_size}")


def sampled_error(workload: Workload, strategy: Strategy, histogram, *, epsilon: float, noise: str = "laplace",
                  delta: float | None = None, rng=None, trials: int = 100) -> np.ndarray:
    """Per trial, the measured mean squared error per workload query of the matrix mechanism.

    Computed as eᵀ(WᵀW)e / |W| with e = x̂ − x, which equals the mean of (W x̂ − W x)² over the
    workload's queries without listing them.
    """
    _check_match(workload, strategy)
    estimate = matrix_mechanism(histogram, strategy, epsilon=epsilon, noise=noise, delta=delta, rng=rng,
                                trials=check_integer(trials, "trials", minimum=1))
    e = estimate - np.asarray(histogram, dtype=float)
    from .queries import AllRangeWorkload

    if isinstance(workload, AllRangeWorkload):
        # Σ over intervals [s, t] of (eₛ + … + eₜ)² = Σ_{0≤i<j≤d} (Pⱼ − Pᵢ)² over the prefix sums P
        # (P₀ = 0) = (d + 1)·Σᵢ (Pᵢ − P̄)²: O(d) per trial instead of a d × d Gram matrix
        prefix = np.concatenate([np.zeros((e.shape[0], 1)), np.cumsum(e, axis=1)], axis=1)
        centred = prefix - prefix.mean(axis=1, keepdims=True)
        return prefix.shape[1] * np.sum(centred**2, axis=1) / workload.num_queries
    return np.sum((e @ workload.gram()) * e, axis=1) / workload.num_queries


def _trace_gram_inverse(gram_w: np.ndarray, gram_a: np.ndarray) -> float:
    """trace(WᵀW (AᵀA)⁻¹) by a Cholesky factorisation and LAPACK's inverse from it."""
    factor, _ = scipy.linalg.cho_factor(gram_a, lower=True, overwrite_a=True)
    inverse, info = scipy.linalg.lapack.dpotri(factor, lower=True)
    if info != 0:
        raise np.linalg.LinAlgError("the strategy does not determine every cell (AᵀA is singular)")
    # LAPACK fills only the lower triangle: clear the rest in row blocks (no d×d temporaries), then
    # trace(G M⁻¹) = Σᵢⱼ Gᵢⱼ(M⁻¹)ᵢⱼ = 2·Σ_{i≥j} − Σ_{i=j}, with one BLAS dot product.
    d = inverse.shape[0]
    for start in range(0, d, 512):
        stop = min(start + 512, d)
        inverse[start:stop, stop:] = 0.0
        inverse[start:stop, start:stop] = np.tril(inverse[start:stop, start:stop])
    return float(2.0 * np.vdot(gram_w, inverse) - np.dot(np.diag(gram_w), np.diag(inverse)))


def expected_error(workload: Workload, strategy: Strategy, *, epsilon: float, noise: str = "laplace",
                   delta: float | None = None) -> float:
    """Exact mean squared error per workload query of the matrix mechanism with least squares.

    (noise variance) · trace(WᵀW (AᵀA)⁻¹) / (number of workload queries), from the Gram matrices
    alone; for all-range queries at d = 4096 this takes about a second and never lists the
    8.4 million queries.
    """
    _check_match(workload, strategy)
    variance = noise_variance(strategy, epsilon=epsilon, noise=noise, delta=delta)
    # two d × d Gram matrices and a factorisation of one: refuse before allocating them
    check_size(3 * 8 * strategy.domain_size**2, "the domain size d of workload and strategy")
    a = strategy.matrix
    stored = _stored_all_range_trace(workload, strategy)
    if stored is not None:
        trace = stored
    elif a.shape[0] == a.shape[1] and a.nnz == a.shape[0] and np.all(a.indices == np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))):
        # a diagonal strategy (the identity): (AᵀA)⁻¹ is diagonal too
        trace = float(np.sum(np.diag(workload.gram()) / a.diagonal() ** 2))
    else:
        trace = _trace_gram_inverse(workload.gram(), strategy.gram())
    return variance * trace / workload.num_queries


# --------------------------------------------------------------------------------------
# Shipped exact traces: the all-range workload against the built-in strategies
# --------------------------------------------------------------------------------------
ALL_RANGE_TABLE = DIRECTORY / "all_range_traces.npz"
ALL_RANGE_TABLE_SIZES = (16, 64, 256, 1024, 4096)
ALL_RANGE_TABLE_BRANCHINGS = (2, 3, 4, 8, 16, 32, 64)


def _fingerprint(strategy: Strategy) -> np.ndarray:
    """Numbers that change if the strategy matrix does: its shape, non-zeros and two weighted sums."""
    a = strategy.matrix
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    return np.array([a.shape[0], a.shape[1], a.nnz, float(a.data.sum()), float(a.data @ (a.indices + 1.0)),
                     float(a.data @ (rows + 1.0))])


def _all_range_table() -> dict:
    return load_table(ALL_RANGE_TABLE.name)


def _stored_all_range_trace(workload, strategy: Strategy) -> float | None:
    """trace(WᵀW (AᵀA)⁻¹) from the shipped table, when W is the all-range workload and A a built-in
    strategy whose matrix matches the stored fingerprint; None otherwise (then it is computed)."""
    from .queries import AllRangeWorkload

    if not isinstance(workload, AllRangeWorkload):
        return None
    entry = _all_range_table().get(f"{strategy.name}-{strategy.domain_size}-{strategy.branching or 0}")
    if entry is None or not np.array_equal(entry[1:], _fingerprint(strategy)):
        return None
    return float(entry[0])


def write_all_range_table(path: Path = ALL_RANGE_TABLE, domain_sizes=ALL_RANGE_TABLE_SIZES) -> Path:
    """Compute trace(WᵀW (AᵀA)⁻¹) for the all-range workload and the identity, prefix, wavelet and tree strategies
    (every branching of :data:`ALL_RANGE_TABLE_BRANCHINGS` up to d) and store it with each strategy's
    fingerprint; also Σ√λ(WᵀW) for :func:`svd_lower_bound` (key ``svd-d``). ``python -m dpcourse.data`` runs this; ``tests/test_factorization.py`` checks it."""
    from .queries import all_range_workload

    entries = {}
    for d in domain_sizes:
        gram_w = all_range_workload(d).gram()
        strategies = [identity_strategy(d), prefix_strategy(d), wavelet_strategy(d)]
        strategies += [hierarchical_strategy(d, b) for b in ALL_RANGE_TABLE_BRANCHINGS if b <= d]
        for strategy in strategies:
            trace = _trace_gram_inverse(gram_w.copy(), strategy.gram())
            key = f"{strategy.name}-{d}-{strategy.branching or 0}"
            entries[key] = np.concatenate([[trace], _fingerprint(strategy)])
        entries[f"svd-{d}"] = np.array([_trace_sqrt_gram_computed(gram_w)])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **entries)
    return path


def svd_lower_bound(workload: Workload, *, epsilon: float) -> float:
    """Li & Miklau's SVD bound: no strategy's Laplace error per query is below (2/ε²)(Σᵢ √λᵢ)²/(d·|W|).

    λᵢ are the eigenvalues of WᵀW (the squared singular values of W). For every strategy A,
    ‖A‖₂²·trace(WᵀW(AᵀA)⁻¹) ≥ (Σ √λᵢ)²/d (Li & Miklau 2013, "Optimal error of query sets under
    the differentially-private matrix mechanism"): ‖A‖₂² ≥ trace(AᵀA)/d, and
    trace(M)·trace(WᵀW M⁻¹) ≥ (trace (WᵀW)^{1/2})². Since ‖A‖₁ ≥ ‖A‖₂ the bound holds for Laplace
    noise in the units of :func:`expected_error`; it is attained (up to max vs mean of a diagonal)
    for L2-calibrated noise, and for Laplace it cannot see the factor ‖A‖₁²/‖A‖₂² a strategy pays.
    """
    eps = check_epsilon(epsilon)
    return 2.0 / eps**2 * _trace_sqrt_gram(workload) ** 2 / (workload.domain_size * workload.num_queries)


def _trace_sqrt_gram_computed(gram_w: np.ndarray) -> float:
    return float(np.sum(np.sqrt(np.clip(np.linalg.eigvalsh(gram_w), 0.0, None))))


def _trace_sqrt_gram(workload: Workload) -> float:
    """Σᵢ √λᵢ over the eigenvalues of WᵀW; shipped for the all-range workload (see ``write_all_range_table``)."""
    from .queries import AllRangeWorkload

    if isinstance(workload, AllRangeWorkload):
        stored = _all_range_table().get(f"svd-{workload.domain_size}")
        if stored is not None:
            return float(stored[0])
    check_size(3 * 8 * workload.domain_size**2, "the domain size d of workload")
    return _trace_sqrt_gram_computed(workload.gram())


# --------------------------------------------------------------------------------------
# Canonical decomposition of an interval on the tree
# --------------------------------------------------------------------------------------
def canonical_decomposition(strategy: Strategy, s: int, t: int) -> list[tuple[int, int]]:
    """The fewest tree nodes whose intervals partition [s, t]: a list of (level, index).

    Climbing from the leaves, at each level take the nodes at the two ends of what is left until
    both ends line up with the next level's nodes; at most 2(b − 1) nodes per level, so at most
    2(b − 1)·⌈log_b d⌉ in all.
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


def answer_by_decomposition(strategy: Strategy, noisy_answers, s: int, t: int):
    """The interval [s, t] answered by summing the noisy answers of its canonical nodes (no least squares)."""
    offsets = np.concatenate([[0], np.cumsum(strategy.level_counts())])
    rows = [offsets[level] + index for level, index in canonical_decomposition(strategy, s, t)]
    answers = check_array(noisy_answers, "noisy_answers", ndim=(1, 2), finite=False)
    if answers.shape[-1] != strategy.num_queries:
        raise ValueError(f"noisy_answers must have one entry per strategy row ({strategy.num_queries}) on the last "
                         f"axis; got shape {answers.shape}")
    return answers[..., rows].sum(axis=-1)
