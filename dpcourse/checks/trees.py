"""Checks for the exercises of notebook 03 (threshold queries, trees, factorization)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import linear_queries
from ..linear_queries import Strategy
from ._core import Exercise, Wrong, diagnose, named_values, numbers, quote, value, value_evidence, values_evidence

__all__ = [
    "BEST_BRANCHING",
    "DECOMPOSITION",
    "INTERVAL_NODES",
    "PREFIX_VARIANCE",
    "SMALL_ERROR_EPSILON",
    "STRATEGY",
    "best_branching",
    "decomposition",
    "interval_nodes",
    "prefix_variance",
    "small_error",
    "strategy_sensitivities",
]

#: Exercise ``strategy-sensitivity``: the domain size and the tree's branching (root included); neighbours add or
#: remove one person.
STRATEGY: dict[str, Any] = {"d": 64, "branching": 4}


def _judge_strategy(evidence: dict) -> str:
    answers = named_values(evidence, "your answers")
    d, b = STRATEGY["d"], STRATEGY["branching"]
    levels = round(np.log(d) / np.log(b))
    prefix = linear_queries.prefix_strategy(d).l1_sensitivity
    tree = linear_queries.hierarchical_strategy(d, b).l1_sensitivity
    diagnose(
        answers.get("prefix_l1"),
        prefix,
        what=f"the prefix strategy's Δ₁ (d = {d})",
        rtol=0,
        hint="which cell is counted by the most prefix sums?",
        mistakes={
            "one prefix's sensitivity: a person is counted in many prefixes": (
                1,
                "a person's record changes every prefix sum that contains their cell: which cell is in the most?",
            ),
            "an off-by-one: there are d prefixes [0, 0], …, [0, d − 1]": (
                d - 1,
                "list the prefixes from the shortest one: does your count include it?",
            ),
        },
    )
    diagnose(
        answers.get("tree_l1"),
        tree,
        what=f"the {b}-ary tree's Δ₁ (d = {d}, leaves and root included)",
        rtol=0,
        hint="a cell is in exactly one node per level; count the levels of a b-ary tree, leaves and root included",
        mistakes={
            "the binary tree's log₂ d + 1; this tree branches 4 ways": (
                np.log2(d) + 1,
                "how many children does each node of this tree have, and how does that change the number of levels?",
            ),
            f"an off-by-one: log_{b} d counts the edges of a path, not its nodes": (
                levels,
                "count the nodes on a path from a leaf to the root, not the edges: the leaves and the root are "
                "levels too",
            ),
            "the replace-one relation's 2·log_b d; here neighbours add or remove one person": (
                2 * levels,
                "reread which neighbouring relation the exercise uses: how many nodes of a level can one added "
                "person change?",
            ),
        },
    )
    return f"prefix {prefix:g}, {b}-ary tree {tree:g} = log_{b} {d} + 1 (the binary tree's is {np.log2(d) + 1:g})"


strategy_sensitivities = Exercise(
    "strategy-sensitivity",
    probe=lambda prefix_l1, tree_l1: values_evidence(prefix_l1=prefix_l1, tree_l1=tree_l1),
    judge=_judge_strategy,
    answers=("prefix_l1", "tree_l1"),
)
"""Exercise ``strategy-sensitivity``: ‖A‖₁ of the prefix strategy and of the 4-ary tree (:data:`STRATEGY`)."""

#: Exercise ``decomposition``: the binary tree over d cells and the interval [s, t].
DECOMPOSITION: dict[str, Any] = {"d": 16, "s": 3, "t": 12}


def _covered_cells(tree: Strategy, pairs: Sequence[tuple[int, int]]) -> list[int] | None:
    """The cells the (level, index) nodes cover, with repeats; None if a node is not in the tree."""
    cells: list[int] = []
    for level, index in pairs:
        if not 0 <= level < len(tree.level_sizes) or not 0 <= index < tree.level_counts()[level]:
            return None
        size = tree.level_sizes[level]
        cells += range(index * size, min((index + 1) * size, tree.domain_size))
    return sorted(cells)


def _judge_decomposition(evidence: dict) -> str:
    nodes = value(evidence, "nodes")
    d, s, t = DECOMPOSITION["d"], DECOMPOSITION["s"], DECOMPOSITION["t"]
    tree = linear_queries.hierarchical_strategy(d, 2)
    pairs = numbers(nodes, "nodes", whole=True)
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.shape[0] > 4 * d:
        raise Wrong(
            f"nodes: give a list of at most {4 * d} (level, index) pairs, got shape {pairs.shape}",
            "a list of pairs such as [(1, 0), (0, 5)]",
            "not a list of (level, index) pairs",
        )
    given = sorted((int(level), int(index)) for level, index in pairs)
    target = list(range(s, t + 1))
    covered = _covered_cells(tree, given)
    if covered != target and _covered_cells(tree, [(index, level) for level, index in given]) == target:
        raise Wrong(
            "your pairs are (index, level); the exercise asks for (level, index)",
            "check the order in which the exercise writes a node",
            "pairs given as (index, level)",
        )
    if covered is None:
        bad = next(pair for pair in given if _covered_cells(tree, [pair]) is None)
        raise Wrong(
            f"there is no node {quote(bad, 60)} in the tree over {d} cells",
            f"levels run from 0 (leaves) to {len(tree.level_sizes) - 1} (root); level ℓ has {d}/2^ℓ nodes",
            "a node that is not in the tree",
        )
    if covered != target:
        if covered in (list(range(s, t)), list(range(s + 1, t + 1))):
            raise Wrong(
                f"your nodes cover [{covered[0]}, {covered[-1]}]: the interval [{s}, {t}] includes both ends",
                "look at the ends of the interval: which end cell do your nodes miss?",
                "an off-by-one at one end of the interval",
            )
        raise Wrong(
            f"your nodes cover the cells {quote(covered, 120)}, not exactly [{s}, {t}]",
            "node (ℓ, j) covers the cells j·2^ℓ … (j + 1)·2^ℓ − 1; each cell must be covered once",
            "nodes that do not cover the interval exactly once",
        )
    best = linear_queries.canonical_decomposition(tree, s, t)
    if len(given) > len(best):
        raise Wrong(
            f"your {len(given)} nodes partition [{s}, {t}], but {len(best)} are enough",
            "look for nodes of yours that together cover exactly one node of the level above",
            "more nodes than needed",
        )
    return f"{len(best)} nodes, so the interval's answer sums {len(best)} noisy counts"


decomposition = Exercise("decomposition", probe=value_evidence, judge=_judge_decomposition, answers=("nodes",))
"""Exercise ``decomposition``: the canonical nodes (level, index) whose intervals partition [3, 12], d = 16."""

#: Exercise ``interval-nodes``: the tree (domain size, branching; root included) whose worst interval is asked for.
INTERVAL_NODES: dict[str, Any] = {"d": 64, "branching": 4}


def _most_nodes(d: int, branching: int) -> int:
    """The largest number of nodes in the canonical decomposition of any interval [s, t] of the tree."""
    tree = linear_queries.hierarchical_strategy(d, branching)
    return max(len(linear_queries.canonical_decomposition(tree, s, t)) for s in range(d) for t in range(s, d))


def _judge_interval_nodes(evidence: dict) -> str:
    got = value(evidence, "most_nodes")
    d, b = INTERVAL_NODES["d"], INTERVAL_NODES["branching"]
    levels = round(np.log(d) / np.log(b))  # levels below the root
    expected = _most_nodes(d, b)
    diagnose(
        got,
        expected,
        what=f"the most nodes an interval needs in the {b}-ary tree over {d} cells",
        rtol=0,
        hint="take an interval that sticks out as much as possible at both ends on every level, and count how many "
        "nodes each level can give; or let fz.canonical_decomposition count them for every interval",
        mistakes={
            f"the bound 2(b − 1) on every one of the log_{b} d levels below the root": (
                2 * (b - 1) * levels,
                "look at the level just below the root: an interval that is not the whole domain cannot take all "
                "of its nodes, and it has no neighbour on the far side to stick out into",
            ),
            "the bound 2(b − 1) per level without the top level's nodes": (
                2 * (b - 1) * (levels - 1),
                "the nodes just below the root can be used too: check an interval that covers the middle of the domain",
            ),
            "the binary tree's worst case; this tree branches 4 ways": (
                _most_nodes(d, 2),
                "at each end of a level, how many siblings can an interval need in a tree whose nodes have 4 children?",
            ),
            "one level's 2(b − 1)": (
                2 * (b - 1),
                "an interval can stick out on several levels at once: add up what every level gives",
            ),
        },
    )
    return f"{expected} nodes at most (at most 2(b − 1) on each level below the top, fewer on the top one)"


interval_nodes = Exercise("interval-nodes", probe=value_evidence, judge=_judge_interval_nodes, answers=("most_nodes",))
"""Exercise ``interval-nodes``: the most nodes any interval's canonical decomposition needs (:data:`INTERVAL_NODES`)."""

