"""Checks for the exercises of notebook 05 (the flawed SVT variants).

``audit-your-own`` is two answers judged as one: a mechanism, whose outputs :mod:`._svt_variants_noisy_max` tests
on drawn inputs against the distribution of a noisy maximum and six named mistakes, and the student's audit of it,
which the judge here runs again.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import ArrayLike, RngLike, as_generator
from ..audit import audit as run_audit
from ..mechanisms import laplace_maximum
from ..svt import NoiseSpec, exact_variant_loss, svt_standard_spec
from ._core import (
    Exercise,
    Wrong,
    call_evidence,
    calls,
    diagnose,
    judge_cases,
    numbers,
    quote,
    short,
    value,
    value_evidence,
)
from ._evidence import jsonable
from ._svt_variants_noisy_max import audit_inputs, judge_outputs, summarise_outputs

__all__ = [
    "ALLOCATION",
    "AUDIT_YOUR_OWN",
    "COUNTEREXAMPLE",
    "NUMERIC_BUDGET",
    "allocation_gain",
    "audit_your_own",
    "counterexample_loss",
    "numeric_budget",
    "spot_the_flaw",
]

_OPTIONS = ("query noise", "output")
# The answer key is kept only as salted digests, so that it is not in plain sight. The salt ships with them: hashing
# both options of each line finds the key in at most 16 hashes (0.1 ms), which is no more than asking the check 16
# times, as anyone may (book/instructors/grading.md says so; tests/checks/test_what_ships.py measures it).
_SALT = "dpcourse|spot-the-flaw|v1"
_FLAW_DIGESTS = {
    "alg3": "a382791f7cab3441dfece0aa9814a40d1ff6ad6523755280b37407a1895e016b",
    "alg4": "e0c9bb4eeebb9c84f153646214a1cf445f8f0999ee2cabdc70605a9b81946f75",
    "alg5": "6d8ab18a40971c72288141e60f99f44cd6ec709c26b4d89666fc8a684e409c14",
    "alg6": "c520747bc4c065e1629c3946198b9b566f201b0b7db427f38855ed18060c8cd1",
}


def _is_flaw(key: str, answer: str) -> bool:
    return hashlib.sha256(f"{_SALT}|{key}|{answer}".encode()).hexdigest() == _FLAW_DIGESTS[key]


def _flaw_hint(key: str) -> str:
    """Where to look, the same for either wrong answer: it points at both candidate lines, never at one."""
    number = key.removeprefix("alg")
    return (
        f"set Alg. {number} beside Alg. 1 and compare them line by line: the noise each adds to the queries "
        "(its scale, and how it grows with c) and everything each releases on ⊤; which difference does the proof "
        "of Alg. 1 rely on?"
    )


def _leak_summary(answers: dict[str, str]) -> str:
    """``Alg. 3 leaks through its output, Alg. 4–6 through their query noise``, from the (checked) answers."""
    groups: dict[str, list[int]] = {}
    for key in _FLAW_DIGESTS:
        groups.setdefault(answers[key], []).append(int(key.removeprefix("alg")))
    parts = []
    for i, (flaw, numbers_) in enumerate(groups.items()):
        consecutive = numbers_ == list(range(numbers_[0], numbers_[-1] + 1))
        names = (
            f"Alg. {numbers_[0]}"
            if len(numbers_) == 1
            else f"Alg. {numbers_[0]}–{numbers_[-1]}"
            if consecutive
            else "Alg. " + ", ".join(map(str, numbers_))
        )
        parts.append(f"{names}{' leaks' if i == 0 else ''} through {'its' if len(numbers_) == 1 else 'their'} {flaw}")
    return ", ".join(parts)


def _judge_spot_the_flaw(evidence: dict) -> str:
    answers = value(evidence, "flaws")
    if type(answers) is not dict:
        raise Wrong(
            "flaws: give a dict such as {'alg3': ..., 'alg4': ...}",
            "one entry for each of alg3 … alg6",
            "flaws is not a dict",
        )
    given = {}
    for key in _FLAW_DIGESTS:
        answer = answers.get(key)
        text = answer.strip().lower() if type(answer) is str else None
        if text not in _OPTIONS:
            shown = (
                "no answer" if answer is None else quote(repr(answer), 60) if type(answer) is str else "not a string"
            )
            raise Wrong(
                f"{key}: {shown} is not one of 'query noise' and 'output'",
                "answer with one of the two strings for each of alg3 … alg6",
                "an answer that is not one of the two options",
            )
        if not _is_flaw(key, text):
            raise Wrong(
                f"{key}: {text!r} is not the line that breaks its proof", _flaw_hint(key), f"{key}: the wrong line"
            )
        given[key] = text
    return _leak_summary(given)


spot_the_flaw = Exercise("spot-the-flaw", probe=value_evidence, judge=_judge_spot_the_flaw, answers=("flaws",))
"""Exercise ``spot-the-flaw``: for each of alg3 … alg6, which line is wrong: "query noise" or "output"?"""

#: Exercise ``counterexample-loss``: the variant, the number of queries m, c and ε.
COUNTEREXAMPLE: dict[str, Any] = {"variant": "alg4", "num_queries": 8, "c": 2, "epsilon": 1.0}


def _judge_counterexample(evidence: dict) -> str:
    got = value(evidence, "alg4_loss")
    spec = COUNTEREXAMPLE
    expected = exact_variant_loss(spec["variant"], spec["num_queries"], epsilon=spec["epsilon"], c=spec["c"])[0]
    diagnose(
        got,
        expected,
        what=f"the loss of {spec['variant']}'s counterexample",
        digits=4,
        hint="compute Pr[event | D] and Pr[event | D′] with audit.variant_pattern_probability and take ln of the ratio",
        mistakes={
            "the ratio of the probabilities, not its logarithm": (
                np.exp(expected),
                "compare your last step with the definition of an event's privacy loss",
            ),
            "D and D′ swapped (the sign is flipped)": (
                -expected,
                "which dataset's probability goes on top in the privacy loss the exercise asks for?",
            ),
            "a base-10 logarithm": (
                expected / np.log(10),
                "which logarithm is ε measured in, and which one does your code compute?",
            ),
        },
    )
    return f"{expected:.4f}, against a claim of ε = {spec['epsilon']}"


counterexample_loss = Exercise(
    "counterexample-loss", probe=value_evidence, judge=_judge_counterexample, answers=("alg4_loss",)
)
"""Exercise ``counterexample-loss``: the exact privacy loss of Alg. 4's counterexample event (m = 8, c = 2, ε = 1)."""

