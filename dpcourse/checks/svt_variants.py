"""Checks for the exercises of notebook 05 (the flawed SVT variants)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy import stats

from .._validation import ArrayLike, RngLike, as_generator
from ..audit import audit as run_audit
from ..audit import exact_variant_loss
from ..svt_variants import NoiseSpec, svt_standard_spec
from ._core import Exercise, NotAttempted, Wrong, diagnose, value, value_evidence

__all__ = [
    "ALLOCATION",
    "AUDIT_YOUR_OWN",
    "COUNTEREXAMPLE",
    "allocation_gain",
    "audit_your_own",
    "counterexample_loss",
    "spot_the_flaw",
]

_FLAWS = {"alg3": "output", "alg4": "query noise", "alg5": "query noise", "alg6": "query noise"}
# Each hint points at where to look, never at the answer: compare the variant with Alg. 1 line by line.
_FLAW_HINTS = {
    "alg3": "set Alg. 3 beside Alg. 1 and compare, line by line, everything each one releases when a query is ⊤",
    "alg4": "write down the scale of every noise in Alg. 4 and in Alg. 1, and how each one grows with c",
    "alg5": "list which quantities Alg. 5 perturbs before it compares them, and which it compares as they are",
    "alg6": "write down how each of Alg. 6's noise scales depends on c, and how many ⊤ it answers before it stops",
}


def _judge_spot_the_flaw(evidence: dict) -> str:
    answers = value(evidence, "flaws")
    if not isinstance(answers, dict):
        raise Wrong("flaws: give a dict such as {'alg3': 'output', 'alg4': ...}")
    for key, flaw in _FLAWS.items():
        given = str(answers.get(key, "")).strip().lower()
        if given not in ("query noise", "output"):
            raise Wrong(
                f"{key}: {given or 'no answer'!r} is not one of 'query noise' and 'output'",
                "answer with one of the two strings for each of alg3 … alg6",
            )
        if given != flaw:
            raise Wrong(f"{key}: {given!r} is not the line that breaks its proof", _FLAW_HINTS[key])
    return "Alg. 3 leaks through its output, Alg. 4–6 through their query noise"


spot_the_flaw = Exercise("spot-the-flaw", probe=value_evidence, judge=_judge_spot_the_flaw)
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
        rtol=1e-6,
        hint="compute Pr[event | D] and Pr[event | D′] with audit.variant_pattern_probability and take ln of the ratio",
        mistakes={
            "the ratio of the probabilities, not its logarithm": (np.exp(expected), "the privacy loss is ln(p/p′)"),
            "D and D′ swapped (the sign is flipped)": (-expected, "the loss of the event is ln(Pr[·|D]/Pr[·|D′])"),
            "a base-10 logarithm": (expected / np.log(10), "use the natural logarithm, np.log"),
        },
    )
    return f"{expected:.4f}, against a claim of ε = {spec['epsilon']}"


counterexample_loss = Exercise("counterexample-loss", probe=value_evidence, judge=_judge_counterexample)
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
        rtol=1e-6,
        hint="the comparison noise is the difference of two independent Laplace variables: its variance is the "
        "sum of theirs; work out each one's scale under both splits of ε",
        mistakes={
            "the query noise of monotonic queries, Lap(cΔ/ε₂); these queries are general": (
                gain(monotonic=not monotonic),
                "general queries need Lap(2cΔ/ε₂)",
            ),
            "a ratio of standard deviations, not of variances": (
                np.sqrt(expected),
                "square it: the exercise asks for variances",
            ),
            "the ratio upside down (Lyu's variance ÷ the even split's)": (
                1 / expected,
                "divide the even split's variance by Lyu et al.'s",
            ),
        },
    )
    return f"the even split's comparison noise has {expected:.3f}× the variance of Lyu et al.'s"


allocation_gain = Exercise("allocation-gain", probe=value_evidence, judge=_judge_allocation_gain)
"""Exercise ``allocation-gain``: Var(νᵢ − ρ) under ε₁ = ε₂ over that under Lyu et al.'s 1 : (2c)^{2/3}.

The setting is ε = 0.5, c = 8.
"""


#: Exercise ``audit-your-own``: the mechanism's ε, the neighbours audited, and the probe's fixed run.
AUDIT_YOUR_OWN: dict[str, Any] = {
    "epsilon": 0.5,
    "answers_d": [1.0] * 5,
    "answers_d_prime": [2.0] * 5,
    "probe_answers": [0.0, 3.0, 1.0, 2.5],
    "probe_trials": 20_000,
    "probe_seed": 5,
}
_LEVELS = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99)


def _probe_audit_your_own(mechanism: object, result: object) -> dict:
    """Run the student's mechanism once on fixed answers (its quantiles are the evidence) and read the audit."""
    if mechanism is Ellipsis and result is Ellipsis:
        return {"not_attempted": True}
    if not callable(mechanism):
        return {"not_callable": type(mechanism).__name__}
    spec = AUDIT_YOUR_OWN
    try:
        out = np.asarray(
            mechanism(np.array(spec["probe_answers"]), trials=spec["probe_trials"], rng=spec["probe_seed"]), dtype=float
        )
    except NotImplementedError:
        return {"not_attempted": True}
    except Exception as err:  # noqa: BLE001 - the student's code may raise anything; that is the evidence
        return {"raised": f"{type(err).__name__}: {str(err)[:160]}"}
    evidence = {"shape": list(out.shape), "integers": bool(np.all(out == np.round(out)))}
    if out.size:
        evidence["quantiles"] = [float(x) for x in np.quantile(out.ravel(), _LEVELS)]
    fields = ("flagged", "p_value", "epsilon_lower_bound", "claimed_epsilon", "trials", "answers_d", "answers_d_prime")
    if all(hasattr(result, f) for f in fields):
        evidence["audit"] = {
            f: (
                np.asarray(getattr(result, f)).tolist()
                if f.startswith("answers")
                else (bool(getattr(result, f)) if f == "flagged" else float(getattr(result, f)))
            )
            for f in fields
        }
    else:
        evidence["audit"] = {"unsupported": type(result).__name__}
    return evidence


