import numpy as np
import pytest
from scipy import stats

from dpcourse import audit, svt
from dpcourse.experiments import proportion_interval


def test_above_threshold_matches_its_exact_distribution(rng):
    # 200 000 trials; every outcome's Clopper–Pearson interval at level 1e-6 must contain the exact
    # probability (a false alarm for one of 7 outcomes has probability < 1e-5).
    answers = np.array([0.0, 1.0, -1.0, 2.0, 0.5, 3.0])
    trials = 200_000
    counts = svt.above_threshold(answers, threshold=1.0, epsilon=0.8, rng=rng, trials=trials).outcome_counts()
    low, high = proportion_interval(counts, trials, confidence=1 - 1e-6)
    exact = audit.above_threshold_pmf(answers, threshold=1.0, epsilon=0.8)
    assert np.all((low <= exact) & (exact <= high))


def test_wrong_noise_scale_is_detected_by_the_same_comparison(rng):
    # the same test with halved query noise must fail: it has power, not just a wide interval
    answers = np.array([0.0, 1.0, -1.0, 2.0, 0.5, 3.0])
    rho, _ = svt.above_threshold_noise(epsilon=0.8)
    wrong = svt.generalized_above_threshold(answers, threshold=1.0, threshold_noise=rho,
                                            query_noise=stats.laplace(scale=2 / 0.8), rng=rng, trials=200_000)
    low, high = proportion_interval(wrong.outcome_counts(), 200_000, confidence=1 - 1e-6)
    exact = audit.above_threshold_pmf(answers, threshold=1.0, epsilon=0.8)
    assert not np.all((low <= exact) & (exact <= high))


def test_calibration_is_two_and_four_delta_over_epsilon():
    rho, nu = svt.above_threshold_noise(epsilon=0.5, sensitivity=3.0)
    assert rho.std() == pytest.approx(np.sqrt(2) * 12.0)
    assert nu.std() == pytest.approx(np.sqrt(2) * 24.0)


def test_result_encodings():
    r = svt.AboveThresholdResult(np.array([2, svt.NONE_ABOVE, 0]), 3)
    assert r.outcome.tolist() == [2, 3, 0]
    assert r.outcome_counts().tolist() == [1, 0, 1, 1]
    assert r.outputs().tolist() == [[0, 0, 1], [0, 0, 0], [1, -1, -1]]


def test_single_run_and_certain_outcomes():
    # with ε huge the noise is negligible and the outcome is certain
    r = svt.above_threshold([0.0, 5.0, 10.0], threshold=4.0, epsilon=1e6, rng=0)
    assert int(r.first_above) == 1 and r.outputs().tolist() == [0, 1, -1]
    none = svt.above_threshold([0.0, 1.0], threshold=4.0, epsilon=1e6, rng=0, trials=5)
    assert np.all(none.first_above == svt.NONE_ABOVE)


def test_no_noise_variant_is_deterministic():
    r = svt.generalized_above_threshold([0.0, 2.0, 5.0], threshold=1.5, threshold_noise=None, query_noise=None, trials=3)
    assert r.first_above.tolist() == [1, 1, 1]


def test_sparse_vector_finds_c_discoveries_and_halts():
    answers = np.r_[np.zeros(4), np.full(6, 100.0)]
    r = svt.sparse_vector(answers, threshold=50.0, epsilon=1e5, c=3, rng=1, trials=2)
    assert r.outputs.tolist() == [[0, 0, 0, 0, 1, 1, 1, -1, -1, -1]] * 2
    assert r.num_above.tolist() == [3, 3]