#: Exercise ``allocation-gain``: SVT-S's total ε, the number of ⊤ c, and whether the queries are monotonic.
ALLOCATION: dict[str, Any] = {"epsilon": 0.5, "c": 8, "monotonic": False}


def _difference_variance(spec: NoiseSpec) -> float:
    """Var(νᵢ − ρ) for Laplace noises: 2b² each."""
    return 2 * spec.threshold_scale**2 + 2 * spec.query_scale**2


def _judge_allocation_gain(evidence: dict) -> str:
    got = value(evidence, "variance_gain")
    epsilon, c, monotonic = ALLOCATION["epsilon"], ALLOCATION["c"], ALLOCATION["monotonic"]

    def gain(**kw: Any) -> float:
        return _difference_variance(svt_standard_spec(epsilon, c, 1.0, ratio=1, **kw)) / _difference_variance(
            svt_standard_spec(epsilon, c, 1.0, **kw)
        )

    expected = gain(monotonic=monotonic)
    diagnose(
        got,
        expected,
        what="the variance ratio (even split ÷ Lyu et al.'s split)",
        digits=3,
        hint="the comparison noise is the difference of two independent Laplace variables: its variance is the "
        "sum of theirs; work out each one's scale under both splits of ε",
        mistakes={
            "the query noise of monotonic queries, Lap(cΔ/ε₂); these queries are general": (
                gain(monotonic=not monotonic),
                "reread the exercise: are these queries monotonic, and what query noise does that call for?",
            ),
            "a ratio of standard deviations, not of variances": (
                np.sqrt(expected),
                "does the exercise ask for a ratio of variances or of standard deviations?",
            ),
            "the ratio upside down (Lyu's variance ÷ the even split's)": (
                1 / expected,
                "check which split goes on top in the ratio the exercise asks for",
            ),
        },
    )
    return f"the even split's comparison noise has {expected:.3f}× the variance of Lyu et al.'s"


