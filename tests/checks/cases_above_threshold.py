"""Test cases for notebook 04's exercises added after the first three (``dpcourse.checks.above_threshold``).

Same form as ``tests/checks/test_checks.py``'s ``CASES``, which merges this dict into its own: exercise id →
(check, right answer (args), [(wrong answer (args), what the message must say)]).
"""

from __future__ import annotations

from dpcourse.checks import above_threshold as at

# top-budget: ε = 0.5, Δ = 3, threshold noise Lap(30): the threshold's factor costs Δ/a = 0.1, the ⊤ factor 2Δ/b
# must stay within the remaining 0.4, so b = 6/0.4 = 15.
_TOP = 15.0
# sv-scales: ε = 0.5, c = 5, Δ = 2: one run has ε/c = 0.1, so Lap(2Δ/0.1) and Lap(4Δ/0.1).
_SV = [40.0, 80.0]
# ns-scales: ε = 1.5, c = 4, Δ = 2: ε₁ = 8ε/9 = 4/3 gives 2cΔ/ε₁ = 12 and 24; ε₂ = 2ε/9 = 1/3 gives 2cΔ/ε₂ = 48.
_NS = [12.0, 24.0, 48.0]

CASES: dict = {
    "top-budget": (
        at.top_budget,
        (_TOP,),
        [
            ((7.5,), "shift of Δ"),
            ((24.0,), "AboveThreshold's own scale"),
            ((20.0,), "shift of 2Δ"),
            ((2 / (0.5 - 1 / 30),), "Δ is left out"),
            ((0.4 / 6,), "1/b"),
        ],
    ),
    "sv-scales": (
        at.sv_scales,
        (_SV,),
        [
            (([8.0, 16.0],), "whole ε"),
            (([1.6, 3.2],), "multiplied by c"),
            (([80.0, 40.0],), "wrong way round"),
            (([20.0, 40.0],), "Δ is left out"),
            (([8 * 5**0.5, 16 * 5**0.5],), "√c"),
        ],
    ),
    "ns-scales": (
        at.ns_scales,
        (_NS,),
        [
            (([32 / 3, 64 / 3, 48.0],), "whole ε"),
            (([12.0, 24.0, 24.0],), "spend all of ε₂"),
            (([12.0, 24.0, 12.0],), "c of them"),
            (([64 / 3, 128 / 3, 32 / 3],), "even split"),
            (([6.0, 12.0, 24.0],), "Δ is left out"),
        ],
    ),
}
