"""The mechanism of notebook 05's ``audit-your-own`` exercise, judged by its outputs: StatDP's report noisy max
that releases the maximum's value should give the maximum of the answers plus Lap(2/ε) noise, each answer its own.

:func:`summarise_outputs` runs the student's mechanism on one case (in the kernel, or in the grader's worker) and
keeps the outputs' shape and quantiles; :func:`judge_outputs` tests those quantiles against the exact distribution
of the noisy maximum and of six named mistakes. :mod:`.svt_variants` judges the audit that goes with it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._core import Wrong, numbers, quote, short
from ._evidence import jsonable

__all__ = ["audit_inputs", "judge_outputs", "summarise_outputs"]

_LEVELS = np.array([0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99])
# An output's quantile at level p, q̂ = np.quantile(out, p), lies between the order statistics X₍ⱼ₎ and X₍ⱼ₊₁₎ with
# j = ⌊(N − 1)p⌋ + 1, and F(X₍ⱼ₎) ~ Beta(j, N + 1 − j) for the true CDF F. So F(q̂) is accepted when it lies in
# [Beta(j, N + 1 − j).ppf(a/2), Beta(j + 1, N − j).isf(a/2)]: a false fail has probability at most a per level,
# 7 levels × 3 cases × a ≈ 2e-7 per check. A scale off by a factor 2 moves F(q̂) at p = 0.5 by about 0.2, some 7
# times the interval's half-width 5.7·√(0.25/N) ≈ 0.029 at N = 10,000 (the tests check each mistake is named).
_LEVEL = 1e-8


def audit_inputs(case: tuple) -> str:
    """A case, (answers, trials, seed), in the short form a message shows it."""
    answers, trials, seed = case
    return f"answers=[{', '.join(short(a) for a in answers)}], trials={trials}, rng={seed}"


def summarise_outputs(mechanism: Callable, case: tuple) -> dict:
    """What the check needs of the mechanism's outputs on one case: their shape, whether they are whole numbers,
    and their quantiles at :data:`_LEVELS` (read exactly, as every answer is)."""
    answers, trials, seed = case
    out = jsonable(mechanism(np.array(answers), trials=trials, rng=seed))
    try:
        array = numbers(out, "noisy_max_value's output")
    except Wrong as wrong:
        return {"refused": wrong.message}
    summary: dict[str, Any] = {"shape": list(array.shape), "integers": bool(np.all(array == np.round(array)))}
    if array.size:
        summary["quantiles"] = np.quantile(array.ravel(), _LEVELS).tolist()
    return summary


def _max_cdf(x: np.ndarray, answers: np.ndarray, scale: float) -> np.ndarray:
    from scipy import stats  # on first use: listing the exercises need not import scipy.stats (0.6 s)

    return np.prod([stats.laplace.cdf(x - a, scale=scale) for a in answers], axis=0)


def _fits(cdf_at_quantiles: np.ndarray, trials: int) -> bool:
    from scipy import stats  # on first use, as in _max_cdf

    j = np.floor((trials - 1) * _LEVELS) + 1
    low = stats.beta.ppf(_LEVEL / 2, j, trials + 1 - j)
    high = stats.beta.isf(_LEVEL / 2, np.minimum(j + 1, trials), np.maximum(trials - j, 1))
    return bool(np.all((low <= cdf_at_quantiles) & (cdf_at_quantiles <= high)))


def judge_outputs(case: tuple, got: object, *, epsilon: float) -> None:
    """Raise :class:`~._core.Wrong` unless the summary ``got`` of :func:`summarise_outputs` on ``case`` fits the
    maximum of the answers plus Lap(2/ε) noise; name the mistake whose distribution it fits, if one does."""
    answers, trials, _ = case
    answers = np.array(answers)
    b = 2 / epsilon
    if type(got) is not dict:
        raise Wrong(f"the check could not read noisy_max_value's outputs with {audit_inputs(case)}")
    if "refused" in got:
        raise Wrong(
            f"with {audit_inputs(case)}: {quote(got['refused'])}",
            "return a NumPy array of floats",
            "outputs that are not numbers",
        )
    shape = got.get("shape")
    if shape not in ([trials], [trials, 1]):
        raise Wrong(
            f"noisy_max_value with {audit_inputs(case)} returned shape {quote(shape, 60)}",
            "the exercise asks for one number per run: what shape is that, and along which axis do you reduce?",
            "an output of the wrong shape",
        )
    quantiles = numbers(got.get("quantiles"), "the outputs' quantiles", (len(_LEVELS),))
    if got.get("integers") is True and quantiles.min() >= 0 and quantiles.max() < answers.size:
        raise Wrong(
            f"with {audit_inputs(case)}, noisy_max_value returns whole numbers between 0 and m − 1: it looks like "
            "the index of the maximum",
            "reread what StatDP's flawed mechanism releases of the noisy maximum: where it is, or how large it "
            "is? That one word is the flaw to audit",
            "the index of the maximum",
        )
    if _fits(_max_cdf(quantiles, answers, b), trials):
        return
    for mistake, cdf, hint in (
        (
            f"Lap(1/ε) = Lap({short(1 / epsilon)}) noise: half the scale (or ε left out of 2/ε)",
            _max_cdf(quantiles, answers, 1 / epsilon),
            "check how your noise scale is built from 2 and ε",
        ),
        (
            f"Lap(2ε) = Lap({short(2 * epsilon)}) noise: ε multiplied instead of divided",
            _max_cdf(quantiles, answers, 2 * epsilon),
            "a smaller ε must mean more noise: which way does your scale move when ε shrinks?",
        ),
        ("Lap(ε) noise", _max_cdf(quantiles, answers, epsilon), "compare your noise scale with the exercise's"),
        ("Lap(ε/2) noise", _max_cdf(quantiles, answers, epsilon / 2), "compare your noise scale with the exercise's"),
        (
            f"Lap(4/ε) = Lap({short(4 / epsilon)}) noise: twice the scale",
            _max_cdf(quantiles, answers, 4 / epsilon),
            "compare your noise scale with the exercise's",
        ),
        (
            "one noise per run, shared by all the answers",
            _max_cdf(quantiles, answers.max(keepdims=True), b),  # the largest answer's noise alone
            "does every answer get its own noise in each run? Look at the shape of your draw",
        ),
    ):
        if _fits(cdf, trials):
            raise Wrong(
                f"with {audit_inputs(case)}, noisy_max_value's outputs are distributed as with {mistake}",
                hint,
                mistake,
            )
    raise Wrong(
        f"with {audit_inputs(case)}, noisy_max_value's outputs do not follow the maximum of the answers plus "
        "Lap(2/ε) noise",
        "compare with the exercise text: the noise's scale, the shape of the draw, and what you keep of each row",
    )