allocation_gain = Exercise(
    "allocation-gain", probe=value_evidence, judge=_judge_allocation_gain, answers=("variance_gain",)
)
"""Exercise ``allocation-gain``: Var(νᵢ − ρ) under ε₁ = ε₂ over that under Lyu et al.'s 1 : (2c)^{2/3}.

The setting is ε = 0.5, c = 8.
"""


#: Exercise ``numeric-budget``: SVT-S with numeric outputs; the whole budget ε₁ + ε₂ + ε₃, the number of answers c,
#: the largest standard deviation allowed for a released number, and whether the queries are monotonic.
NUMERIC_BUDGET: dict[str, Any] = {"epsilon": 1.0, "c": 4, "max_sd": 10.0, "monotonic": False}


def _threshold_epsilon(*, numeric_scale_factor: float = np.sqrt(2), with_c: bool = True, monotonic: bool) -> float:
    """ε₁ when ε₃ makes the released number's standard deviation (√2·cΔ/ε₃ for Lap(cΔ/ε₃)) exactly the limit
    and the rest is split 1 : (2c)^{2/3} (1 : c^{2/3} if monotonic); the arguments build the named mistakes."""
    spec = NUMERIC_BUDGET
    c = spec["c"]
    eps3 = numeric_scale_factor * (c if with_c else 1) / spec["max_sd"]
    return svt_standard_spec(spec["epsilon"] - eps3, c, 1.0, monotonic=monotonic).threshold_scale ** -1


def _judge_numeric_budget(evidence: dict) -> str:
    got = value(evidence, "threshold_epsilon")
    monotonic = NUMERIC_BUDGET["monotonic"]
    expected = _threshold_epsilon(monotonic=monotonic)
    c = NUMERIC_BUDGET["c"]
    rest = expected * (1 + (2 * c) ** (2 / 3))
    diagnose(
        got,
        expected,
        what="the threshold's budget ε₁",
        digits=3,
        hint="first find the ε₃ that gives the released numbers exactly the allowed standard deviation, then split "
        "what is left of ε between the threshold and the comparisons",
        mistakes={
            "the standard deviation taken for the Laplace scale b (Lap(b) has standard deviation √2·b)": (
                _threshold_epsilon(numeric_scale_factor=1.0, monotonic=monotonic),
                "what is the standard deviation of Lap(b)? It is not b",
            ),
            "numeric noise Lap(Δ/ε₃), without c": (
                _threshold_epsilon(with_c=False, monotonic=monotonic),
                "how does SVT-S's numeric noise grow with the number of answers it releases?",
            ),
            "the monotonic split 1 : c^(2/3); these queries are general": (
                _threshold_epsilon(monotonic=not monotonic),
                "reread the exercise: are these queries monotonic, and which split goes with that?",
            ),
            "ε₂, the comparisons' budget, instead of ε₁": (
                rest - expected,
                "of the two parts of the split, which one pays for the threshold?",
            ),
            "ε₃ left out: the whole ε split between threshold and comparisons": (
                NUMERIC_BUDGET["epsilon"] / (1 + (2 * c) ** (2 / 3)),
                "the released numbers are paid from the same budget: what is left for the threshold after them?",
            ),
        },
    )
    return (
        f"ε₁ = {expected:.4f} (ε₃ = {NUMERIC_BUDGET['epsilon'] - rest:.4f} for the numbers, ε₂ = {rest - expected:.4f})"
    )


