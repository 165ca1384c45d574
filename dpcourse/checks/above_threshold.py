"""Checks for the exercises of notebook 04 (AboveThreshold).

``implement`` runs the student's AboveThreshold many times and judges its outcome counts against the exact
distributions of the right algorithm and of each named mistake, which :mod:`._above_threshold_outcomes` computes
(with the settings it is run on).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import check_neighbouring_answers
from ..svt import (
    above_threshold_pmf,
    above_threshold_scales,
    adversarial_pair,
    max_privacy_loss,
    numeric_sparse_scales,
    sparse_vector_scales,
)
from ._above_threshold_outcomes import _laplace, bounds, distributions, implementation_cases
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
from ._evidence import jsonable

__all__ = [
    "LARGE_LOSS",
    "NS_SCALES",
    "SMALL_PMF",
    "SV_SCALES",
    "TOP_BUDGET",
    "implementation",
    "large_loss_pair",
    "ns_scales",
    "small_pmf",
    "sv_scales",
    "top_budget",
]

_PARAMETERS = "(answers, threshold, epsilon, rng)"


def _outcome(returned: object, m: int) -> int | None:
    """The outcome index 0 … m − 1, m for None, or None for anything else (read exactly: ``True`` is not 1)."""
    if returned is None:
        return m
    if type(returned) is int:  # what jsonable gives back unchanged, without its walk (this runs 10,000 times a case)
        return returned if 0 <= returned < m else None
    got = jsonable(returned)
    return got if type(got) is int and 0 <= got < m else None


def _run_many(student_fn: Callable, case: tuple) -> dict:
    """Run the student's AboveThreshold ``runs`` times on one case (a loop: their function runs once per call)."""
    answers, threshold, epsilon, seed, runs = case
    rng = np.random.default_rng(seed)
    m = len(answers)
    counts = [0] * (m + 2)  # outcomes 0 … m − 1, "None" at m, anything else at m + 1
    given = np.array(answers)
    for _ in range(runs):
        returned = student_fn(given.copy(), threshold, epsilon, rng)
        outcome = _outcome(returned, m)
        if outcome is None:  # one odd return is enough to fail: stop, and say what it was
            counts[m + 1] += 1
            return {"counts": counts, "odd": quote(_describe(returned), 60)}
        counts[outcome] += 1
    return {"counts": counts, "odd": None}


def _describe(returned: object) -> str:
    got = jsonable(returned)
    if type(got) in (int, float, bool, str):
        return repr(got)
    return f"a {type(returned).__name__}"


def _probe_implementation(student_fn: object, cases: list[tuple]) -> dict:
    return call_evidence(
        student_fn,
        cases,
        parameters=_PARAMETERS,
        arguments=lambda case: ((np.array(case[0]), case[1], case[2], np.random.default_rng(0)), {}),
        call=_run_many,
    )


def _implementation_inputs(case: tuple) -> str:
    answers, threshold, epsilon, _, _ = case
    shown = ", ".join(short(a) for a in answers)
    return f"answers=[{shown}], threshold={short(threshold)}, epsilon={short(epsilon)}"


def _judge_one_implementation(case: tuple, got: object) -> None:
    answers, threshold, epsilon, _, runs = case
    m = len(answers)
    unreadable = f"the check could not read your function's outcomes with {_implementation_inputs(case)}"
    if type(got) is not dict:
        raise Wrong(unreadable)
    counts = numbers(got.get("counts"), f"outcome counts with {_implementation_inputs(case)}", (m + 2,), whole=True)
    if counts[m + 1] > 0:
        raise Wrong(
            f"your function returned {quote(got.get('odd'), 60)} with {_implementation_inputs(case)}, which is "
            f"neither an index 0 … {m - 1} nor None",
            "reread what the exercise asks the function to return, for a ⊤ and for no ⊤ at all",
            "an outcome that is neither an index nor None",
        )
    if counts.sum() != runs:
        raise Wrong(unreadable)
    named = distributions(answers, threshold, epsilon)
    pmfs, low, high = bounds(answers, threshold, epsilon, runs)
    accepted = np.all((low <= counts[: m + 1]) & (counts[: m + 1] <= high), axis=1)
    if accepted[0]:
        return
    for (mistake, (_, hint)), fits in list(zip(named.items(), accepted, strict=True))[1:]:
        if fits:
            raise Wrong(
                f"with {_implementation_inputs(case)}, your outcome frequencies fit the case where {mistake}",
                hint,
                mistake,
            )
    exact = pmfs[0]
    freq = counts[: m + 1] / runs
    worst = int(np.argmax(np.abs(freq - exact)))
    raise Wrong(
        f"with {_implementation_inputs(case)}, outcome {worst} came out with frequency {freq[worst]:.4f}, but its "
        f"exact probability is {exact[worst]:.4f}",
        "compare your code with the lecture's pseudocode line by line: the noises, the comparison, what is returned",
    )


