"""Checks for the exercises of notebook 01 (Laplace utility).

Each check names the two or three most plausible mistakes (see :func:`~dpcourse.checks._core.diagnose`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import check_integer, check_size
from ..linear_queries import MatrixWorkload
from ..mechanisms import laplace_max_error_bound, laplace_max_error_quantile
from ._core import Exercise, call_evidence, calls, diagnose, judge_cases, short, value, value_evidence

__all__ = [
    "EXAMPLE_OFFICE",
    "ICU_TARGET",
    "exact_tail_level",
    "icu_epsilon",
    "icu_occupancy_workload",
    "icu_sensitivity",
    "max_queries",
    "workload_sensitivity",
]

#: Exercise ``workload-sensitivity``: its documented workloads (rows are queries, columns record types).
_WORKLOAD_CASES = [
    (np.array([[1.0, -1.0, 0.0], [0.5, 0.5, 0.5], [0.0, -1.0, 1.0], [1.0, 1.0, 0.0]]),),
    (np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 1.0, 0.0]]),),
    (np.eye(3),),
]
_WORKLOAD_PARAMETERS = "(W)"


def _workload_answers(matrix: np.ndarray) -> dict[str, float]:
    """The right Δf and the value of each named mistake, for one workload matrix."""
    absolute = np.abs(matrix)
    return {
        "right": float(absolute.sum(axis=0).max()),
        "rows": float(absolute.sum(axis=1).max()),
        "signed": float(matrix.sum(axis=0).max()),
        "l2": float(np.sqrt((matrix**2).sum(axis=0)).max()),
    }


def _separates(matrix: np.ndarray) -> bool:
    """Whether every named mistake gives a value at least 5 % away from the right one on ``matrix``."""
    answers = _workload_answers(matrix)
    return all(abs(answers[m] - answers["right"]) > 0.05 * answers["right"] for m in ("rows", "signed", "l2"))


def _workload_cases(rng: np.random.Generator | None) -> list[tuple]:
    """The examples above; when grading, five m × d matrices drawn from ``rng`` (m ≠ d, 2 to 5 rows, 3 to 6
    columns, entries in {−1, −0.5, 0, 0.5, 1}), each redrawn until every named mistake gives another value."""
    if rng is None:
        return _WORKLOAD_CASES
    cases: list[tuple] = []
    while len(cases) < 5:
        rows, columns = int(rng.integers(2, 6)), int(rng.integers(3, 7))
        if rows == columns:
            continue
        matrix = rng.choice([-1.0, -0.5, 0.0, 0.5, 1.0], size=(rows, columns), p=[0.2, 0.1, 0.3, 0.1, 0.3])
        if _separates(matrix):
            cases.append((matrix,))
    return cases


def _workload_inputs(case: tuple) -> str:
    return "W=" + str(np.asarray(case[0]).tolist()).replace(" ", "")


def _judge_one_workload(case: tuple, got: object) -> tuple[str, ...]:
    answers = _workload_answers(np.asarray(case[0], dtype=float))
    return diagnose(
        got,
        answers["right"],
        what=f"Δf with {_workload_inputs(case)}",
        rtol=1e-9,
        hint="one person adds 1 to one cell of x: which part of W does that select, and how much can it move all "
        "the answers together, measured in L1?",
        mistakes={
            "the largest row sum: rows and columns swapped": (
                answers["rows"],
                "a row of W is one query; a person's record moves one entry of x: which part of W multiplies it?",
            ),
            "a signed sum: negative entries cancel out": (
                answers["signed"],
                "an L1 norm adds the sizes of the changes, whatever their signs",
            ),
            "the largest column's L2 norm, which is the L2 sensitivity": (
                answers["l2"],
                "the Laplace mechanism needs the L1 norm of the change in the answers",
            ),
        },
    )


def _judge_workload(evidence: dict, cases: list[tuple]) -> str:
    results = calls(evidence, parameters=_WORKLOAD_PARAMETERS)
    checked = judge_cases(cases, results, _judge_one_workload, inputs=_workload_inputs)
    return f"the largest column L1 norm, checked on {checked} workloads"


workload_sensitivity = Exercise(
    "workload-sensitivity",
    probe=lambda fn, cases: call_evidence(fn, cases, parameters=_WORKLOAD_PARAMETERS),
    judge=_judge_workload,
    cases=_workload_cases,
    answers=("workload_l1_sensitivity",),
)
"""Exercise ``workload-sensitivity``: ``fn(W)``, the L1 sensitivity of the workload with matrix W (add/remove one)."""


_TAIL_CASES = [(1, 0.05, 1.0, 1.0), (100, 0.05, 1.0, 0.5), (1000, 1e-3, 3.0, 2.0), (7, 0.3, 0.5, 0.1)]
_TAIL_PARAMETERS = "(k, beta, sensitivity, epsilon)"

#: Exercise ``max-queries``'s statistics office: n people, ε, accuracy α (normalised), failure probability β.
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
            "you read the promise per answer (ln(1/β), each answer alone within α w.p. 1 − β); it is for all K "
            "answers at once (ln(K/β))": (
                _queries_within(n, alpha, beta, epsilon, log_term=lambda k: np.log(1 / beta)),
                "the promise covers all K answers together: by the union bound each may fail with probability β/K",
            ),
            "an off-by-one: the next K already breaks the bound": (
                right + 1,
                "put your K back into the inequality: does it hold?",
            ),
        },
    )
    level = right * np.log(right / beta) / (n * epsilon)
    return f"K = {right} queries: all {right} answers within {level:.5f} ≤ α = {alpha} at once, w.p. {1 - beta:.2f}"


max_queries = Exercise("max-queries", probe=value_evidence, judge=_judge_max_queries, answers=("K_max",))
"""Exercise ``max-queries``: the largest number of queries the office of :data:`EXAMPLE_OFFICE` can answer."""


def icu_occupancy_workload(hospitals: int, days: int) -> MatrixWorkload:
    """The ICU table as a workload: count of patients in ICU at hospital h on day t.

    A patient's record is (hospital, first day, last day) of one ICU stay; the query (h, t)
    counts the records with that hospital and first day ≤ t ≤ last day.

    Parameters
    ----------
    hospitals : int
        The number of hospitals H.
    days : int
        The number of days D.

    Returns
    -------
    MatrixWorkload
        W of shape (H·D, H·D(D + 1)/2): row h·D + t is the query (h, t), one column per possible stay.

    Raises
    ------
    ValueError
        If ``hospitals`` or ``days`` is below 1, or the table would need more than about 1 GiB.
    TypeError
        If ``hospitals`` or ``days`` is not an integer.
    """
    hospitals = check_integer(hospitals, "hospitals", minimum=1)
    days = check_integer(days, "days", minimum=1)
    check_size(8 * hospitals * days * hospitals * days * (days + 1) // 2, "hospitals × days")
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


#: Exercise ``icu-epsilon``: every cell of the ICU table within ``alpha`` patients, all at once w.p. 1 − ``beta``.
ICU_TARGET: dict[str, Any] = {"alpha": 10.0, "beta": 0.05}


def _judge_icu_epsilon(evidence: dict) -> str:
    got = value(evidence, "ε")
    alpha, beta = ICU_TARGET["alpha"], ICU_TARGET["beta"]
    cells = _ICU_HOSPITALS * _ICU_DAYS
    sensitivity = icu_occupancy_workload(_ICU_HOSPITALS, _ICU_DAYS).l1_sensitivity

    def smallest_epsilon(k: int, delta_f: float, log_term: float | None = None) -> float:
        """Theorem 3.8's level ln(k/β)·Δf/ε = α, solved for ε."""
        return (np.log(k / beta) if log_term is None else log_term) * delta_f / alpha

    right = smallest_epsilon(cells, sensitivity)
    diagnose(
        got,
        right,
        what="the smallest ε",
        rtol=2e-3,
        hint="set Theorem 3.8's level for the whole table equal to the target and solve for ε: what are k and Δf "
        "of the table?",
        mistakes={
            "Δf = 1, the histogram's sensitivity; a stay adds 1 to several cells": (
                smallest_epsilon(cells, 1.0),
                "the noise must cover one patient's whole stay: reuse the sensitivity of the previous exercise",
            ),
            "ln(1/β): one cell within the target, not all of them at once": (
                smallest_epsilon(cells, sensitivity, np.log(1 / beta)),
                "the promise covers every cell of the table together: how many coordinates does the union bound "
                "run over?",
            ),
            "k = the number of days: the table has a row for each hospital": (
                smallest_epsilon(_ICU_DAYS, sensitivity),
                "count every published number of the table, in all hospitals",
            ),
        },
    )
    return (
        f"ε = {right:.4g}: all {cells} counts within ±{alpha:g} w.p. {1 - beta:.2f}; a histogram (Δf = 1) would "
        f"need ε = {right / sensitivity:.3g}"
    )


icu_epsilon = Exercise("icu-epsilon", probe=value_evidence, judge=_judge_icu_epsilon, answers=("icu_epsilon",))
"""Exercise ``icu-epsilon``: the smallest ε for which Theorem 3.8 puts every ICU count within :data:`ICU_TARGET`."""
