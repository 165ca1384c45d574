import numpy as np
import pytest

from dpcourse import linear_queries
from dpcourse.widgets import tree_panel
from dpcourse.widgets.trees import interval_error_by_length, strategy_by_name


@pytest.fixture(scope="module")
def panel():
    return tree_panel(render=False)


def test_curves_average_the_exact_per_interval_error():
    # mean over intervals of each length, times the noise variance, averaged with the interval
    # counts as weights, is the all-range workload's exact error per query
    d = 16
    lengths, unit, sensitivity = interval_error_by_length("tree", d, 2, True)
    per_length_count = d - lengths + 1
    total = 2 * sensitivity**2 * np.sum(unit * per_length_count) / per_length_count.sum()
    exact = linear_queries.expected_error(
        linear_queries.all_range_workload(d), linear_queries.hierarchical_strategy(d), epsilon=1.0
    )
    assert total == pytest.approx(exact, rel=1e-9)


def test_epsilon_rescales_the_curve(panel):
    panel.set(d=64, strategy="tree", consistency=True, epsilon=1.0)
    before = panel.numbers["tree: error at length 1"]
    panel.set(epsilon=0.5)
    assert panel.numbers["tree: error at length 1"] == pytest.approx(4 * before)


def test_consistency_lowers_the_tree_error(panel):
    panel.set(d=256, strategy="tree", consistency=False, epsilon=1.0)
    without = panel.numbers["tree: error at length d"]
    panel.set(consistency=True)
    assert panel.numbers["tree: error at length d"] < without


def test_strategy_and_interval_controls(panel):
    panel.set(strategy="wavelet")
    assert "wavelet: error at length 1" in panel.numbers
    panel.set(interval=(0, 255), branching=2)
    assert panel.numbers["nodes in the decomposition"] == 1
    with pytest.raises(ValueError, match="strategy must be one of"):
        strategy_by_name("random", 8)


def test_shipped_table_matches_a_fresh_computation(tmp_path):
    # the table is exact: regenerating the small sizes gives the same numbers to rounding, and a
    # large entry agrees with the formula computed directly
    from dpcourse.widgets import trees

    fresh = trees.write_table(tmp_path / "t.npz", domain_sizes=(16, 64))
    with np.load(fresh) as new, np.load(trees.TABLE) as shipped:
        assert set(new.files) <= set(shipped.files)
        for key in new.files:
            np.testing.assert_allclose(shipped[key], new[key], rtol=1e-10, atol=0)
        expected = {
            f"{n}-{d}-{b if n == 'tree' else 0}"
            for d in trees.DOMAIN_SIZES
            for n in trees.STRATEGIES
            for b in (trees.BRANCHINGS if n == "tree" else (2,))
            if b <= d
        }
        assert set(shipped.files) == expected
        mean, sensitivity = trees._least_squares_curve("tree", 256, 4)
        np.testing.assert_allclose(shipped["tree-256-4"], np.concatenate([[sensitivity], mean]), rtol=1e-10)


def test_interval_follows_d(panel):
    panel.set(d=256, interval=(100, 200))
    panel.set(d=16)
    assert panel.controls["interval"].max == 15
    assert panel.controls["interval"].value == (6, 11)  # the same share of [0, d)
    assert panel.numbers["nodes in the decomposition"] >= 1
    panel.set(d=1024)
    assert panel.controls["interval"].max == 1023
    s, t = panel.controls["interval"].value
    assert 0 <= s <= t <= 1023


def test_the_reference_curve_and_the_strategy_are_called_histogram_as_in_the_notebook(panel):
    # issue 39: the legend, the dropdown and the key numbers said "identity" where notebook 03 says "histogram"
    from dpcourse.widgets.trees import STRATEGIES

    panel.set(d=64, strategy="tree", consistency=True, epsilon=1.0)
    legend = [text.get_text() for text in panel.figure.axes[0].get_legend().get_texts()]
    assert legend[0] == "histogram" and "histogram: error at length 1" in panel.numbers
    assert "histogram" in STRATEGIES and "identity" not in STRATEGIES
    assert "identity" not in panel.controls["strategy"].options
    panel.set(strategy="histogram")
    assert panel.numbers["histogram: error at length d"] == pytest.approx(2 * 64, rel=1e-9)  # Δ₁ = 1: 2·length
