"""Checks for the exercises of notebook 06 (Private Multiplicative Weights)."""

from __future__ import annotations

import numpy as np

from .. import bounds
from ..pmw import mw_update
from ._core import CheckFailed, expect_close, passed

__all__ = ["UPDATE_EXERCISE", "ALPHA_EXERCISE", "choose_alpha", "mw_step", "update_bounds"]

UPDATE_EXERCISE = {"synthetic": [0.25, 0.25, 0.25, 0.25], "query": [1.0, 1.0, 0.0, 0.0], "released": 0.8,
                   "eta": 0.5}
ALPHA_EXERCISE = {"n": 10**8, "num_queries": 1000, "epsilon": 1.0, "domain_size": 2**16, "beta": 0.05}


def mw_step(answer) -> None:
    """Exercise ``mw-step``: p̃ after one MW update on :data:`UPDATE_EXERCISE`."""
    expected = mw_update(UPDATE_EXERCISE["synthetic"], np.array(UPDATE_EXERCISE["query"]),
                         UPDATE_EXERCISE["released"], eta=UPDATE_EXERCISE["eta"])
    got = np.asarray(answer, dtype=float) if answer is not None and answer is not Ellipsis else answer
    if got is not None and got is not Ellipsis and got.shape == expected.shape and np.isclose(got.sum(), 1):
        flipped = mw_update(UPDATE_EXERCISE["synthetic"], np.array(UPDATE_EXERCISE["query"]), 0.0,
                            eta=UPDATE_EXERCISE["eta"])
        if np.allclose(got, flipped, atol=1e-6):
            raise CheckFailed("mw-step", "the weights moved the wrong way",
                              "q·p̃ = 0.5 is below y = 0.8, so sign(q·p̃ − y) = −1 and the counted cells gain weight")
    expect_close("mw-step", answer, expected, what="p̃ after the update", atol=1e-6, rtol=0,
                 hint="multiply each cell by e^{−η·sign(q·p̃ − y)·q(u)}, then divide by the sum")
    passed("mw-step")


def update_bounds(nonprivate, private) -> None:
    """Exercise ``update-bound``: for |𝒳| = 2¹², α = 0.1, the bounds 4 ln|𝒳|/α² and N = 16 ln|𝒳|/α²."""
    expect_close("update-bound", nonprivate, bounds.mw_update_count_bound(domain_size=2**12, alpha=0.1),
                 what="updates without privacy", rtol=1e-3,
                 hint="the potential KL(p‖p̃) starts at most ln|X| and falls by α²/4 per update (η = α/2)")
    expect_close("update-bound", private, bounds.pmw_update_count_bound(domain_size=2**12, alpha=0.1),
                 what="N for Private MW", rtol=1e-3,
                 hint="with noise, an update is only guaranteed a gap of α/2, and η = α/4: the drop is α²/16")
    passed("update-bound")


def choose_alpha(alpha) -> None:
    """Exercise ``choose-alpha``: the smallest α at which Theorem 4.3's PMW is ε-DP and accurate, for :data:`ALPHA_EXERCISE`."""
    expected = bounds.pmw_notes_alpha(**ALPHA_EXERCISE)
    expect_close("choose-alpha", alpha, expected, what="α", rtol=1e-3,
                 hint="set ε = 2ε₀N with N = 16 ln|X|/α² and ε₀ = 16 ln(3|Q|/β)/(nα), and solve for α")
    passed("choose-alpha", f"α = {expected:.4g}; every answer within 11α/8 = {11 * expected / 8:.4g} w.p. 0.95")
