import numpy as np
import pytest
from scipy import stats

from dpcourse import mechanisms, svt
from dpcourse.mechanisms import proportion_interval

B, T, N = -np.inf, np.inf, np.nan  # the output codes


def test_above_threshold_matches_its_exact_distribution(rng):
    # 200 000 trials; every outcome's Clopper–Pearson interval at level 1e-6 must contain the exact
    # probability (a false alarm for one of 7 outcomes has probability < 1e-5).
    answers = np.array([0.0, 1.0, -1.0, 2.0, 0.5, 3.0])
    trials = 200_000
    counts = svt.above_threshold(answers, threshold=1.0, epsilon=0.8, rng=rng, trials=trials).outcome_counts()
    low, high = proportion_interval(counts, trials, confidence=1 - 1e-6)
    exact = svt.above_threshold_pmf(answers, threshold=1.0, epsilon=0.8)
    assert np.all((low <= exact) & (exact <= high))


def test_wrong_noise_scale_is_detected_by_the_same_comparison(rng):
    # the same test with halved query noise must fail: it has power, not just a wide interval
    answers = np.array([0.0, 1.0, -1.0, 2.0, 0.5, 3.0])
    rho, _ = svt.above_threshold_noise(epsilon=0.8)
    wrong = svt.generalized_above_threshold(
        answers, threshold=1.0, threshold_noise=rho, query_noise=stats.laplace(scale=2 / 0.8), rng=rng, trials=200_000
    )
    low, high = proportion_interval(wrong.outcome_counts(), 200_000, confidence=1 - 1e-6)
    exact = svt.above_threshold_pmf(answers, threshold=1.0, epsilon=0.8)
    assert not np.all((low <= exact) & (exact <= high))


def test_calibration_is_two_and_four_delta_over_epsilon():
    rho, nu = svt.above_threshold_noise(epsilon=0.5, sensitivity=3.0)
    assert rho.std() == pytest.approx(np.sqrt(2) * 12.0)
    assert nu.std() == pytest.approx(np.sqrt(2) * 24.0)


def test_result_encodings():
    r = svt.AboveThresholdResult(np.array([2, svt.NONE_ABOVE, 0]), 3)
    assert r.outcome.tolist() == [2, 3, 0]
    assert r.outcome_counts().tolist() == [1, 0, 1, 1]
    np.testing.assert_array_equal(r.outputs(), [[B, B, T], [B, B, B], [T, N, N]])


def test_single_run_and_certain_outcomes():
    # with ε huge the noise is negligible and the outcome is certain
    r = svt.above_threshold([0.0, 5.0, 10.0], threshold=4.0, epsilon=1e6, rng=0)
    assert int(r.first_above) == 1
    np.testing.assert_array_equal(r.outputs(), [B, T, N])
    none = svt.above_threshold([0.0, 1.0], threshold=4.0, epsilon=1e6, rng=0, trials=5)
    assert np.all(none.first_above == svt.NONE_ABOVE)


def test_no_noise_variant_is_deterministic():
    r = svt.generalized_above_threshold(
        [0.0, 2.0, 5.0], threshold=1.5, threshold_noise=None, query_noise=None, trials=3
    )
    assert r.first_above.tolist() == [1, 1, 1]


def test_sparse_vector_finds_c_discoveries_and_halts():
    answers = np.r_[np.zeros(4), np.full(6, 100.0)]
    r = svt.sparse_vector(answers, threshold=50.0, epsilon=1e5, c=3, rng=1, trials=2)
    np.testing.assert_array_equal(r.outputs, [[B, B, B, B, T, T, T, N, N, N]] * 2)
    assert r.num_above.tolist() == [3, 3]


def test_sparse_vector_with_c_one_is_above_threshold_at_epsilon(rng):
    # c = 1: SparseVector is AboveThreshold with the full ε; compare outcome frequencies with the exact pmf
    answers = np.array([0.0, 1.0, 2.0])
    r = svt.sparse_vector(answers, threshold=1.0, epsilon=1.0, c=1, rng=rng, trials=100_000)
    first = np.where((r.outputs == svt.TOP).any(axis=1), (r.outputs == svt.TOP).argmax(axis=1), 3)
    low, high = proportion_interval(np.bincount(first, minlength=4), 100_000, confidence=1 - 1e-6)
    exact = svt.above_threshold_pmf(answers, threshold=1.0, epsilon=1.0)
    assert np.all((low <= exact) & (exact <= high))