def test_sparse_vector_with_c_one_is_above_threshold_at_epsilon(rng):
    # c = 1: SparseVector is AboveThreshold with the full ε; compare outcome frequencies with the exact pmf
    answers = np.array([0.0, 1.0, 2.0])
    r = svt.sparse_vector(answers, threshold=1.0, epsilon=1.0, c=1, rng=rng, trials=100_000)
    first = np.where((r.outputs == svt.TOP).any(axis=1), (r.outputs == svt.TOP).argmax(axis=1), 3)
    low, high = proportion_interval(np.bincount(first, minlength=4), 100_000, confidence=1 - 1e-6)
    exact = audit.above_threshold_pmf(answers, threshold=1.0, epsilon=1.0)
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
    # 20 000 online runs (a loop is the point of the online form) against the exact pmf, 5 SE per outcome
    answers = [0.0, 1.0, 2.0]
    counts = np.zeros(4)
    rng = np.random.default_rng(3)
    for _ in range(20_000):
        at = svt.OnlineAboveThreshold(threshold=1.0, epsilon=1.0, rng=rng)
        k = next((i for i, a in enumerate(answers) if at.test(a)), 3)
        counts[k] += 1
    exact = audit.above_threshold_pmf(answers, threshold=1.0, epsilon=1.0)
    assert np.all(np.abs(counts / 20_000 - exact) <= 5 * np.sqrt(exact * (1 - exact) / 20_000))


def test_numeric_sparse_with_delta_follows_dwork_and_roth():
    # σ(ε′) = √(32c ln(2/δ))/ε′: each of the two parts gets δ/2, so the whole is (ε, δ)-DP
    c, eps, delta = 3, 0.9, 1e-6
    threshold_scale, query_scale, numeric_scale = svt.numeric_sparse_scales(epsilon=eps, c=c, delta=delta)
    sigma = lambda e: np.sqrt(32 * c * np.log(2 / delta)) / e  # noqa: E731
    assert threshold_scale == pytest.approx(sigma(8 * eps / 9))
    assert query_scale == pytest.approx(2 * sigma(8 * eps / 9))
    assert numeric_scale == pytest.approx(sigma(2 * eps / 9))


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
        (lambda: svt.above_threshold([0.0, 1.0], threshold=[0, 1, 2], epsilon=1), ValueError, "threshold must be one number or one per query"),
        (lambda: svt.above_threshold([np.nan], threshold=0, epsilon=1), ValueError, "finite"),
        (lambda: svt.above_threshold([0.0], threshold=0, epsilon=1, trials=0), ValueError, "trials"),
        (lambda: svt.sparse_vector([0.0], threshold=0, epsilon=1, c=0), ValueError, "c must be an integer"),
        (lambda: svt.sparse_vector([0.0], threshold=0, epsilon=1, c=1, delta=2), ValueError, "delta"),
        (lambda: svt.numeric_sparse([0.0], threshold=0, epsilon=1, c=1, numeric_share=1.0), ValueError, "numeric_share"),
        (lambda: svt.OnlineAboveThreshold(threshold=[1, 2], epsilon=1), ValueError, "threshold must be a 0-dimensional"),
        (lambda: svt.OnlineSparseVector(threshold=0, epsilon=1, c=1.5), TypeError, "c must be an integer"),
        (lambda: svt.OnlineAboveThreshold(threshold=0, epsilon=1, rng=0).test("x"), TypeError, "value"),
    ],
)
def test_bad_input_is_rejected(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_accuracy_margins_agree_with_running_the_algorithm():
    # Same noise, two ways: the margin formula says trial j is correct at α iff α > margin_j.
    k, epsilon, trials = 20, 1.0, 4000
    margins = svt.accuracy_margins(k, epsilon=epsilon, rng=7, trials=trials)
    alpha = float(np.quantile(margins, 0.9))
    gen = np.random.default_rng(7)
    rho, nu = svt.above_threshold_noise(epsilon=epsilon)
    rho_draw = rho.rvs(size=(trials, 1), random_state=gen)
    nu_draw = nu.rvs(size=(trials, k), random_state=gen)
    answers = np.r_[np.full(k - 1, -alpha), alpha]
    above = answers + nu_draw >= rho_draw
    correct = above[:, -1] & ~above[:, :-1].any(axis=1)
    np.testing.assert_array_equal(correct, margins < alpha)
