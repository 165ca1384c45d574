"""AboveThreshold's outcome distributions for the ``implement`` exercise of notebook 04: the right one and the
13 named mistakes', exactly, their acceptance intervals, and the settings a student's function is run on.

:mod:`.above_threshold` runs the student's function on :func:`implementation_cases` and judges its outcome counts
against :func:`bounds`, naming the mistake of :func:`distributions` whose interval they fit. A setting drawn for
grading is kept only when :func:`separation` says every two of these distributions are told apart on it.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ..svt import above_threshold_pmf, generalized_above_threshold_pmf

__all__ = ["bounds", "distributions", "implementation_cases", "separation"]

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


def implementation_cases(rng: np.random.Generator | None) -> list[tuple]:
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
        score = separation(case)
        if score >= 1.0:
            return case
        if score > best_score:
            best, best_score = case, score
    assert best is not None
    return best


def _intervals(pmfs: np.ndarray, runs: int) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats  # on first use: listing the exercises need not import scipy.stats (0.6 s)

    pmfs = np.clip(pmfs, 0.0, 1.0)
    return stats.binom.ppf(_LEVEL / 2, runs, pmfs), stats.binom.isf(_LEVEL / 2, runs, pmfs)


def separation(case: tuple) -> float:
    """The share of pairs of the distributions (right and mistakes) whose intervals are disjoint in some outcome."""
    answers, threshold, epsilon, _, runs = case
    pmfs, low, high = bounds(answers, threshold, epsilon, runs)
    apart = (high[:, None, :] < low[None, :, :]) | (high[None, :, :] < low[:, None, :])
    pairs = np.triu(apart.any(axis=2), k=1)
    count = len(pmfs) * (len(pmfs) - 1) // 2
    return float(pairs.sum() / count)


_PROOF = (
    "go through the privacy proof: which noise does it pay for once, which for every query, and what does each "
    "cost? Those decide the two scales"
)


def distributions(answers: tuple[float, ...], threshold: float, epsilon: float) -> dict[str, tuple[np.ndarray, str]]:
    """The exact outcome distribution of the right algorithm (key ``""``) and of each named mistake, with its hint.

    A hint says where to look or what to reason about, never the corrected line. Remembered per setting (its
    numbers' exact bits), read-only: drawing a grading case computes them for every setting it tries, and judging
    that case (or drawing it again from the same seed, as the judge does after the probe) reads them back.
    """
    return _distributions_of(*_bits(answers, threshold, epsilon))


def _bits(answers: tuple[float, ...], threshold: float, epsilon: float) -> tuple[tuple[str, ...], str, str]:
    """A setting's numbers, exactly (``-0.0`` is not ``0.0``), as a key to remember it by."""
    return tuple(float(a).hex() for a in answers), float(threshold).hex(), float(epsilon).hex()


def bounds(
    answers: tuple[float, ...], threshold: float, epsilon: float, runs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pmfs of :func:`distributions` as rows (in its order: the right one first) and the acceptance intervals
    of their outcome counts over ``runs`` runs (lower bounds, upper bounds); remembered, read-only, like them."""
    return _bounds_of(*_bits(answers, threshold, epsilon), int(runs))


@functools.lru_cache(maxsize=1024)
def _bounds_of(
    answers_hex: tuple[str, ...], threshold_hex: str, epsilon_hex: str, runs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    named = _distributions_of(answers_hex, threshold_hex, epsilon_hex)
    pmfs = np.array([pmf for pmf, _ in named.values()])
    low, high = _intervals(pmfs, runs)
    for array in (pmfs, low, high):
        array.setflags(write=False)
    return pmfs, low, high


@functools.lru_cache(maxsize=1024)  # about 30 settings tried per grading seed, a few kB each
def _distributions_of(answers_hex: tuple[str, ...], threshold_hex: str, epsilon_hex: str) -> dict:
    answers = np.array([float.fromhex(a) for a in answers_hex])
    threshold, epsilon = float.fromhex(threshold_hex), float.fromhex(epsilon_hex)
    named = _compute_distributions(answers, threshold, epsilon)
    for pmf, _ in named.values():
        pmf.setflags(write=False)
    return named


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
    from scipy import stats  # on first use, as in _intervals

    return stats.laplace(loc, scale)