def _judge_implementation(evidence: dict, cases: list[tuple]) -> str:
    results = calls(evidence, parameters=_PARAMETERS)
    judge_cases(cases, results, _judge_one_implementation, inputs=_implementation_inputs)
    runs = {case[4] for case in cases}
    if len(cases) == 1:
        m = len(cases[0][0])
        return f"all {m + 1} outcome frequencies over {cases[0][4]:,} runs match the exact probabilities"
    return (
        f"the outcome frequencies match the exact probabilities on {len(cases)} settings "
        f"({'/'.join(f'{r:,}' for r in sorted(runs))} runs each)"
    )


implementation = Exercise(
    "implement",
    probe=_probe_implementation,
    judge=_judge_implementation,
    cases=implementation_cases,
    answers=("my_above_threshold",),
)
"""Exercise ``implement``: ``fn(answers, threshold, epsilon, rng)`` runs AboveThreshold once.

Its outcome frequencies over many runs are compared with the exact pmf, on each case.
"""

#: Exercise ``small-pmf``: answers, threshold and ε (Δ = 1).
SMALL_PMF: dict[str, Any] = {"answers": [0.0, 1.0], "threshold": 1.0, "epsilon": 1.0}


_SMALL_PMF_ENTRIES = ("Pr[⊤]", "Pr[⊥⊤]", "Pr[⊥⊥]")


def _judge_small_pmf(evidence: dict) -> str:
    what = "[Pr[⊤], Pr[⊥⊤], Pr[⊥⊥]]"
    got = numbers(value(evidence, "small_pmf"), what, (3,))
    spec = SMALL_PMF
    expected = above_threshold_pmf(spec["answers"], threshold=spec["threshold"], epsilon=spec["epsilon"])
    if abs(got.sum() - 1) > 3e-6:  # each entry may be off by 1e-6
        raise Wrong(
            f"{what}: your three probabilities add up to {got.sum():.6g}, not 1",
            "the three outcomes are everything AboveThreshold can do on two queries: check the integrand of each "
            "outcome (the threshold noise's density, the ⊥ before it, the ⊤ or end that closes it)",
            "probabilities that do not add up to 1",
        )
    diagnose(
        got,
        expected,
        what=what,
        entries=_SMALL_PMF_ENTRIES,
        atol=1e-6,
        hint="start from Section 2's integral over the threshold's noise z, one outcome at a time; the three must "
        "add up to 1",
        mistakes={
            "the noise scales are 1/ε and 2/ε (half of AboveThreshold's)": (
                above_threshold_pmf(spec["answers"], threshold=spec["threshold"], epsilon=2 * spec["epsilon"]),
                "look up AboveThreshold's two noise scales in the lecture's pseudocode: which goes with the "
                "threshold, which with each query?",
            ),
            "the outcomes are in reverse order": (
                expected[::-1],
                "check the order in which the exercise lists the outcomes",
            ),
        },
    )
    return "the three probabilities, to 1e-6, and they add up to 1"


small_pmf = Exercise("small-pmf", probe=value_evidence, judge=_judge_small_pmf, answers=("small_pmf",))
"""Exercise ``small-pmf``: Pr[⊤], Pr[⊥⊤], Pr[⊥⊥] for answers (0, 1), T = 1, ε = 1, Δ = 1."""

#: Exercise ``large-loss``: at most ``max_queries`` answers, Δ = 1, T = 0; the loss must reach ``target``·ε.
LARGE_LOSS: dict[str, Any] = {"epsilon": 1.0, "target": 0.9, "max_queries": 10}


