"""Test cases for the exercises of notebook 01 added after the first three (checks: ``dpcourse.checks.laplace``).

Same form as ``tests/checks/test_checks.py``'s ``CASES``, which merges this dict into its own: exercise id →
(check, right answer (args), [(wrong answer (args), what the message must say)]).
"""

from __future__ import annotations

import numpy as np

from dpcourse.checks import laplace


def column_l1(W):
    return np.abs(W).sum(axis=0).max()


def row_l1(W):  # rows and columns swapped
    return np.abs(W).sum(axis=1).max()


def signed_column_sum(W):  # no absolute values
    return np.asarray(W).sum(axis=0).max()


def column_l2(W):  # the L2 sensitivity
    return np.sqrt((np.asarray(W) ** 2).sum(axis=0)).max()


# 3 × 10 ICU table, Δf = 10, every count within ±10 w.p. 0.95 by Theorem 3.8: ε = ln(30/0.05)·10/10
ICU_EPSILON = float(np.log(30 / 0.05))

CASES: dict = {
    "workload-sensitivity": (
        laplace.workload_sensitivity,
        (column_l1,),
        [((row_l1,), "rows and columns"), ((signed_column_sum,), "negative entries"), ((column_l2,), "L2")],
    ),
    "icu-epsilon": (
        laplace.icu_epsilon,
        (ICU_EPSILON,),
        [
            ((np.log(30 / 0.05) / 10,), "Δf = 1"),
            ((np.log(1 / 0.05),), "ln(1/β)"),
            ((np.log(10 / 0.05),), "number of days"),
        ],
    ),
}
