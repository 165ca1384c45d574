import numpy as np
import pytest

from dpcourse import mechanisms
from dpcourse.widgets import Panel, format_numbers, laplace_tail_panel, log_slider


@pytest.fixture(scope="module")
def panel():
    return laplace_tail_panel(trials=2000, max_k=200, rng=1, render=False)


def exact_tail_line(fig):
    return next(line for line in fig.axes[0].get_lines() if line.get_label().startswith("exact"))


def test_panel_starts_drawn_with_the_theorem_level(panel):
    v = panel.values()
    assert panel.redraws >= 1
    assert panel.numbers["theorem 3.8 level"] == pytest.approx(
        mechanisms.laplace_max_error_bound(k=v["k"], beta=v["beta"], sensitivity=v["sensitivity"], epsilon=v["epsilon"])
    )


def test_moving_k_redraws_the_figure(panel):
    before = panel.redraws
    old = exact_tail_line(panel.figure).get_ydata().copy()
    panel.controls["k"].value = 7
    assert panel.redraws == before + 1
    new = exact_tail_line(panel.figure).get_ydata()
    assert not np.allclose(old[: len(new)], new[: len(old)])
    assert panel.numbers["theorem 3.8 level"] == pytest.approx(
        mechanisms.laplace_max_error_bound(
            k=7,
            beta=panel.values()["beta"],
            sensitivity=panel.values()["sensitivity"],
            epsilon=panel.values()["epsilon"],
        )
    )


def test_epsilon_rescales_the_measured_error(panel):
    panel.set(k=50, epsilon=1.0)
    mean_at_one = panel.numbers["mean max error"]
    panel.set(epsilon=0.5)
    # the same pre-drawn noise, twice the scale: exactly twice the mean error
    assert panel.numbers["mean max error"] == pytest.approx(2 * mean_at_one, rel=1e-12)


def test_measured_tail_at_the_level_is_near_beta(panel):
    panel.set(k=100, beta=0.1, epsilon=1.0)
    n = panel.numbers
    low, high = n["95% interval"]
    assert (
        low
        <= mechanisms.laplace_max_error_tail(
            n["theorem 3.8 level"], k=100, sensitivity=panel.values()["sensitivity"], epsilon=1.0
        )
        <= high
    )


def test_the_measured_mean_error_is_b_times_the_harmonic_number(panel):
    # the magnitudes are drawn as Exp(1) = |Lap(1)|: the mean of the maximum of k of them is H_k (notebook 01).
    # 2000 trials: the maximum of k exponentials has standard deviation below π/√6 ≈ 1.28, so 5 standard errors
    # of the mean are at most 5·1.28/√2000 ≈ 0.15
    for k in (1, 20, 200):
        panel.set(k=k, epsilon=2.0, sensitivity=1.0)
        exact = mechanisms.laplace_expected_max_error(k=k, sensitivity=1.0, epsilon=2.0)
        assert abs(panel.numbers["mean max error"] - exact) <= 0.15 * 0.5


def test_summary_lists_key_numbers(panel):
    text = panel.summary()
    assert "theorem 3.8 level:" in text and "\nβ: " in text and "P[error ≥ level]" in text  # typeset


def test_rendering_puts_a_png_in_the_output():
    p = laplace_tail_panel(trials=200, max_k=10, rng=0)
    p.controls["epsilon"].value = 2.0
    assert p.redraws == 2 and p.last_redraw_seconds > 0


def test_panel_rejects_unknown_controls(panel):
    with pytest.raises(ValueError, match="unknown control 'delta'"):
        panel.set(delta=0.1)


def test_panel_builder_rejects_bad_arguments():
    with pytest.raises(ValueError, match="trials"):
        laplace_tail_panel(trials=10)


def test_generic_panel_and_number_formatting():
    calls = []

    def draw(fig, *, a):
        calls.append(a)
        fig.add_subplot().plot([0, 1], [0, a])
        return {"a": a, "pair": (a, 2 * a), "label": "x"}

    p = Panel(draw, {"a": log_slider("a", value=1.0, min_exp=-1, max_exp=1)}, render=False)
    p.controls["a"].value = 2.0
    assert calls == [1.0, 2.0]
    assert format_numbers(p.numbers) == "a: 2\npair: [2, 4]\nlabel: x"


# The figures of notebook 01's measurements (dpcourse.linear_queries.histogram_sweeps).


def _labels(fig):
    return sorted(text.get_text() for ax in fig.axes for text in ax.get_legend().get_texts())


def test_the_counting_query_figures_draw_what_the_sweep_measured():
    from dpcourse import linear_queries
    from dpcourse.widgets.laplace import counting_queries_figure, direct_vs_histogram_figure

    x = linear_queries.histogram(np.arange(400) % 16, 16)
    sweep = linear_queries.counting_query_sweep(x, [1, 10], epsilon=1.0, trials=10, rng=0)
    fig = counting_queries_figure(sweep)
    assert _labels(fig) == sorted(
        ["measured mean of max error (95% CI)", "exact mean  b·H_K / n", "Theorem 3.8 level, β = 0.05"]
    )
    exact = next(line for line in fig.axes[0].lines if line.get_label().startswith("exact"))
    np.testing.assert_allclose(exact.get_ydata(), sweep.expected)
    assert "n = 400, ε = 1" in fig.axes[0].get_title()
    both = direct_vs_histogram_figure(sweep)
    assert "noisy histogram: bound, β = 0.05" in _labels(both) and "|X| = 16" in both.axes[0].get_title()


def test_the_universe_figure_shows_the_split_budget_line():
    from dpcourse import linear_queries
    from dpcourse.widgets.laplace import universe_size_figure

    universes = linear_queries.universe_size_sweep(500, [4, 16], num_queries=5, epsilon=1.0, trials=10, rng=0)
    fig = universe_size_figure(universes)
    assert f"K queries, ε/K each: bound {universes.split_bound:.3g} (any |X|)" in _labels(fig)
    assert fig.axes[0].get_ylim()[1] == pytest.approx(2 * universes.split_bound)
