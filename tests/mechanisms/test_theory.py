import numpy as np
import pytest

from dpcourse import linear_queries, mechanisms, pmw


def clopper_pearson_level(count, trials, level=1e-6):
    return mechanisms.empirical_tail(np.r_[np.ones(count), np.zeros(trials - count)], [0.5], confidence=1 - level)


@pytest.mark.parametrize("k, beta, epsilon", [(1, 0.05, 1.0), (100, 0.05, 0.5), (1000, 0.01, 2.0)])
def test_theorem_3_8_coverage(rng, k, beta, epsilon):
    # P[‖Z‖∞ ≥ level] must be ≤ β: the Clopper–Pearson lower bound at level 1e-6 (a
    # false alarm once in a million) must lie below β. With the k left out of ln(k/β)
    # the failure rate at k = 100 would be ≈ 1 − (1 − β)^100 ≈ 0.99 and this test fails.
    trials = 20_000
    level = mechanisms.laplace_max_error_bound(k=k, beta=beta, sensitivity=1.0, epsilon=epsilon)
    noise = mechanisms.laplace_mechanism(np.zeros(k), sensitivity=1.0, epsilon=epsilon, rng=rng, trials=trials)
    failures = int(np.sum(mechanisms.max_abs_error(noise, 0.0) >= level))
    assert clopper_pearson_level(failures, trials).low[0] <= beta
    # ... and the exact tail at that level is within the 1e-6 interval too
    exact = mechanisms.laplace_max_error_tail(level, k=k, sensitivity=1.0, epsilon=epsilon)
    ci = clopper_pearson_level(failures, trials)
    assert ci.low[0] <= exact <= ci.high[0]


def test_theorem_3_8_level_formula():
    assert mechanisms.laplace_max_error_bound(k=20, beta=0.1, sensitivity=3, epsilon=0.5) == pytest.approx(
        np.log(200) * 6
    )
    assert mechanisms.laplace_max_error_bound(k=20, beta=0.1, sensitivity=3, epsilon=0.5, n=6) == pytest.approx(
        np.log(200)
    )


def test_exact_tail_against_monte_carlo_at_many_levels(rng):
    # 40 000 trials: each tail estimate has SE ≤ sqrt(1/4/40 000) = 0.0025; allow 5 SE.
    k, b = 30, 2.0
    noise = rng.laplace(0, b, size=(40_000, k))
    errors = np.abs(noise).max(axis=1)
    levels = np.linspace(0, 25, 11)
    measured = mechanisms.empirical_tail(errors, levels).probability
    exact = mechanisms.laplace_max_error_tail(levels, k=k, sensitivity=b, epsilon=1.0)
    np.testing.assert_allclose(measured, exact, atol=5 * 0.0025)
    assert exact[0] == 1.0


def test_quantile_inverts_the_exact_tail_and_sits_below_the_bound():
    for k, beta in [(1, 0.05), (10, 0.2), (1000, 1e-4)]:
        q = mechanisms.laplace_max_error_quantile(k=k, beta=beta, sensitivity=1.5, epsilon=0.3)
        assert mechanisms.laplace_max_error_tail(q, k=k, sensitivity=1.5, epsilon=0.3) == pytest.approx(beta, rel=1e-9)
        assert q <= mechanisms.laplace_max_error_bound(k=k, beta=beta, sensitivity=1.5, epsilon=0.3) + 1e-12


def test_expected_max_error_is_b_times_harmonic_number(rng):
    # mean of 20 000 maxima; SE = std/sqrt(N) with std ≤ b·π/√6 (max of exponentials); allow 5 SE.
    k, b = 50, 0.5
    assert mechanisms.laplace_expected_max_error(k=k, sensitivity=b, epsilon=1) == pytest.approx(
        b * np.sum(1 / np.arange(1, k + 1))
    )
    maxima = np.abs(rng.laplace(0, b, size=(20_000, k))).max(axis=1)
    se = b * np.pi / np.sqrt(6) / np.sqrt(maxima.size)
    assert maxima.mean() == pytest.approx(
        mechanisms.laplace_expected_max_error(k=k, sensitivity=b, epsilon=1), abs=5 * se
    )


