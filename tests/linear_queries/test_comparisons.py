"""Notebook 02's measurements (``dpcourse.linear_queries.comparisons``): what each sweep measures, and its lines."""

import numpy as np
import pytest

from dpcourse import linear_queries, mechanisms
from dpcourse.linear_queries import (
    attack_sweep,
    crossover_sweep,
    release_variances,
    rr_query_count_sweep,
    table_size_sweep,
)


@pytest.fixture(scope="module")
def population():
    return linear_queries.make_population(2000, 16, rng=1)


@pytest.fixture(scope="module")
def queries():
    return linear_queries.random_type_queries(60, 16, rng=2)


def test_one_report_serves_every_query_and_a_split_budget_does_not(population, queries):
    sweep = rr_query_count_sweep(population, queries, [1, 10, 60], epsilon=1.0, trials=50, rng=3)
    one, split = [s.mean for s in sweep.one_report], [s.mean for s in sweep.split_budget]
    assert one[-1] / one[0] < 4 and split[-1] / split[0] > 20  # √log|Q| against |Q|
    assert all(m <= b for m, b in zip(one, sweep.bound, strict=True))  # Hoeffding holds on the mean
    assert sweep.bound_split[1] == pytest.approx(
        mechanisms.rr_max_error_bound(n=2000, num_queries=10, beta=0.05, epsilon=0.1)
    )
    lines = str(sweep).splitlines()
    assert len(lines) == 3 and lines[1].startswith("|Q| =   10: one report ")


def test_the_sweep_draws_as_the_notebook_did(population, queries):
    # the notebook's loop, written out: the sweep takes the same draws from the generator, in the same order
    rng = np.random.default_rng(5)
    W = linear_queries.MatrixWorkload(queries.matrix()[:10])
    answers = linear_queries.randomized_response_answers(population, W, epsilon=1.0, rng=rng, trials=20)
    expected = mechanisms.max_abs_error(answers, population.answers(W)).mean()
    sweep = rr_query_count_sweep(population, queries, [10], epsilon=1.0, trials=20, rng=np.random.default_rng(5))
    assert sweep.one_report[0].mean == expected


def test_release_variances_match_their_exact_values(population, queries):
    table = release_variances(population, queries, [5, 50], epsilon=1.0, trials=3000, rng=4)
    assert "3000 runs" in table.caption and "n = 2,000" in table.caption
    for _k, lap, lap_exact, tab, tab_exact in table.rows:
        assert lap == pytest.approx(lap_exact, rel=0.15) and tab == pytest.approx(tab_exact, rel=0.2)
    assert table.rows[1][2] / table.rows[0][2] > 10  # Laplace per query: Δ₁ grows with |Q|


def test_the_table_error_grows_like_the_root_of_its_size():
    sweep = table_size_sweep(2000, [4, 64, 1024], num_queries=20, epsilon=1.0, trials=100, rng=6)
    assert 0.35 <= sweep.slope <= 0.65
    assert all(s.mean <= b for s, b in zip(sweep.error, sweep.bound, strict=True))
    assert str(sweep) == f"measured growth: G^{sweep.slope:.2f} (theory: G^0.5)"


def test_randomized_response_overtakes_laplace_later_for_larger_n(queries):
    sweep = crossover_sweep(queries, [200, 20_000], epsilon=1.0, trials=30, rng=7)
    assert sweep.randomized_response.shape == sweep.laplace.shape == (2, 60)
    small, large = sweep.crossover
    assert small < large  # more people: Laplace per query stays ahead for more queries
    wins = sweep.randomized_response[0] < sweep.laplace[0]
    assert wins[small - 1] and not wins[: small - 1].any()
    assert str(sweep).splitlines()[0].startswith("n =     200: randomized response beats Laplace per query from")


