"""Test cases for the exercises of notebook 02 added after the first three (checks: ``dpcourse.checks.rr_vs_laplace``).

Same form as ``tests/checks/test_checks.py``'s ``CASES``, which merges this dict into its own: exercise id →
(check, right answer (args), [(wrong answer (args), what the message must say)]).
"""

from __future__ import annotations

import numpy as np

from dpcourse.checks import rr_vs_laplace

# gaussian-sigma: K = 400 queries over n = 20 000 people, each type in at most s = 100 of them, ε = 0.5, δ = 1e-5
_L2 = np.sqrt(100) / 20_000
_ROOT = np.sqrt(2 * np.log(1.25 / 1e-5)) / 0.5
SIGMA = float(_L2 * _ROOT)

# sample-size: |Q| = 100, α = 0.05, β = 0.05, ε = 1
_R = (np.e + 1) / (np.e - 1)
N_LAPLACE = int(np.ceil(100 * np.log(100 / 0.05) / 0.05))
N_RR = int(np.ceil(_R**2 * np.log(2 * 100 / 0.05) / (2 * 0.05**2)))

# attack-queries: n = 10⁶, ε = 1, sd √2·k/ε ≤ 0.1·√n = 100
K_MAX = int(np.floor(100 / np.sqrt(2)))

CASES: dict = {
    "gaussian-sigma": (
        rr_vs_laplace.narrow_gaussian_sigma,
        (SIGMA,),
        [
            ((100 / 20_000 * _ROOT,), "L1 sensitivity"),
            ((np.sqrt(400) / 20_000 * _ROOT,), "at most s"),
            ((np.sqrt(100) * _ROOT,), "normalised"),
            ((_L2 * np.sqrt(2 * np.log(1e5)) / 0.5,), "ln(1/δ)"),
            ((SIGMA**2,), "σ²"),
        ],
    ),
    "sample-size": (
        rr_vs_laplace.sample_size,
        (N_LAPLACE, N_RR),
        [
            ((int(np.ceil(100 * np.log(1 / 0.05) / 0.05)), N_RR), "ln(1/β)"),
            ((int(np.ceil(np.log(100 / 0.05) / 0.05)), N_RR), "one query's sensitivity"),
            ((N_LAPLACE, int(np.ceil(4 * np.log(4000) / (2 * 0.05**2)))), "R ≈ 2/ε"),
            ((N_LAPLACE, int(np.ceil(_R * np.sqrt(np.log(4000) / 2) / 0.05))), "1/√n"),
            ((N_LAPLACE, int(np.ceil(_R**2 * np.log(2 / 0.05) / (2 * 0.05**2)))), "ln(2/β)"),
        ],
    ),
    "attack-queries": (
        rr_vs_laplace.attack_queries,
        (K_MAX,),
        [((100,), "standard deviation"), ((5000,), "Δ₂ = √k"), ((K_MAX + 1,), "rounded up")],
    ),
}