def test_sparse_vector_scales():
    assert svt.sparse_vector_scales(epsilon=2.0, c=4) == (4.0, 8.0)
    sigma, _ = svt.sparse_vector_scales(epsilon=1.0, c=4, delta=1e-6)
    assert sigma == pytest.approx(np.sqrt(32 * 4 * np.log(1e6)))


def test_numeric_sparse_budget_split_and_values(rng):
    threshold_scale, query_scale, numeric_scale = svt.numeric_sparse_scales(epsilon=0.9, c=2)
    # comparisons: SparseVector with 8ε/9 = 0.8; values: Lap(cΔ/(ε/9)) = Lap(20)
    assert (threshold_scale, query_scale) == pytest.approx((5.0, 10.0))
    assert numeric_scale == pytest.approx(20.0)
    answers = np.r_[np.zeros(3), np.full(3, 1e4)]
    r = svt.numeric_sparse(answers, threshold=5e3, epsilon=0.9, c=2, rng=rng, trials=20_000)
    assert np.all(np.isnan(r.values[r.outputs != svt.TOP]))
    released = r.values[r.outputs == svt.TOP] - 1e4
    assert released.size == 40_000
    assert stats.kstest(released, stats.laplace(scale=20.0).cdf).pvalue > 1e-4


def test_online_above_threshold_halts_and_refuses():
    at = svt.OnlineAboveThreshold(threshold=10.0, epsilon=1e6, rng=0)
    assert [at.test(v) for v in (0.0, 3.0, 20.0)] == [False, False, True]
    assert at.halted and at.answered == 3 and at.privacy_spent == 1e6
    with pytest.raises(svt.HaltedError, match="halted"):
        at.test(0.0)


def test_online_above_threshold_matches_the_batch_distribution():
    # online runs (a loop is the point of the online form) against the exact pmf, 5 SE per outcome.
    # 12 000 runs: enough that 5 SE is at most half the largest pmf change of each miscalibration
    # tried (query noise 2/ε: 0.050, threshold noise 1/ε: 0.038, none: 0.062, scales swapped: 0.13;
    # the 1/ε threshold needs 10 300 runs), so each of those bugs fails this test; 20 000 was 1.7× that.
    runs = 12_000
    answers = [0.0, 1.0, 2.0]
    counts = np.zeros(4)
    rng = np.random.default_rng(3)
    for _ in range(runs):
        at = svt.OnlineAboveThreshold(threshold=1.0, epsilon=1.0, rng=rng)
        k = next((i for i, a in enumerate(answers) if at.test(a)), 3)
        counts[k] += 1
    exact = svt.above_threshold_pmf(answers, threshold=1.0, epsilon=1.0)
    assert np.all(np.abs(counts / runs - exact) <= 5 * np.sqrt(exact * (1 - exact) / runs))


def test_numeric_sparse_with_delta_follows_dwork_and_roth():
    # Dwork & Roth, Algorithm 3 with δ > 0: ε₁ = √512/(√512 + 1)·ε, ε₂ = 2ε/(√512 + 1), and
    # σ(ε′) = √(32c ln(2/δ))/ε′ (each part gets δ/2). The δ = 0 split (8ε/9) would give a
    # threshold scale 9√512/(8(√512 + 1)) ≈ 1.077 times larger: this test fails with it.
    c, eps, delta = 3, 0.9, 1e-6
    threshold_scale, query_scale, numeric_scale = svt.numeric_sparse_scales(epsilon=eps, c=c, delta=delta)
    sigma = lambda e: np.sqrt(32 * c * np.log(2 / delta)) / e  # noqa: E731
    eps1, eps2 = np.sqrt(512) / (np.sqrt(512) + 1) * eps, 2 * eps / (np.sqrt(512) + 1)
    assert threshold_scale == pytest.approx(sigma(eps1), rel=1e-12)
    assert query_scale == pytest.approx(2 * sigma(eps1), rel=1e-12)
    assert numeric_scale == pytest.approx(sigma(eps2), rel=1e-12)
    assert svt.numeric_sparse_share(delta) == pytest.approx(1 / (1 + 16 * np.sqrt(2)))
    assert svt.numeric_sparse_share(0.0) == pytest.approx(1 / 9)
    # the δ = 0 calibration keeps 8/9 : 2/9
    assert svt.numeric_sparse_scales(epsilon=eps, c=c)[0] == pytest.approx(2 * c / (8 * eps / 9))


