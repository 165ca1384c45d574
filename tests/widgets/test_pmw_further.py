"""Notebook 06's Going further: Hedge against distributions, η for the wrong T, advanced composition."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from dpcourse import mechanisms, pmw
from dpcourse.widgets import pmw_further


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_regret_histogram_marks_the_best_expert_and_the_bound():
    pmw_further.show_regret_against_distributions(np.array([-1.0, 0.5, 2.0]), best=2.0, bound=9.0)
    labels = [line.get_label() for line in plt.gcf().axes[0].get_lines()]
    assert labels == ["against the best expert: 2", "2√(T ln N) = 9 (Corollary 4.2)"]
    with pytest.raises(ValueError, match="regret"):
        pmw_further.show_regret_against_distributions(np.array([np.nan]), best=0.0, bound=1.0)


def test_eta_for_the_wrong_horizon_breaks_the_bound_only_when_mistuned():
    study = pmw_further.eta_for_the_wrong_horizon(np.array([10, 100, 1000]), tuned_for=10_000)
    assert study.tuned[1] == pmw.hedge(np.tile([1.0, 0.0], (100, 1)), eta=np.sqrt(np.log(2) / 100)).regret
    assert np.all(study.tuned < study.bound) and study.fixed[-1] > study.bound[-1]
    assert study.table().header[2] == "regret, η for T₀ = 10⁴"
    assert pmw_further.eta_for_the_wrong_horizon(np.array([10]), tuned_for=300).table().header[2].endswith("= 300")
    study.show()
    assert plt.gcf().axes[0].get_lines()[1].get_label() == "η tuned for T₀ = 10⁴"
    with pytest.raises(ValueError, match="horizons"):
        pmw_further.eta_for_the_wrong_horizon(np.array([0, 10]), tuned_for=10)


def test_composition_study_holds_the_three_totals():
    study = pmw_further.composition_by_k(np.array([1, 100]), epsilon0=0.01, delta=1e-6)
    np.testing.assert_allclose(study.basic, [0.01, 1.0])
    assert study.advanced[1] == mechanisms.advanced_composition_epsilon(epsilon0=0.01, k=100, delta=1e-6)
    assert np.all(study.exact <= study.advanced) and np.all(study.delta_at_advanced <= 1e-6)
    np.testing.assert_allclose(study.looseness(from_k=100), study.advanced[1:] / study.exact[1:] - 1)
    assert study.table().caption == "total ε at δ = 1e-06"
    study.show()
    assert plt.gcf().axes[0].get_xlabel() == "k mechanisms, each ε₀ = 0.01"
    with pytest.raises(ValueError, match="delta"):
        pmw_further.composition_by_k(np.array([1]), epsilon0=0.01, delta=0.0)