#: Exercise ``prefix-variance``: the binary tree over d cells, Laplace noise at ε (add/remove), no least squares.
PREFIX_VARIANCE: dict[str, Any] = {"d": 1024, "epsilon": 1.0}


def _judge_prefix_variance(evidence: dict) -> str:
    got = value(evidence, "prefix_variance")
    d, epsilon = PREFIX_VARIANCE["d"], PREFIX_VARIANCE["epsilon"]
    tree = linear_queries.hierarchical_strategy(d, 2)
    per_node = linear_queries.noise_variance(tree, epsilon=epsilon)
    nodes = max(len(linear_queries.canonical_decomposition(tree, 0, t)) for t in range(d))
    expected = nodes * per_node
    diagnose(
        got,
        expected,
        what=f"the largest variance of a prefix answer (d = {d})",
        digits=4,
        hint="the answer is a sum of independent noisy nodes: its variance is (number of nodes) × (one node's "
        "variance); find the prefix that needs the most nodes, and the noise scale of one node",
        mistakes={
            "the general interval bound 2·log₂ d nodes; a prefix starts at cell 0": (
                2 * np.log2(d) * per_node,
                "a prefix [0, t] never sticks out at its left end: how many nodes can it take per level?",
            ),
            "one node on every level, root and leaves included": (
                len(tree.level_sizes) * per_node,
                "a prefix that needs the root is the whole domain, one node: which prefix needs the most nodes?",
            ),
            "Lap(b)'s variance taken as b² (it is 2b²)": (
                expected / 2,
                "work out the variance of Lap(b) from its density, or look it up in notebook 01",
            ),
            "noise Lap(1/ε) on each node: the tree's sensitivity is missing": (
                nodes * 2 / epsilon**2,
                "one person changes one node on every level: what is the L1 sensitivity of the whole tree?",
            ),
        },
    )
    return f"{expected:.6g} = {nodes} nodes × 2·(‖A‖₁/ε)² with ‖A‖₁ = {tree.l1_sensitivity:g}"