numeric_budget = Exercise(
    "numeric-budget", probe=value_evidence, judge=_judge_numeric_budget, answers=("threshold_epsilon",)
)
"""Exercise ``numeric-budget``: SVT-S with numeric outputs (ε₃ > 0), ε = 1 in all, c = 4 general queries, released
numbers with standard deviation at most 10: the largest threshold budget ε₁, the rest split 1 : (2c)^{2/3}."""

#: Exercise ``audit-your-own``: the mechanism's ε, the neighbours audited, and the probe's documented run.
AUDIT_YOUR_OWN: dict[str, Any] = {
    "epsilon": 0.5,
    "answers_d": [1.0] * 5,
    "answers_d_prime": [2.0] * 5,
    "probe_answers": [0.0, 3.0, 1.0, 2.5],
    "probe_trials": 20_000,
    "probe_seed": 5,
}
_MECHANISM = "(answers, *, trials, rng)"


def _audit_cases(rng: np.random.Generator | None) -> list[tuple]:
    """The documented run; when grading, three drawn from ``rng``: 3 to 8 answers from −5 to 5 (one decimal),
    10,000 to 30,000 trials, and the seed passed as ``rng``."""
    spec = AUDIT_YOUR_OWN
    if rng is None:
        return [(tuple(spec["probe_answers"]), spec["probe_trials"], spec["probe_seed"])]
    return [
        (
            tuple(np.round(rng.uniform(-5.0, 5.0, int(rng.integers(3, 9))), 1).tolist()),
            int(rng.integers(10, 31)) * 1000,
            int(rng.integers(10**6)),
        )
        for _ in range(3)
    ]


_AUDIT_FIELDS = (
    "flagged",
    "p_value",
    "epsilon_lower_bound",
    "claimed_epsilon",
    "trials",
    "answers_d",
    "answers_d_prime",
)


def _probe_audit_your_own(mechanism: object, result: object, cases: list[tuple]) -> dict:
    """Run the student's mechanism on each case (the quantiles of its outputs are the evidence) and read the audit."""
    if mechanism is Ellipsis:
        return {"not_attempted": True} if result is Ellipsis else {"mechanism_missing": True}
    evidence = call_evidence(
        mechanism,
        cases,
        parameters=_MECHANISM,
        arguments=lambda case: ((np.array(case[0]),), {"trials": case[1], "rng": case[2]}),
        call=summarise_outputs,
    )
    if all(hasattr(result, f) for f in _AUDIT_FIELDS):
        evidence["audit"] = {f: jsonable(getattr(result, f)) for f in _AUDIT_FIELDS}
    else:
        evidence["audit"] = {"unsupported": quote(type(result).__name__, 60)}
    return evidence


