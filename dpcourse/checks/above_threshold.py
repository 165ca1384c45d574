"""Checks for the exercises of notebook 04 (AboveThreshold)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from .._validation import check_neighbouring_answers
from ..svt import (
    above_threshold_pmf,
    above_threshold_scales,
    adversarial_pair,
    generalized_above_threshold_pmf,
    max_privacy_loss,
    numeric_sparse_scales,
    sparse_vector_scales,
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
# 10,000 runs on each documented example suffice: the right distribution and the 13 named mistakes' are told
# apart pairwise (disjoint acceptance intervals, see ``_LEVEL``) on one example or the other, as at 20,000, at half
# the cost of running the student's function (tests/checks/test_checks.py judges the right answer and mistakes on them).
_RUNS_OWN, _RUNS_GRADING, _GRADING_CASES = 10_000, 10_000, 4
#: The documented runs: (answers, threshold, ε, the seed of the rng passed in, runs). The first is the notebook's
#: own small example (not the lecture's); the second has ε far from 1, where ε left out of the scales or
#: multiplied into them shows.
_EXAMPLES: list[tuple] = [
    ((0.0, 1.0, 2.0, 3.0), 2.0, 1.0, 4, _RUNS_OWN),
    ((0.0, 5.0, 10.0, 25.0, 5.0), 15.0, 0.25, 5, _RUNS_OWN),
]
# A run of outcome counts is accepted by a distribution p when every outcome's count lies inside p's binomial
# acceptance interval [ppf(a/2), isf(a/2)] of Binomial(runs, pᵢ): a false fail has probability at most a per
# outcome, so at most 7 outcomes × 4 cases × a ≈ 3e-7 per check. Drawn inputs are kept only if every two of the
# distributions below (the right one and each mistake's) have disjoint intervals in some outcome: then a sample
# of one lands outside the other's interval whenever it lands inside its own, and each mistake is named.
_LEVEL = 1e-8


def _case_tuple(answers: np.ndarray, threshold: float, epsilon: float, seed: int, runs: int) -> tuple:
    """One setting as plain Python numbers: (answers, threshold, ε, the seed of the rng passed in, runs)."""
    return tuple(float(a) for a in answers), float(threshold), float(epsilon), int(seed), int(runs)


def _implementation_cases(rng: np.random.Generator | None) -> list[tuple]:
    """The examples above; when grading, four settings drawn from ``rng``: 3 to 6 answers, ε from 0.15 to 0.4 or
    2.5 to 5 (2 significant digits, far from 1 and from 1/2, 2, 1/√2, √2 where two mistakes coincide), a threshold
    2 to 8 noise units 1/ε and answers from 8 units below it to 4 above, the rng's seed, and 10,000 runs; a
    setting is redrawn (up to 30 times) until the right distribution and every named mistake's are told apart
    (see ``_LEVEL``); if none is, the best of them."""
    if rng is None:
        return list(_EXAMPLES)
    return [_drawn_case(rng) for _ in range(_GRADING_CASES)]


def _drawn_case(rng: np.random.Generator) -> tuple:
    best, best_score = None, -1.0
    for _ in range(30):
        size = int(rng.integers(3, 7))
        low = rng.random() < 0.5
        epsilon = float(f"{rng.uniform(0.15, 0.4) if low else rng.uniform(2.5, 5.0):.2g}")
        unit = 1 / epsilon
        decimals = 0 if unit >= 2 else 2
        threshold = round(float(rng.uniform(2, 8)) * unit, decimals)
        answers = np.round(threshold + unit * rng.uniform(-8.0, 4.0, size), decimals)
        case = _case_tuple(answers, threshold, epsilon, int(rng.integers(2**31)), _RUNS_GRADING)
        score = _separation(case)
        if score >= 1.0:
            return case
        if score > best_score:
            best, best_score = case, score
    assert best is not None
    return best


def _intervals(pmfs: np.ndarray, runs: int) -> tuple[np.ndarray, np.ndarray]:
    pmfs = np.clip(pmfs, 0.0, 1.0)
    return stats.binom.ppf(_LEVEL / 2, runs, pmfs), stats.binom.isf(_LEVEL / 2, runs, pmfs)


def _separation(case: tuple) -> float:
    """The share of pairs of the distributions (right and mistakes) whose intervals are disjoint in some outcome."""
    answers, threshold, epsilon, _, runs = case
    pmfs, low, high = _bounds(answers, threshold, epsilon, runs)
    apart = (high[:, None, :] < low[None, :, :]) | (high[None, :, :] < low[:, None, :])
    pairs = np.triu(apart.any(axis=2), k=1)
    count = len(pmfs) * (len(pmfs) - 1) // 2
    return float(pairs.sum() / count)


_PROOF = (
    "go through the privacy proof: which noise does it pay for once, which for every query, and what does each "
    "cost? Those decide the two scales"
)


def _distributions(answers: tuple[float, ...], threshold: float, epsilon: float) -> dict[str, tuple[np.ndarray, str]]:
    """The exact outcome distribution of the right algorithm (key ``""``) and of each named mistake, with its hint.

    A hint says where to look or what to reason about, never the corrected line. Remembered per setting (its
    numbers' exact bits), read-only: drawing a grading case computes them for every setting it tries, and judging
    that case (or drawing it again from the same seed, as the judge does after the probe) reads them back.
    """
    return _distributions_of(*_bits(answers, threshold, epsilon))


def _bits(answers: tuple[float, ...], threshold: float, epsilon: float) -> tuple[tuple[str, ...], str, str]:
    """A setting's numbers, exactly (``-0.0`` is not ``0.0``), as a key to remember it by."""
    return tuple(float(a).hex() for a in answers), float(threshold).hex(), float(epsilon).hex()


def _bounds(
    answers: tuple[float, ...], threshold: float, epsilon: float, runs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pmfs of :func:`_distributions` as rows (in its order: the right one first) and the acceptance intervals
    of their outcome counts over ``runs`` runs (lower bounds, upper bounds); remembered, read-only, like them."""
    return _bounds_of(*_bits(answers, threshold, epsilon), int(runs))


@functools.lru_cache(maxsize=1024)
def _bounds_of(
    answers_hex: tuple[str, ...], threshold_hex: str, epsilon_hex: str, runs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    distributions = _distributions_of(answers_hex, threshold_hex, epsilon_hex)
    pmfs = np.array([pmf for pmf, _ in distributions.values()])
    low, high = _intervals(pmfs, runs)
    for array in (pmfs, low, high):
        array.setflags(write=False)
    return pmfs, low, high


@functools.lru_cache(maxsize=1024)  # about 30 settings tried per grading seed, a few kB each
def _distributions_of(answers_hex: tuple[str, ...], threshold_hex: str, epsilon_hex: str) -> dict:
    answers = np.array([float.fromhex(a) for a in answers_hex])
    threshold, epsilon = float.fromhex(threshold_hex), float.fromhex(epsilon_hex)
    distributions = _compute_distributions(answers, threshold, epsilon)
    for pmf, _ in distributions.values():
        pmf.setflags(write=False)
    return distributions


def _compute_distributions(answers: np.ndarray, threshold: float, epsilon: float) -> dict[str, tuple[np.ndarray, str]]:
    right = above_threshold_pmf(answers, threshold=threshold, epsilon=epsilon)
    m = answers.size
    single = np.array([above_threshold_pmf([a], threshold=threshold, epsilon=epsilon)[0] for a in answers])
    below = np.cumprod(np.r_[1.0, 1 - single])  # fresh threshold noise each query: the queries are independent
    # the last ⊤ of the reversed list is the first ⊤ of the list: the same integral, read backwards
    reversed_pmf = above_threshold_pmf(answers[::-1], threshold=threshold, epsilon=epsilon)
    return {
        "": (right, ""),
        "ε is left out of the noise scales (Lap(2) and Lap(4))": (
            above_threshold_pmf(answers, threshold=threshold, epsilon=1.0),
            "a smaller ε must mean more noise: where does ε enter your two scales?",
        ),
        "the noise scales are multiplied by ε instead of divided (Lap(2ε) and Lap(4ε))": (
            above_threshold_pmf(answers, threshold=threshold, epsilon=1 / epsilon),
            "a smaller ε must mean more noise: which way do your scales move when ε shrinks?",
        ),
        "the two noise scales are swapped (the threshold's Lap(4/ε), the queries' Lap(2/ε))": (
            _pmf_with_scales(answers, threshold, threshold_scale=4 / epsilon, query_scale=2 / epsilon),
            "both scales appear, but check which noise each belongs to: which of the two does the privacy proof "
            "pay for once, and which for every query?",
        ),
        "the queries' noise has the threshold's scale instead of its own (both Lap(2/ε))": (
            _pmf_with_scales(answers, threshold, threshold_scale=2 / epsilon, query_scale=2 / epsilon),
            _PROOF,
        ),
        "the threshold's noise has the queries' scale instead of its own (both Lap(4/ε))": (
            _pmf_with_scales(answers, threshold, threshold_scale=4 / epsilon, query_scale=4 / epsilon),
            _PROOF,
        ),
        "both noises are half as large as they should be (Lap(1/ε) and Lap(2/ε))": (
            above_threshold_pmf(answers, threshold=threshold, epsilon=2 * epsilon),
            _PROOF,
        ),
        "both noises are twice as large as they should be": (
            above_threshold_pmf(answers, threshold=threshold, epsilon=epsilon / 2),
            _PROOF,
        ),
        "the threshold has no noise": (
            _pmf_with_scales(answers, threshold, threshold_scale=None, query_scale=4 / epsilon),
            "the proof needs two noises: what is added to the threshold before the comparisons?",
        ),
        "the query answers have no noise": (
            _pmf_with_scales(answers, threshold, threshold_scale=2 / epsilon, query_scale=None),
            "the proof needs two noises: what is added to each answer before it is compared?",
        ),
        "the scales are passed as rng.laplace's first argument, which is the mean (loc), not the scale": (
            _pmf_with_scales(
                answers, threshold, threshold_scale=1.0, query_scale=1.0, shifts=(2 / epsilon, 4 / epsilon)
            ),
            "read the signature of rng.laplace: which of its arguments is the scale?",
        ),
        "the threshold gets fresh noise for every query": (
            np.r_[below[:m] * single, below[m]],
            "which noise does the proof pay for only once, and where in your code is it drawn?",
        ),
        "the loop goes on after the first ⊤ and returns the last": (
            np.r_[reversed_pmf[:m][::-1], reversed_pmf[m]],
            "what should your function do as soon as one answer is found above the threshold?",
        ),
        "the index is 1-based (or off by one)": (
            np.r_[0.0, right[: m - 1], right[m - 1] + right[m]],
            "which index does your function return when the very first answer is above the threshold?",
        ),
    }


def _pmf_with_scales(
    answers: np.ndarray,
    threshold: float,
    *,
    threshold_scale: float | None,
    query_scale: float | None,
    shifts: tuple[float, float] = (0.0, 0.0),
) -> np.ndarray:
    """The exact outcome distribution when the threshold and the queries get Laplace noise of these scales (None:
    no noise), centred at ``shifts`` (threshold's, queries')."""
    threshold_shift, query_shift = shifts
    return generalized_above_threshold_pmf(
        answers,
        threshold=threshold,
        threshold_noise=None if threshold_scale is None else _laplace(threshold_shift, threshold_scale),
        query_noise=None if query_scale is None else _laplace(query_shift, query_scale),
    )


@functools.lru_cache(maxsize=1024)  # a few scales per ε, and ε has two significant digits
def _laplace(loc: float, scale: float) -> Any:
    """``stats.laplace(loc, scale)``, frozen once per (loc, scale): freezing costs half a millisecond."""
    return stats.laplace(loc, scale)


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
    distributions = _distributions(answers, threshold, epsilon)
    pmfs, low, high = _bounds(answers, threshold, epsilon, runs)
    accepted = np.all((low <= counts[: m + 1]) & (counts[: m + 1] <= high), axis=1)
    if accepted[0]:
        return
    for (mistake, (_, hint)), fits in list(zip(distributions.items(), accepted, strict=True))[1:]:
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
    cases=_implementation_cases,
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
        threshold_noise=stats.laplace(scale=a),
        query_noise=stats.laplace(scale=float(expected)),
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
