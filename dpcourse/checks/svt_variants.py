"""Checks for the exercises of notebook 05 (the flawed SVT variants)."""

from __future__ import annotations

import numpy as np

from ..audit import exact_variant_loss
from ..svt_variants import svt_standard_spec
from ._core import CheckFailed, expect_close, passed

__all__ = ["allocation", "counterexample_loss", "spot_the_flaw"]

_FLAWS = {"alg4": "query noise", "alg5": "query noise", "alg6": "query noise", "alg3": "output"}


def spot_the_flaw(answers: dict) -> None:
    """Exercise ``spot-the-flaw``: for each of alg3 … alg6, which line is wrong: "query noise" or "output"?"""
    ex = "spot-the-flaw"
    if not isinstance(answers, dict):
        raise CheckFailed(ex, "give a dict such as {'alg3': 'output', 'alg4': ...}")
    for key, flaw in _FLAWS.items():
        given = str(answers.get(key, "")).strip().lower()
        if given != flaw:
            raise CheckFailed(ex, f"{key}: {given or 'no answer'!r} is not the line that breaks the proof",
                              "compare each variant's νᵢ and what it outputs on ⊤ with Alg. 1's")
    passed(ex)


def counterexample_loss(answer, *, variant: str = "alg4", num_queries: int = 8, c: int = 2, epsilon: float = 1.0) -> None:
    """Exercise ``counterexample-loss``: the exact privacy loss of a variant's counterexample event."""
    expected = exact_variant_loss(variant, num_queries, epsilon=epsilon, c=c)[0]
    expect_close("counterexample-loss", answer, expected, what=f"the loss of {variant}'s counterexample", rtol=1e-6,
                 hint="compute Pr[event | D] and Pr[event | D′] with audit.variant_pattern_probability and take ln of the ratio")
    passed("counterexample-loss", f"{expected:.4f}, against a claim of {epsilon}")


def allocation(epsilon_1, epsilon_2, *, epsilon: float = 0.5, c: int = 8, monotonic: bool = False) -> None:
    """Exercise ``allocation``: SVT-S's ε₁ and ε₂ for a total ε, with Lyu et al.'s ratio 1 : (2c)^{2/3}."""
    ex = "allocation"
    spec = svt_standard_spec(epsilon, c, 1.0, monotonic=monotonic)
    want_1 = 1.0 / spec.threshold_scale
    want_2 = (1 if monotonic else 2) * c / spec.query_scale
    expect_close(ex, epsilon_1, want_1, what="ε₁", rtol=1e-6,
                 hint="ε₁ + ε₂ = ε and ε₂/ε₁ = (2c)^{2/3} (c^{2/3} for monotonic queries)")
    expect_close(ex, epsilon_2, want_2, what="ε₂", rtol=1e-6, hint="ε₂ = ε − ε₁")
    if not np.isclose(epsilon_1 + epsilon_2, epsilon):
        raise CheckFailed(ex, "ε₁ + ε₂ must equal ε")
    passed(ex, f"ε₁ = {want_1:.4f}, ε₂ = {want_2:.4f}")