def test_numeric_sparse_bound_is_the_one_its_calibration_supports():
    # Theorem 3.28's α is AboveThreshold's 4σ₁(ln k + ln(2/β′)) at β′ = β/(2c), σ₁ the threshold
    # scale the mechanism really uses; with δ > 0 it is (√512 + 1)√(c ln(2/δ))(ln k + ln(4c/β))/ε,
    # the constant of the slides' 2 + 32√2 = 2(1 + √512). Fails with the old 8/9 split.
    k, c, beta, eps = 500, 6, 0.05, 0.7
    for delta in (0.0, 1e-6):
        sigma1 = svt.numeric_sparse_scales(epsilon=eps, c=c, delta=delta)[0]
        alpha = svt.numeric_sparse_accuracy_bound(
            num_queries=k, c=c, beta=beta, epsilon=eps, delta=delta, part="comparisons"
        )
        assert alpha == pytest.approx(4 * sigma1 * (np.log(k) + np.log(4 * c / beta)), rel=1e-12)
    written = (np.sqrt(512) + 1) * np.sqrt(c * np.log(2 / 1e-6)) * (np.log(k) + np.log(4 * c / beta)) / eps
    assert alpha == pytest.approx(written, rel=1e-12)
    assert 2 * (1 + np.sqrt(512)) == pytest.approx(2 + 32 * np.sqrt(2))
    assert svt.numeric_sparse_accuracy_bound(num_queries=k, c=c, beta=beta, epsilon=eps) == pytest.approx(
        9 * c * (np.log(k) + np.log(4 * c / beta)) / eps
    )


def test_sparse_vector_bound_is_theorem_3_26():
    k, c, beta, eps = 300, 4, 0.05, 1.0
    assert svt.sparse_vector_accuracy_bound(num_queries=k, c=c, beta=beta, epsilon=eps) == pytest.approx(
        8 * c * (np.log(k) + np.log(2 * c / beta)) / eps
    )
    assert svt.sparse_vector_accuracy_bound(num_queries=k, c=c, beta=beta, epsilon=eps, delta=1e-6) == pytest.approx(
        np.sqrt(512 * c * np.log(1e6)) * (np.log(k) + np.log(2 * c / beta)) / eps
    )
    # and it is 4σ(ln k + ln(2c/β)) with σ the mechanism's threshold scale
    for delta in (0.0, 1e-6):
        sigma = svt.sparse_vector_scales(epsilon=eps, c=c, delta=delta)[0]
        assert svt.sparse_vector_accuracy_bound(
            num_queries=k, c=c, beta=beta, epsilon=eps, delta=delta
        ) == pytest.approx(4 * sigma * (np.log(k) + np.log(2 * c / beta)))


def test_sparse_vector_with_delta_checks_advanced_composition():
    # Dwork & Roth state the δ > 0 calibration for ε < 1; the package checks Theorem 3.20's
    # inequality itself: fine at ε = 1 and δ = 1e-6, refused for large ε with large δ.
    svt.sparse_vector_scales(epsilon=1.0, c=5, delta=1e-6)
    svt.sparse_vector_scales(epsilon=3.0, c=5, delta=1e-6)
    with pytest.raises(ValueError, match="epsilon.*advanced"):
        svt.sparse_vector_scales(epsilon=20.0, c=1, delta=0.1)
    with pytest.raises(ValueError, match="epsilon"):
        svt.sparse_vector([0.0], threshold=0, epsilon=20.0, c=1, delta=0.1)
    # at the boundary the composed ε is exactly what the check compares
    sigma, _ = svt.sparse_vector_scales(epsilon=1.0, c=5, delta=1e-6)
    composed = mechanisms.advanced_composition_epsilon(epsilon0=2 / sigma, k=5, delta=1e-6)
    assert 0.5 < composed <= 1.0


