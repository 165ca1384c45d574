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

Each part lives in its own module, and this one gathers them for the notebooks and the tree
panel (``factorization.X``): :mod:`dpcourse.strategies` (the strategy matrices, their
sensitivity and the tree's canonical decomposition) and :mod:`dpcourse.matrix_mechanism`
(noise, least squares, the mechanism, its sampled and expected errors, the shipped traces and
the SVD lower bound).
"""

from __future__ import annotations

from .matrix_mechanism import (
    ALL_RANGE_TABLE as ALL_RANGE_TABLE,
)
from .matrix_mechanism import (
    ALL_RANGE_TABLE_BRANCHINGS as ALL_RANGE_TABLE_BRANCHINGS,
)
from .matrix_mechanism import (
    ALL_RANGE_TABLE_EVERY_BRANCHING as ALL_RANGE_TABLE_EVERY_BRANCHING,
)
from .matrix_mechanism import (
    ALL_RANGE_TABLE_SIZES as ALL_RANGE_TABLE_SIZES,
)
from .matrix_mechanism import (
    expected_error,
    least_squares,
    matrix_mechanism,
    noise_variance,
    sampled_error,
    svd_lower_bound,
    tree_least_squares,
)
from .matrix_mechanism import (
    write_all_range_table as write_all_range_table,
)
from .strategies import (
    NEIGHBOURS,
    NOISES,
    Strategy,
    answer_by_decomposition,
    canonical_decomposition,
    hierarchical_strategy,
    identity_strategy,
    l1_sensitivity,
    prefix_strategy,
    wavelet_strategy,
)

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