def _max_cdf(x: np.ndarray, answers: np.ndarray, scale: float) -> np.ndarray:
    return np.prod([stats.laplace.cdf(x - a, scale=scale) for a in answers], axis=0)


def _judge_audit_your_own(evidence: dict) -> str:
    spec = AUDIT_YOUR_OWN
    if evidence.get("not_attempted"):
        raise NotAttempted
    if "not_callable" in evidence:
        raise Wrong(
            f"noisy_max_value: expected a function, got a {evidence['not_callable']}",
            "define it with def noisy_max_value(answers, *, trials, rng):",
        )
    if "raised" in evidence:
        raise Wrong(
            f"noisy_max_value raised {evidence['raised']}",
            "call it yourself: noisy_max_value(np.array([0.0, 3.0]), trials=5, rng=0)",
        )
    n = spec["probe_trials"]
    if evidence.get("shape") not in ([n], [n, 1]):
        raise Wrong(
            f"noisy_max_value(answers, trials={n}, rng=…) returned shape {tuple(evidence.get('shape', []))}",
            f"return one number per run: shape ({n},), the largest noisy answer of each row",
        )
    answers = np.array(spec["probe_answers"])
    if evidence["integers"] and min(evidence["quantiles"]) >= 0 and max(evidence["quantiles"]) < answers.size:
        raise Wrong(
            "noisy_max_value returns whole numbers between 0 and m − 1: it looks like the index of the maximum",
            "return the noisy maximum itself (np.max), not its position (np.argmax): that is the flaw to audit",
        )
    got = np.array(evidence["quantiles"])
    tolerance = 5 * np.sqrt(np.array(_LEVELS) * (1 - np.array(_LEVELS)) / n) + 1e-3

    def matches(scale: float) -> bool:
        return bool(np.all(np.abs(_max_cdf(got, answers, scale) - np.array(_LEVELS)) <= tolerance))

    b = 2 / spec["epsilon"]
    if not matches(b):
        for mistake, scale in (
            ("Lap(1/ε) noise", 1 / spec["epsilon"]),
            ("Lap(ε) noise", spec["epsilon"]),
            ("Lap(ε/2) noise", spec["epsilon"] / 2),
        ):
            if matches(scale):
                raise Wrong(
                    f"noisy_max_value's outputs are distributed as with {mistake}",
                    f"the noise is Lap(2/ε) = Lap({b:g})",
                )
        raise Wrong(
            "noisy_max_value's outputs do not follow the maximum of the answers plus Lap(2/ε) noise",
            f"add np.random.default_rng(rng).laplace(0, {b:g}, size=(trials, len(answers))) and take the max of each "
            "row",
        )
    audit = evidence.get("audit", {})
    if "unsupported" in audit:
        raise Wrong(
            f"noisy_max_result: expected the result of audit.audit, got a {audit['unsupported']}",
            "run the auditor on your mechanism with the neighbours the exercise names, and pass what it returns",
        )
    pair = sorted([audit["answers_d"], audit["answers_d_prime"]])
    if pair != sorted([spec["answers_d"], spec["answers_d_prime"]]):
        raise Wrong("noisy_max_result audits other inputs", "audit it on [1.0] * 5 and [2.0] * 5")
    if not np.isclose(audit["claimed_epsilon"], spec["epsilon"]):
        raise Wrong(f"noisy_max_result tests ε = {audit['claimed_epsilon']:g}", "the claim to test is ε = 0.5")
    # What the kernel reports about its audit is not evidence: the audit is run again here, on the mechanism
    # whose outputs were just checked, with the student's number of test runs and a seed of the judge's.
    trials = audit["trials"]
    if not 100 <= trials <= 1_000_000:
        raise Wrong(f"noisy_max_result was run with {trials:,.0f} test runs", "use between 10² and 10⁶ test runs")
    again = run_audit(
        _noisy_max_value(b),
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
            "give the auditor more runs",
        )
    if not audit["flagged"]:
        raise Wrong(
            "your audit result says the claim holds, but the same audit, run again, flags it",
            "pass the result of audit.audit itself, unchanged",
        )
    return (
        f"flagged: p = {again.p_value:.2g} when the check ran your audit again, and the released maximum loses "
        f"ε ≥ {again.epsilon_lower_bound:.3f} against the claimed {spec['epsilon']}"
    )


def _noisy_max_value(scale: float) -> Callable[..., np.ndarray]:
    """StatDP's flawed report noisy max that releases the maximum's value, with Lap(``scale``) noise."""

    def mechanism(answers: ArrayLike, *, trials: int, rng: RngLike) -> np.ndarray:
        answers = np.asarray(answers, dtype=float)
        return (answers + as_generator(rng).laplace(0.0, scale, size=(trials, answers.size))).max(axis=1)

    return mechanism


audit_your_own = Exercise("audit-your-own", probe=_probe_audit_your_own, judge=_judge_audit_your_own)
"""Exercise ``audit-your-own``: StatDP's report noisy max that releases the maximum's value, audited at ε = 0.5."""
