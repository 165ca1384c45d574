"""Callback tests of the notebook-06 panel (the exercise checks are in test_checks.py)."""

import numpy as np
import pytest

from dpcourse import bounds
from dpcourse.widgets import pmw_panel


@pytest.fixture(scope="module")
def panel():
    return pmw_panel(num_queries=60, render=False)


def test_panel_numbers_follow_controls(panel):
    first = dict(panel.numbers)
    assert first["N"] == int(np.floor(16 * np.log(2**10) / 0.1**2))
    assert 0 <= first["epsilon spent"] <= 1.0
    panel.controls["alpha"].value = 0.3
    assert panel.numbers["N"] == int(np.floor(16 * np.log(2**10) / 0.3**2))
    panel.controls["epsilon"].value = 5.0
    # the Laplace baseline's error scales exactly as 1/ε (the same standard noise is rescaled)
    assert panel.numbers["Laplace per query max error"] == pytest.approx(first["Laplace per query max error"] / 5.0)
    panel.controls["bits"].value = 6
    assert panel.numbers["Theorem 4.3 bound"] == pytest.approx(
        bounds.pmw_notes_error_bound(n=1e8, epsilon=5.0, domain_size=64, num_queries=60, beta=0.05)
    )
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
