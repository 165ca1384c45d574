"""Test cases for the exercises of notebook 06 added after the first three (checks: ``dpcourse.checks.pmw``).

Same form as ``tests/checks/test_checks.py``'s ``CASES``, which merges this dict into its own: exercise id →
(check, right answer (args), [(wrong answer (args), what the message must say)]).
"""

from __future__ import annotations

import numpy as np

from dpcourse.checks import pmw

# ε = 0.25 under replace-one: two counts move, b = 2/ε
HIST_B = 2 / 0.25
# pricing: ε = 2Δu(ln|R| + ln(1/β))/loss with |R| = 100, Δu = 100, loss 500, β = 0.05
EM_EPS = 2 * 100 * (np.log(100) + np.log(20)) / 500

CASES: dict = {
    "histogram-scale": (
        pmw.histogram_scale,
        (HIST_B,),
        [((1 / 0.25,), "add/remove"), ((2 / (10**6 * 0.25),), "normalised"), ((0.25 / 2,), "upside down")],
    ),
    "em-epsilon": (
        pmw.em_epsilon,
        (EM_EPS,),
        [
            ((EM_EPS / 2,), "monotone variant"),
            ((2 * 100 * np.log(100) / 500,), "ln(1/β)"),
            ((2 * 100 * (np.log(100) + 0.05) / 500,), "t = β"),
        ],
    ),
}
