"""Checks for the exercises of notebook 01 (Laplace utility)."""

from __future__ import annotations

import numpy as np

from ..bounds import composed_laplace_sample_complexity, laplace_max_error_bound
from ..queries import MatrixWorkload
from ._core import CheckFailed, expect_callable, expect_close, passed

__all__ = ["icu_sensitivity", "icu_occupancy_workload", "sample_size", "tail_level"]

_TAIL_CASES = [(1, 0.05, 1.0, 1.0), (100, 0.05, 1.0, 0.5), (1000, 1e-3, 3.0, 2.0), (7, 0.3, 0.5, 0.1)]


def tail_level(student_fn) -> None:
    """Exercise ``tail-level``: ``student_fn(k, beta, sensitivity, epsilon)`` must return ln(k/β)·Δf/ε."""
    ex = "tail-level"
    fn = expect_callable(ex, student_fn, "your answer")
    for k, beta, sensitivity, epsilon in _TAIL_CASES:
        try:
            got = fn(k, beta, sensitivity, epsilon)
        except NotImplementedError:
            raise CheckFailed(ex, "the function still raises NotImplementedError") from None
        expected = laplace_max_error_bound(k=k, beta=beta, sensitivity=sensitivity, epsilon=epsilon)
        expect_close(ex, got, expected, what=f"tail level at k={k}, β={beta}, Δf={sensitivity}, ε={epsilon}",
                     rtol=1e-9, hint="each of the k coordinates may fail with probability β/k; "
                                     "P[|Lap(b)| ≥ t·b] = e^{−t}, and b = Δf/ε.")
    passed(ex, f"checked on {len(_TAIL_CASES)} parameter settings")


def sample_size(answer, *, num_queries: int, alpha: float, beta: float, epsilon: float) -> None:
    """Exercise ``sample-size``: the n at which K queries with ε/K each are α-accurate w.p. 1 − β."""
    ex = "sample-size"
    expected = composed_laplace_sample_complexity(num_queries=num_queries, alpha=alpha, beta=beta, epsilon=epsilon)
    expect_close(ex, answer, expected, what="n", rtol=1e-6,
                 hint="set the normalised error K·ln(K/β)/(nε) equal to α and solve for n.")
    passed(ex, f"n = {expected:,.0f} people")


def icu_occupancy_workload(hospitals: int, days: int) -> MatrixWorkload:
    """The ICU table as a workload: count of patients in ICU at hospital h on day t.

    A patient's record is (hospital, first day, last day) of one ICU stay; the query (h, t)
    counts the records with that hospital and first day ≤ t ≤ last day.
    """
    stays = [(h, s, e) for h in range(hospitals) for s in range(days) for e in range(s, days)]
    w = np.zeros((hospitals * days, len(stays)))
    for column, (h, s, e) in enumerate(stays):
        w[h * days + s: h * days + e + 1, column] = 1.0
    return MatrixWorkload(w, name="ICU occupancy")


def icu_sensitivity(answer, *, days: int = 10, hospitals: int = 3) -> None:
    """Exercise ``icu-sensitivity``: the L1 sensitivity of the hospitals × days ICU table."""
    ex = "icu-sensitivity"
    expected = icu_occupancy_workload(hospitals, days).l1_sensitivity
    expect_close(ex, answer, expected, what=f"Δ₁ of the {hospitals} × {days} ICU table", rtol=0,
                 hint="one patient can be in the ICU on many days: how many cells of the table can "
                      "one person's record change at most?")
    passed(ex, f"one patient can change {expected:.0f} cells by 1 each")
