"""Checks for the exercises of notebook 06 (Private Multiplicative Weights)."""

from __future__ import annotations

import numpy as np

from .. import bounds
from ..pmw import mw_update
from ._core import Exercise, diagnose, value, value_evidence

__all__ = ["ALPHA_EXERCISE", "UPDATE_CAP_EXERCISE", "UPDATE_EXERCISE", "choose_alpha", "mw_step", "update_cap"]

UPDATE_EXERCISE = {"synthetic": [0.25, 0.25, 0.25, 0.25], "query": [1.0, 1.0, 0.0, 0.0], "released": 0.8, "eta": 0.5}
UPDATE_CAP_EXERCISE = {"domain_size": 2**12, "alpha": 0.1}
ALPHA_EXERCISE = {"n": 10**8, "num_queries": 1000, "epsilon": 1.0, "domain_size": 2**16, "beta": 0.05}


def _judge_mw_step(evidence: dict) -> str:
    got = value(evidence, "p̃ after the update")
    spec = UPDATE_EXERCISE
    synthetic, query = np.array(spec["synthetic"]), np.array(spec["query"])
    expected = mw_update(synthetic, query, spec["released"], eta=spec["eta"])
    unnormalised = synthetic * np.exp(spec["eta"] * query)
    diagnose(got, expected, what="p̃ after the update", atol=1e-6,
             hint="multiply each cell by e^{−η·sign(q·p̃ − y)·q(u)}, then divide by the sum",
             mistakes={"the weights moved the wrong way (the sign is flipped)":
                           (mw_update(synthetic, query, 0.0, eta=spec["eta"]),
                            "q·p̃ = 0.5 is below y = 0.8, so sign(q·p̃ − y) = −1 and the counted cells gain weight"),
                       "the weights are not normalised": (unnormalised, "p̃ is a distribution: divide by the sum"),
                       "the loss is q·p̃ − y itself, not its sign":
                           (_loss_not_sign(synthetic, query, spec),
                            "Lecture 4's update uses only the sign of the error: ℓ = sign(q·p̃ − y)·q")})
    return f"p̃ = {np.round(expected, 4).tolist()}: the two counted cells gained weight"


def _loss_not_sign(synthetic, query, spec) -> np.ndarray:
    """The update with the signed error q·p̃ − y as the loss's size, not just its sign."""
    weights = synthetic * np.exp(-spec["eta"] * (query @ synthetic - spec["released"]) * query)
    return weights / weights.sum()


mw_step = Exercise("mw-step", probe=value_evidence, judge=_judge_mw_step)
"""Exercise ``mw-step``: p̃ after one MW update on :data:`UPDATE_EXERCISE`."""


def _judge_update_cap(evidence: dict) -> str:
    got = value(evidence, "N")
    d, alpha = UPDATE_CAP_EXERCISE["domain_size"], UPDATE_CAP_EXERCISE["alpha"]
    expected = bounds.pmw_update_count_bound(domain_size=d, alpha=alpha)
    diagnose(got, expected, what="N for Private MW", rtol=1e-3,
             hint="per update the potential KL(p‖p̃) falls by at least η·gap − η² with gap α/2 and η = α/4",
             mistakes={"the cap without privacy, 4 ln|𝒳|/α² (gap α, η = α/2)":
                           (bounds.mw_update_count_bound(domain_size=d, alpha=alpha),
                            "with noisy answers an update is only guaranteed a gap of α/2"),
                       "a drop of η·gap = α²/8 per update: the −η² term is missing":
                           (8 * np.log(d) / alpha**2, "the drop is η·gap − η² = α²/8 − α²/16"),
                       "log₂|𝒳| in place of ln|𝒳|": (16 * np.log2(d) / alpha**2, "the potential starts at ln|𝒳|, a natural log")})
    return f"N = 16 ln|𝒳|/α² = {expected:.1f}, four times MW's {bounds.mw_update_count_bound(domain_size=d, alpha=alpha):.1f}"


update_cap = Exercise("update-cap", probe=value_evidence, judge=_judge_update_cap)
"""Exercise ``update-cap``: Private MW's cap N on updates for |𝒳| = 2¹², α = 0.1 (gap α/2, η = α/4)."""


def _judge_choose_alpha(evidence: dict) -> str:
    got = value(evidence, "α")
    spec = ALPHA_EXERCISE
    expected = bounds.pmw_notes_alpha(**spec)
    n, k, eps, d, beta = spec["n"], spec["num_queries"], spec["epsilon"], spec["domain_size"], spec["beta"]
    diagnose(got, expected, what="α", rtol=1e-3,
             hint="set ε = 2ε₀N with N = 16 ln|𝒳|/α² and ε₀ = 16 ln(3|Q|/β)/(nα), and solve for α",
             mistakes={"the factor 2 of ε = 2ε₀N is missing": (np.cbrt(256 * np.log(3 * k / beta) * np.log(d) / (n * eps)),
                                                              "both halves of the budget count: ε = 2ε₀N"),
                       "ln(|Q|/β) in place of ln(3|Q|/β)": (np.cbrt(512 * np.log(k / beta) * np.log(d) / (n * eps)),
                                                             "ε₀ = 16 ln(3|Q|/β)/(nα)"),
                       "the error 11α/8, not α itself": (11 * expected / 8, "the exercise asks for α")})
    return f"α = {expected:.4g}"


choose_alpha = Exercise("choose-alpha", probe=value_evidence, judge=_judge_choose_alpha)
"""Exercise ``choose-alpha``: the smallest α at which Lecture 4's PMW is ε-DP and accurate, for :data:`ALPHA_EXERCISE`."""
