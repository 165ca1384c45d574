import pytest

from dpcourse.widgets import reconstruction_panel, release_comparison_panel


@pytest.fixture(scope="module")
def comparison():
    return release_comparison_panel(num_types=16, max_queries=100, trials=20, render=False)


def test_comparison_panel_shows_every_method(comparison):
    # by the names the notebook's text uses (issue 39: one word per thing, no identifiers in what a student reads)
    assert {key.split(":")[0] for key in comparison.numbers} == {
        "randomized response",
        "Laplace per query",
        "noisy table",
        "Gaussian (analytic)",
    }


def test_more_privacy_means_more_error(comparison):
    comparison.set(epsilon=1.0)
    before = dict(comparison.numbers)
    comparison.set(epsilon=0.2)
    for method in ("Laplace per query", "noisy table", "Gaussian (analytic)", "randomized response"):
        key = f"{method}: max error at |Q| = 100"
        assert comparison.numbers[key] > before[key]
        assert comparison.numbers[f"{method}: bound"] > before[f"{method}: bound"]


def test_methods_can_be_hidden(comparison):
    comparison.set(methods=("laplace",))
    assert all(key.startswith("Laplace per query:") for key in comparison.numbers)
    assert len(comparison.figure.axes[0].lines) > 0
    comparison.set(methods=("randomized_response", "laplace", "laplace_histogram", "gaussian"))


def test_reconstruction_panel_reacts_to_noise():
    panel = reconstruction_panel(n=60, trials=3, render=False)
    panel.set(noise=0.02)
    assert panel.numbers["fraction recovered at current E"] >= 0.95
    panel.set(noise=10.0)
    assert panel.numbers["fraction recovered at current E"] < 0.8
    panel.set(queries_per_person=2.0)
    assert panel.numbers["m"] == 120


# The figures of notebook 02's measurements (dpcourse.linear_queries.comparisons), out of the notebook's cells.


def _labels(fig):
    """The legend's entries, sorted (matplotlib lists error bars after lines)."""
    return sorted(text.get_text() for ax in fig.axes for text in ax.get_legend().get_texts())


def test_query_count_figure_shows_both_releases_and_their_bounds():
    from dpcourse import linear_queries
    from dpcourse.widgets.rr_vs_laplace import query_count_figure

    population = linear_queries.make_population(500, 8, rng=0)
    queries = linear_queries.random_type_queries(10, 8, rng=1)
    sweep = linear_queries.rr_query_count_sweep(population, queries, [1, 10], epsilon=1.0, trials=5, rng=2)
    fig = query_count_figure(sweep)
    assert _labels(fig) == sorted(
        [
            "one report per person: measured",
            "Hoeffding + union bound",
            "|Q| unrelated bits, ε/|Q| each: measured",
            "its bound",
        ]
    )
    assert fig.axes[0].get_title() == "randomized response, n = 500, ε = 1"


def test_gaussian_vs_laplace_figure_draws_the_exact_errors():
    from dpcourse import mechanisms
    from dpcourse.widgets.rr_vs_laplace import gaussian_vs_laplace_figure

    fig = gaussian_vs_laplace_figure(n=100, epsilon=0.5, delta=1e-6, max_queries=50)
    laplace = fig.axes[0].lines[0]
    k, mse = laplace.get_data()
    assert k[0] == 1 and k[-1] == 50
    assert mse[-1] == pytest.approx(mechanisms.laplace_variance(sensitivity=50 / 100, epsilon=0.5))
    with pytest.raises(ValueError, match="max_queries"):
        gaussian_vs_laplace_figure(n=100, epsilon=0.5, delta=1e-6, max_queries=1)


def test_table_size_and_crossover_figures_label_what_they_show():
    from dpcourse import linear_queries
    from dpcourse.widgets.rr_vs_laplace import crossover_figure, table_size_figure

    sizes = linear_queries.table_size_sweep(200, [4, 16], num_queries=5, epsilon=1.0, trials=5, rng=0)
    assert _labels(table_size_figure(sizes)) == sorted(["noisy table, |Q| = 5: measured", "bound, β = 0.05"])
    queries = linear_queries.random_type_queries(20, 8, rng=1)
    crossing = linear_queries.crossover_sweep(queries, [100, 1000], epsilon=1.0, trials=5, rng=2)
    fig = crossover_figure(crossing)
    assert "randomized response, n = 1,000" in _labels(fig) and len(fig.axes[0].lines) == 6
