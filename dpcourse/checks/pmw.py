"""Checks for the exercises of notebook 06 (Private Multiplicative Weights)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import mechanisms, pmw
from ..mechanisms import laplace_scale
from ..pmw import REPLACE_ONE_HISTOGRAM_SENSITIVITY, mw_update
from ._core import (
    Exercise,
    Wrong,
    call_evidence,
    calls,
    diagnose,
    judge_cases,
    numbers,
    short,
    value,
    value_evidence,
)

__all__ = [
    "ALPHA_EXERCISE",
    "EM_EPSILON_EXERCISE",
    "HISTOGRAM_SCALE_EXERCISE",
    "UPDATE_CAP_EXERCISE",
    "UPDATE_EXERCISE",
    "choose_alpha",
    "em_epsilon",
    "histogram_scale",
    "mw_step",
    "update_cap",
]

UPDATE_EXERCISE: dict[str, Any] = {
    "synthetic": [0.25, 0.25, 0.25, 0.25],
    "query": [1.0, 1.0, 0.0, 0.0],
    "released": 0.8,
    "eta": 0.5,
}
UPDATE_CAP_EXERCISE: dict[str, Any] = {"domain_size": 2**12, "alpha": 0.1}
ALPHA_EXERCISE: dict[str, Any] = {"n": 10**8, "num_queries": 1000, "epsilon": 1.0, "domain_size": 2**16, "beta": 0.05}
#: The noisy histogram of notebook 06: neighbours replace one record; the scale is asked in counts.
HISTOGRAM_SCALE_EXERCISE: dict[str, Any] = {"epsilon": 0.25, "n": 10**6}
#: The pricing example: |R| = 100 prices, Δu = 100, revenue lost at most ``loss`` with probability 1 − β.
EM_EPSILON_EXERCISE: dict[str, Any] = {"num_outcomes": 100, "sensitivity": 100.0, "loss": 500.0, "beta": 0.05}


_MW_PARAMETERS = "(p_tilde, q, y, eta)"
#: The documented updates: the notebook's own small example (the synthetic answer q·p̃ = 0.5 is below y), then ones
#: where it is above y, so that an update that always moves weight the same way cannot pass.
_MW_EXAMPLES = [
    (UPDATE_EXERCISE["synthetic"], UPDATE_EXERCISE["query"], UPDATE_EXERCISE["released"], UPDATE_EXERCISE["eta"]),
    ([0.25, 0.25, 0.25, 0.25], [1.0, 1.0, 0.0, 0.0], 0.2, 0.5),
    ([0.1, 0.2, 0.3, 0.4], [0.0, 1.0, 1.0, 0.0], 0.9, 1.0),
    ([0.5, 0.25, 0.125, 0.125], [1.0, 0.0, 0.0, 1.0], 0.1, 0.3),
]


def _mw_cases(rng: np.random.Generator | None) -> list[tuple]:
    """The examples above; when grading, seven updates drawn from ``rng``: 3 to 8 cells with weights in whole
    numbers up to 9 (normalised), a query counting some cells but not all, y = 0.05 to 0.4 from the synthetic
    answer, below and above it in turn (3 decimals), and η from 0.1 to 0.6 or 1.5 to 2 (so that η left out is
    another update)."""
    if rng is None:
        return [_as_arrays(case) for case in _MW_EXAMPLES]
    cases: list[tuple] = []
    for k in range(7):
        size = int(rng.integers(3, 9))
        weights = rng.integers(1, 10, size).astype(float)
        synthetic = weights / weights.sum()
        query = rng.integers(0, 2, size).astype(float)
        first, second = rng.choice(size, 2, replace=False)
        query[first], query[second] = 1.0, 0.0  # the query counts at least one cell and misses one
        answer = float(query @ synthetic)
        released = round(answer + (1 if k % 2 else -1) * float(rng.uniform(0.05, 0.4)), 3)
        eta = float(f"{rng.uniform(0.1, 0.6) if rng.random() < 0.5 else rng.uniform(1.5, 2.0):.2g}")
        cases.append((synthetic, query, released, eta))
    return cases


def _as_arrays(case: tuple) -> tuple:
    """A documented update with p̃ and q as float arrays, as a student's code receives them."""
    synthetic, query, released, eta = case
    return np.asarray(synthetic, dtype=float), np.asarray(query, dtype=float), released, eta


def _update(
    synthetic: np.ndarray, query: np.ndarray, direction: float, eta: float, *, normalise: bool = True
) -> np.ndarray:
    weights = synthetic * np.exp(-eta * direction * query)
    return weights / weights.sum() if normalise else weights


def _mw_inputs(case: tuple) -> str:
    synthetic, query, released, eta = case
    answer = float(np.asarray(query, dtype=float) @ np.asarray(synthetic, dtype=float))
    return f"q·p̃ = {short(answer)}, y = {short(released)}, eta = {short(eta)}"


