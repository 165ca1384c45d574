"""Checks for the exercises of notebook 03 (threshold queries, trees, factorization)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import factorization, queries
from ..strategies import Strategy
from ._core import Exercise, Wrong, diagnose, named_values, numbers, quote, value, value_evidence, values_evidence

__all__ = ["DECOMPOSITION", "SMALL_ERROR_EPSILON", "STRATEGY", "decomposition", "small_error", "strategy_sensitivities"]

#: Exercise ``strategy-sensitivity``: the domain size and the tree's branching (root included); neighbours add or
#: remove one person.
STRATEGY: dict[str, Any] = {"d": 64, "branching": 4}


def _judge_strategy(evidence: dict) -> str:
    answers = named_values(evidence, "your answers")
    d, b = STRATEGY["d"], STRATEGY["branching"]
    levels = round(np.log(d) / np.log(b))
    prefix = factorization.prefix_strategy(d).l1_sensitivity
    tree = factorization.hierarchical_strategy(d, b).l1_sensitivity
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
    tree = factorization.hierarchical_strategy(d, 2)
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
    best = factorization.canonical_decomposition(tree, s, t)
    if len(given) > len(best):
        raise Wrong(
            f"your {len(given)} nodes partition [{s}, {t}], but {len(best)} are enough",
            "look for nodes of yours that together cover exactly one node of the level above",
            "more nodes than needed",
        )
    return f"{len(best)} nodes, so the interval's answer sums {len(best)} noisy counts"


decomposition = Exercise("decomposition", probe=value_evidence, judge=_judge_decomposition, answers=("nodes",))
"""Exercise ``decomposition``: the canonical nodes (level, index) whose intervals partition [3, 12], d = 16."""

#: Exercise ``small-error``: ε of the Laplace noise.
SMALL_ERROR_EPSILON = 1.0


def _judge_small_error(evidence: dict) -> str:
    got = value(evidence, "small_error")
    workload, strategy = queries.all_range_workload(2), factorization.hierarchical_strategy(2)
    expected = factorization.expected_error(workload, strategy, epsilon=SMALL_ERROR_EPSILON)
    diagnose(
        got,
        expected,
        what="the expected error per query",
        rtol=1e-9,
        hint="go through Section 2's error formula term by term: the noise variance of one strategy answer, the "
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
