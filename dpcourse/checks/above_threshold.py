"""Checks for the exercises of notebook 04 (AboveThreshold)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from .._validation import as_generator, check_neighbouring_answers
from ..audit import above_threshold_pmf, max_privacy_loss
from ..exact import generalized_above_threshold_pmf
from ._core import Exercise, NotAttempted, Wrong, diagnose, numbers, value, value_evidence, values_evidence

__all__ = ["LARGE_LOSS", "SMALL_PMF", "implementation", "large_loss_pair", "small_pmf"]

_ANSWERS = np.array([0.0, 1.0, 2.0, 3.0])
_THRESHOLD, _EPSILON, _RUNS, _SEED = 2.0, 1.0, 20_000, 4
_PARAMETERS = "(answers, threshold, epsilon, rng)"


def _probe_implementation(student_fn: object) -> dict:
    """Run the student's AboveThreshold :data:`_RUNS` times (a loop: the student's function runs once per call)."""
    if student_fn is Ellipsis:
        return {"not_attempted": True}
    if not callable(student_fn):
        return {"not_callable": type(student_fn).__name__}
    rng = as_generator(_SEED)
    m = _ANSWERS.size
    counts = [0] * (m + 2)  # outcomes 0 … m − 1, "None" at m, anything else at m + 1
    odd = None
    for _ in range(_RUNS):
        try:
            k = student_fn(_ANSWERS.copy(), _THRESHOLD, _EPSILON, rng)
        except NotImplementedError:
            return {"not_attempted": True}
        except TypeError as err:
            return {"calls": [{"raised": f"TypeError: {err}"}]}
        except Exception as err:  # noqa: BLE001 - the student's code may raise anything
            return {"calls": [{"raised": f"{type(err).__name__}: {err}"}]}
        if k is None:
            counts[m] += 1
        elif isinstance(k, (int, np.integer)) and 0 <= k < m:
            counts[int(k)] += 1
        else:
            counts[m + 1] += 1
            odd = odd or repr(k)[:40]
    return {"counts": counts, "odd": odd}


def _judge_implementation(evidence: dict) -> str:
    if evidence.get("not_attempted"):
        raise NotAttempted
    if "not_callable" in evidence:
        raise Wrong(f"expected a function, got a {evidence['not_callable']}", f"define my_above_threshold{_PARAMETERS}")
    if "calls" in evidence:
        raised = evidence["calls"][0].get("raised", "an error")
        raise Wrong(f"your function raised {raised}", f"it is called as my_above_threshold{_PARAMETERS}")
    counts = numbers(evidence.get("counts"), "outcome counts", (_ANSWERS.size + 2,))
    m = _ANSWERS.size
    if counts[m + 1] > 0:
        raise Wrong(
            f"your function returned {evidence.get('odd')}, which is neither an index 0 … {m - 1} nor None",
            "return the 0-based index of the first ⊤ as an int, or None when every answer is ⊥",
        )
    freq = counts[: m + 1] / _RUNS

    def matches(pmf: np.ndarray) -> bool:
        # every outcome within 5 standard errors √(p(1 − p)/runs): a per-outcome z-test
        tolerance = 5 * np.sqrt(pmf * (1 - pmf) / _RUNS) + 1e-12
        return bool(np.all(np.abs(freq - pmf) <= tolerance))

    exact = above_threshold_pmf(_ANSWERS, threshold=_THRESHOLD, epsilon=_EPSILON)
    if matches(exact):
        return f"all {m + 1} outcome frequencies over {_RUNS:,} runs match the exact probabilities"
    proof = (
        "go through the privacy proof: which noise does it pay for once, which for every query, and what does "
        "each cost? Those decide the two scales"
    )
    mistakes = {
        "the queries' noise has the threshold's scale instead of its own (both Lap(2/ε))": (
            _pmf_with_scales(threshold_scale=2 / _EPSILON, query_scale=2 / _EPSILON),
            proof,
        ),
        "both noises are half as large as they should be (Lap(1/ε) and Lap(2/ε))": (
            above_threshold_pmf(_ANSWERS, threshold=_THRESHOLD, epsilon=2 * _EPSILON),
            proof,
        ),
        "both noises are twice as large as they should be": (
            above_threshold_pmf(_ANSWERS, threshold=_THRESHOLD, epsilon=_EPSILON / 2),
            proof,
        ),
        "the index is 1-based (or off by one)": (
            np.r_[0.0, exact[: m - 1], exact[m - 1] + exact[m]],
            "count positions the way Python indexes a list",
        ),
    }
    for mistake, (pmf, hint) in mistakes.items():
        if matches(pmf):
            raise Wrong(f"your outcome frequencies fit the case where {mistake}", hint, mistake)
    worst = int(np.argmax(np.abs(freq - exact)))
    raise Wrong(
        f"outcome {worst} came out with frequency {freq[worst]:.4f}, but its exact probability is {exact[worst]:.4f}",
        "compare your code with the lecture's pseudocode line by line: the noises, the comparison, what is returned",
    )


def _pmf_with_scales(*, threshold_scale: float, query_scale: float) -> np.ndarray:
    """The exact outcome distribution when the threshold and the queries get Laplace noise of these scales."""
    return generalized_above_threshold_pmf(
        _ANSWERS,
        threshold=_THRESHOLD,
        threshold_noise=stats.laplace(scale=threshold_scale),
        query_noise=stats.laplace(scale=query_scale),
    )


implementation = Exercise("implement", probe=_probe_implementation, judge=_judge_implementation)
"""Exercise ``implement``: ``fn(answers, threshold, epsilon, rng)`` runs AboveThreshold once.

