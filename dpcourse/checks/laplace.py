"""Checks for the exercises of notebook 01 (Laplace utility).

Each check names the two or three most plausible mistakes (see :func:`~dpcourse.checks._core.diagnose`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..bounds import laplace_max_error_bound, laplace_max_error_quantile
from ..queries import MatrixWorkload
from ._core import Exercise, call_evidence, calls, diagnose, judge_cases, short, value, value_evidence

__all__ = ["EXAMPLE_OFFICE", "exact_tail_level", "icu_occupancy_workload", "icu_sensitivity", "max_queries"]

_TAIL_CASES = [(1, 0.05, 1.0, 1.0), (100, 0.05, 1.0, 0.5), (1000, 1e-3, 3.0, 2.0), (7, 0.3, 0.5, 0.1)]
_TAIL_PARAMETERS = "(k, beta, sensitivity, epsilon)"

#: Exercise 2's statistics office: n people, ε, accuracy α (normalised), failure probability β.
EXAMPLE_OFFICE: dict[str, Any] = {"n": 1_000_000, "epsilon": 0.5, "alpha": 0.01, "beta": 0.05}


def _sig(x: float, digits: int = 2) -> float:
    """``x`` to ``digits`` significant digits: a drawn input is what a message shows, exactly."""
    return float(f"{x:.{digits}g}")


def _tail_cases(rng: np.random.Generator | None) -> list[tuple]:
    """The examples above; when grading, seven settings drawn from ``rng``: k = 1, then six with k from 2 to 10⁴,
    β and ε log-uniform (10⁻⁴ to 0.5, 0.05 to 5), Δf from 0.1 to 5, each to 2 significant digits, and Δf/ε at
    least 25 % away from 1 (so that a scale inverted to ε/Δf is a different number)."""
    if rng is None:
        return _TAIL_CASES
    cases = []
    for k in [1, *rng.integers(2, 10_001, 6).tolist()]:
        beta = _sig(np.exp(rng.uniform(np.log(1e-4), np.log(0.5))))
        sensitivity = _sig(rng.uniform(0.1, 5.0))
        epsilon = sensitivity
        while abs(np.log(sensitivity / epsilon)) < np.log(1.25):
            epsilon = _sig(np.exp(rng.uniform(np.log(0.05), np.log(5.0))))
        cases.append((int(k), beta, sensitivity, epsilon))
    return cases


def _tail_inputs(case: tuple) -> str:
    k, beta, sensitivity, epsilon = case
    return f"k={k}, beta={short(beta)}, sensitivity={short(sensitivity)}, epsilon={short(epsilon)}"


def _judge_one_tail(case: tuple, got: object) -> tuple[str, ...]:
    k, beta, sensitivity, epsilon = case
    scale = sensitivity / epsilon
    return diagnose(
        got,
        laplace_max_error_quantile(k=k, beta=beta, sensitivity=sensitivity, epsilon=epsilon),
        what=f"the level with {_tail_inputs(case)}",
        rtol=1e-9,
        hint="the k coordinates are independent: write P[max |Zᵢ| < t] as a product over the coordinates, set "
        "the tail to β and solve for t",
        mistakes={
            "Theorem 3.8's union bound ln(k/β)·Δf/ε, which is only an upper bound": (
                laplace_max_error_bound(k=k, beta=beta, sensitivity=sensitivity, epsilon=epsilon),
                "use independence instead of the union bound: the exact level is a little smaller",
            ),
            "one coordinate's level: the k coordinates are missing": (
                np.log(1 / beta) * scale,
                "the maximum of k coordinates exceeds t if any one of them does",
            ),
            "the scale is inverted (ε/Δf instead of Δf/ε)": (
                laplace_max_error_quantile(k=k, beta=beta, sensitivity=epsilon, epsilon=sensitivity),
                "more privacy (a smaller ε) must mean more noise: which way does your scale move when ε shrinks?",
            ),
        },
    )


def _judge_exact_tail(evidence: dict, cases: list[tuple]) -> str:
    results = calls(evidence, parameters=_TAIL_PARAMETERS)
    checked = judge_cases(cases, results, _judge_one_tail, inputs=_tail_inputs)
    return f"the exact level, checked on {checked} parameter settings"


exact_tail_level = Exercise(
    "exact-tail-level",
    probe=lambda fn, cases: call_evidence(fn, cases, parameters=_TAIL_PARAMETERS),
    judge=_judge_exact_tail,
    cases=_tail_cases,
    answers=("exact_tail_level",),
)
"""Exercise ``exact-tail-level``: ``fn(k, beta, sensitivity, epsilon)``, the least t with P[‖f(x) − y‖∞ ≥ t] ≤ β."""


def _queries_within(n: float, alpha: float, beta: float, epsilon: float, *, log_term: Callable[[int], float]) -> int:
    """The largest K ≥ 1 with K·log_term(K)/(nε) ≤ α (the left side increases in K)."""
    budget = alpha * epsilon * n
    high = 2
    while high * log_term(high) <= budget:
        high *= 2
    low = max(1, high // 2)
    while low < high:  # bisection on integers: K·log_term(K) is increasing
        middle = (low + high + 1) // 2
        if middle * log_term(middle) <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def _judge_max_queries(evidence: dict) -> str:
    office = EXAMPLE_OFFICE
    got = value(evidence, "K")
    n, epsilon, alpha, beta = office["n"], office["epsilon"], office["alpha"], office["beta"]
    right = _queries_within(n, alpha, beta, epsilon, log_term=lambda k: np.log(k / beta))
    diagnose(
        got,
        right,
        what="the largest K",
        rtol=0,
        hint="with ε/K per query, what is each answer's Laplace scale (normalised)? Put it into Theorem 3.8 over "
        "K answers and find the largest whole K whose bound stays within α",
        mistakes={
            "you dropped the logarithm (K/(nε) ≤ α)": (
                alpha * epsilon * n,
                "reread Theorem 3.8: what multiplies the scale in its bound?",
            ),
            "you used ln(1/β) instead of ln(K/β)": (
                _queries_within(n, alpha, beta, epsilon, log_term=lambda k: np.log(1 / beta)),
                "the union bound runs over all K answers: each may fail with probability β/K",
            ),
            "an off-by-one: the next K already breaks the bound": (
                right + 1,
                "put your K back into the inequality: does it hold?",
            ),
        },
    )
    level = right * np.log(right / beta) / (n * epsilon)
    return f"K = {right} queries, each within {level:.5f} ≤ α = {alpha} w.p. {1 - beta:.2f}"


max_queries = Exercise("max-queries", probe=value_evidence, judge=_judge_max_queries, answers=("K_max",))
"""Exercise ``max-queries``: the largest number of queries the office of :data:`EXAMPLE_OFFICE` can answer."""


def icu_occupancy_workload(hospitals: int, days: int) -> MatrixWorkload:
    """The ICU table as a workload: count of patients in ICU at hospital h on day t.

    A patient's record is (hospital, first day, last day) of one ICU stay; the query (h, t)
    counts the records with that hospital and first day ≤ t ≤ last day.
    """
    stays = [(h, s, e) for h in range(hospitals) for s in range(days) for e in range(s, days)]
    w = np.zeros((hospitals * days, len(stays)))
    for column, (h, s, e) in enumerate(stays):
        w[h * days + s : h * days + e + 1, column] = 1.0
    return MatrixWorkload(w, name="ICU occupancy")


_ICU_DAYS, _ICU_HOSPITALS = 10, 3


def _judge_icu(evidence: dict) -> str:
    got = value(evidence, "Δ₁")
    expected = icu_occupancy_workload(_ICU_HOSPITALS, _ICU_DAYS).l1_sensitivity
    diagnose(
        got,
        expected,
        what=f"Δ₁ of the {_ICU_HOSPITALS} × {_ICU_DAYS} ICU table",
        rtol=0,
        hint="one patient can be in the ICU on many days: how many cells can one person's record change?",
        mistakes={
            "the histogram answer: a patient is one record, but is counted on every day of the stay": (
                1.0,
                "count the cells one stay adds 1 to",
            ),
            "every cell of the table, but one patient stays in one hospital": (
                _ICU_DAYS * _ICU_HOSPITALS,
                "one stay is in one hospital only",
            ),
            "an off-by-one in the number of days": (
                _ICU_DAYS - 1,
                "how many days can one stay cover at most? Count its first and last day",
            ),
        },
    )
    return f"one patient can change {expected:.0f} cells by 1 each"


icu_sensitivity = Exercise("icu-sensitivity", probe=value_evidence, judge=_judge_icu, answers=("icu_sensitivity",))
"""Exercise ``icu-sensitivity``: the L1 sensitivity of the 3 hospitals × 10 days ICU table (add/remove one patient)."""