@pytest.mark.parametrize("numeric, delta", [(False, 0.0), (False, 1e-6), (True, 0.0)])
def test_sparse_accuracy_margins_agree_with_running_the_algorithm(numeric, delta):
    # At α = the 0.9-quantile of the margins, running the mechanism on the hard input must be
    # correct in 90% of trials. Different noise draws, so this is statistical: 20 000 trials,
    # binomial standard error √(0.09/20 000) ≈ 0.0021 for both; 6 combined standard errors.
    k, c, eps, trials = 40, 4, 1.0, 20_000
    margins = svt.sparse_accuracy_margins(k, c=c, epsilon=eps, delta=delta, numeric=numeric, rng=3, trials=trials)
    alpha = float(np.quantile(margins, 0.9))
    high = np.linspace(0, k, c + 1).round().astype(int)[1:] - 1
    answers = np.full(k, -alpha)
    answers[high] = alpha
    run = (svt.numeric_sparse if numeric else svt.sparse_vector)(
        answers, threshold=0.0, epsilon=eps, c=c, delta=delta, rng=4, trials=trials
    )
    expected = np.full(k, svt.BOTTOM)
    expected[high] = svt.TOP
    correct = np.all(run.outputs == expected, axis=1)
    if numeric:
        correct &= np.all(np.abs(run.values[:, high] - alpha) <= alpha, axis=1)
    assert abs(correct.mean() - 0.9) < 6 * np.sqrt(2 * 0.09 / trials)


def test_numeric_sparse_released_values_exceed_theorem_3_28_with_delta():
    # The released values' noise Lap(σ(ε₂)) alone: its 0.95-quantile of the max over c values is
    # σ₂ ln(c/(1 − 0.95^{1/c}))… ≈ σ₂ ln(20c); with δ > 0 it is above Theorem 3.28's α. Measured
    # with 20 000 trials (the quantile's relative sampling error is about 1%), margin 5%.
    k, c, beta, eps, delta = 300, 4, 0.05, 1.0, 1e-6
    margins = svt.sparse_accuracy_margins(k, c=c, epsilon=eps, delta=delta, numeric=True, rng=5, trials=20_000)
    measured = np.quantile(margins, 1 - beta)
    theorem = svt.numeric_sparse_accuracy_bound(
        num_queries=k, c=c, beta=beta, epsilon=eps, delta=delta, part="comparisons"
    )
    level = svt.numeric_sparse_accuracy_bound(num_queries=k, c=c, beta=beta, epsilon=eps, delta=delta)
    assert measured > 1.05 * theorem
    assert measured < level


def test_online_numeric_sparse_counts_both_parts_of_the_budget():
    ns = svt.OnlineNumericSparse(threshold=0.0, epsilon=9.0, c=3, rng=0)
    assert ns.privacy_spent == pytest.approx(8 / 3)  # one comparison run: (8/9)·ε/c
    ns.test(1e9)
    assert ns.privacy_spent == pytest.approx(2 * 8 / 3 + 1 / 3)  # two runs started, one value released


def test_online_sparse_vector_accounts_privacy_per_run():
    sv = svt.OnlineSparseVector(threshold=0.0, epsilon=3.0, c=3, rng=0)
    assert sv.privacy_spent == pytest.approx(1.0)
    sv.test(1e9)
    assert sv.privacy_spent == pytest.approx(2.0) and not sv.halted
    sv.test(1e9), sv.test(1e9)
    assert sv.halted and sv.privacy_spent == pytest.approx(3.0)
    with pytest.raises(svt.HaltedError):
        sv.test(0.0)