def _judge_one_mw(case: tuple, got: object) -> tuple[str, ...]:
    synthetic, query, released, eta = case
    synthetic, query = np.asarray(synthetic, dtype=float), np.asarray(query, dtype=float)
    error = float(query @ synthetic) - released
    sign = float(np.sign(error))
    return diagnose(
        got,
        mw_update(synthetic, query, released, eta=eta),
        atol=1e-6,
        what=f"p̃ after the update with {_mw_inputs(case)}",
        hint="go through Lecture 4's update step by step: each cell's loss, how its weight changes, and what makes "
        "p̃ a distribution again",
        mistakes={
            "the counted cells always gain weight, whatever the sign of q·p̃ − y": (
                _update(synthetic, query, -1.0, eta),
                "when the synthetic answer is too high, the cells the query counts must lose weight",
            ),
            "the weights moved the wrong way (the sign is flipped)": (
                _update(synthetic, query, -sign, eta),
                "a cell with positive loss loses weight",
            ),
            "the weights are not normalised": (
                _update(synthetic, query, sign, eta, normalise=False),
                "p̃ is a distribution",
            ),
            "the loss is q·p̃ − y itself, not its sign": (
                _update(synthetic, query, error, eta),
                "look at what Lecture 4's loss keeps of the error q·p̃ − y",
            ),
            "η is left out: the weights shrink by e^(−loss)": (
                _update(synthetic, query, sign, 1.0),
                "where does the learning rate enter Lecture 4's update?",
            ),
        },
    )


def _judge_mw_step(evidence: dict, cases: list[tuple]) -> str:
    results = calls(evidence, parameters=_MW_PARAMETERS)
    judge_cases(cases, results, _judge_one_mw, inputs=_mw_inputs)
    return f"checked on {len(cases)} updates, with the synthetic answer below y and above it"


mw_step = Exercise(
    "mw-step",
    probe=lambda fn, cases: call_evidence(fn, cases, parameters=_MW_PARAMETERS),
    judge=_judge_mw_step,
    cases=_mw_cases,
    answers=("mw_step",),
)
"""Exercise ``mw-step``: ``fn(p_tilde, q, y, eta)`` returns p̃ after one MW update (Lecture 4)."""


def _judge_update_cap(evidence: dict) -> str:
    got = value(evidence, "N")
    d, alpha = UPDATE_CAP_EXERCISE["domain_size"], UPDATE_CAP_EXERCISE["alpha"]
    expected = pmw.pmw_update_count_bound(domain_size=d, alpha=alpha)
    diagnose(
        got,
        expected,
        what="N for Private MW",
        rtol=1e-3,
        hint="the cap is the potential's starting value divided by its least drop per update: work out each from "
        "the exercise's gap and η",
        mistakes={
            "the cap without privacy, 4 ln|𝒳|/α² (gap α, η = α/2)": (
                pmw.mw_update_count_bound(domain_size=d, alpha=alpha),
                "reread which gap and which η Private MW's noisy answers allow",
            ),
            "a drop of η·gap = α²/8 per update: the −η² term is missing": (
                8 * np.log(d) / alpha**2,
                "check every term of the potential's drop per update in Section 2",
            ),
            "log₂|𝒳| in place of ln|𝒳|": (
                16 * np.log2(d) / alpha**2,
                "which logarithm is the potential KL(p‖p̃) measured in?",
            ),
        },
    )
    mw_count = pmw.mw_update_count_bound(domain_size=d, alpha=alpha)
    return f"N = 16 ln|𝒳|/α² = {expected:.1f}, four times MW's {mw_count:.1f}"


update_cap = Exercise("update-cap", probe=value_evidence, judge=_judge_update_cap, answers=("N_cap",))
"""Exercise ``update-cap``: Private MW's cap N on updates for |𝒳| = 2¹², α = 0.1 (gap α/2, η = α/4)."""


_ABSURD_ALPHA = "an α above 1 is absurd: every normalised answer lies in [0, 1], so an error bound above 1 says nothing"


