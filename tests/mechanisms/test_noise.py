import numpy as np
import pytest
from scipy import integrate, stats

from dpcourse import mechanisms


# ----- Laplace --------------------------------------------------------------------------
def test_laplace_shapes_and_reproducibility():
    truth = np.array([1.0, 2.0, 3.0])
    assert mechanisms.laplace_mechanism(truth, sensitivity=1, epsilon=1, rng=0).shape == (3,)
    a = mechanisms.laplace_mechanism(truth, sensitivity=1, epsilon=1, rng=0, trials=7)
    b = mechanisms.laplace_mechanism(truth, sensitivity=1, epsilon=1, rng=0, trials=7)
    assert a.shape == (7, 3) and np.array_equal(a, b)


def test_laplace_noise_has_scale_sensitivity_over_epsilon(rng):
    # KS test of 50 000 noise values against Lap(Δ/ε): a correct sampler fails at level 1e-4
    # with probability 1e-4; a scale off by 10% gives a KS distance ~0.02, a p-value < 1e-15.
    sensitivity, epsilon = 3.0, 0.7
    noise = mechanisms.laplace_mechanism(
        np.zeros(50), sensitivity=sensitivity, epsilon=epsilon, rng=rng, trials=1000
    ).ravel()
    assert stats.kstest(noise, stats.laplace(scale=sensitivity / epsilon).cdf).pvalue > 1e-4
    assert stats.kstest(noise, stats.laplace(scale=1.1 * sensitivity / epsilon).cdf).pvalue < 1e-6


def test_laplace_variance_matches_theory(rng):
    # The sample variance of N = 200 000 Laplace draws has relative SE sqrt((κ−1)/N) with
    # excess kurtosis 3, i.e. sqrt(5/N) ≈ 0.5%; allow 5 SE.
    noise = mechanisms.laplace_mechanism(np.zeros(1000), sensitivity=2, epsilon=0.5, rng=rng, trials=200).ravel()
    theory = mechanisms.laplace_variance(sensitivity=2, epsilon=0.5)
    assert noise.var() == pytest.approx(theory, rel=5 * np.sqrt(5 / noise.size))


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(sensitivity=0, epsilon=1), ValueError, "sensitivity must be a finite number > 0"),
        (dict(sensitivity=1, epsilon=-1), ValueError, "epsilon must be a finite number > 0"),
        (dict(sensitivity=1, epsilon=np.nan), ValueError, "epsilon"),
        (dict(sensitivity=1, epsilon=1, trials=0), ValueError, "trials"),
        (dict(sensitivity=1, epsilon=1, rng="x"), TypeError, "rng"),
    ],
)
def test_laplace_rejects_bad_parameters(kwargs, error, message):
    with pytest.raises(error, match=message):
        mechanisms.laplace_mechanism([1.0, 2.0], **kwargs)


def test_laplace_rejects_bad_answers():
    with pytest.raises(ValueError, match="true_answers must be a 0 or 1-dimensional array"):
        mechanisms.laplace_mechanism(np.zeros((2, 2)), sensitivity=1, epsilon=1)
    with pytest.raises(ValueError, match="true_answers must contain only finite numbers"):
        mechanisms.laplace_mechanism([np.inf], sensitivity=1, epsilon=1)


# ----- Gaussian -------------------------------------------------------------------------
def hockey_stick_delta(sigma, l2, epsilon):
    """δ(ε) = ∫ max(0, p(x) − e^ε q(x)) dx for p = N(0, σ²), q = N(Δ, σ²), by quadrature."""

    def integrand(x):
        return max(0.0, stats.norm.pdf(x, 0, sigma) - np.exp(epsilon) * stats.norm.pdf(x, l2, sigma))

    # the integrand is positive exactly left of x* = Δ/2 − εσ²/Δ
    crossing = l2 / 2 - epsilon * sigma**2 / l2
    return integrate.quad(integrand, -np.inf, crossing, epsabs=1e-14, epsrel=1e-10)[0]