def test_composition_bound_and_sample_complexity_are_inverse():
    kw = dict(num_queries=100, beta=0.05, epsilon=0.5)
    assert mechanisms.composed_laplace_max_error_bound(**kw, n=1000) == pytest.approx(
        100 * np.log(100 / 0.05) / (1000 * 0.5)
    )
    n = mechanisms.composed_laplace_sample_complexity(num_queries=100, alpha=0.01, beta=0.05, epsilon=0.5)
    assert mechanisms.composed_laplace_max_error_bound(**kw, n=n) == pytest.approx(0.01)


@pytest.mark.parametrize("a", [np.ones(64), np.r_[np.ones(4), np.zeros(60)], np.linspace(0, 1, 200)])
def test_linear_combination_tail_bound_holds(rng, a):
    # The failure frequency must not be significantly above β (Clopper–Pearson, level 1e-6).
    beta, b, trials = 0.01, 1.5, 20_000
    t = mechanisms.laplace_linear_combination_tail_bound(
        l2_norm=np.linalg.norm(a), linf_norm=np.abs(a).max(), scale=b, beta=beta
    )
    sums = rng.laplace(0, b, size=(trials, a.size)) @ a
    failures = int(np.sum(np.abs(sums) >= t))
    assert clopper_pearson_level(failures, trials).low[0] <= beta


def test_noisy_histogram_bound_grows_like_sqrt_domain():
    kw = dict(num_queries=100, beta=0.05, epsilon=1.0)
    small = mechanisms.noisy_histogram_max_error_bound(domain_size=1024, **kw)
    large = mechanisms.noisy_histogram_max_error_bound(domain_size=4096, **kw)
    assert large / small == pytest.approx(2.0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mechanisms.laplace_max_error_bound(k=0, beta=0.05, sensitivity=1, epsilon=1),
        lambda: mechanisms.laplace_max_error_bound(k=3, beta=1.0, sensitivity=1, epsilon=1),
        lambda: mechanisms.laplace_max_error_tail([-1.0], k=3, sensitivity=1, epsilon=1),
        lambda: mechanisms.laplace_max_error_quantile(k=3, beta=0, sensitivity=1, epsilon=1),
        lambda: mechanisms.laplace_expected_max_error(k=3, sensitivity=0, epsilon=1),
        lambda: mechanisms.composed_laplace_sample_complexity(num_queries=3, alpha=0, beta=0.1, epsilon=1),
        lambda: mechanisms.laplace_linear_combination_tail_bound(l2_norm=1, linf_norm=0, scale=1, beta=0.1),
        lambda: mechanisms.noisy_histogram_max_error_bound(domain_size=0, num_queries=1, beta=0.1, epsilon=1),
        lambda: mechanisms.rr_proportion_variance(n=0, epsilon=1),
        lambda: mechanisms.laplace_max_error_bound(k=3, beta=0.1, sensitivity=1, epsilon=1, n=0),
    ],
)
def test_bounds_reject_bad_input(call):
    with pytest.raises(ValueError):
        call()


# --- composition (notebook 06) ---
@pytest.mark.parametrize(
    "k, epsilon0, delta", [(10, 0.1, 1e-5), (100, 0.01, 1e-6), (1000, 0.005, 1e-6), (50, 0.2, 1e-3)]
)
def test_advanced_composition_holds_against_the_exact_optimal_composition(k, epsilon0, delta):
    # Theorem 3.20: k ε₀-DP mechanisms are (ε_adv, δ)-DP. The worst case (k-fold randomized
    # response) has δ(ε_adv) ≤ δ exactly; a formula with √(k ln(1/δ)) instead of √(2k ln(1/δ))
    # fails this for the larger k.
    eps_adv = mechanisms.advanced_composition_epsilon(epsilon0=epsilon0, k=k, delta=delta)
    assert mechanisms.optimal_composition_delta(eps_adv, epsilon0=epsilon0, k=k) <= delta
    too_small = epsilon0 * np.sqrt(k * np.log(1 / delta)) + k * epsilon0 * np.expm1(epsilon0)
    if k >= 100:
        assert mechanisms.optimal_composition_delta(too_small, epsilon0=epsilon0, k=k) > delta