def _judge_choose_alpha(evidence: dict) -> str:
    got = float(numbers(value(evidence, "α"), "α", ()))
    spec = ALPHA_EXERCISE
    expected = pmw.pmw_notes_alpha(**spec)
    n, k, eps, d, beta = spec["n"], spec["num_queries"], spec["epsilon"], spec["domain_size"], spec["beta"]
    logs = np.log(3 * k / beta) * np.log(d) / (n * eps)
    mistakes = {
        "512 is outside the cube root (the slip in the notes' statement of Theorem 4.3)": (
            512 * np.cbrt(logs),
            "solve ε = 512·…/(nα³) for α step by step: which constants end up under the cube root? (the notes' "
            "statement of the theorem slips here)",
        ),
        "the factor 2 of ε = 2ε₀N is missing": (
            np.cbrt(256 * logs),
            "how many times does each of the N rounds spend ε₀?",
        ),
        "ln(|Q|/β) in place of ln(3|Q|/β)": (
            np.cbrt(512 * np.log(k / beta) * np.log(d) / (n * eps)),
            "how many Laplace variables does the accuracy proof's union bound cover?",
        ),
        "the error 11α/8, not α itself": (11 * expected / 8, "which quantity does the exercise ask for?"),
    }
    try:
        diagnose(
            got,
            expected,
            what="α",
            rtol=1e-3,
            hint="substitute N and ε₀ into ε = 2ε₀N: which power of α is left, and what must it be to balance ε?",
            mistakes=mistakes,
        )
    except Wrong as wrong:
        if got <= 0:
            raise Wrong(
                f"α: got {got:.4g}, but an error bound is positive", wrong.hint, "an α that is not positive"
            ) from None
        if got <= 1:
            raise
        message = f"{wrong.message}; and {_ABSURD_ALPHA}" if wrong.mistake else f"α: got {got:.4g}: {_ABSURD_ALPHA}"
        raise Wrong(message, wrong.hint, wrong.mistake or "an α above 1", consistent=wrong.consistent) from None
    return f"α = {expected:.4g}"


choose_alpha = Exercise("choose-alpha", probe=value_evidence, judge=_judge_choose_alpha, answers=("alpha_choice",))
"""Exercise ``choose-alpha``: the least α at which Lecture 4's PMW is ε-DP and accurate (:data:`ALPHA_EXERCISE`)."""


def _judge_histogram_scale(evidence: dict) -> str:
    got = value(evidence, "b")
    eps, n = HISTOGRAM_SCALE_EXERCISE["epsilon"], HISTOGRAM_SCALE_EXERCISE["n"]
    expected = laplace_scale(sensitivity=REPLACE_ONE_HISTOGRAM_SENSITIVITY, epsilon=eps)
    diagnose(
        got,
        expected,
        what="the Laplace scale per cell (in counts)",
        rtol=1e-6,
        hint="the scale is the histogram's L1 sensitivity over ε: count how far x moves, in L1, between two "
        "neighbours of this notebook",
        mistakes={
            "1/ε: the sensitivity of add/remove-one neighbours, not of one record replaced": (
                1 / eps,
                "under this notebook's neighbours, how many cells of x change when one record is replaced?",
            ),
            "2/(nε): the scale of a normalised answer, not of a count": (
                2 / (n * eps),
                "the exercise asks for the noise on the counts x, before dividing by n",
            ),
            "ε/2: the ratio is upside down": (
                eps / 2,
                "a smaller ε must mean more noise",
            ),
        },
    )
    return f"b = Δ₁/ε = {expected:.4g} per cell: replacing a record moves two counts"


histogram_scale = Exercise("histogram-scale", probe=value_evidence, judge=_judge_histogram_scale, answers=("b_hist",))
"""Exercise ``histogram-scale``: the Laplace scale per cell of the ε-DP noisy histogram under replace-one."""


def _judge_em_epsilon(evidence: dict) -> str:
    got = value(evidence, "ε")
    spec = EM_EPSILON_EXERCISE
    size, du, loss, beta = spec["num_outcomes"], spec["sensitivity"], spec["loss"], spec["beta"]
    t = np.log(1 / beta)
    expected = 2 * du * (np.log(size) + t) / loss
    diagnose(
        got,
        expected,
        what="ε",
        rtol=1e-3,
        hint="start from the utility theorem's loss level, set it equal to the revenue you may lose, and solve "
        "for ε; check how t relates to β",
        mistakes={
            "the ε of the monotone variant (exponent ε·u/Δu, without the 2), which is right for that mechanism; "
            "the exercise asks for the exponential mechanism of Theorem 3.11, exponent ε·u/(2Δu)": (
                du * (np.log(size) + t) / loss,
                "Theorem 3.11's mechanism has the 2 in its exponent: how does that 2 carry over to its loss level?",
            ),
            "ln(1/β) is left out: the level then holds with no failure probability to spare": (
                2 * du * np.log(size) / loss,
                "which term of the level sets the probability e^(−t)?",
            ),
            "t = β in place of t = ln(1/β)": (
                2 * du * (np.log(size) + beta) / loss,
                "what is the theorem's tail probability as a function of t?",
            ),
            "|R| in place of ln|R|": (
                2 * du * (size + t) / loss,
                "how does the range's size enter the level?",
            ),
        },
    )
    level = mechanisms.exponential_mechanism_utility_bound(num_outcomes=size, sensitivity=du, epsilon=expected, t=t)
    return f"ε = 2Δu(ln|R| + ln(1/β))/loss = {expected:.4g}; at that ε the theorem's level is {level:.4g}"


em_epsilon = Exercise("em-epsilon", probe=value_evidence, judge=_judge_em_epsilon, answers=("epsilon_em",))
"""Exercise ``em-epsilon``: the least ε at which the exponential mechanism's price loses ≤ 500 w.p. 0.95."""
