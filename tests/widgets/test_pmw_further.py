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


@pytest.fixture(scope="module")
def stream_setup():
    x = pmw.product_histogram(10**9, 6, rng=3)
    stream = pmw.conjunction_workload(200, 6, width=2, rng=4)
    return x, stream, stream.answers(x / x.sum())


def test_dwork_roth_runs_match_a_run_by_hand_and_flag_the_release_noise(stream_setup):
    x, stream, truth = stream_setup
    runs = pmw_further.dwork_roth_runs(x, stream, truth, epsilon=1.0, beta=0.05, deltas=(0.0, 1e-6), rng=7)
    alpha = pmw.pmw_dwork_roth_alpha(n=1e9, epsilon=1.0, domain_size=64, num_queries=200, beta=0.05, delta=0.0)
    by_hand = pmw.PrivateMW(x, epsilon=1.0, alpha=alpha, beta=0.05, max_queries=200, calibration="dwork_roth", rng=7)
    error = np.abs(pmw.run_stream(by_hand, stream) - truth).max()
    assert runs.alphas[0] == alpha and runs.max_error(0.0) == error and runs.updates[0] == by_hand.updates
    assert runs.release_ratio[0] < 1 < runs.release_ratio[1]  # Theorem 4.15's caveat, as the notebook's table shows
    assert [row[0] for row in runs.table().rows] == ["0", "1e-06"]
    with pytest.raises(ValueError, match="delta must be one of"):
        runs.max_error(0.5)


def test_laplace_baselines_rescale_one_noise_and_compare_the_bounds(stream_setup):
    x, stream, truth = stream_setup
    base = pmw_further.laplace_baselines(x, stream, truth, epsilon=1.0, beta=0.05, delta=1e-6, rng=5)
    basic, advanced = base.epsilon_per_query
    assert basic == pytest.approx(1.0 / 200) and advanced > basic
    # the same standard noise, rescaled: the errors are in the inverse ratio of the ε₀
    assert base.max_errors[0] / base.max_errors[1] == pytest.approx(advanced / basic, rel=1e-9)
    assert base.bounds["basic"] == mechanisms.composed_laplace_max_error_bound(
        num_queries=200, beta=0.05, epsilon=1.0, n=1e9
    )
    assert base.crossing > 200 and base.bounds["pmw"] > base.bounds["advanced"]
    with pytest.raises(ValueError, match="delta"):
        pmw_further.laplace_baselines(x, stream, truth, epsilon=1.0, beta=0.05, delta=0.0, rng=5)
