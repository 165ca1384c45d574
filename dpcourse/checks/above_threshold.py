"""Checks for the exercises of notebook 04 (AboveThreshold)."""

from __future__ import annotations

import numpy as np

from .._validation import check_neighbouring_answers
from ..audit import above_threshold_pmf, max_privacy_loss
from ._core import CheckFailed, expect_callable, expect_close, passed

__all__ = ["implementation", "large_loss_pair", "small_pmf"]

_ANSWERS = np.array([0.0, 1.0, 2.0, 3.0])
_THRESHOLD, _EPSILON, _RUNS = 2.0, 1.0, 20_000


def implementation(student_fn, *, runs: int = _RUNS) -> None:
    """Exercise ``implement``: ``student_fn(answers, threshold, epsilon, rng)`` runs AboveThreshold once.

    It must return the index of the first ⊤, or ``None`` if every answer is ⊥. The check runs
    it ``runs`` times on fixed answers and compares the frequency of each outcome with the exact
    probabilities: each must lie within 5 standard errors √(p(1 − p)/runs). Halving either
    noise moves some outcome by more than 10 standard errors, so a wrong calibration fails.
    """
    ex = "implement"
    fn = expect_callable(ex, student_fn, "your AboveThreshold")
    rng = np.random.default_rng(4)
    m = _ANSWERS.size
    counts = np.zeros(m + 1)
    try:
        for _ in range(runs):
            k = fn(_ANSWERS.copy(), _THRESHOLD, _EPSILON, rng)
            counts[m if k is None else int(k)] += 1
    except NotImplementedError:
        raise CheckFailed(ex, "the function still raises NotImplementedError") from None
    except (TypeError, ValueError, IndexError) as err:
        raise CheckFailed(ex, f"calling it failed: {err!r}",
                          "return the index of the first ⊤ as an int, or None when all answers are ⊥") from None
    exact = above_threshold_pmf(_ANSWERS, threshold=_THRESHOLD, epsilon=_EPSILON)
    freq = counts / runs
    tolerance = 5 * np.sqrt(exact * (1 - exact) / runs) + 1e-12
    if np.any(np.abs(freq - exact) > tolerance):
        worst = int(np.argmax(np.abs(freq - exact) / tolerance))
        raise CheckFailed(ex, f"outcome {worst} came out with frequency {freq[worst]:.4f}, but its exact "
                              f"probability is {exact[worst]:.4f}",
                          "the threshold gets Lap(2Δ/ε) noise once, each query fresh Lap(4Δ/ε) noise, "
                          "and the comparison is q + ν ≥ T̂")
    passed(ex, f"all {m + 1} outcome frequencies over {runs:,} runs match the exact probabilities")


def small_pmf(answer) -> None:
    """Exercise ``small-pmf``: Pr[⊤], Pr[⊥⊤], Pr[⊥⊥] for answers (0, 1), T = 1, ε = 1, Δ = 1."""
    expected = above_threshold_pmf([0.0, 1.0], threshold=1.0, epsilon=1.0)
    expect_close("small-pmf", answer, expected, what="[Pr[⊤], Pr[⊥⊤], Pr[⊥⊥]]", atol=1e-6, rtol=0,
                 hint="integrate p_ρ(z)·Pr[q₁ + ν₁ ≥ T + z] over z for the first entry, and so on; "
                      "the three must add up to 1")
    passed("small-pmf")


def large_loss_pair(answers_d, answers_d_prime, *, epsilon: float = 1.0, target: float = 0.9) -> None:
    """Exercise ``large-loss``: neighbouring answers (m ≤ 10, Δ = 1, T = 0) whose worst loss is ≥ 0.9ε."""
    ex = "large-loss"
    try:
        a, b = check_neighbouring_answers(answers_d, answers_d_prime, 1.0)
    except (TypeError, ValueError) as err:
        raise CheckFailed(ex, str(err), "two lists of the same length, differing by at most 1 in every entry") from None
    if a.size > 10:
        raise CheckFailed(ex, f"use at most 10 queries; got {a.size}")
    result = max_privacy_loss(a, b, threshold=0.0, epsilon=epsilon)
    if result.max_loss < target * epsilon:
        raise CheckFailed(ex, f"the largest privacy loss of your pair is {result.max_loss:.3f}, below "
                              f"{target:.0%} of ε = {epsilon}",
                          "make D′ more likely to stop early (raise its first answers) and less likely to "
                          "stop at the last query (lower its last answer)")
    passed(ex, f"loss {result.max_loss:.3f} at outcome {result.worst_outcome}, and never above ε = {epsilon}")
