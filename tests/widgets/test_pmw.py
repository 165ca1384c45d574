"""Callback tests of the notebook-06 panel (the exercise checks are in test_checks.py)."""

import numpy as np
import pytest

from dpcourse import pmw
from dpcourse.widgets import pmw_panel


@pytest.fixture(scope="module")
def panel():
    return pmw_panel(num_queries=60, render=False)


def test_panel_numbers_follow_controls(panel):
    first = dict(panel.numbers)
    assert first["N"] == int(np.floor(16 * np.log(2**10) / 0.1**2))
    assert 0 <= first["epsilon spent (after the fact)"] <= 1.0
    panel.controls["alpha"].value = 0.3
    assert panel.numbers["N"] == int(np.floor(16 * np.log(2**10) / 0.3**2))
    panel.controls["epsilon"].value = 5.0
    # the Laplace baseline's error scales exactly as 1/ε (the same standard noise is rescaled)
    assert panel.numbers["Laplace per query max error"] == pytest.approx(first["Laplace per query max error"] / 5.0)
    panel.controls["bits"].value = 6
    least = pmw.pmw_notes_alpha(n=1e8, epsilon=5.0, domain_size=64, num_queries=60, beta=0.05)
    assert panel.numbers["Theorem 4.3's least alpha"] == pytest.approx(least)
    # the level shown is 11α/8 of the slider's α (0.3 ≥ least), never 11/8 of the least α
    assert panel.numbers["guaranteed error (11 alpha/8)"] == pytest.approx(11 * 0.3 / 8)
    before = panel.figure.axes[0].lines[1].get_ydata().copy()  # the Laplace baseline line
    panel.controls["n"].value = 1e5
    assert not np.array_equal(before, panel.figure.axes[0].lines[1].get_ydata())
    assert panel.numbers["noisy histogram max error"] > 0


def test_panel_pmw_curve_responds_to_alpha():
    p = pmw_panel(num_queries=60, render=False)
    p.set(n=1e10, epsilon=10.0, alpha=0.5)  # α too big to trigger any update: PMW answers from uniform p̃
    assert p.numbers["updates"] == 0
    p.controls["alpha"].value = 0.05
    assert p.numbers["updates"] > 0
    assert p.numbers["PMW max error"] <= 11 * 0.05 / 8


def test_panel_noisy_histogram_is_calibrated_to_replace_one():
    """Lap(2/ε) per cell (L1 sensitivity 2 under replace-one): the error is twice the Lap(1/ε) one."""
    p = pmw_panel(num_queries=40, render=False)
    p.set(n=1e6, epsilon=1.0, alpha=0.2, bits=6)
    gen = np.random.default_rng([2026, 6])  # the panel's cache draws in this order (data, workload, noise)
    from dpcourse.pmw import conjunction_workload, product_histogram

    product_histogram(10**9, 6, rng=gen)
    work = conjunction_workload(40, 6, width=2, rng=gen)
    gen.laplace(0.0, 1.0, size=40)
    unit = np.abs(work.answers(gen.laplace(0.0, 1.0, size=64))).max()
    assert p.numbers["noisy histogram max error"] == pytest.approx(2 * unit / 1e6)  # fails at 1/(nε)


def test_panel_says_when_alpha_is_below_the_theorem():
    p = pmw_panel(num_queries=40, render=False)
    p.set(n=1e4, epsilon=1.0, alpha=0.1, bits=8)
    assert p.numbers["Theorem 4.3's least alpha"] > 0.1
    assert p.numbers["guaranteed error (11 alpha/8)"] == "none (alpha below the least)"