def _judge_audit_your_own(evidence: dict, cases: list[tuple]) -> str:
    spec = AUDIT_YOUR_OWN
    if evidence.get("mechanism_missing"):
        raise Wrong(
            "noisy_max_value is still the stub `...`, but noisy_max_result is given",
            "write noisy_max_value first, then audit it",
            "an audit without a mechanism",
        )
    if "not_callable" in evidence:
        raise Wrong(
            f"noisy_max_value: expected a function, got a {quote(evidence['not_callable'], 60)}",
            "define it with def noisy_max_value(answers, *, trials, rng):",
        )
    try:  # the mechanism and the audit are one answer: all or nothing, whatever share of the cases is right
        judge_one = functools.partial(judge_outputs, epsilon=spec["epsilon"])
        judge_cases(cases, calls(evidence, parameters=_MECHANISM), judge_one, inputs=audit_inputs)
    except Wrong as wrong:
        raise Wrong(wrong.message, wrong.hint, wrong.mistake) from None
    audit = evidence.get("audit")
    if type(audit) is not dict or "unsupported" in audit:
        got = quote(audit.get("unsupported"), 60) if type(audit) is dict else "nothing readable"
        raise Wrong(
            f"noisy_max_result: expected the result of audit.audit, got a {got}",
            "run the auditor on your mechanism with the neighbours the exercise names, and pass what it returns",
            "noisy_max_result is not an audit result",
        )
    pair = sorted(
        [numbers(audit.get("answers_d"), "answers_d").tolist(), numbers(audit.get("answers_d_prime"), "").tolist()]
    )
    if pair != sorted([spec["answers_d"], spec["answers_d_prime"]]):
        raise Wrong(
            "noisy_max_result audits other inputs",
            "reread which neighbours the exercise asks you to audit",
            "an audit of other neighbours",
        )
    claimed = float(numbers(audit.get("claimed_epsilon"), "noisy_max_result.claimed_epsilon", ()))
    if not np.isclose(claimed, spec["epsilon"]):
        raise Wrong(
            f"noisy_max_result tests ε = {short(claimed)}",
            "reread which claim of ε the exercise asks you to test",
            "an audit of another ε",
        )
    # What the kernel reports about its audit is not evidence: the audit is run again here, on the mechanism
    # whose outputs were just checked, with the student's number of test runs and a seed of the judge's.
    trials = float(numbers(audit.get("trials"), "noisy_max_result.trials", (), whole=True))
    if not 100 <= trials <= 1_000_000:
        raise Wrong(
            f"noisy_max_result was run with {trials:,.0f} test runs",
            "use between 10² and 10⁶ test runs",
            "a number of test runs out of range",
        )
    again = run_audit(
        _equal_answers_noisy_max(2 / spec["epsilon"]),
        spec["answers_d"],
        spec["answers_d_prime"],
        epsilon=spec["epsilon"],
        trials=int(trials),
        rng=spec["probe_seed"],
    )
    if not again.flagged:
        raise Wrong(
            f"an audit with {trials:,.0f} test runs does not flag the claim (p = {again.p_value:.2g} when run "
            "again by the check)",
            "how many test runs does an audit need to tell a loss this size from chance?",
            "too few test runs to flag the claim",
        )
    if audit.get("flagged") is not True:
        raise Wrong(
            "your audit result says the claim holds, but the same audit, run again, flags it",
            "pass the result of audit.audit itself, unchanged",
            "an audit result that was changed",
        )
    return (
        f"flagged: p = {again.p_value:.2g} when the check ran your audit again, and the released maximum loses "
        f"ε ≥ {again.epsilon_lower_bound:.3f} against the claimed {spec['epsilon']}"
    )


def _equal_answers_noisy_max(scale: float) -> Callable[..., np.ndarray]:
    """StatDP's flawed noisy max that releases the maximum's value, with Lap(``scale``) noise, on a list of equal
    answers only: that answer plus the largest of m Lap(``scale``) draws (:func:`~dpcourse.mechanisms.laplace_maximum`).

    The judge reruns the student's audit on it, whose two neighbours are lists of equal answers. It refuses every other
    list, so a student who reads it finds no answer to the exercise, which is graded on lists of different answers.
    """

    def mechanism(answers: ArrayLike, *, trials: int, rng: RngLike) -> np.ndarray:
        answers = np.asarray(answers, dtype=float)
        if answers.ndim != 1 or answers.size == 0 or np.any(answers != answers[0]):
            raise ValueError(f"answers must be a non-empty list of equal answers; got {quote(answers.tolist(), 60)}")
        return answers[0] + laplace_maximum(answers.size, scale=scale, rng=as_generator(rng), size=trials)

    return mechanism


audit_your_own = Exercise(
    "audit-your-own",
    probe=_probe_audit_your_own,
    judge=_judge_audit_your_own,
    cases=_audit_cases,
    answers=("noisy_max_value", "noisy_max_result"),
)
"""Exercise ``audit-your-own``: StatDP's report noisy max that releases the maximum's value, audited at ε = 0.5."""