def _judge_large_loss(evidence: dict) -> str:
    answers = named_values(evidence, "your pair")
    spec = LARGE_LOSS
    given_d = numbers(answers.get("answers_d"), "answers_d")
    given_d_prime = numbers(answers.get("answers_d_prime"), "answers_d_prime")
    try:
        a, b = check_neighbouring_answers(given_d, given_d_prime, 1.0)
    except (TypeError, ValueError) as err:
        raise Wrong(
            f"not a neighbouring pair: {quote(err)}",
            "reread what makes two lists of answers neighbours when Δ = 1: their lengths, and each entry's change",
            "not a neighbouring pair",
        ) from None
    if a.size > spec["max_queries"]:
        raise Wrong(
            f"use at most {spec['max_queries']} queries; got {a.size}",
            "a short list is enough: the loss is decided by where D and D′ stop",
            "more queries than allowed",
        )
    result = max_privacy_loss(a, b, threshold=0.0, epsilon=spec["epsilon"])
    if result.max_loss < spec["target"] * spec["epsilon"]:
        raise Wrong(
            f"the largest privacy loss of your pair is {result.max_loss:.3f}, below {spec['target']:.0%} of ε = "
            f"{spec['epsilon']}",
            "which outcome can be much likelier under one list than under the other? Think about where each "
            "list makes AboveThreshold stop, and how a difference of 1 in each entry can push those apart",
            "a pair whose loss is below the target",
        )
    return f"loss {result.max_loss:.3f} at outcome {result.worst_outcome}, and never above ε = {spec['epsilon']}"


large_loss_pair = Exercise(
    "large-loss",
    probe=lambda answers_d, answers_d_prime: values_evidence(answers_d=answers_d, answers_d_prime=answers_d_prime),
    judge=_judge_large_loss,
    answers=("answers_d", "answers_d_prime"),
)
"""Exercise ``large-loss``: neighbouring answers (m ≤ 10, Δ = 1, T = 0) whose worst privacy loss is ≥ 0.9ε."""


#: Exercise ``top-budget``: AboveThreshold with a larger threshold noise Lap(``threshold_scale``); the answer is the
#: smallest query-noise scale b that keeps the proof's bound at ε (Δ = ``sensitivity``).
TOP_BUDGET: dict[str, Any] = {"epsilon": 0.5, "sensitivity": 3.0, "threshold_scale": 30.0}


def _judge_top_budget(evidence: dict) -> str:
    got = value(evidence, "query_scale")
    eps, sens, a = TOP_BUDGET["epsilon"], TOP_BUDGET["sensitivity"], TOP_BUDGET["threshold_scale"]
    left = eps - sens / a  # what the threshold's factor e^{Δ/a} leaves of the budget
    expected = 2 * sens / left
    diagnose(
        got,
        expected,
        what="query_scale",
        hint="write the proof's bound as the sum of what the threshold's factor and the ⊤ factor cost, each in "
        "terms of its own noise scale, and ask that the sum be ε",
        mistakes={
            "the ⊤ factor pays for a shift of Δ": (
                sens / left,
                "step 4 compares the ⊤ query with a fictitious one: by how much can that one move between D and D′?",
            ),
            "the query noise kept AboveThreshold's own scale": (
                4 * sens / eps,
                "the threshold's noise is larger than AboveThreshold's here: how much of ε does its factor use now, "
                "and what does that leave for the ⊤ factor?",
            ),
            "the threshold's factor is charged for a shift of 2Δ": (
                2 * sens / (eps - 2 * sens / a),
                "step 2 shifts the threshold's noise: by how much, and what does that factor cost for Lap(a)?",
            ),
            "Δ is left out": (
                2 / (eps - 1 / a),
                "a factor e^{shift/scale} depends on the shift: where does Δ enter both factors?",
            ),
            "the equation is solved for 1/b, not b": (
                left / (2 * sens),
                "check whether your number is a scale (the larger, the more noise) or its reciprocal",
            ),
        },
    )
    d, d_prime = adversarial_pair(64, sensitivity=sens)
    loss = max_privacy_loss(
        d,
        d_prime,
        threshold=0.5 * sens,
        epsilon=eps,
        sensitivity=sens,
        threshold_noise=_laplace(0.0, a),
        query_noise=_laplace(0.0, float(expected)),
    ).max_loss
    return f"the two factors add up to ε; on the notebook's hard pair with 64 queries the exact loss is {loss:.4f}"


top_budget = Exercise("top-budget", probe=value_evidence, judge=_judge_top_budget, answers=("query_scale",))
"""Exercise ``top-budget``: the query-noise scale that keeps AboveThreshold ε-DP when the threshold noise grows."""

#: Exercise ``sv-scales``: SparseVector with δ = 0 for ``c`` discoveries; the answer is one run's
#: (threshold scale, query scale).
SV_SCALES: dict[str, Any] = {"epsilon": 0.5, "c": 5, "sensitivity": 2.0}


