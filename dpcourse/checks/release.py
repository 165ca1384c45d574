"""Checks for the exercises of notebook 02 (randomized response vs Laplace vs Gaussian)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..bounds import laplace_variance
from ..mechanisms import gaussian_sigma, k_rr_debias_counts
from ._core import (
    Exercise,
    Wrong,
    call_evidence,
    calls,
    diagnose,
    judge_cases,
    named_values,
    numbers,
    quote,
    short,
    values_evidence,
)

__all__ = ["BETTER_MECHANISM", "SENSITIVITIES", "better_mechanism", "debias_counts", "sensitivities"]

_DEBIAS_CASES = [([30, 50, 20], 1.0), ([120, 40, 25, 15], 0.5), ([500, 500], 2.0), ([10, 0, 5, 5, 80], 3.0)]
_DEBIAS_PARAMETERS = "(report_counts, epsilon)"


def _binary_rr_mistake(counts: np.ndarray, epsilon: float) -> np.ndarray:
    p = np.exp(epsilon) / (1 + np.exp(epsilon))  # binary RR's p, with q = 1 − p, used for k > 2 categories
    return (counts - counts.sum() * (1 - p)) / (2 * p - 1)


def _debias_cases(rng: np.random.Generator | None) -> list[tuple]:
    """The examples above; when grading, five report histograms drawn from ``rng``: k = 2, then four with k from 3
    to 6 (where binary RR's p differs from k-ary RR's), counts from 1 to 999, ε from 0.2 to 4 (2 significant
    digits)."""
    if rng is None:
        return _DEBIAS_CASES
    return [
        (rng.integers(1, 1000, int(k)).tolist(), float(f"{rng.uniform(0.2, 4.0):.2g}"))
        for k in [2, *rng.integers(3, 7, 4).tolist()]
    ]


def _debias_inputs(case: tuple) -> str:
    counts, epsilon = case
    return f"report_counts={quote([int(c) for c in counts], 80)}, epsilon={short(epsilon)}"


def _judge_one_debias(case: tuple, got: object) -> tuple[str, ...]:
    counts, epsilon = np.asarray(case[0], dtype=float), case[1]
    k, n = counts.size, counts.sum()
    p = np.exp(epsilon) / (np.exp(epsilon) + k - 1)
    q = 1 / (np.exp(epsilon) + k - 1)
    return diagnose(
        got,
        k_rr_debias_counts(counts, epsilon=epsilon),
        what=f"the estimate with {_debias_inputs(case)}",
        rtol=1e-9,
        hint="write the expected number of reports of category j in terms of its true count c_j, then solve for c_j",
        mistakes={
            "binary randomized response's p = e^ε/(1 + e^ε), but there are k categories": (
                _binary_rr_mistake(counts, epsilon),  # the right estimate when k = 2
                "reread the exercise's p for k categories and compare it with yours",
            ),
            "the n·q reports that land on j by chance are not subtracted": (
                counts / (p - q),
                "every category also receives reports from the n − c_j people not in it",
            ),
            "fractions, not counts": (
                k_rr_debias_counts(counts, epsilon=epsilon) / n,
                "return estimated counts; they add up to n",
            ),
        },
    )


def _judge_debias(evidence: dict, cases: list[tuple]) -> str:
    results = calls(evidence, parameters=_DEBIAS_PARAMETERS)
    judge_cases(cases, results, _judge_one_debias, inputs=_debias_inputs)
    sizes = [len(counts) for counts, _ in cases]
    return f"unbiased on {len(cases)} report histograms, k = {min(sizes)} to {max(sizes)} categories"


debias_counts = Exercise(
    "debias-counts",
    probe=lambda fn, cases: call_evidence(fn, cases, parameters=_DEBIAS_PARAMETERS),
    judge=_judge_debias,
    cases=_debias_cases,
    answers=("debias_counts",),
)
"""Exercise ``debias-counts``: ``fn(report_counts, epsilon)`` returns unbiased true counts from k-ary RR reports."""

#: Exercise ``sensitivities``: K normalised counting queries over n people; each person's type is in at most
#: ``per_person`` of the K queries.
SENSITIVITIES: dict[str, Any] = {"num_queries": 50, "n": 1000, "per_person": 5}


def _judge_sensitivities(evidence: dict) -> str:
    answers = named_values(evidence, "Δ₁ and Δ₂")
    k, n, s = SENSITIVITIES["num_queries"], SENSITIVITIES["n"], SENSITIVITIES["per_person"]
    l1, l2 = numbers(answers.get("l1"), "l1", shape=()), numbers(answers.get("l2"), "l2", shape=())
    if np.isclose(l1, np.sqrt(s) / n) and np.isclose(l2, s / n):
        raise Wrong(
            "l1 and l2 are swapped",
            "which norm adds the entries' sizes, and which their squares?",
            "l1 and l2 swapped",
        )
    diagnose(
        l1,
        s / n,
        what="the L1 sensitivity",
        rtol=1e-9,
        hint="changing one person's bit moves only the answers of the queries that contain their type, each by 1/n",
        mistakes={
            "every one of the K answers moves, but a person's type is in at most s of them": (
                k / n,
                "count only the queries containing the person's type",
            ),
            "the raw counts' sensitivity: the answers are normalised by n": (
                s,
                "are the answers counts or fractions of the n people?",
            ),
            "one query's sensitivity, not the vector's": (1 / n, "add the changes of all the answers that move"),
        },
    )
    diagnose(
        l2,
        np.sqrt(s) / n,
        what="the L2 sensitivity",
        rtol=1e-9,
        hint="take the same change vector as for the L1 sensitivity and measure it in the 2-norm",
        mistakes={
            "every one of the K answers moves, but a person's type is in at most s of them": (
                np.sqrt(k) / n,
                "only s answers move",
            ),
            "the raw counts' sensitivity: the answers are normalised by n": (
                np.sqrt(s),
                "are the answers counts or fractions of the n people?",
            ),
            "the L1 sensitivity again": (s / n, "how does the 2-norm combine the entries of the change vector?"),
        },
    )
    return (
        f"Δ₁ = s/n = {s / n:g}, Δ₂ = √s/n = {np.sqrt(s) / n:.4g}: "
        f"{k // s}× and {np.sqrt(k / s):.2f}× below the dense case"
    )


sensitivities = Exercise(
    "sensitivities",
    probe=lambda l1, l2: values_evidence(l1=l1, l2=l2),
    judge=_judge_sensitivities,
    answers=("l1", "l2"),
)
"""Exercise ``sensitivities``: Δ₁ and Δ₂ of the K answers of :data:`SENSITIVITIES` (each type in at most s queries)."""

#: Exercise ``better-mechanism``: n people, K counting queries (a person may be in all), ε, δ.
BETTER_MECHANISM: dict[str, Any] = {"n": 5000, "num_queries": 200, "epsilon": 0.5, "delta": 1e-6}


def _judge_better(evidence: dict) -> str:
    answers = named_values(evidence, "your answers")
    n, k, epsilon, delta = (BETTER_MECHANISM[key] for key in ("n", "num_queries", "epsilon", "delta"))
    want_laplace = laplace_variance(sensitivity=k / n, epsilon=epsilon)
    want_gaussian = gaussian_sigma(l2_sensitivity=np.sqrt(k) / n, epsilon=epsilon, delta=delta) ** 2
    diagnose(
        answers.get("laplace_mse"),
        want_laplace,
        what="Laplace's mean squared error per query",
        rtol=1e-6,
        hint="work out Laplace's scale from the L1 sensitivity of the K answers, then the variance of that Laplace",
        mistakes={
            "the variance of Lap(b) taken as b²": (
                want_laplace / 2,
                "work out the variance of Lap(b) from its density, or look it up in notebook 01",
            ),
            "one query's sensitivity 1/n: a person may be in all K queries": (
                laplace_variance(sensitivity=1 / n, epsilon=epsilon),
                "a person may be in all K queries: how many answers can one person move?",
            ),
        },
    )
    diagnose(
        answers.get("gaussian_mse"),
        want_gaussian,
        what="the Gaussian mechanism's mean squared error per query",
        rtol=1e-6,
        hint="find the Gaussian mechanism's σ with mechanisms.gaussian_sigma: which sensitivity does it take, and "
        "what is the error of N(0, σ²)?",
        mistakes={
            "Δ₁ = K/n used where Δ₂ belongs": (
                gaussian_sigma(l2_sensitivity=k / n, epsilon=epsilon, delta=delta) ** 2,
                "which norm of the change vector is the Gaussian mechanism calibrated to?",
            ),
            "the classic calibration √(2 ln(1.25/δ))·Δ₂/ε": (
                gaussian_sigma(l2_sensitivity=np.sqrt(k) / n, epsilon=epsilon, delta=delta, calibration="classic") ** 2,
                "use the analytic calibration (the default)",
            ),
            "σ, not σ²": (
                np.sqrt(want_gaussian),
                "the exercise asks for a mean squared error: is σ already one, or what is the MSE of N(0, σ²)?",
            ),
        },
    )
    winner = "gaussian" if want_gaussian < want_laplace else "laplace"
    choice = answers.get("choice")
    if type(choice) is not str or choice.strip().lower() not in ("laplace", "gaussian"):
        shown = repr(choice) if type(choice) is str else "None" if choice is None else "a value that is not a string"
        raise Wrong(
            f"choice: expected 'laplace' or 'gaussian', got {quote(shown, 80)}",
            "answer with one of the two strings",
            "a choice that is not one of the two strings",
        )
    if choice.strip().lower() != winner:
        raise Wrong(
            f"your errors are right, but you chose {quote(repr(choice), 80)}",
            "compare your two errors: which mechanism's is smaller?",
            "the worse mechanism chosen",
        )
    return f"{winner} wins by a factor {max(want_laplace, want_gaussian) / min(want_laplace, want_gaussian):.1f}"


better_mechanism = Exercise(
    "better-mechanism",
    probe=lambda choice, laplace_mse, gaussian_mse: values_evidence(
        choice=choice, laplace_mse=laplace_mse, gaussian_mse=gaussian_mse
    ),
    judge=_judge_better,
    answers=("choice", "laplace_mse", "gaussian_mse"),
)
"""Exercise ``better-mechanism``: which of Laplace and analytic Gaussian wins :data:`BETTER_MECHANISM`, by MSE."""
