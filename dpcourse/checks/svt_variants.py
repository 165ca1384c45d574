"""Checks for the exercises of notebook 05 (the flawed SVT variants)."""

from __future__ import annotations

import numpy as np

from ..audit import exact_variant_loss
from ..svt_variants import svt_standard_spec
from ._core import Exercise, Wrong, diagnose, numbers, value, value_evidence, values_evidence

__all__ = ["ALLOCATION", "COUNTEREXAMPLE", "allocation", "counterexample_loss", "spot_the_flaw"]

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

#: Exercise ``allocation``: SVT-S's total ε, the number of ⊤ c, and whether the queries are monotonic.
ALLOCATION = {"epsilon": 0.5, "c": 8, "monotonic": False}


def _judge_allocation(evidence: dict) -> str:
    answers = value(evidence, "ε₁ and ε₂")
    epsilon, c, monotonic = ALLOCATION["epsilon"], ALLOCATION["c"], ALLOCATION["monotonic"]
    spec = svt_standard_spec(epsilon, c, 1.0, monotonic=monotonic)
    want_1 = 1.0 / spec.threshold_scale
    want_2 = epsilon - want_1
    monotonic_1 = 1.0 / svt_standard_spec(epsilon, c, 1.0, monotonic=not monotonic).threshold_scale
    got_1, got_2 = numbers(answers.get("epsilon_1"), "ε₁"), numbers(answers.get("epsilon_2"), "ε₂")
    if np.isclose(got_1, want_2) and np.isclose(got_2, want_1):
        raise Wrong("ε₁ and ε₂ are swapped", "the threshold gets the smaller share: ε₂/ε₁ = (2c)^{2/3} > 1")
    diagnose(got_1, want_1, what="ε₁", rtol=1e-6, hint="ε₁ + ε₂ = ε and ε₂/ε₁ = (2c)^{2/3}",
             mistakes={"the ratio for monotonic queries, c^{2/3}; these queries are general":
                           (monotonic_1, "general queries: ε₂/ε₁ = (2c)^{2/3}"),
                       "ε₂/ε₁ = 2c (the exponent 2/3 is missing)": (epsilon / (1 + 2 * c), "the ratio is (2c)^{2/3}"),
                       "ε₁ = ε/2, the even split": (epsilon / 2, "Lyu et al. give the threshold less: ε₁ : ε₂ = 1 : (2c)^{2/3}")})
    diagnose(got_2, want_2, what="ε₂", rtol=1e-6, hint="ε₂ = ε − ε₁")
    return f"ε₁ = {want_1:.4f}, ε₂ = {want_2:.4f}"


allocation = Exercise("allocation", probe=lambda epsilon_1, epsilon_2: values_evidence(epsilon_1=epsilon_1, epsilon_2=epsilon_2),
                      judge=_judge_allocation)
"""Exercise ``allocation``: SVT-S's ε₁ and ε₂ for ε = 0.5 and c = 8 general queries, with Lyu et al.'s ratio."""