def test_optimal_composition_delta_edge_cases():
    # one randomized response: δ(0) is its total variation tanh(ε₀/2); basic composition kε₀ has δ = 0
    assert mechanisms.optimal_composition_delta(0.0, epsilon0=0.3, k=1) == pytest.approx(np.tanh(0.15))
    assert mechanisms.optimal_composition_delta(5 * 0.3, epsilon0=0.3, k=5) == 0.0
    e0 = mechanisms.advanced_composition_per_query_epsilon(epsilon=1.0, k=1000, delta=1e-6)
    assert mechanisms.advanced_composition_epsilon(epsilon0=e0, k=1000, delta=1e-6) == pytest.approx(1.0)


def test_laplace_advanced_composition_bound():
    e0 = mechanisms.advanced_composition_per_query_epsilon(epsilon=1.0, k=3000, delta=1e-6)
    assert mechanisms.laplace_advanced_composition_max_error_bound(
        num_queries=3000, beta=0.05, epsilon=1.0, delta=1e-6, n=1e6
    ) == pytest.approx(np.log(3000 / 0.05) / (1e6 * e0))
    # it beats basic composition once k is large
    assert mechanisms.laplace_advanced_composition_max_error_bound(
        num_queries=3000, beta=0.05, epsilon=1.0, delta=1e-6
    ) < mechanisms.composed_laplace_max_error_bound(num_queries=3000, beta=0.05, epsilon=1.0)


def test_noisy_table_all_queries_mean_error_against_simulation():

    # 4000 runs: 5 SE of the sample mean, plus 1% for the normal approximation of E|ΣZ| at G = 64
    for g in (16, 64):
        worst = linear_queries.histogram_all_subsets_max_error(
            linear_queries.make_population(5000, g, rng=g), epsilon=0.5, rng=7, trials=4000
        )
        expected = mechanisms.noisy_table_all_queries_mean_error(num_types=g, epsilon=0.5, n=5000)
        assert abs(worst.mean() - expected) <= 5 * worst.std(ddof=1) / np.sqrt(worst.size) + 0.01 * expected
    assert mechanisms.noisy_table_all_queries_mean_error(num_types=64, epsilon=1.0) == pytest.approx(
        32 + np.sqrt(64 / np.pi)
    )


def test_dp_bit_guess_bound():
    # randomized response attains it: keep the bit with probability e^ε/(1 + e^ε), guess the report
    for epsilon in (0.1, 1.0, 3.0):
        assert mechanisms.dp_bit_guess_bound(epsilon=epsilon) == pytest.approx(mechanisms.rr_keep_probability(epsilon))
    assert mechanisms.dp_bit_guess_bound(epsilon=1.0, delta=0.01) == pytest.approx((np.e + 0.01) / (1 + np.e))
    with pytest.raises(ValueError, match="epsilon"):
        mechanisms.dp_bit_guess_bound(epsilon=-1)


@pytest.mark.parametrize(
    "n, k, d, delta",
    [
        (1e6, 100, 2**10, 0.0),
        (1e4, 10, 2**4, 0.0),
        (1e9, 5000, 2**20, 0.0),
        (1e7, 300, 2**12, 1e-6),
        (1e3, 3, 4, 1e-9),
        (1e60, 10, 2**10, 0.0),
    ],
)
def test_pmw_dwork_roth_alpha_closed_form_solves_the_fixed_point(n, k, d, delta):
    # the closed form (Lambert W) must return the α with α = R(α): checked against R itself, and
    # against root finding on ln α (the previous implementation)
    from scipy import optimize

    kwargs = dict(n=n, epsilon=1.0, domain_size=d, num_queries=k, beta=0.05, delta=delta)
    alpha = pmw.pmw_dwork_roth_alpha(**kwargs)
    assert pmw.pmw_dwork_roth_requirement(alpha, **kwargs) == pytest.approx(alpha, rel=1e-10)
    gap = lambda u: np.exp(u) - pmw.pmw_dwork_roth_requirement(np.exp(u), **kwargs)  # noqa: E731
    assert alpha == pytest.approx(np.exp(optimize.brentq(gap, -150, 150, xtol=1e-14, rtol=1e-14)), rel=1e-9)