prefix_variance = Exercise(
    "prefix-variance", probe=value_evidence, judge=_judge_prefix_variance, answers=("prefix_variance",)
)
"""Exercise ``prefix-variance``: the largest variance of a prefix answer summed from the binary tree's nodes."""

#: Exercise ``small-error``: ε of the Laplace noise.
SMALL_ERROR_EPSILON = 1.0


def _judge_small_error(evidence: dict) -> str:
    got = value(evidence, "small_error")
    workload, strategy = linear_queries.all_range_workload(2), linear_queries.hierarchical_strategy(2)
    expected = linear_queries.expected_error(workload, strategy, epsilon=SMALL_ERROR_EPSILON)
    diagnose(
        got,
        expected,
        what="the expected error per query",
        digits=4,
        hint="go through Section 1's error formula term by term: the noise variance of one strategy answer, the "
        "trace term, and what the exercise asks for per query",
        mistakes={
            "Lap(b)'s variance taken as b² (it is 2b²)": (
                expected / 2,
                "work out the variance of Lap(b) from its density, or look it up in notebook 01",
            ),
            "‖A‖₁ = 1: a cell is in two strategy rows (its leaf and the root)": (
                expected / 4,
                "‖A‖₁ is the largest column sum of |A|: in how many strategy rows is each cell?",
            ),
            "the total over the three queries, not the mean": (
                3 * expected,
                "reread what the exercise asks for: the error of the whole workload, or of one query on average?",
            ),
        },
    )
    return f"{expected:.4g} = 2·(2/ε)²·trace(WᵀW(AᵀA)⁻¹)/3"


small_error = Exercise("small-error", probe=value_evidence, judge=_judge_small_error, answers=("small_error",))
"""Exercise ``small-error``: the mean squared error per query of the 2-leaf tree with root on all-range queries."""

#: Exercise ``best-branching``: the domain size whose best branching factor the student searches for (ε = 1,
#: all-range workload, trees with root and least squares).
BEST_BRANCHING: dict[str, Any] = {"d": 80}


def _errors_by_branching(d: int) -> dict[int, float]:
    """The exact error per all-range query of the tree of every branching b = 2, …, d (with least squares)."""
    workload = linear_queries.all_range_workload(d)
    return {
        b: linear_queries.expected_error(workload, linear_queries.hierarchical_strategy(d, b), epsilon=1.0)
        for b in range(2, d + 1)
    }


def _judge_best_branching(evidence: dict) -> str:
    got = value(evidence, "best_b")
    d = BEST_BRANCHING["d"]
    errors = _errors_by_branching(d)
    best = min(errors, key=errors.__getitem__)
    grid = min((b for b in (2, 3, 4, 8, 16, 32, 64) if b <= d), key=errors.__getitem__)
    diagnose(
        got,
        best,
        what=f"the best branching factor at d = {d}",
        rtol=0,
        hint="put your b and its neighbours b − 1 and b + 1 into fz.expected_error: is yours the smallest? Then ask "
        "whether your search reached every b that could win",
        mistakes={
            "the position of the smallest error in your list, not the b it belongs to": (
                best - 2,
                "np.argmin returns a position: which b sits at that position of your list of b?",
            ),
            "the best power of 2 (or Qardaji et al.'s b ≈ 16): not every b was tried": (
                grid,
                "Section 5 found the winners between the powers of 2: which b did your search leave out?",
            ),
            "b = ⌊√d⌋: a tree with one more level than needed": (
                int(np.floor(np.sqrt(d))),
                "count the levels of your tree: is its top level nearly full, or could a slightly larger b drop a "
                "level?",
            ),
        },
    )
    cut = 1 - errors[best] / errors[2]
    return f"b = {best}: {errors[best]:.4g} per query, {100 * cut:.0f}% below the binary tree"


best_branching = Exercise("best-branching", probe=value_evidence, judge=_judge_best_branching, answers=("best_b",))
"""Exercise ``best-branching``: the b = 2, …, d with the least exact all-range error, d of :data:`BEST_BRANCHING`."""
