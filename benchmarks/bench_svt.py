"""Notebook 04: the vectorised AboveThreshold sampler and the exact pmf."""

from __future__ import annotations

import numpy as np

from dpcourse import svt
from dpcourse.widgets import above_threshold_panel

from ._harness import Section


def _python_loop(answers, threshold, epsilon, trials, rng):
    """The textbook implementation, one trial at a time (the baseline)."""
    first = np.empty(trials, dtype=int)
    for j in range(trials):
        noisy = threshold + rng.laplace(0, 2 / epsilon)
        first[j] = -1
        for i, a in enumerate(answers):
            if a + rng.laplace(0, 4 / epsilon) >= noisy:
                first[j] = i
                break
    return first


def run() -> Section:
    section = Section("Notebook 04 (AboveThreshold)")
    answers = np.r_[np.zeros(99), 30.0]  # the ⊤ comes late, so both versions scan most queries
    trials = 2000
    gen = np.random.default_rng(0)
    ratio = section.ratio(
        "above_threshold, 2000 trials × 100 queries",
        lambda: svt.above_threshold(answers, threshold=20.0, epsilon=1.0, rng=gen, trials=trials),
        "a plain Python loop over trials",
        lambda: _python_loop(answers, 20.0, 1.0, trials, gen),
        repeat=3,
    )
    section.notes.append(f"The vectorised sampler runs {1 / ratio:.0f}× as many trials per second as the loop.")
    for m in (10, 100, 1000):
        q = np.random.default_rng(m).normal(0, 3, size=m)
        section.timing(
            f"above_threshold_pmf, m = {m}",
            lambda q=q: svt.above_threshold_pmf(q, threshold=1.0, epsilon=1.0),
            repeat=3,
        )
    panel = above_threshold_panel()
    values = iter(np.tile([8, 30, 4, 40], 50))
    section.timing("notebook 04 panel: one redraw (m slider)", lambda: panel.set(m=int(next(values))), repeat=10)
    return section
