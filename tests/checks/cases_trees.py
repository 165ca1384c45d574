"""Test cases for the exercises of notebook 03 added after the first three (checks: ``dpcourse.checks.trees``).

Same form as ``tests/checks/test_checks.py``'s ``CASES``, which merges this dict into its own: exercise id →
(check, right answer (args), [(wrong answer (args), what the message must say)]).
"""

from __future__ import annotations

from dpcourse.checks import trees

# The right answers, worked out by hand (and found by the search the notebook's solution cells run):
# a 4-ary tree over 64 cells: 6 + 6 nodes on the two lowest levels, 2 just below the root;
MOST_NODES = 14
# the binary tree over 1024 cells: the prefix [0, 1022] needs 10 nodes, each with variance 2·(11/ε)², ε = 1;
PREFIX = 10 * 2 * 11.0**2
# all-range queries at d = 80: b = 9 is the smallest b whose tree has only two levels below the root (9² ≥ 80).
BEST_B = 9

CASES: dict = {
    "interval-nodes": (
        trees.interval_nodes,
        (MOST_NODES,),
        [
            ((18,), "on every one of the log_4 d levels"),
            ((12,), "without the top level's nodes"),
            ((10,), "binary tree's worst case"),
            ((6,), "one level's"),
        ],
    ),
    "prefix-variance": (
        trees.prefix_variance,
        (PREFIX,),
        [
            ((2 * PREFIX,), "2·log₂ d nodes"),
            ((11 * 2 * 11.0**2,), "one node on every level"),
            ((PREFIX / 2,), "b²"),
            ((10 * 2.0,), "sensitivity is missing"),
        ],
    ),
    "best-branching": (
        trees.best_branching,
        (BEST_B,),
        [
            ((BEST_B - 2,), "position of the smallest error"),
            ((16,), "not every b was tried"),
            ((8,), "⌊√d⌋"),
        ],
    ),
}