@pytest.mark.parametrize("epsilon, delta", [(0.1, 1e-5), (0.5, 1e-6), (1.0, 1e-3), (4.0, 1e-8)])
def test_analytic_sigma_gives_exactly_delta_by_independent_quadrature(epsilon, delta):
    sigma = mechanisms.gaussian_sigma(l2_sensitivity=2.0, epsilon=epsilon, delta=delta)
    assert hockey_stick_delta(sigma, 2.0, epsilon) == pytest.approx(delta, rel=1e-6)
    # a 1% smaller σ must violate (ε, δ)-DP: the calibration is tight, not just safe
    assert hockey_stick_delta(0.99 * sigma, 2.0, epsilon) > delta


def test_classic_sigma_formula_and_domain():
    sigma = mechanisms.gaussian_sigma(l2_sensitivity=3.0, epsilon=0.5, delta=1e-5, calibration="classic")
    assert sigma == pytest.approx(3.0 * np.sqrt(2 * np.log(1.25 / 1e-5)) / 0.5, rel=1e-12)
    with pytest.raises(ValueError, match="epsilon must be < 1 for the classic Gaussian calibration"):
        mechanisms.gaussian_sigma(l2_sensitivity=1, epsilon=1.0, delta=1e-5, calibration="classic")


@pytest.mark.parametrize("epsilon", [0.05, 0.3, 0.9])
def test_analytic_never_needs_more_noise_than_classic(epsilon):
    kw = dict(l2_sensitivity=1.0, epsilon=epsilon, delta=1e-5)
    assert mechanisms.gaussian_sigma(**kw) < mechanisms.gaussian_sigma(**kw, calibration="classic")


