"""Notebook 06's comparison with the baselines: the bounds, where they cross, how they grow, the sweeps."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from dpcourse import mechanisms, pmw
from dpcourse.widgets import pmw_sweeps


def test_bound_lines_are_the_packages_bounds_at_epsilon_1_beta_0_05():
    lines = pmw_sweeps.bound_lines(1e6, 300, 2**10)
    assert lines["pmw"] == pmw.pmw_notes_error_bound(n=1e6, epsilon=1.0, domain_size=2**10, num_queries=300, beta=0.05)
    assert lines["laplace"] == mechanisms.composed_laplace_max_error_bound(
        num_queries=300, beta=0.05, epsilon=1.0, n=1e6
    )
    assert lines["laplace_histogram"] == pmw.replace_one_histogram_max_error_bound(
        domain_size=2**10, num_queries=300, beta=0.05, epsilon=1.0, n=1e6
    )


def test_bound_crossing_is_where_pmw_first_wins():
    k = pmw_sweeps.bound_crossing("num_queries", "laplace", lo=10, hi=1e7, n=1e6, domain_size=2**10)
    grid = np.geomspace(10, 1e7, 4000)
    before = grid[np.searchsorted(grid, k) - 1]
    at, below = pmw_sweeps.bound_lines(1e6, int(k), 2**10), pmw_sweeps.bound_lines(1e6, int(before), 2**10)
    assert at["pmw"] < at["laplace"] and below["pmw"] >= below["laplace"]
    # PMW never wins against the histogram on a small universe: NaN
    assert np.isnan(pmw_sweeps.bound_crossing("domain_size", "laplace_histogram", lo=4, hi=64, n=1e7, num_queries=300))
    with pytest.raises(ValueError, match="varies"):
        pmw_sweeps.bound_crossing("epsilon", "laplace", lo=1, hi=2)
    with pytest.raises(ValueError, match="lo must be below hi"):
        pmw_sweeps.bound_crossing("n", "laplace", lo=10, hi=1, num_queries=10, domain_size=16)


def test_bound_slopes_match_the_bounds_leading_terms():
    laplace = pmw_sweeps.bound_slopes("laplace")
    assert laplace["n"] == pytest.approx(-1.0, abs=1e-6) and laplace["|X|"] == pytest.approx(0.0, abs=1e-6)
    assert pmw_sweeps.bound_slopes("pmw")["n"] == pytest.approx(-1 / 3, abs=1e-6)
    assert pmw_sweeps.bound_slopes("laplace_histogram")["|X|"] == pytest.approx(0.5, abs=0.01)
    with pytest.raises(ValueError, match="method"):
        pmw_sweeps.bound_slopes("pmw_slides")


def test_a_sweep_tables_and_draws_what_it_measured():
    base = pmw.product_histogram(10**9, 4, rng=5) / 10**9
    stream = pmw.conjunction_workload(40, 4, width=2, rng=6)
    results = tuple(pmw.release_errors(base * n, stream, epsilon=1.0, rng=7) for n in (1e5, 1e7))
    sweep = pmw_sweeps.Sweep("n", np.array([1e5, 1e7]), results, {"num_queries": 40, "domain_size": 16})
    table = sweep.table()
    assert table.caption == "max |error| as n grows" and [row[1] for row in table.rows] == [r.pmw for r in results]
    log_sweep = pmw_sweeps.Sweep("domain_size", np.array([16.0, 64.0]), results, {"n": 1e7, "num_queries": 40})
    assert [row[0] for row in log_sweep.table().rows] == ["4", "6"]  # log2|X| in the first column
    pmw_sweeps.BaselineSweeps((sweep, sweep, log_sweep)).show()
    axes = plt.gcf().axes
    assert axes[0].get_xlabel() == "n (|Q| = 40, |X| = 2⁴)" and axes[2].get_xlabel() == "|X| (n = 10⁷, |Q| = 40)"
    measured = next(line for line in axes[0].get_lines() if line.get_label() == "Private MW (measured)")
    assert list(measured.get_ydata()) == [r.pmw for r in results]
    plt.close("all")
