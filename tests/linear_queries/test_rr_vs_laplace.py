import numpy as np
import pytest

from dpcourse import linear_queries, mechanisms
from dpcourse.linear_queries import MatrixWorkload


@pytest.fixture
def setting():
    population = linear_queries.make_population(2000, 16, rng=1)
    workload = linear_queries.random_type_queries(30, 16, rng=2)
    return population, workload


def test_population_and_queries(setting):
    population, workload = setting
    assert population.n == 2000 and population.num_types == 16
    assert np.all(population.ones <= population.type_sizes)
    assert set(np.unique(workload.matrix())) <= {0.0, 1.0}
    np.testing.assert_allclose(population.answers(workload), workload.matrix() @ population.ones / 2000)


def test_rr_sufficient_statistics_match_per_person_simulation(rng):
    # The binomial shortcut and n individual reports must give the same distribution of answers:
    # compare means and variances over 3000 trials each (SE of a variance ≈ var·sqrt(2/3000) ≈ 2.6%).
    population = linear_queries.make_population(300, 4, rng=5)
    workload = linear_queries.random_type_queries(3, 4, rng=6)
    eps, trials = 0.8, 3000
    shortcut = linear_queries.randomized_response_answers(population, workload, epsilon=eps, rng=rng, trials=trials)
    types = np.repeat(np.arange(4), population.type_sizes)
    bits = np.concatenate(
        [np.r_[np.ones(c), np.zeros(s - c)] for c, s in zip(population.ones, population.type_sizes, strict=True)]
    )
    reports = mechanisms.randomized_response(bits, epsilon=eps, rng=rng, trials=trials)
    per_person = mechanisms.rr_debias(reports, epsilon=eps) @ workload.matrix()[:, types].T / population.n
    truth = population.answers(workload)
    var = shortcut.var(axis=0)
    np.testing.assert_allclose(shortcut.mean(axis=0), truth, atol=5 * np.sqrt(var.max() / trials))
    np.testing.assert_allclose(per_person.mean(axis=0), truth, atol=5 * np.sqrt(var.max() / trials))
    np.testing.assert_allclose(per_person.var(axis=0), var, rtol=5 * np.sqrt(2 / trials) * 1.5)


def test_rr_answer_variance_matches_theory(setting, rng):
    population, workload = setting
    answers = linear_queries.randomized_response_answers(population, workload, epsilon=0.5, rng=rng, trials=4000)
    people = workload.answer(population.type_sizes)
    exact = [mechanisms.rr_answer_variance(people_in_query=p, n=population.n, epsilon=0.5) for p in people]
    np.testing.assert_allclose(answers.var(axis=0, ddof=1), exact, rtol=5 * np.sqrt(2 / 3999))


def test_rr_max_error_bound_holds(setting, rng):
    population, workload = setting
    trials, beta = 4000, 0.05
    answers = linear_queries.randomized_response_answers(population, workload, epsilon=1.0, rng=rng, trials=trials)
    errors = np.abs(answers - population.answers(workload)).max(axis=1)
    bound = mechanisms.rr_max_error_bound(n=population.n, num_queries=workload.num_queries, beta=beta, epsilon=1.0)
    assert np.mean(errors >= bound) <= beta  # Hoeffding is loose: the true rate is far below β


def test_rr_range_and_hoeffding_constant():
    eps = 0.3
    assert mechanisms.rr_report_range(eps) == pytest.approx((np.exp(eps) + 1) / (np.exp(eps) - 1))
    one, zero = mechanisms.rr_debias([1, 0], epsilon=eps)
    assert one - zero == pytest.approx(mechanisms.rr_report_range(eps))


@pytest.mark.parametrize("method", ["laplace", "laplace_histogram", "gaussian"])
def test_central_methods_have_their_exact_variance(setting, rng, method):
    population, workload = setting
    trials = 4000
    answers = linear_queries.release(method, population, workload, epsilon=0.7, delta=1e-6, rng=rng, trials=trials)
    n = population.n
    if method == "laplace":
        exact = np.full(
            workload.num_queries, mechanisms.laplace_variance(sensitivity=workload.l1_sensitivity / n, epsilon=0.7)
        )
        kurtosis_excess = 3.0
    elif method == "laplace_histogram":
        exact = workload.answer(np.ones(16)) * mechanisms.laplace_variance(sensitivity=1, epsilon=0.7) / n**2
        kurtosis_excess = 3.0
    else:
        sigma = mechanisms.gaussian_sigma(l2_sensitivity=workload.l2_sensitivity / n, epsilon=0.7, delta=1e-6)
        exact = np.full(workload.num_queries, sigma**2)
        kurtosis_excess = 0.0
    # relative SE of a sample variance: sqrt((2 + excess kurtosis)/T); allow 5 SE
    rtol = 5 * np.sqrt((2 + kurtosis_excess) / trials)
    np.testing.assert_allclose(answers.var(axis=0, ddof=1), exact, rtol=rtol)
    np.testing.assert_allclose(
        answers.mean(axis=0), population.answers(workload), atol=5 * np.sqrt(exact.max() / trials)
    )


def test_split_budget_rr_is_unbiased_with_k_fold_budget(rng):
    means = np.array([0.2, 0.5, 0.9, 0.4])
    answers = linear_queries.rr_split_budget_answers(means, 1000, epsilon=2.0, rng=rng, trials=4000)
    var = mechanisms.rr_proportion_variance(n=1000, epsilon=2.0 / 4)
    np.testing.assert_allclose(answers.mean(axis=0), means, atol=5 * np.sqrt(var / 4000))
    np.testing.assert_allclose(answers.var(axis=0, ddof=1), var, rtol=5 * np.sqrt(2 / 3999))


