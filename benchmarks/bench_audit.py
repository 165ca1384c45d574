"""Notebook 05: the variants' samplers and the auditor."""

from __future__ import annotations

import time

import numpy as np

from dpcourse import audit
from dpcourse.svt_variants import VARIANTS

from ._harness import Section


def _python_loop(answers, threshold, epsilon, c, trials, rng):
    """Alg. 1 one trial at a time, the textbook way (the baseline)."""
    out = np.full((trials, answers.size), np.nan)
    for j in range(trials):
        rho, count = rng.laplace(0, 2 / epsilon), 0
        for i, a in enumerate(answers):
            above = a + rng.laplace(0, 4 * c / epsilon) >= threshold + rho
            out[j, i] = np.inf if above else -np.inf
            count += above
            if count >= c:
                break
    return out


def run() -> Section:
    section = Section("Notebook 05 (flawed SVT variants and the auditor)")
    answers = np.r_[np.ones(5), np.zeros(5)]
    gen = np.random.default_rng(0)
    ratio = section.ratio("Alg. 1 runner, 20,000 trials × 10 queries",
                          lambda: VARIANTS["alg1"].run(answers, threshold=0.5, epsilon=1.0, c=2, trials=20_000, rng=gen),
                          "a plain Python loop over trials", lambda: _python_loop(answers, 0.5, 1.0, 2, 20_000, gen), repeat=3)
    section.notes.append(f"The vectorised runner draws {1 / ratio:.0f}× as many samples per second as the loop.")
    for key in VARIANTS:
        d, d_prime, threshold, trials = audit.AUDIT_COUNTEREXAMPLES.get(
            key, (np.r_[np.ones(5), np.zeros(5)], np.r_[np.zeros(5), np.ones(5)], 0.5, 100_000))
        start = time.perf_counter()
        result = audit.audit(key, d, d_prime, epsilon=1.0, c=1, threshold=threshold, trials=trials, rng=1)
        seconds = time.perf_counter() - start
        rate = 2 * trials / seconds
        section.rows.append((f"audit {key} ({trials:,} samples per input)", f"{seconds * 1e3:.4g} ms",
                             f"{rate / 1e6:.2f} M samples/s; p = {result.p_value:.2g} "
                             f"({'flagged' if result.flagged else 'not flagged'})"))
    return section
