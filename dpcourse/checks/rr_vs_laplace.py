"""Checks for the exercises of notebook 02 (randomized response vs Laplace vs Gaussian)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..mechanisms import (
    gaussian_sigma,
    k_rr_debias_counts,
    laplace_max_error_bound,
    laplace_variance,
    rr_max_error_bound,
)
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
    value,
    value_evidence,
    values_evidence,
)

__all__ = [
    "ATTACK_QUERIES",
    "BETTER_MECHANISM",
    "NARROW_GAUSSIAN",
    "SAMPLE_SIZE",
    "SENSITIVITIES",
    "attack_queries",
    "better_mechanism",
    "debias_counts",
    "narrow_gaussian_sigma",
    "sample_size",
    "sensitivities",
]

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
        digits=4,
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
        digits=4,
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


#: Exercise ``gaussian-sigma``: K normalised counting queries over n people, each type in at most
#: ``per_person`` of them; the classic Gaussian calibration at (ε, δ).
NARROW_GAUSSIAN: dict[str, Any] = {"num_queries": 400, "n": 20_000, "per_person": 100, "epsilon": 0.5, "delta": 1e-5}


def _classic_sigma(l2: float, epsilon: float, delta: float) -> float:
    return gaussian_sigma(l2_sensitivity=l2, epsilon=epsilon, delta=delta, calibration="classic")


def _judge_narrow_gaussian(evidence: dict) -> str:
    got = value(evidence, "σ")
    k, n, s, epsilon, delta = (NARROW_GAUSSIAN[key] for key in ("num_queries", "n", "per_person", "epsilon", "delta"))
    l2 = np.sqrt(s) / n
    want = _classic_sigma(l2, epsilon, delta)
    diagnose(
        got,
        want,
        what="σ",
        digits=3,
        hint="first the change vector of the K answers when one person's bit changes, then its 2-norm, then the "
        "classic calibration of §4",
        mistakes={
            "the L1 sensitivity s/n used where the Gaussian mechanism needs Δ₂": (
                _classic_sigma(s / n, epsilon, delta),
                "which norm of the change vector is the Gaussian mechanism calibrated to?",
            ),
            "every one of the K answers moves, but a person's type is in at most s of them": (
                _classic_sigma(np.sqrt(k) / n, epsilon, delta),
                "count only the answers one person can move",
            ),
            "the raw counts' sensitivity: the answers are normalised by n": (
                _classic_sigma(np.sqrt(s), epsilon, delta),
                "are the answers counts or fractions of the n people?",
            ),
            "ln(1/δ) in place of ln(1.25/δ)": (
                l2 * np.sqrt(2 * np.log(1 / delta)) / epsilon,
                "reread the constant inside the logarithm of the classic calibration",
            ),
            "the analytic calibration (mechanisms.gaussian_sigma's default), not the classic formula": (
                gaussian_sigma(l2_sensitivity=l2, epsilon=epsilon, delta=delta),
                "the exercise asks for the classic calibration",
            ),
            "σ², not σ": (want**2, "the exercise asks for the standard deviation"),
        },
    )
    return (
        f"Δ₂ = √s/n = {l2:.3g}, σ = {want:.4g}: each normalised answer is off by about {want:.2g}; "
        f"Laplace on the same answers (Δ₁ = s/n) would have standard deviation {np.sqrt(2) * s / n / epsilon:.2g}"
    )


narrow_gaussian_sigma = Exercise(
    "gaussian-sigma", probe=value_evidence, judge=_judge_narrow_gaussian, answers=("sigma",)
)
"""Exercise ``gaussian-sigma``: the classic Gaussian σ for the K answers of :data:`NARROW_GAUSSIAN`."""

#: Exercise ``sample-size``: |Q| counting queries (a person may be in all), every answer within α w.p. 1 − β.
SAMPLE_SIZE: dict[str, Any] = {"num_queries": 100, "alpha": 0.05, "beta": 0.05, "epsilon": 1.0}


def _sample_sizes() -> dict[str, float]:
    """The n at which each bound of the notebook equals α, and at which each named mistake's does."""
    k, alpha, beta, epsilon = (SAMPLE_SIZE[key] for key in ("num_queries", "alpha", "beta", "epsilon"))
    # Theorem 3.8 with Δ₁ = k/n: ln(k/β)·k/(nε) = α; Hoeffding: R·√(ln(2k/β)/(2n)) = α, so n ∝ (bound at n = 1)²
    rr_at_one = rr_max_error_bound(n=1, num_queries=k, beta=beta, epsilon=epsilon)
    return {
        "laplace": laplace_max_error_bound(k=k, beta=beta, sensitivity=k, epsilon=epsilon) / alpha,
        "laplace, ln(1/β)": k * np.log(1 / beta) / (alpha * epsilon),
        "laplace, one query's Δ₁": laplace_max_error_bound(k=k, beta=beta, sensitivity=1, epsilon=epsilon) / alpha,
        "rr": (rr_at_one / alpha) ** 2,
        "rr, R = 2/ε": (2 / epsilon) ** 2 * np.log(2 * k / beta) / (2 * alpha**2),
        "rr, not squared": rr_at_one / alpha,
        "rr, no union bound": (rr_at_one / alpha) ** 2 * np.log(2 / beta) / np.log(2 * k / beta),
    }


