"""Checks for the exercises of notebook 03 (threshold queries, trees, factorization)."""

from __future__ import annotations

from .. import factorization, queries
from ._core import CheckFailed, expect_close, passed

__all__ = ["decomposition", "small_error", "strategy_sensitivities"]


def strategy_sensitivities(prefix_l1, tree_l1, *, d: int = 64, branching: int = 2) -> None:
    """Exercise ``strategy-sensitivity``: ‖A‖₁ of the prefix and of the b-ary tree strategy (with root)."""
    ex = "strategy-sensitivity"
    expect_close(ex, prefix_l1, factorization.prefix_strategy(d).l1_sensitivity, what=f"the prefix strategy's Δ₁ (d = {d})",
                 rtol=0, hint="which cell is counted by the most prefix sums?")
    tree = factorization.hierarchical_strategy(d, branching)
    expect_close(ex, tree_l1, tree.l1_sensitivity, what=f"the {branching}-ary tree's Δ₁ (d = {d}, root included)", rtol=0,
                 hint="a cell is in exactly one node per level; count the levels, leaves and root included")
    passed(ex, f"prefix {d:g}, tree {tree.l1_sensitivity:g} = log₂{d} + 1")


def decomposition(nodes, *, d: int = 16, branching: int = 2, s: int = 3, t: int = 12) -> None:
    """Exercise ``decomposition``: the canonical nodes (level, index) whose intervals partition [s, t]."""
    ex = "decomposition"
    tree = factorization.hierarchical_strategy(d, branching)
    try:
        given = sorted((int(level), int(index)) for level, index in nodes)
    except (TypeError, ValueError):
        raise CheckFailed(ex, "give a list of (level, index) pairs, e.g. [(0, 3), (2, 1)]") from None
    covered = []
    for level, index in given:
        if not 0 <= level < len(tree.level_sizes) or not 0 <= index < tree.level_counts()[level]:
            raise CheckFailed(ex, f"there is no node ({level}, {index}) in the tree over {d} cells")
        size = tree.level_sizes[level]
        covered += range(index * size, min((index + 1) * size, d))
    if sorted(covered) != list(range(s, t + 1)):
        raise CheckFailed(ex, f"your nodes cover the cells {sorted(covered)}, not exactly [{s}, {t}]",
                          "node (level ℓ, index j) covers the cells j·2^ℓ … (j + 1)·2^ℓ − 1")
    best = factorization.canonical_decomposition(tree, s, t)
    if len(given) > len(best):
        raise CheckFailed(ex, f"your {len(given)} nodes partition [{s}, {t}], but {len(best)} are enough",
                          "use a parent whenever both of its children would be used")
    passed(ex, f"{len(best)} nodes")


def small_error(answer, *, epsilon: float = 1.0) -> None:
    """Exercise ``small-error``: the mean squared error per query of the 2-leaf tree on all-range queries, d = 2."""
    expected = factorization.expected_error(queries.all_range_workload(2), factorization.hierarchical_strategy(2),
                                            epsilon=epsilon)
    expect_close("small-error", answer, expected, what="the expected error per query", rtol=1e-9,
                 hint="noise variance 2(‖A‖₁/ε)² with ‖A‖₁ = 2; then trace(WᵀW(AᵀA)⁻¹) divided by the 3 queries")
    passed("small-error", f"{expected:.4g}")
