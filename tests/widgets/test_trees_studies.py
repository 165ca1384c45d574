import numpy as np
import pytest
from matplotlib.figure import Figure

from dpcourse import linear_queries
from dpcourse.widgets.trees_studies import (
    STRATEGY_BUILDERS,
    branching_study,
    consistency_study,
    gaussian_against_laplace,
    strategy_comparison,
    svd_bound_table,
)


@pytest.fixture(scope="module")
def comparison():
    return strategy_comparison([16, 64], epsilon=1.0, rng=7, trials=200)


def test_least_squares_matches_lsqr_and_the_sum_of_nodes_has_its_exact_error():
    tree = linear_queries.hierarchical_strategy(64)
    x = np.bincount(np.random.default_rng(0).integers(0, 64, size=2000), minlength=64).astype(float)
    study = consistency_study(tree, x, [(0, 0), (5, 50)], epsilon=1.0, trials=4000, rng=1)
    assert study.largest_difference_from_lsqr < 1e-9
    for _, nodes, by_nodes, exact, _ in study.rows:
        assert exact == pytest.approx(2 * tree.l1_sensitivity**2 * nodes)
        assert by_nodes == pytest.approx(exact, rel=0.1)  # 4000 releases: a few per cent
    assert study.rows[1][4] < study.rows[1][2]  # least squares wins on the clumsy interval
    assert "interval" in str(study.table()) and "4000 releases" in str(study.table())


def test_consistency_study_draws_all_releases_at_once_from_the_seed():
    tree = linear_queries.hierarchical_strategy(16)
    x = np.ones(16)
    first = consistency_study(tree, x, [(2, 9)], epsilon=0.5, trials=50, rng=3)
    assert consistency_study(tree, x, [(2, 9)], epsilon=0.5, trials=50, rng=3) == first
    with pytest.raises(ValueError, match="trials"):
        consistency_study(tree, x, [(2, 9)], epsilon=0.5, trials=1, rng=3)


def test_comparison_exact_is_the_formula_and_the_measured_interval_holds_it(comparison):
    for name, build in STRATEGY_BUILDERS.items():
        for i, d in enumerate(comparison.domain_sizes):
            exact = linear_queries.expected_error(linear_queries.all_range_workload(d), build(d), epsilon=1.0)
            assert comparison.exact[name][i] == pytest.approx(exact)
            mean, low, high = comparison.measured[name][i]
            assert low < mean < high and low < 1.2 * exact and high > exact / 1.2
    report = comparison.report().splitlines()
    assert report[0].startswith("exact error inside the measured 99% interval:") and len(report) == 5
    assert report[1].startswith("histogram: exact error grows by")
    table = str(comparison.table())
    assert "binary tree" in table and " vs " in table
    fig = comparison.figure()
    assert isinstance(fig, Figure) and fig.axes[0].get_xlabel() == "domain size d"
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][:4] == [
        f"{n}: exact" for n in STRATEGY_BUILDERS
    ]


def test_the_largest_domain_skips_prefix_and_wavelet():
    # d = 4096 is checked on its rule alone: the prefix and wavelet entries are left out, shown as "—"
    skipped = strategy_comparison([16], epsilon=1.0, rng=0, trials=20)
    assert all(m is not None for values in skipped.measured.values() for m in values)
    with pytest.raises(ValueError, match="trials_at_4096"):
        strategy_comparison([16], epsilon=1.0, rng=0, trials_at_4096=1)


def test_no_strategy_beats_the_svd_lower_bound(comparison):
    table = svd_bound_table(comparison)
    assert len(table.rows) == 2
    for row in table.rows:
        assert all(ratio >= 1 for ratio in row[2:5])  # a lower bound on every strategy's error
        assert row[5] < row[4]  # removing ‖A‖₁²/‖A‖₂² ≥ 1 lowers the wavelet's ratio


def test_branching_study_finds_the_smallest_b_of_each_height():
    study = branching_study((16, 27), epsilon=1.0)
    (row16, row27) = study.table().rows
    assert row16[1] == min(study.errors[16], key=study.errors[16].get)
    assert row27[5] == "2, 3, 6, 27"  # the least b with b^h ≥ 27 for h = 5, 3, 2, 1 (b = 4 and 5 still need 3 levels)
    assert study.report().splitlines()[0].endswith("pairs") and len(study.report().splitlines()) == 1
    assert study.figure().axes[0].get_xlabel() == "branching factor b"


def test_gaussian_factor_grows_with_epsilon_and_trees_break_even_at_epsilon_1():
    lines, table = gaussian_against_laplace(64, epsilon=1.0)
    factors = [float(line.rsplit(": ", 1)[1]) for line in lines.splitlines()]
    assert factors == sorted(factors) and round(factors[1], 2) == 8.92
    rows = {row[0]: row for row in table.rows}
    assert rows["histogram"][4] == 1 and rows["prefix"][4] == pytest.approx(64)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_against_laplace(64, epsilon=0.0)