def test_the_attack_recovers_accurate_answers_and_not_dp_ones():
    secret = np.random.default_rng(8).integers(0, 2, size=60)
    sweep = attack_sweep(secret, [0.01, 10], num_queries=240, epsilon=1.0, trials=4, rng=9)
    assert sweep.recovered[0] == 1.0 and sweep.recovered[1] < 0.8
    assert abs(sweep.dp_recovered - 0.5) < 0.2 and sweep.dp_noise_level == pytest.approx(240 / np.sqrt(60))
    lines = str(sweep).splitlines()
    assert lines[0] == "E =  0.01·√n: 1.000 of the bits recovered"
    assert (
        lines[-1] == f"what any 1-DP release allows per bit: at most {mechanisms.dp_bit_guess_bound(epsilon=1.0):.3f}"
    )


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda p, q: rr_query_count_sweep(p, q, [0, 5], epsilon=1.0, trials=5), "query_counts"),
        (lambda p, q: rr_query_count_sweep(p, q, [61], epsilon=1.0, trials=5), "query_counts"),
        (lambda p, q: release_variances(p, q, [2.5], epsilon=1.0, trials=5), "query_counts"),
        (lambda p, q: table_size_sweep(100, [4], num_queries=3, epsilon=1.0, trials=1), "trials"),
        (lambda p, q: crossover_sweep(q, [], epsilon=1.0, trials=3), "sizes"),
        (lambda p, q: attack_sweep([0, 1], [0.0], num_queries=4, epsilon=1.0, trials=1), "noise_levels"),
    ],
)
def test_bad_grids_are_refused_by_name(population, queries, call, name):
    with pytest.raises(ValueError, match=name):
        call(population, queries)


def test_rr_proportion_variances_match_the_formula():
    bits = (np.random.default_rng(10).random(500) < 0.4).astype(int)
    table = linear_queries.rr_proportion_variances(bits, [0.5, 2.0], trials=4000, rng=11)
    assert table.caption == f"500 people, true proportion {bits.mean():.3f}, 4000 runs per ε"
    for epsilon, measured, exact, mean in table.rows:
        assert exact == pytest.approx(mechanisms.rr_proportion_variance(n=500, epsilon=epsilon))
        assert measured == pytest.approx(exact, rel=0.1)  # relative SE of a variance over 4000: 2.2%
        assert abs(mean - bits.mean()) <= 5 * np.sqrt(exact / 4000)


def test_gaussian_at_root_n_queries_falls_below_one_over_root_n():
    sweep = linear_queries.gaussian_root_n_errors([10**3, 10**5, 10**7], epsilon=1.0, delta=1e-6, trials=50, rng=12)
    ratios = [row[4] for row in sweep.table().rows]
    assert ratios == sorted(ratios, reverse=True) and ratios[-1] < 1 < ratios[0]
    assert -0.3 <= sweep.slope <= -0.1 and str(sweep) == f"the ratio falls like n^{sweep.slope:.2f}"
    assert sweep.table().caption == "k = √n queries, ε = 1, δ = 1e-6"


def test_type_queries_max_errors_follow_their_approximation():
    table = linear_queries.type_queries_max_errors(16, [1000, 100_000], epsilon=1.0, trials=300, rng=13)
    for n, mean, p95, approx, half, root, ratio in table.rows:
        assert approx == pytest.approx(mechanisms.noisy_table_all_queries_mean_error(num_types=16, epsilon=1.0, n=n))
        assert mean == pytest.approx(approx, rel=0.1) and p95 > mean and half == 16 / (2 * n)
        assert ratio == pytest.approx(root / mean)


def test_all_subsets_errors_put_randomized_response_below_a_half():
    table = linear_queries.all_subsets_errors(300, [0.5, 2.0], trials=50, rng=14)
    assert "n = 300, every bit 1" in table.caption
    for epsilon, lower, rr_measured, rr_exact, cell_measured in table.rows:
        assert lower == pytest.approx(mechanisms.all_subsets_error_lower_bound(epsilon=epsilon))
        assert rr_measured == pytest.approx(rr_exact, abs=0.02) and rr_measured < 0.5
        assert cell_measured >= 1 / (2 * epsilon) * 0.9  # at least E Σ Z⁺ / n = 1/(2ε), up to sampling