def test_all_subsets_max_error_is_the_maximum_over_every_subset():
    # brute force over all 2⁶ type subsets, with the same seed (hence the same table noise)
    population = linear_queries.make_population(500, 6, rng=3)
    subsets = (np.arange(2**6)[:, None] >> np.arange(6)) & 1
    every = MatrixWorkload(subsets.astype(float))
    brute = np.abs(
        linear_queries.histogram_answers(population, every, epsilon=0.7, rng=11, trials=50) - population.answers(every)
    ).max(axis=1)
    np.testing.assert_allclose(
        linear_queries.histogram_all_subsets_max_error(population, epsilon=0.7, rng=11, trials=50), brute, rtol=1e-12
    )
    assert np.ndim(linear_queries.histogram_all_subsets_max_error(population, epsilon=0.7, rng=11)) == 0


def test_all_subsets_max_error_is_about_g_over_2_eps_n():
    # the maximum is (Σ|Z| + |ΣZ|)/2: mean G/(2ε) + E|ΣZ|/2 ≈ G/(2ε) + √(G/π)/ε, i.e. the factor
    # 1 + 2/√(πG) ≈ 1.14 over G/(2ε) = 3.2e-3 (normalised). One maximum has sd ≤ sd Σ|Z| + sd|ΣZ|/2
    # ≤ (√G + √(2G)/2)/ε ≈ 14/ε, so the mean of 2000 has SE ≤ 14/(√2000·n) ≈ 3.2e-5; the window
    # [1, 1 + 1.5/√G]·G/(2εn) = [3.2e-3, 3.8e-3] is more than 4 SE from the expected 3.65e-3 on each side
    population = linear_queries.make_population(10_000, 64, rng=4)
    worst = linear_queries.histogram_all_subsets_max_error(population, epsilon=1.0, rng=5, trials=2000)
    scale = 64 / (2 * 1.0 * 10_000)
    assert scale < worst.mean() < scale * (1 + 1.5 / np.sqrt(64))


def test_gaussian_laplace_crossover():
    assert mechanisms.gaussian_laplace_crossover(epsilon=0.5, delta=1e-6, calibration="classic") == pytest.approx(
        np.log(1.25e6)
    )
    k = mechanisms.gaussian_laplace_crossover(epsilon=0.5, delta=1e-6)
    assert k < np.log(1.25e6)  # the analytic calibration wins earlier
    sigma = mechanisms.gaussian_sigma(l2_sensitivity=np.sqrt(k), epsilon=0.5, delta=1e-6)
    assert sigma**2 == pytest.approx(mechanisms.laplace_variance(sensitivity=k, epsilon=0.5))


def test_single_release_shapes(setting):
    population, workload = setting
    for method in linear_queries.METHODS:
        assert linear_queries.release(method, population, workload, epsilon=1.0, delta=1e-5, rng=0).shape == (30,)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda p, w: linear_queries.release("magic", p, w, epsilon=1.0), "method must be one of"),
        (lambda p, w: linear_queries.release("gaussian", p, w, epsilon=1.0), "delta must be a real number"),
        (
            lambda p, w: linear_queries.laplace_answers(p, MatrixWorkload(np.ones((2, 3))), epsilon=1.0),
            "one column per type",
        ),
        (lambda p, w: linear_queries.randomized_response_answers(p, w, epsilon=0), "epsilon"),
        (lambda p, w: linear_queries.make_population(0, 3), "n must be an integer"),
        (lambda p, w: linear_queries.random_type_queries(3, 0), "num_types"),
        (
            lambda p, w: linear_queries.rr_split_budget_answers([[0.5]], 10, epsilon=1),
            "bit_means must be a 1-dimensional",
        ),
    ],
)
def test_bad_input_is_rejected(setting, call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(*setting)


def test_prefix_max_errors_are_the_releases_of_each_prefix(setting, rng):
    population, workload = setting
    # randomized response: the running maximum of one release's errors, prefix by prefix
    answers = linear_queries.randomized_response_answers(population, workload, epsilon=0.7, rng=3, trials=4)
    running = linear_queries.prefix_max_errors(
        "randomized_response", population, workload, epsilon=0.7, rng=3, trials=4
    )
    errors = np.abs(answers - population.answers(workload))
    for k in (1, 7, 30):
        np.testing.assert_allclose(running[:, k - 1], errors[:, :k].max(axis=1))
    assert np.all(np.diff(running, axis=1) >= 0)
    # Laplace: column k − 1 has the distribution of max |error| of a fresh release of the first k queries;
    # compare means over 4000 trials (SE of a mean of maxima of Laplace ≈ scale·1.3/√4000: allow 5 SE)
    laplace = linear_queries.prefix_max_errors("laplace", population, workload, epsilon=0.7, rng=rng, trials=4000)
    for k in (1, 5, 30):
        prefix = MatrixWorkload(workload.matrix()[:k])
        fresh = linear_queries.laplace_answers(population, prefix, epsilon=0.7, rng=rng, trials=4000)
        fresh_max = np.abs(fresh - population.answers(prefix)).max(axis=1)
        scale = prefix.l1_sensitivity / (population.n * 0.7)
        assert abs(laplace[:, k - 1].mean() - fresh_max.mean()) < 5 * 1.5 * scale * np.sqrt(2 / 4000)
        expected = mechanisms.laplace_expected_max_error(
            k=k, sensitivity=prefix.l1_sensitivity, epsilon=0.7, n=population.n
        )
        assert laplace[:, k - 1].mean() == pytest.approx(expected, rel=0.1)
    assert linear_queries.prefix_max_errors("laplace", population, workload, epsilon=1.0, rng=1).shape == (30,)
    with pytest.raises(ValueError, match="method"):
        linear_queries.prefix_max_errors("gaussian", population, workload, epsilon=1.0)