Its outcome frequencies are compared with the exact pmf.
"""

#: Exercise ``small-pmf``: answers, threshold and ε (Δ = 1).
SMALL_PMF: dict[str, Any] = {"answers": [0.0, 1.0], "threshold": 1.0, "epsilon": 1.0}


def _judge_small_pmf(evidence: dict) -> str:
    got = value(evidence, "small_pmf")
    spec = SMALL_PMF
    expected = above_threshold_pmf(spec["answers"], threshold=spec["threshold"], epsilon=spec["epsilon"])
    diagnose(
        got,
        expected,
        what="[Pr[⊤], Pr[⊥⊤], Pr[⊥⊥]]",
        atol=1e-6,
        hint="integrate p_ρ(z)·Pr[q₁ + ν₁ ≥ T + z] over z for the first entry, and so on; the three add up to 1",
        mistakes={
            "the noise scales are 1/ε and 2/ε (half of AboveThreshold's)": (
                above_threshold_pmf(spec["answers"], threshold=spec["threshold"], epsilon=2 * spec["epsilon"]),
                "ρ ~ Lap(2Δ/ε) on the threshold, ν ~ Lap(4Δ/ε) on each query",
            ),
            "the outcomes are in reverse order": (expected[::-1], "the order is Pr[⊤], Pr[⊥⊤], Pr[⊥⊥]"),
        },
    )
    return "the three probabilities, to 1e-6, and they add up to 1"


small_pmf = Exercise("small-pmf", probe=value_evidence, judge=_judge_small_pmf)
"""Exercise ``small-pmf``: Pr[⊤], Pr[⊥⊤], Pr[⊥⊥] for answers (0, 1), T = 1, ε = 1, Δ = 1."""

#: Exercise ``large-loss``: at most ``max_queries`` answers, Δ = 1, T = 0; the loss must reach ``target``·ε.
LARGE_LOSS: dict[str, Any] = {"epsilon": 1.0, "target": 0.9, "max_queries": 10}


def _judge_large_loss(evidence: dict) -> str:
    answers = value(evidence, "your pair")
    spec = LARGE_LOSS
    try:
        a, b = check_neighbouring_answers(answers.get("answers_d"), answers.get("answers_d_prime"), 1.0)
    except (TypeError, ValueError) as err:
        raise Wrong(
            f"not a neighbouring pair: {err}", "two lists of the same length, differing by at most 1 in every entry"
        ) from None
    if a.size > spec["max_queries"]:
        raise Wrong(
            f"use at most {spec['max_queries']} queries; got {a.size}",
            "a short list is enough: the loss is decided by where D and D′ stop",
        )
    result = max_privacy_loss(a, b, threshold=0.0, epsilon=spec["epsilon"])
    if result.max_loss < spec["target"] * spec["epsilon"]:
        raise Wrong(
            f"the largest privacy loss of your pair is {result.max_loss:.3f}, below {spec['target']:.0%} of ε = "
            f"{spec['epsilon']}",
            "make D′ more likely to stop early (raise its first answers) and less likely to stop at the last query "
            "(lower its last answer)",
        )
    return f"loss {result.max_loss:.3f} at outcome {result.worst_outcome}, and never above ε = {spec['epsilon']}"


large_loss_pair = Exercise(
    "large-loss",
    probe=lambda answers_d, answers_d_prime: values_evidence(answers_d=answers_d, answers_d_prime=answers_d_prime),
    judge=_judge_large_loss,
)
"""Exercise ``large-loss``: neighbouring answers (m ≤ 10, Δ = 1, T = 0) whose worst privacy loss is ≥ 0.9ε."""
