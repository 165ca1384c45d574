import numpy as np
import pytest

from dpcourse import linear_queries, mechanisms


@pytest.fixture
def secret(rng):
    return rng.integers(0, 2, size=200)


def test_tiny_noise_gives_the_bits_away(secret):
    # answers within E = 0.05·√n on m = 4n queries: at least 95% of the bits in every trial
    result = linear_queries.run_attack(secret, num_queries=800, noise_scale=0.05 * np.sqrt(200), rng=1, trials=10)
    assert np.all(result.fraction_recovered >= 0.95)


def test_dp_scale_noise_stops_the_attack(secret):
    # Lap(m/ε) with ε = 1 makes the m answers 1-DP; recovery is a coin flip: 200 bits × 20 trials,
    # SE of the mean ≈ 0.5/sqrt(4000) ≈ 0.008; allow |mean − ½| ≤ 0.05.
    result = linear_queries.run_attack(
        secret, num_queries=800, noise_scale=800 / 1.0, noise="laplace", rng=2, trials=20
    )
    assert result.mean == pytest.approx(0.5, abs=0.05)


def test_recovery_falls_as_noise_grows(secret):
    means = [
        linear_queries.run_attack(secret, num_queries=800, noise_scale=e * np.sqrt(200), rng=3, trials=10).mean
        for e in (0.1, 1.0, 10.0)
    ]
    assert means[0] > means[1] > means[2]


def test_exact_answers_reconstruct_exactly(secret):
    a = linear_queries.subset_sum_queries(400, 200, rng=4)
    np.testing.assert_array_equal(linear_queries.reconstruct(a, a @ secret), secret)
    pinv = np.linalg.pinv(a)
    both = linear_queries.reconstruct(a, np.stack([a @ secret, a @ (1 - secret)]), pseudo_inverse=pinv)
    np.testing.assert_array_equal(both, np.stack([secret, 1 - secret]))


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda s: linear_queries.run_attack(np.array([0, 2]), num_queries=4, noise_scale=1),
            "secret_bits must contain only 0 and 1",
        ),
        (lambda s: linear_queries.run_attack(s, num_queries=0, noise_scale=1), "num_queries"),
        (
            lambda s: linear_queries.run_attack(s, num_queries=4, noise_scale=-1),
            "noise_scale must be a finite number >= 0",
        ),
        (
            lambda s: linear_queries.run_attack(s, num_queries=4, noise_scale=1, noise="gaussian"),
            "noise must be one of",
        ),
        (lambda s: linear_queries.reconstruct(np.ones((3, 2)), np.ones(4)), "answers must have one entry per query"),
    ],
)
def test_bad_input_is_rejected(secret, call, message):
    with pytest.raises(ValueError, match=message):
        call(secret)


@pytest.mark.parametrize("m, n", [(800, 200), (200, 200), (50, 80), (30, 1)])
def test_pseudo_inverse_is_numpy_s(m, n):
    # the normal equations for full column rank, the SVD otherwise: the same A⁺ either way
    a = linear_queries.subset_sum_queries(m, n, rng=m + n)
    np.testing.assert_allclose(linear_queries.pseudo_inverse(a), np.linalg.pinv(a), rtol=0, atol=1e-9)


def test_pseudo_inverse_of_a_rank_deficient_matrix_falls_back_to_the_svd():
    a = np.ones((20, 5))  # rank 1: AᵀA is singular
    a[:, 1] = 2.0
    np.testing.assert_allclose(linear_queries.pseudo_inverse(a), np.linalg.pinv(a), rtol=0, atol=1e-12)


def test_all_subsets_max_error_is_the_maximum_over_every_subset():
    from itertools import product

    errors = np.random.default_rng(4).normal(size=(3, 8))
    brute = [max(abs(errors[t] @ np.array(s)) for s in product([0, 1], repeat=8)) / 8 for t in range(3)]
    np.testing.assert_allclose(linear_queries.all_subsets_max_error(errors), brute, rtol=1e-12)
    assert np.ndim(linear_queries.all_subsets_max_error(errors[0])) == 0
    with pytest.raises(ValueError, match="errors"):
        linear_queries.all_subsets_max_error(np.zeros((2, 2, 2)))


def test_randomized_response_reports_reach_constant_error_on_all_subsets():
    # raw reports, every bit 1: the worst subset is off by Bin(n, q)/n, mean q = 1/(1 + e^ε); 4000 runs, 5 SE
    ones = np.ones(500, dtype=int)
    for epsilon in (0.5, 1.0, 3.0):
        reports = mechanisms.randomized_response(ones, epsilon=epsilon, rng=5, trials=4000)
        measured = linear_queries.all_subsets_max_error(reports - ones)
        q = mechanisms.rr_reports_all_subsets_error(epsilon=epsilon)
        assert q == pytest.approx(1 / (1 + np.exp(epsilon))) and q < 0.5
        assert abs(measured.mean() - q) < 5 * np.sqrt(q * (1 - q) / 500 / 4000)
        # within a factor 4 of what any DP release must leave, and never below it
        lower = mechanisms.all_subsets_error_lower_bound(epsilon=epsilon)
        assert lower == pytest.approx(q / 4) and measured.mean() > lower
    # mixed bits: max of the two kinds' flips, the larger kind dominating
    assert mechanisms.rr_reports_all_subsets_error(epsilon=1.0, ones_fraction=0.3) == pytest.approx(0.7 / (1 + np.e))
    with pytest.raises(ValueError, match="ones_fraction"):
        mechanisms.rr_reports_all_subsets_error(epsilon=1.0, ones_fraction=1.5)