def _whole_people(got: object, what: str, root: float) -> np.ndarray:
    """The answer as a number of people: a whole number, or :class:`Wrong` saying that a root must be rounded up."""
    number = numbers(got, what, shape=())
    if number != np.round(number):
        raise Wrong(
            f"{what}: got {short(float(number))}, but n counts people: the exercise asks for the smallest whole n",
            "round the n at which the bound equals α up: at any smaller whole n the bound is above α",
            "the root of the bound, not rounded up to a whole n",
        )
    if number == np.floor(root):
        raise Wrong(
            f"{what}: got {number:.0f}, one person short: at n = {number:.0f} the bound is still above α",
            "int() and np.floor round down; the smallest n at which the bound holds is the root rounded up",
            "the root rounded down (int() truncates)",
        )
    return number


def _judge_sample_size(evidence: dict) -> str:
    answers = named_values(evidence, "your sample sizes")
    sizes = _sample_sizes()
    # the smallest whole n is the bound's root rounded up, exactly: one person fewer misses the bound
    diagnose(
        _whole_people(answers.get("n_laplace"), "n for Laplace per query", sizes["laplace"]),
        np.ceil(sizes["laplace"]),
        what="n for Laplace per query",
        rtol=0,
        hint="write Theorem 3.8's error level with Δ₁ of the |Q| normalised answers, set it equal to α, solve for n",
        mistakes={
            "ln(1/β) in place of ln(|Q|/β): the union bound over the |Q| answers is missing": (
                np.ceil(sizes["laplace, ln(1/β)"]),
                "the level must hold for every one of the |Q| answers at once",
            ),
            "one query's sensitivity 1/n: a person may be in all |Q| queries": (
                np.ceil(sizes["laplace, one query's Δ₁"]),
                "how many answers can one person move?",
            ),
        },
    )
    diagnose(
        _whole_people(answers.get("n_rr"), "n for randomized response", sizes["rr"]),
        np.ceil(sizes["rr"]),
        what="n for randomized response",
        rtol=0,
        hint="set §2's bound R·√(ln(2|Q|/β)/(2n)) equal to α and solve for n",
        mistakes={
            "R ≈ 2/ε, but the bound has R = (e^ε + 1)/(e^ε − 1) exactly": (
                np.ceil(sizes["rr, R = 2/ε"]),
                "use the exact width R of a debiased report's range",
            ),
            "the bound solved as if the error fell like 1/n: it falls like 1/√n": (
                np.ceil(sizes["rr, not squared"]),
                "isolate √n first, then square",
            ),
            "ln(2/β) in place of ln(2|Q|/β): the union bound over the |Q| answers is missing": (
                np.ceil(sizes["rr, no union bound"]),
                "the level must hold for every one of the |Q| answers at once",
            ),
        },
    )
    laplace_n, rr_n = np.ceil(sizes["laplace"]), np.ceil(sizes["rr"])
    winner = "randomized response" if rr_n < laplace_n else "Laplace per query"
    return (
        f"Laplace needs {laplace_n:,.0f} people, randomized response {rr_n:,.0f}: {winner} needs fewer here "
        f"(Laplace's n grows like |Q|·ln|Q|, randomized response's like ln|Q|)"
    )


sample_size = Exercise(
    "sample-size",
    probe=lambda n_laplace, n_rr: values_evidence(n_laplace=n_laplace, n_rr=n_rr),
    judge=_judge_sample_size,
    answers=("n_laplace", "n_rr"),
)
"""Exercise ``sample-size``: the n at which each bound of notebook 02 reaches α for :data:`SAMPLE_SIZE`."""

#: Exercise ``attack-queries``: an ε-DP curator answers k subset sums over n individuals with Laplace per query;
#: the attack of §6 needs every answer's standard deviation at most ``fraction``·√n.
ATTACK_QUERIES: dict[str, Any] = {"n": 1_000_000, "epsilon": 1.0, "fraction": 0.1}


def _judge_attack_queries(evidence: dict) -> str:
    got = numbers(value(evidence, "k_max"), "k_max", shape=(), whole=True)
    n, epsilon, fraction = (ATTACK_QUERIES[key] for key in ("n", "epsilon", "fraction"))
    target = fraction * np.sqrt(n)
    # k answers, Δ₁ = k: Lap(k/ε), standard deviation √2·k/ε ≤ target
    root = target * epsilon / np.sqrt(2)
    want = np.floor(root)
    diagnose(
        got,
        want,
        what="k_max",
        rtol=0,
        hint="one person's bit is in every subset sum: find the Laplace scale for k answers, then its standard "
        "deviation, and solve for the largest whole k",
        mistakes={
            "the Laplace scale b taken as its standard deviation": (
                np.floor(target * epsilon),
                "what is the standard deviation of Lap(b)?",
            ),
            "Δ₂ = √k, the Gaussian mechanism's sensitivity, but Laplace needs Δ₁": (
                np.floor((target * epsilon) ** 2 / 2),
                "which norm of the change vector is the Laplace mechanism calibrated to?",
            ),
            "rounded up: at that k the standard deviation is above the target": (
                np.ceil(root),
                "the largest k whose standard deviation is still at most the target",
            ),
        },
    )
    return (
        f"k_max = {want:.0f}: a reconstruction needs about n = {n:,} queries, and at k = n the noise's standard "
        f"deviation is √2·n/ε = {np.sqrt(2) * np.sqrt(n) / epsilon:.0f}·√n"
    )


attack_queries = Exercise("attack-queries", probe=value_evidence, judge=_judge_attack_queries, answers=("k_max",))
"""Exercise ``attack-queries``: the most subset sums Laplace per query answers within the attack's noise level."""