def _judge_sv_scales(evidence: dict) -> str:
    got = value(evidence, "sv_scales")
    eps, c, sens = SV_SCALES["epsilon"], SV_SCALES["c"], SV_SCALES["sensitivity"]
    expected = sparse_vector_scales(epsilon=eps, c=c, sensitivity=sens)
    run_scales = np.array(above_threshold_scales(epsilon=eps, sensitivity=sens))
    diagnose(
        got,
        expected,
        what="[threshold scale, query scale]",
        hint="SparseVector is c AboveThreshold runs: what budget does one run get, and what are AboveThreshold's "
        "two scales at that budget?",
        mistakes={
            "each run gets the whole ε": (
                run_scales,
                "c runs compose: if each used the whole budget, what would the total be?",
            ),
            "the budget is multiplied by c instead of divided": (
                run_scales / c,
                "c runs share ε: does one run get more or less than ε, and does that mean more noise or less?",
            ),
            "the scales are the wrong way round": (
                np.array(expected)[::-1],
                "check the order the exercise asks for, and which noise is the larger in AboveThreshold",
            ),
            "Δ is left out": (
                np.array(expected) / sens,
                "the noise must cover the queries' sensitivity: where does Δ enter the scales?",
            ),
            "the runs are composed with √c (advanced composition), which needs δ > 0": (
                run_scales * np.sqrt(c),
                "with δ = 0, which composition theorem is available for c runs?",
            ),
        },
    )
    return f"one run is AboveThreshold with ε/c = {eps / c:g}: c·(ε/c) = ε in all"


sv_scales = Exercise("sv-scales", probe=value_evidence, judge=_judge_sv_scales, answers=("sv_scales",))
"""Exercise ``sv-scales``: one SparseVector run's noise scales (δ = 0)."""

#: Exercise ``ns-scales``: NumericSparse with δ = 0 for ``c`` discoveries; the answer is its
#: (threshold scale, query scale, scale of a released value's noise), with Dwork & Roth's split.
NS_SCALES: dict[str, Any] = {"epsilon": 1.5, "c": 4, "sensitivity": 2.0}


def _judge_ns_scales(evidence: dict) -> str:
    got = value(evidence, "ns_scales")
    eps, c, sens = NS_SCALES["epsilon"], NS_SCALES["c"], NS_SCALES["sensitivity"]
    expected = np.array(numeric_sparse_scales(epsilon=eps, c=c, sensitivity=sens))
    whole = sparse_vector_scales(epsilon=eps, c=c, sensitivity=sens)
    diagnose(
        got,
        expected,
        what="[threshold scale, query scale, value scale]",
        entries=("the threshold scale", "the query scale", "the value scale"),
        hint="split ε as the SparseVector and NumericSparse section says, then give the comparisons SparseVector's "
        "scales at ε₁ and each value the scale at which the c values together cost ε₂/2 = ε/9, as Dwork & Roth's do",
        mistakes={
            "the comparisons use the whole ε": (
                np.array([*whole, expected[2]]),
                "the comparisons get only part of ε: which part?",
            ),
            "the values' noise Lap(cΔ/ε₂), at which the c values spend all of ε₂; Dwork & Roth's, which the exercise "
            "asks for, spends ε₂/2": (
                expected * [1, 1, 0.5],
                "the c values together cost ε₂/2 = ε/9 in Dwork & Roth's NumericSparse: which scale costs that?",
            ),
            "each value's noise forgets that there are c of them": (
                expected * [1, 1, 1 / c],
                "c values are released: how many times is the values' part of ε paid?",
            ),
            "the lecture's even split (half for the comparisons, half for the values)": (
                np.array(numeric_sparse_scales(epsilon=eps, c=c, sensitivity=sens, numeric_share=0.5)),
                "the exercise asks for Dwork & Roth's split, not the lecture's simpler one",
            ),
            "Δ is left out": (
                expected / sens,
                "the noise must cover the queries' sensitivity: where does Δ enter the scales?",
            ),
        },
    )
    return "ε₁ = 8ε/9 for the comparisons, ε₂ = 2ε/9 for the values (which cost ε₂/2 = ε/9 in all)"


ns_scales = Exercise("ns-scales", probe=value_evidence, judge=_judge_ns_scales, answers=("ns_scales",))
"""Exercise ``ns-scales``: NumericSparse's three noise scales (δ = 0, Dwork & Roth's split)."""
