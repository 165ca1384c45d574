"""Checks for the exercises of notebook 05 (the flawed SVT variants)."""

from __future__ import annotations

import numpy as np

from ..audit import exact_variant_loss
from ..svt_variants import svt_standard_spec
from ._core import Exercise, Wrong, diagnose, value, value_evidence

__all__ = ["ALLOCATION", "COUNTEREXAMPLE", "allocation_gain", "counterexample_loss", "spot_the_flaw"]

_FLAWS = {"alg3": "output", "alg4": "query noise", "alg5": "query noise", "alg6": "query noise"}
_FLAW_HINTS = {
    "alg3": "Alg. 3 adds the right noise, but on ⊤ it outputs the noisy answer qᵢ + νᵢ itself",
    "alg4": "Alg. 4's query noise does not grow with c: compare its νᵢ's scale with Alg. 1's",
    "alg5": "Alg. 5 adds no noise to the queries at all",
    "alg6": "Alg. 6's query noise does not grow with c, and it never stops",
}


def _judge_spot_the_flaw(evidence: dict) -> str:
    answers = value(evidence, "flaws")
    if not isinstance(answers, dict):
        raise Wrong("flaws: give a dict such as {'alg3': 'output', 'alg4': ...}")
    for key, flaw in _FLAWS.items():
        given = str(answers.get(key, "")).strip().lower()
        if given not in ("query noise", "output"):
            raise Wrong(f"{key}: {given or 'no answer'!r} is not one of 'query noise' and 'output'",
                        "answer with one of the two strings for each of alg3 … alg6")
        if given != flaw:
            raise Wrong(f"{key}: {given!r} is not the line that breaks its proof", _FLAW_HINTS[key])
    return "Alg. 3 leaks through its output, Alg. 4–6 through their query noise"


spot_the_flaw = Exercise("spot-the-flaw", probe=value_evidence, judge=_judge_spot_the_flaw)
"""Exercise ``spot-the-flaw``: for each of alg3 … alg6, which line is wrong: "query noise" or "output"?"""

#: Exercise ``counterexample-loss``: the variant, the number of queries m, c and ε.
COUNTEREXAMPLE = {"variant": "alg4", "num_queries": 8, "c": 2, "epsilon": 1.0}


def _judge_counterexample(evidence: dict) -> str:
    got = value(evidence, "alg4_loss")
    spec = COUNTEREXAMPLE
    expected = exact_variant_loss(spec["variant"], spec["num_queries"], epsilon=spec["epsilon"], c=spec["c"])[0]
    diagnose(got, expected, what=f"the loss of {spec['variant']}'s counterexample", rtol=1e-6,
             hint="compute Pr[event | D] and Pr[event | D′] with audit.variant_pattern_probability and take ln of the ratio",
             mistakes={"the ratio of the probabilities, not its logarithm": (np.exp(expected), "the privacy loss is ln(p/p′)"),
                       "D and D′ swapped (the sign is flipped)": (-expected, "the loss of the event is ln(Pr[·|D]/Pr[·|D′])"),
                       "a base-10 logarithm": (expected / np.log(10), "use the natural logarithm, np.log")})
    return f"{expected:.4f}, against a claim of ε = {spec['epsilon']}"


counterexample_loss = Exercise("counterexample-loss", probe=value_evidence, judge=_judge_counterexample)
"""Exercise ``counterexample-loss``: the exact privacy loss of Alg. 4's counterexample event (m = 8, c = 2, ε = 1)."""

#: Exercise ``allocation-gain``: SVT-S's total ε, the number of ⊤ c, and whether the queries are monotonic.
ALLOCATION = {"epsilon": 0.5, "c": 8, "monotonic": False}


def _difference_variance(spec) -> float:
    """Var(νᵢ − ρ) for Laplace noises: 2b² each."""
    return 2 * spec.threshold_scale**2 + 2 * spec.query_scale**2


def _judge_allocation_gain(evidence: dict) -> str:
    got = value(evidence, "variance_gain")
    epsilon, c, monotonic = ALLOCATION["epsilon"], ALLOCATION["c"], ALLOCATION["monotonic"]

    def gain(**kw):
        return _difference_variance(svt_standard_spec(epsilon, c, 1.0, ratio=1, **kw)) / \
            _difference_variance(svt_standard_spec(epsilon, c, 1.0, **kw))

    expected = gain(monotonic=monotonic)
    diagnose(got, expected, what="the variance ratio (even split ÷ Lyu et al.'s split)", rtol=1e-6,
             hint="ρ ~ Lap(Δ/ε₁) and νᵢ ~ Lap(2cΔ/ε₂) are independent, so Var(νᵢ − ρ) = 2(Δ/ε₁)² + 2(2cΔ/ε₂)²; "
                  "evaluate it at ε₁ = ε₂ = ε/2 and at ε₁ : ε₂ = 1 : (2c)^{2/3}",
             mistakes={"the query noise of monotonic queries, Lap(cΔ/ε₂); these queries are general":
                           (gain(monotonic=not monotonic), "general queries need Lap(2cΔ/ε₂)"),
                       "a ratio of standard deviations, not of variances": (np.sqrt(expected), "square it: the exercise asks for variances"),
                       "the ratio upside down (Lyu's variance ÷ the even split's)": (1 / expected,
                                                                                    "divide the even split's variance by Lyu et al.'s")})
    return f"the even split's comparison noise has {expected:.3f}× the variance of Lyu et al.'s"


allocation_gain = Exercise("allocation-gain", probe=value_evidence, judge=_judge_allocation_gain)
"""Exercise ``allocation-gain``: Var(νᵢ − ρ) under ε₁ = ε₂ divided by that under Lyu et al.'s 1 : (2c)^{2/3} (ε = 0.5, c = 8)."""