def test_pmw_bound_crosses_each_baseline_once():
    # notebook 06 finds where PMW's bound first beats a baseline by bisection on a 4000-point log grid:
    # that finds the first win only if the wins are False …, then True … on the grid, checked here in full
    def pmw_bound(n, k, d):
        return pmw.pmw_notes_error_bound(n=n, epsilon=1.0, domain_size=d, num_queries=k, beta=0.05)

    cases = [
        (
            np.geomspace(10, 1e7, 4000),
            lambda v: (
                pmw_bound(1e6, int(v), 2**10)
                < mechanisms.composed_laplace_max_error_bound(num_queries=int(v), beta=0.05, epsilon=1.0, n=1e6)
            ),
        ),
        (
            np.geomspace(16, 2.0**60, 4000),
            lambda v: (
                pmw_bound(1e7, 300, int(v))
                < mechanisms.noisy_histogram_max_error_bound(
                    domain_size=int(v), num_queries=300, beta=0.05, epsilon=1.0, n=1e7
                )
            ),
        ),
    ]
    for grid, wins_at in cases:
        wins = np.array([wins_at(v) for v in grid])
        first = int(np.argmax(wins))
        assert wins.any() and not wins[:first].any() and wins[first:].all()


@pytest.mark.parametrize("k", [1, 2, 5, 30, 1000, 10_000])
@pytest.mark.parametrize("epsilon0", [0.01, 0.3])
@pytest.mark.parametrize("delta", [1e-9, 1e-6, 0.01])
def test_optimal_composition_epsilon_inverts_delta_exactly(k, epsilon0, delta):
    eps = mechanisms.optimal_composition_epsilon(delta, epsilon0=epsilon0, k=k)
    if eps == 0.0:
        assert mechanisms.optimal_composition_delta(0.0, epsilon0=epsilon0, k=k) <= delta
        return
    # the crossing itself, to rounding: δ(ε) = δ there, larger just below, smaller just above
    assert mechanisms.optimal_composition_delta(eps, epsilon0=epsilon0, k=k) == pytest.approx(delta, rel=1e-9)
    assert mechanisms.optimal_composition_delta(eps * (1 - 1e-6), epsilon0=epsilon0, k=k) > delta
    assert mechanisms.optimal_composition_delta(eps * (1 + 1e-6), epsilon0=epsilon0, k=k) < delta


def test_advanced_composition_per_query_epsilon_is_the_root():
    # Newton from the right: g(ε₀) = ε to rounding, and any larger ε₀ composes to more than ε
    for epsilon, k, delta in [(1.0, 3000, 1e-6), (0.1, 10, 1e-9), (3.0, 10**6, 0.01), (1.0, 1, 1e-6)]:
        e0 = mechanisms.advanced_composition_per_query_epsilon(epsilon=epsilon, k=k, delta=delta)
        if e0 == epsilon / k:  # basic composition allows more
            assert mechanisms.advanced_composition_epsilon(epsilon0=e0, k=k, delta=delta) >= epsilon
            continue
        assert mechanisms.advanced_composition_epsilon(epsilon0=e0, k=k, delta=delta) == pytest.approx(
            epsilon, rel=1e-12
        )
        assert mechanisms.advanced_composition_epsilon(epsilon0=e0 * (1 + 1e-9), k=k, delta=delta) > epsilon