def test_online_numeric_sparse_returns_none_or_a_noisy_value():
    ns = svt.OnlineNumericSparse(threshold=0.0, epsilon=9.0, c=2, rng=0)
    assert ns.test(-1e9) is None
    value = ns.test(1e9)
    assert isinstance(value, float) and abs(value - 1e9) < 100


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: svt.above_threshold([0.0], threshold=0, epsilon=0), ValueError, "epsilon"),
        (lambda: svt.above_threshold([0.0], threshold=0, epsilon=1, sensitivity=-1), ValueError, "sensitivity"),
        (lambda: svt.above_threshold([[0.0]], threshold=0, epsilon=1), ValueError, "answers must be a 1-dimensional"),
        (
            lambda: svt.above_threshold([0.0, 1.0], threshold=[0, 1, 2], epsilon=1),
            ValueError,
            "threshold must be one number or one per query",
        ),
        (lambda: svt.above_threshold([np.nan], threshold=0, epsilon=1), ValueError, "finite"),
        (lambda: svt.above_threshold([0.0], threshold=0, epsilon=1, trials=0), ValueError, "trials"),
        (lambda: svt.sparse_vector([0.0], threshold=0, epsilon=1, c=0), ValueError, "c must be an integer"),
        (lambda: svt.sparse_vector([0.0], threshold=0, epsilon=1, c=1, delta=2), ValueError, "delta"),
        (
            lambda: svt.numeric_sparse([0.0], threshold=0, epsilon=1, c=1, numeric_share=1.0),
            ValueError,
            "numeric_share",
        ),
        (
            lambda: svt.OnlineAboveThreshold(threshold=[1, 2], epsilon=1),
            ValueError,
            "threshold must be a 0-dimensional",
        ),
        (lambda: svt.OnlineSparseVector(threshold=0, epsilon=1, c=1.5), TypeError, "c must be an integer"),
        (lambda: svt.OnlineAboveThreshold(threshold=0, epsilon=1, rng=0).test("x"), TypeError, "value"),
    ],
)
def test_bad_input_is_rejected(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_accuracy_margins_agree_with_the_exact_probability_of_the_correct_answer():
    # Trial j is correct at α iff α > margin_j, so Pr[margin < α] must be the exact probability of the
    # correct outcome ⊥^{k−1}⊤ on the hard input (k − 1 answers at T − α, one at T + α). 5 standard errors of
    # a proportion over 40,000 trials: a wrong maximum (e.g. U^n instead of U^{1/n}) is off by far more.
    k, epsilon, trials = 20, 1.0, 40_000
    margins = svt.accuracy_margins(k, epsilon=epsilon, rng=7, trials=trials)
    block = svt.sparse_accuracy_margins(k, c=1, epsilon=epsilon, rng=8, trials=trials)
    for alpha in (5.0, 12.0, 20.0):
        exact = svt.above_threshold_pmf(np.r_[np.full(k - 1, -alpha), alpha], threshold=0.0, epsilon=epsilon)[k - 1]
        tolerance = 5 * np.sqrt(exact * (1 - exact) / trials)
        assert abs(np.mean(margins < alpha) - exact) < tolerance
        assert abs(np.mean(block < alpha) - exact) < tolerance  # SparseVector with c = 1 is AboveThreshold


def test_laplace_maximum_has_the_distribution_of_the_largest_draw():
    # CDF of the largest of n Laplace draws is Fⁿ: Kolmogorov–Smirnov at level 1e-6 against it.
    for n, scale in ((1, 2.0), (7, 0.5), (500, 3.0)):
        draws = mechanisms.laplace_maximum(n, scale=scale, rng=n, size=20_000)
        assert stats.kstest(draws, lambda x, n=n, scale=scale: stats.laplace.cdf(x, scale=scale) ** n).pvalue > 1e-6
    assert np.all(mechanisms.laplace_maximum([0, 2], scale=1.0, rng=0, size=(3, 2))[:, 0] == -np.inf)
    with pytest.raises(ValueError, match="count"):
        mechanisms.laplace_maximum(1.5, scale=1.0)
