"""Test cases for the exercises of notebook 05 added after the first four (checks: ``dpcourse.checks.svt_variants``).

Same form as ``tests/checks/test_checks.py``'s ``CASES``, which merges this dict into its own: exercise id →
(check, right answer (args), [(wrong answer (args), what the message must say)]).
"""

from __future__ import annotations

import numpy as np

from dpcourse.checks import svt_variants

# ε = 1 in all, c = 4 general queries, released numbers' standard deviation ≤ 10: Lap(cΔ/ε₃) has standard deviation
# √2·c/ε₃, so ε₃ = √2·4/10, and the rest splits 1 : (2c)^{2/3} = 1 : 4
NUMERIC_EPSILON_3 = np.sqrt(2) * 4 / 10
THRESHOLD_EPSILON = (1 - NUMERIC_EPSILON_3) / 5

CASES: dict = {
    "numeric-budget": (
        svt_variants.numeric_budget,
        (THRESHOLD_EPSILON,),
        [
            (((1 - 4 / 10) / 5,), "standard deviation"),  # b = 10 taken for the standard deviation
            (((1 - np.sqrt(2) / 10) / 5,), "without c"),  # Lap(Δ/ε₃)
            (((1 - NUMERIC_EPSILON_3) / (1 + 4 ** (2 / 3)),), "monotonic"),  # 1 : c^{2/3}
            ((4 * THRESHOLD_EPSILON,), "ε₂"),
            ((1 / 5,), "ε₃ left out"),
        ],
    ),
}