def test_gaussian_mechanism_noise_is_normal_with_sigma(rng):
    sigma = mechanisms.gaussian_sigma(l2_sensitivity=1.0, epsilon=0.8, delta=1e-6)
    noise = mechanisms.gaussian_mechanism(
        np.zeros(100), l2_sensitivity=1.0, epsilon=0.8, delta=1e-6, rng=rng, trials=500
    ).ravel()
    assert stats.kstest(noise, stats.norm(scale=sigma).cdf).pvalue > 1e-4
    assert stats.kstest(noise, stats.norm(scale=1.1 * sigma).cdf).pvalue < 1e-6


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(l2_sensitivity=1, epsilon=1, delta=0), r"delta must be a number in the open interval \(0, 1\)"),
        (dict(l2_sensitivity=1, epsilon=1, delta=1), "delta"),
        (dict(l2_sensitivity=-1, epsilon=1, delta=1e-5), "l2_sensitivity must be a finite number > 0"),
        (dict(l2_sensitivity=1, epsilon=0, delta=1e-5), "epsilon"),
        (dict(l2_sensitivity=1, epsilon=1, delta=1e-5, calibration="magic"), "calibration must be one of"),
    ],
)
def test_gaussian_rejects_bad_parameters(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mechanisms.gaussian_sigma(**kwargs)
    with pytest.raises(ValueError, match=message):
        mechanisms.gaussian_mechanism([0.0], **kwargs)


# ----- Randomized response ----------------------------------------------------------------
def test_rr_keep_probability():
    assert mechanisms.rr_keep_probability(np.log(3)) == pytest.approx(0.75)


def test_rr_flips_with_probability_one_minus_p(rng):
    # 400 000 reports; the flip frequency has SE sqrt(p(1−p)/N) ≈ 7e-4; allow 5 SE.
    bits = rng.integers(0, 2, size=2000)
    reports = mechanisms.randomized_response(bits, epsilon=1.0, rng=rng, trials=200)
    assert reports.shape == (200, 2000) and reports.dtype == np.int8
    p = mechanisms.rr_keep_probability(1.0)
    flips = np.mean(reports != bits)
    assert flips == pytest.approx(1 - p, abs=5 * np.sqrt(p * (1 - p) / reports.size))


def test_rr_debias_is_unbiased_per_value():
    eps = 0.7
    p = mechanisms.rr_keep_probability(eps)
    one, zero = mechanisms.rr_debias([1, 0], epsilon=eps)
    # E[x̂ | x = 1] = p·x̂(1) + (1 − p)·x̂(0) = 1, and E[x̂ | x = 0] = 0
    assert p * one + (1 - p) * zero == pytest.approx(1.0)
    assert (1 - p) * one + p * zero == pytest.approx(0.0, abs=1e-12)
    assert one - zero == pytest.approx((np.exp(eps) + 1) / (np.exp(eps) - 1))


def test_rr_estimate_is_unbiased_with_the_stated_variance(rng):
    # 4000 estimates: the mean has SE sqrt(var/4000); the sample variance has relative
    # SE ≈ sqrt(2/3999) ≈ 2.2% (near-normal estimates); allow 5 SE for each.
    n, eps, trials = 500, 0.5, 4000
    bits = (rng.random(n) < 0.3).astype(int)
    estimates = mechanisms.rr_estimate(
        mechanisms.randomized_response(bits, epsilon=eps, rng=rng, trials=trials), epsilon=eps
    )
    var = mechanisms.rr_proportion_variance(n=n, epsilon=eps)
    assert var == pytest.approx(np.exp(eps) / (n * (np.exp(eps) - 1) ** 2))
    assert estimates.mean() == pytest.approx(bits.mean(), abs=5 * np.sqrt(var / trials))
    assert estimates.var(ddof=1) == pytest.approx(var, rel=5 * np.sqrt(2 / (trials - 1)))


def test_rr_single_estimate_is_a_float():
    assert isinstance(mechanisms.rr_estimate(np.array([1, 0, 1]), epsilon=1.0), float)


def test_rr_rejects_non_binary_input_and_bad_epsilon():
    with pytest.raises(ValueError, match="bits must contain only 0 and 1"):
        mechanisms.randomized_response([0, 1, 3], epsilon=1)
    with pytest.raises(ValueError, match="reports must contain only 0 and 1"):
        mechanisms.rr_estimate([0.5], epsilon=1)
    with pytest.raises(ValueError, match="epsilon"):
        mechanisms.randomized_response([0, 1], epsilon=0)


def test_k_randomized_response_keeps_with_p_and_debiasing_is_unbiased():
    # 4 categories, 2000 people, 400 trials: each debiased count's mean over trials has standard error
    # sd/√400 with sd ≤ √(n)/(p − q) (a sum of n bounded reports); 5 standard errors is the tolerance.
    from dpcourse.mechanisms import k_randomized_response, k_rr_debias_counts, k_rr_probabilities

    values = np.repeat(np.arange(4), [200, 400, 600, 800])
    p, q = k_rr_probabilities(epsilon=1.0, categories=4)
    assert np.isclose(p / q, np.e) and np.isclose(p + 3 * q, 1.0)
    reports = k_randomized_response(values, epsilon=1.0, categories=4, rng=7, trials=400)
    assert reports.shape == (400, 2000) and reports.min() >= 0 and reports.max() <= 3
    kept = (reports == values).mean()
    assert abs(kept - p) < 5 * np.sqrt(p * (1 - p) / reports.size)
    counts = (reports[:, :, None] == np.arange(4)).sum(axis=1)
    estimates = np.array([k_rr_debias_counts(row, epsilon=1.0) for row in counts])
    tolerance = 5 * np.sqrt(2000) / (p - q) / np.sqrt(400)
    assert np.all(np.abs(estimates.mean(axis=0) - [200, 400, 600, 800]) < tolerance)
    with pytest.raises(ValueError, match="values"):
        k_randomized_response([0, 4], epsilon=1.0, categories=4)
    with pytest.raises(ValueError, match="categories"):
        k_rr_probabilities(epsilon=1.0, categories=1)
