"""Notebook 01's measurements (``dpcourse.linear_queries.histogram_sweeps``)."""

import numpy as np
import pytest

from dpcourse import linear_queries, mechanisms
from dpcourse.linear_queries import counting_query_sweep, universe_size_sweep


@pytest.fixture(scope="module")
def x():
    rng = np.random.default_rng(0)
    return linear_queries.histogram(rng.choice(32, size=5000, p=rng.dirichlet(np.ones(32))), 32)


@pytest.fixture(scope="module")
def sweep(x):
    return counting_query_sweep(x, [1, 10, 100], epsilon=1.0, trials=300, rng=1)


def test_the_direct_release_is_calibrated_to_the_workloads_sensitivity(x):
    # the notebook's loop, written out: the sweep draws the workload first, then Lap(W.l1_sensitivity/ε) on its answers
    rng = np.random.default_rng(2)
    workload = linear_queries.random_counting_workload(10, 32, rng=rng)
    answers = mechanisms.laplace_mechanism(
        workload.answer(x), sensitivity=workload.l1_sensitivity, epsilon=1.0, rng=rng, trials=50
    )
    expected = mechanisms.max_abs_error(answers / 5000, workload.answer(x) / 5000).mean()
    got = counting_query_sweep(x, [10], epsilon=1.0, trials=50, rng=np.random.default_rng(2))
    assert got.sensitivities[0] == workload.l1_sensitivity and got.direct[0].mean == expected


def test_measured_errors_match_the_exact_mean_and_stay_under_the_levels(sweep):
    for measured, exact, level in zip(sweep.direct, sweep.expected, sweep.level, strict=True):
        assert abs(measured.mean - exact) <= 5 * measured.std / np.sqrt(measured.trials)
        assert measured.mean < level
    assert all(h.mean < b for h, b in zip(sweep.from_histogram, sweep.histogram_level, strict=True))
    assert sweep.from_histogram[-1].mean < sweep.direct[-1].mean and sweep.histogram_wins_from <= 100


def test_the_tables_show_each_k(sweep):
    table = sweep.table()
    assert table.caption == "n = 5,000, ε = 1.0, 300 releases per K"
    assert [row[0] for row in table.rows] == [1, 10, 100] and table.header[-1] == "level (β = 0.05)"
    assert float(table.rows[1][2]) == pytest.approx(sweep.sensitivities[1] / 10, abs=5e-4)
    comparison = sweep.comparison_table()
    assert [row[0] for row in comparison.rows] == [1, 10, 100]
    assert float(comparison.rows[0][3]) == pytest.approx(
        sweep.histogram_level[0] / sweep.from_histogram[0].mean, abs=0.05
    )


def test_the_histogram_error_grows_like_the_root_of_the_universe():
    universes = universe_size_sweep(2000, [16, 256, 4096], num_queries=20, epsilon=1.0, trials=100, rng=3)
    assert 0.4 <= universes.slope <= 0.6
    assert universes.split_bound == pytest.approx(
        mechanisms.laplace_max_error_bound(k=20, beta=0.05, sensitivity=20, epsilon=1.0, n=2000)
    )
    first, second = str(universes).splitlines()
    assert first == f"measured growth of the histogram's error: |X|^{universes.slope:.2f} (theory: |X|^0.5)"
    assert second == f"K queries with ε/K each: bound {universes.split_bound:.3g} at every |X|"


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda x: counting_query_sweep(x, [0], epsilon=1.0, trials=5), "query_counts"),
        (lambda x: counting_query_sweep(-x, [1], epsilon=1.0, trials=5), "histogram"),
        (lambda x: universe_size_sweep(100, [1.5], num_queries=2, epsilon=1.0, trials=5), "universe_sizes"),
    ],
)
def test_bad_arguments_are_refused_by_name(x, call, name):
    with pytest.raises(ValueError, match=name):
        call(x)
