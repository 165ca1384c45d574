"""The matrix mechanism: answer a strategy A with noise and reconstruct the workload W by least squares.

The matrix mechanism (Li, Hay, Rastogi, Miklau & McGregor 2010) answers A with the Laplace
mechanism, y = A x + Lap(‖A‖₁/ε), or the Gaussian mechanism with ‖A‖₂, estimates x̂ = A⁺y by
least squares and answers W x̂. Its expected total squared error, with b = ‖A‖₁/ε,

    E‖W x̂ − W x‖² = 2b² · trace(WᵀW (AᵀA)⁻¹)   (Laplace; σ² · trace(…) for Gaussian),

needs W only through its Gram matrix WᵀW. The exact traces of the all-range workload against
the built-in strategies are shipped in ``data/all_range_traces.npz``
(:func:`write_all_range_table` rebuilds it); :func:`svd_lower_bound` is the lower bound any
strategy meets. The strategies themselves are in :mod:`dpcourse.linear_queries.strategies`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any, cast

import numpy as np
import scipy.linalg
from scipy.sparse import linalg as sparse_linalg

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_array,
    check_choice,
    check_epsilon,
    check_integer,
    check_probability,
    check_size,
    check_trials,
)
from ..data import DIRECTORY, load_table
from ..mechanisms.noise import gaussian_sigma
from .strategies import NOISES, Strategy, hierarchical_strategy, identity_strategy, prefix_strategy, wavelet_strategy
from .workloads import Workload

__all__ = [
    "ALL_RANGE_TABLE",
    "ALL_RANGE_TABLE_BRANCHINGS",
    "ALL_RANGE_TABLE_EVERY_BRANCHING",
    "ALL_RANGE_TABLE_SIZES",
    "expected_error",
    "least_squares",
    "matrix_mechanism",
    "noise_variance",
    "sampled_error",
    "svd_lower_bound",
    "tree_least_squares",
    "write_all_range_table",
]


# --------------------------------------------------------------------------------------
# Noise and least squares
# --------------------------------------------------------------------------------------
def noise_variance(strategy: Strategy, *, epsilon: float, noise: str = "laplace", delta: float | None = None) -> float:
    """Variance of the noise on each strategy answer: 2(‖A‖₁/ε)² (Laplace) or σ² with Δ₂ = ‖A‖₂ (Gaussian, analytic).

    Parameters
    ----------
    strategy : Strategy
        The strategy A.
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    noise : {"laplace", "gaussian"}, optional
        Laplace noise calibrated to ‖A‖₁ (the default) or Gaussian noise calibrated to ‖A‖₂ (analytic σ).
    delta : float or None, optional
        The δ ∈ (0, 1) of the Gaussian mechanism, needed by ``"gaussian"``; checked, but unused, with
        ``"laplace"``.

    Returns
    -------
    float
        The variance of each answer's noise.

    Raises
    ------
    ValueError
        If ``noise`` is unknown, ``epsilon`` is not a finite number > 0, ``delta`` is given and not in
        (0, 1), or the Gaussian is asked of a strategy with ‖A‖₂ = 0.
    TypeError
        If ``epsilon`` or ``delta`` is not a number, or ``noise`` is ``"gaussian"`` and ``delta`` is None.
    """
    check_choice(noise, "noise", NOISES)
    eps = check_epsilon(epsilon)
    if delta is not None:  # only the Gaussian uses δ, but a δ given is checked either way
        check_probability(delta, "delta")
    if noise == "laplace":
        return 2.0 * (strategy.l1_sensitivity / eps) ** 2
    return (
        gaussian_sigma(l2_sensitivity=strategy.l2_sensitivity, epsilon=eps, delta=check_probability(delta, "delta"))
        ** 2
    )


def tree_least_squares(strategy: Strategy, noisy_answers: ArrayLike) -> np.ndarray:
    """Least-squares cell estimates from noisy answers of a hierarchical strategy, in O(number of nodes).

    Two passes over the tree (Hay, Rastogi, Miklau & Suciu 2010, generalised to any tree):
    bottom-up, each node's estimate from its own subtree combines its measurement with the sum
    of its children's estimates, weighted by inverse variance; top-down, the difference between
    a node's final estimate and the sum of its children's subtree estimates is shared among the
    children in proportion to their variances. This is exact Gaussian belief propagation on a
    tree, so it equals least squares (tests check it against ``scipy``'s solver); on a complete
    b-ary tree it reduces to Hay et al.'s formulas.

    Parameters
    ----------
    strategy : Strategy
        A hierarchical strategy (:func:`~dpcourse.linear_queries.strategies.hierarchical_strategy`).
    noisy_answers : array_like, shape (num_queries,) or (trials, num_queries)
        The noisy answers to the strategy's rows, in its row order (level by level from the leaves).

    Returns
    -------
    numpy.ndarray
        The least-squares estimate x̂, shape ``(d,)`` or ``(trials, d)``.

    Raises
    ------
    ValueError
        If ``strategy`` is not a tree, or ``noisy_answers`` is not 1- or 2-dimensional, is empty, contains NaN
        or ∞, or does not have one entry per strategy row on its last axis.
    TypeError
        If ``noisy_answers`` is not an array of numbers.
    """
    if not strategy.is_tree:
        raise ValueError(f"strategy must be a hierarchical strategy; got {strategy.name!r}")
    y = check_array(noisy_answers, "noisy_answers", ndim=(1, 2))
    if y.shape[-1] != strategy.num_queries:
        raise ValueError(f"noisy_answers must have {strategy.num_queries} entries on the last axis; got {y.shape}")
    single = y.ndim == 1
    y = np.atleast_2d(y)
    b, counts = cast(int, strategy.branching), strategy.level_counts()  # a tree has its branching
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


def _square_inverse_by_structure(strategy: Strategy, y: np.ndarray) -> np.ndarray | None:
    """A⁻¹y in O(nnz) for the two square strategies whose inverse is known, after checking the matrix; else None.

    Prefix sums (lower triangle of ones) are inverted by differences; the Haar wavelet's rows are orthogonal, so
    A⁻¹ = Aᵀ(AAᵀ)⁻¹ with AAᵀ diagonal. A sparse LU would fill in (about 0.4 s for 300 trials at d = 1024).
    """
    a, d = strategy.matrix, strategy.domain_size
    if strategy.name == "prefix" and a.nnz == d * (d + 1) // 2 and np.all(a.data == 1.0):
        rows = np.repeat(np.arange(d), np.diff(a.indptr))
        if np.all(a.indices <= rows):  # d(d+1)/2 entries on or below the diagonal: the whole lower triangle
            return np.diff(y, axis=-1, prepend=0.0)
    if strategy.name == "Haar wavelet":
        outer = (a @ a.T).tocoo()
        if np.all(outer.row == outer.col) and outer.nnz == d:
            diagonal = np.zeros(d)
            diagonal[outer.row] = outer.data
            return np.asarray(a.T @ (y.T / (diagonal[:, None] if y.ndim == 2 else diagonal))).T
    return None


def least_squares(strategy: Strategy, noisy_answers: ArrayLike) -> np.ndarray:
    """x̂ = A⁺y for ``noisy_answers`` y of shape ``(m,)`` or ``(trials, m)``.

    Trees use :func:`tree_least_squares` (O(d)); square strategies are inverted, the built-in prefix
    and Haar wavelet strategies by their known inverses (differences; Aᵀ(AAᵀ)⁻¹ with AAᵀ diagonal) after
    a check of the matrix, any other by a sparse LU factorisation; anything else solves the normal
    equations AᵀA x̂ = Aᵀy by Cholesky.

    Parameters
    ----------
    strategy : Strategy
        The strategy A, which must determine every cell (full column rank).
    noisy_answers : array_like, shape (m,) or (trials, m)
        y, the noisy answers to the strategy's m rows, in its row order.

    Returns
    -------
    numpy.ndarray
        x̂, shape ``(d,)`` or ``(trials, d)``.

    Raises
    ------
    ValueError
        If ``noisy_answers`` is not 1- or 2-dimensional, is empty, contains NaN or ∞, or does not have one
        entry per strategy row on its last axis (or ``strategy`` is a tree it does not fit, see
        :func:`tree_least_squares`).
    TypeError
        If ``noisy_answers`` is not an array of numbers.
    RuntimeError
        If a square strategy is singular (from the sparse LU factorisation).
    numpy.linalg.LinAlgError
        If a strategy with more rows than columns does not have full column rank (AᵀA is not positive definite).
    """
    if strategy.is_tree:
        return tree_least_squares(strategy, noisy_answers)
    y = check_array(noisy_answers, "noisy_answers", ndim=(1, 2))
    if y.shape[-1] != strategy.num_queries:
        raise ValueError(f"noisy_answers must have {strategy.num_queries} entries on the last axis; got {y.shape}")
    a = strategy.matrix
    if a.shape[0] == a.shape[1]:
        fast = _square_inverse_by_structure(strategy, y)
        if fast is not None:
            return fast
        return sparse_linalg.splu(a.tocsc()).solve(np.ascontiguousarray(y.T)).T
    factor = scipy.linalg.cho_factor(strategy.gram())
    return scipy.linalg.cho_solve(factor, (a.T @ y.T)).T


def matrix_mechanism(
    histogram: ArrayLike,
    strategy: Strategy,
    *,
    epsilon: float,
    noise: str = "laplace",
    delta: float | None = None,
    rng: RngLike = None,
    trials: int | None = None,
) -> np.ndarray:
    """Answer ``strategy`` with noise and return the least-squares estimate x̂ of the histogram.

    Answer any workload from it with ``workload.answer(x̂)``.

    Parameters
    ----------
    histogram : array_like, shape (d,)
        The true histogram x, one count per cell of the strategy.
    strategy : Strategy
        The strategy A, which must determine every cell (full column rank).
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    noise : {"laplace", "gaussian"}, optional
        Laplace noise calibrated to ‖A‖₁ (the default) or Gaussian noise calibrated to ‖A‖₂ (analytic σ).
    delta : float or None, optional
        The δ ∈ (0, 1) of the Gaussian mechanism, needed by ``"gaussian"``; checked, but unused, with
        ``"laplace"``.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent releases; None returns one.

    Returns
    -------
    numpy.ndarray
        The estimate x̂, shape ``(d,)`` or ``(trials, d)``.

    Raises
    ------
    ValueError
        If ``histogram`` is not 1-dimensional, is empty, contains NaN or ∞, or does not have one entry per
        cell of the strategy; ``noise`` is unknown; ``epsilon`` is not a finite number > 0; ``delta`` is
        given and not in (0, 1); the Gaussian is asked of a strategy with ‖A‖₂ = 0; ``trials`` < 1; or
        ``rng`` is a negative seed.
    TypeError
        If ``histogram`` is not an array of numbers, ``epsilon`` or ``delta`` is not a number, ``noise`` is
        ``"gaussian"`` and ``delta`` is None, ``trials`` is not an integer, or ``rng`` is not a seed, a
        SeedSequence or a Generator.
    RuntimeError, numpy.linalg.LinAlgError
        If the strategy does not determine every cell (see :func:`least_squares`).

    Notes
    -----
    **Privacy.** For neighbours that add or remove one record, A x has L1 sensitivity ‖A‖₁ and L2
    sensitivity ‖A‖₂, so Lap(‖A‖₁/ε) noise is ε-DP and
    Gaussian noise calibrated to ‖A‖₂ is (ε, δ)-DP; x̂ and every answer from it are post-processing.
    """
    x = check_array(histogram, "histogram", ndim=1)
    if x.size != strategy.domain_size:
        raise ValueError(f"histogram must have {strategy.domain_size} cells; got {x.size}")
    sd = np.sqrt(noise_variance(strategy, epsilon=epsilon, noise=noise, delta=delta))
    shape = (1 if trials is None else cast(int, check_trials(trials)), strategy.num_queries)
    gen = as_generator(rng)
    z = gen.laplace(0.0, sd / np.sqrt(2), size=shape) if noise == "laplace" else gen.normal(0.0, sd, size=shape)
    estimate = least_squares(strategy, strategy.matrix @ x + z)
    return estimate[0] if trials is None else estimate


def _check_match(workload: Workload, strategy: Strategy) -> None:
    if workload.domain_size != strategy.domain_size:
        raise ValueError(
            f"workload and strategy must share the domain size; got {workload.domain_size} and {strategy.domain_size}"
        )


def sampled_error(
    workload: Workload,
    strategy: Strategy,
    histogram: ArrayLike,
    *,
    epsilon: float,
    noise: str = "laplace",
    delta: float | None = None,
    rng: RngLike = None,
    trials: int = 100,
) -> np.ndarray:
    """Per trial, the measured mean squared error per workload query of the matrix mechanism.

    Computed as eᵀ(WᵀW)e / |W| with e = x̂ − x, which equals the mean of (W x̂ − W x)² over the
    workload's queries without listing them.

    Parameters
    ----------
    workload : Workload
        The workload W whose answers are measured.
    strategy : Strategy
        The strategy A answered with noise, over the same cells as ``workload``.
    histogram : array_like, shape (d,)
        The true histogram x.
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    noise : {"laplace", "gaussian"}, optional
        Laplace noise calibrated to ‖A‖₁ (the default) or Gaussian noise calibrated to ‖A‖₂ (analytic σ).
    delta : float or None, optional
        The δ ∈ (0, 1) of the Gaussian mechanism, needed by ``"gaussian"``; checked, but unused, with
        ``"laplace"``.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int, optional
        The number of independent releases, ≥ 1 (default 100).

    Returns
    -------
    numpy.ndarray
        The mean squared error per workload query of each release, shape ``(trials,)``.

    Raises
    ------
    ValueError
        If ``workload`` and ``strategy`` have different domain sizes, ``trials`` < 1, or
        :func:`matrix_mechanism` refuses its arguments.
    TypeError
        If ``trials`` is not an integer, or :func:`matrix_mechanism` refuses its arguments.
    RuntimeError, numpy.linalg.LinAlgError
        If the strategy does not determine every cell (see :func:`least_squares`).
    """
    _check_match(workload, strategy)
    estimate = matrix_mechanism(
        histogram,
        strategy,
        epsilon=epsilon,
        noise=noise,
        delta=delta,
        rng=rng,
        trials=check_integer(trials, "trials", minimum=1),
    )
    e = estimate - np.asarray(histogram, dtype=float)
    from .workloads import AllRangeWorkload

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


def expected_error(
    workload: Workload, strategy: Strategy, *, epsilon: float, noise: str = "laplace", delta: float | None = None
) -> float:
    """Exact mean squared error per workload query of the matrix mechanism with least squares.

    (noise variance) · trace(WᵀW (AᵀA)⁻¹) / (number of workload queries), from the Gram matrices
    alone; for all-range queries at d = 4096 this takes about a second and never lists the
    8.4 million queries. For the all-range workload and a built-in strategy that the shipped table
    holds (see :func:`write_all_range_table`; matched by the strategy's fingerprint), the trace is read
    from the table.

    Parameters
    ----------
    workload : Workload
        The workload W.
    strategy : Strategy
        The strategy A, over the same cells as ``workload``.
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    noise : {"laplace", "gaussian"}, optional
        Laplace noise calibrated to ‖A‖₁ (the default) or Gaussian noise calibrated to ‖A‖₂ (analytic σ).
    delta : float or None, optional
        The δ ∈ (0, 1) of the Gaussian mechanism, needed by ``"gaussian"``; checked, but unused, with
        ``"laplace"``.

    Returns
    -------
    float
        The expected mean squared error per workload query.

    Raises
    ------
    ValueError
        If ``workload`` and ``strategy`` have different domain sizes, ``noise`` is unknown, ``epsilon`` is
        not a finite number > 0, ``delta`` is given and not in (0, 1), the Gaussian is asked of a strategy
        with ‖A‖₂ = 0, or the two d × d Gram matrices and a factorisation would need more than about 1 GiB.
    TypeError
        If ``epsilon`` or ``delta`` is not a number, or ``noise`` is ``"gaussian"`` and ``delta`` is None.
    numpy.linalg.LinAlgError
        If the strategy does not determine every cell (AᵀA is singular).
    """
    _check_match(workload, strategy)
    variance = noise_variance(strategy, epsilon=epsilon, noise=noise, delta=delta)
    # two d × d Gram matrices and a factorisation of one: refuse before allocating them
    check_size(3 * 8 * strategy.domain_size**2, "the domain size d of workload and strategy")
    a = strategy.matrix
    stored = _stored_all_range_trace(workload, strategy)
    if stored is not None:
        trace = stored
    elif (
        a.shape[0] == a.shape[1]
        and a.nnz == a.shape[0]
        and np.all(a.indices == np.repeat(np.arange(a.shape[0]), np.diff(a.indptr)))
    ):
        # a diagonal strategy (the identity): (AᵀA)⁻¹ is diagonal too
        trace = float(np.sum(np.diag(workload.gram()) / a.diagonal() ** 2))
    else:
        trace = _trace_gram_inverse(workload.gram(), strategy.gram())
    return variance * trace / workload.num_queries


# --------------------------------------------------------------------------------------
# Shipped exact traces: the all-range workload against the built-in strategies
# --------------------------------------------------------------------------------------
ALL_RANGE_TABLE = DIRECTORY / "all_range_traces.npz"
ALL_RANGE_TABLE_SIZES = (16, 64, 80, 256, 1024, 4096)  # 80: the search of notebook 03's exercise best-branching
ALL_RANGE_TABLE_BRANCHINGS = (2, 3, 4, 8, 16, 32, 64)
#: Up to this domain size the table holds the tree of every branching b = 2, …, d (notebook 03 searches them all).
ALL_RANGE_TABLE_EVERY_BRANCHING = 1024


def _fingerprint(strategy: Strategy) -> np.ndarray:
    """Numbers that change if the strategy matrix does: its shape, non-zeros and two weighted sums."""
    a = strategy.matrix
    rows = np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))
    return np.array(
        [
            a.shape[0],
            a.shape[1],
            a.nnz,
            float(a.data.sum()),
            float(a.data @ (a.indices + 1.0)),
            float(a.data @ (rows + 1.0)),
        ]
    )


def table_entries(arrays: Any) -> dict[str, np.ndarray]:
    """The entries of an all-range table (``keys``, ``entries``, as :func:`write_all_range_table` stores them) by key.

    Two arrays rather than one per entry: numpy reads each array of an ``.npz`` as a file of the zip, and a
    thousand small files took most of a second to open.
    """
    if "keys" not in arrays:
        return {}
    return {str(key): entry for key, entry in zip(arrays["keys"], arrays["entries"], strict=True)}


@cache
def _all_range_table() -> dict[str, np.ndarray]:
    return table_entries(load_table(ALL_RANGE_TABLE.name))


def _stored_all_range_trace(workload: Any, strategy: Strategy) -> float | None:
    """trace(WᵀW (AᵀA)⁻¹) from the shipped table, when W is the all-range workload and A a built-in
    strategy whose matrix matches the stored fingerprint; None otherwise (then it is computed)."""
    from .workloads import AllRangeWorkload

    if not isinstance(workload, AllRangeWorkload):
        return None
    entry = _all_range_table().get(f"{strategy.name}-{strategy.domain_size}-{strategy.branching or 0}")
    if entry is None or not np.array_equal(entry[1:], _fingerprint(strategy)):
        return None
    return float(entry[0])


def write_all_range_table(path: Path = ALL_RANGE_TABLE, domain_sizes: Sequence[int] = ALL_RANGE_TABLE_SIZES) -> Path:
    """Compute trace(WᵀW (AᵀA)⁻¹) for the all-range workload and the identity, prefix, wavelet and tree strategies.

    The trees are those of every branching b = 2, …, d when d ≤ :data:`ALL_RANGE_TABLE_EVERY_BRANCHING`, else
    those of :data:`ALL_RANGE_TABLE_BRANCHINGS` up to d. Each trace is stored with its strategy's fingerprint,
    beside Σ√λ(WᵀW) for :func:`svd_lower_bound` (key ``svd-d``), as two arrays: ``keys`` and the
    rows of ``entries`` (read back with :func:`table_entries`). ``python -m dpcourse.data`` runs this;
    ``tests/linear_queries/test_factorization.py`` checks it.

    Parameters
    ----------
    path : pathlib.Path, optional
        Where to write the ``.npz`` file (its folder is created); default the shipped
        :data:`ALL_RANGE_TABLE`.
    domain_sizes : sequence of int, optional
        The domain sizes d to tabulate (default :data:`ALL_RANGE_TABLE_SIZES`).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    from .workloads import all_range_workload

    entries: dict[str, Any] = {}
    for d in domain_sizes:
        gram_w = all_range_workload(d).gram()
        strategies = [identity_strategy(d), prefix_strategy(d), wavelet_strategy(d)]
        every = d <= ALL_RANGE_TABLE_EVERY_BRANCHING
        branchings = range(2, d + 1) if every else [b for b in ALL_RANGE_TABLE_BRANCHINGS if b <= d]
        strategies += [hierarchical_strategy(d, b) for b in branchings]
        for strategy in strategies:
            trace = _trace_gram_inverse(gram_w.copy(), strategy.gram())
            key = f"{strategy.name}-{d}-{strategy.branching or 0}"
            entries[key] = np.concatenate([[trace], _fingerprint(strategy)])
        entries[f"svd-{d}"] = np.concatenate([[_trace_sqrt_gram_computed(gram_w)], np.full(6, np.nan)])
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, keys=np.array(list(entries)), entries=np.array(list(entries.values())))
    return path


def svd_lower_bound(workload: Workload, *, epsilon: float) -> float:
    """Li & Miklau's SVD bound: no strategy's Laplace error per query is below (2/ε²)(Σᵢ √λᵢ)²/(d·|W|).

    λᵢ are the eigenvalues of WᵀW (the squared singular values of W). For every strategy A,
    ‖A‖₂²·trace(WᵀW(AᵀA)⁻¹) ≥ (Σ √λᵢ)²/d (Li & Miklau 2013, "Optimal error of query sets under
    the differentially-private matrix mechanism"): ‖A‖₂² ≥ trace(AᵀA)/d, and
    trace(M)·trace(WᵀW M⁻¹) ≥ (trace (WᵀW)^{1/2})². Since ‖A‖₁ ≥ ‖A‖₂ the bound holds for Laplace
    noise in the units of :func:`expected_error`; it is attained (up to max vs mean of a diagonal)
    for L2-calibrated noise, and for Laplace it cannot see the factor ‖A‖₁²/‖A‖₂² a strategy pays.

    Parameters
    ----------
    workload : Workload
        The workload W; Σ √λᵢ is shipped for the all-range workload of the sizes in
        :data:`ALL_RANGE_TABLE_SIZES`, else computed from the eigenvalues of WᵀW.
    epsilon : float
        The privacy parameter ε, a finite number > 0.

    Returns
    -------
    float
        The lower bound on the mean squared error per workload query.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0, or the eigenvalues of a d × d Gram matrix would need more
        than about 1 GiB.
    TypeError
        If ``epsilon`` is not a number.
    """
    eps = check_epsilon(epsilon)
    return 2.0 / eps**2 * _trace_sqrt_gram(workload) ** 2 / (workload.domain_size * workload.num_queries)


def _trace_sqrt_gram_computed(gram_w: np.ndarray) -> float:
    return float(np.sum(np.sqrt(np.clip(np.linalg.eigvalsh(gram_w), 0.0, None))))


def _trace_sqrt_gram(workload: Workload) -> float:
    """Σᵢ √λᵢ over the eigenvalues of WᵀW; shipped for the all-range workload (see ``write_all_range_table``)."""
    from .workloads import AllRangeWorkload

    if isinstance(workload, AllRangeWorkload):
        stored = _all_range_table().get(f"svd-{workload.domain_size}")
        if stored is not None:
            return float(stored[0])
    check_size(3 * 8 * workload.domain_size**2, "the domain size d of workload")
    return _trace_sqrt_gram_computed(workload.gram())
