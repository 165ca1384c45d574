import functools

import numpy as np
import pytest
from scipy import stats

from dpcourse import mechanisms


def test_error_metrics():
    released = np.array([[1.0, 2.0, 6.0], [0.0, 0.0, 0.0]])
    truth = np.array([1.0, 1.0, 3.0])
    np.testing.assert_allclose(mechanisms.max_abs_error(released, truth), [3.0, 3.0])
    np.testing.assert_allclose(mechanisms.mean_squared_error(released, truth), [10 / 3, 11 / 3])


def test_summarize_matches_the_normal_interval():
    values = np.array([1.0, 2.0, 3.0, 4.0])
    s = mechanisms.summarize(values, confidence=0.9)
    half = stats.norm.ppf(0.95) * values.std(ddof=1) / 2
    assert (s.mean, s.low, s.high, s.trials) == pytest.approx((2.5, 2.5 - half, 2.5 + half, 4))
    assert "90% CI, 4 trials" in str(s)


def test_summary_interval_covers_the_mean_at_its_level(rng):
    # 2000 intervals of 200 exponential draws each; coverage should be ≈ 95%, with
    # binomial SE sqrt(.95·.05/2000) ≈ 0.5%; allow 5 SE (the normal approximation is good at 200).
    draws = rng.exponential(size=(2000, 200))
    covered = [mechanisms.summarize(row).low <= 1.0 <= mechanisms.summarize(row).high for row in draws[:2000]]
    assert np.mean(covered) == pytest.approx(0.95, abs=5 * 0.005)


def test_empirical_tail_counts_and_exact_intervals():
    t = mechanisms.empirical_tail([1.0, 2.0, 3.0, 4.0], [0.0, 2.5, 5.0])
    np.testing.assert_allclose(t.probability, [1.0, 0.5, 0.0])
    ci = stats.binomtest(2, 4).proportion_ci(method="exact")
    assert (t.low[1], t.high[1]) == pytest.approx((ci.low, ci.high))
    assert t.high[0] == 1.0 and t.low[2] == 0.0


def test_empirical_error_runs_one_vectorised_draw():
    mech = functools.partial(mechanisms.laplace_mechanism, sensitivity=1.0, epsilon=1.0)
    summary, errors = mechanisms.empirical_error(mech, np.zeros(10), trials=500, rng=3, metric="mse")
    assert errors.shape == (500,)
    # the MSE of Lap(1) noise has mean 2 and per-trial SD sqrt(Var(Z²)/10) = sqrt(20/10)
    assert summary.mean == pytest.approx(2.0, abs=5 * np.sqrt(2.0 / 500))


def test_empirical_error_rejects_bad_input():
    mech = functools.partial(mechanisms.laplace_mechanism, sensitivity=1.0, epsilon=1.0)
    with pytest.raises(ValueError, match="metric must be one of"):
        mechanisms.empirical_error(mech, np.zeros(3), trials=10, metric="l7")
    with pytest.raises(ValueError, match="trials must be an integer"):
        mechanisms.empirical_error(mech, np.zeros(3), trials=1)
    with pytest.raises(ValueError, match="mechanism must return shape"):
        mechanisms.empirical_error(lambda truth, rng, trials: np.zeros(3), np.zeros(3), trials=10)
    with pytest.raises(ValueError, match="values must have at least 2 entries"):
        mechanisms.summarize([1.0])
    with pytest.raises(ValueError, match="confidence"):
        mechanisms.empirical_tail([1.0], [0.5], confidence=1.0)


def test_laplace_tail_check_measures_theorem_3_8_on_the_exact_tail():
    table = mechanisms.laplace_tail_check([(1, 1.0), (50, 0.5)], beta=0.05, trials=4000, rng=3)
    assert table.caption == "4,000 releases per setting, Δf = 1, β = 0.05"
    for (k, epsilon, level, measured, interval, exact), (want_k, want_eps) in zip(
        table.rows, [(1, 1.0), (50, 0.5)], strict=True
    ):
        assert (k, epsilon) == (want_k, want_eps)
        assert float(level) == pytest.approx(np.log(k / 0.05) / epsilon, abs=5e-4)
        assert float(exact) == pytest.approx(1 - (1 - 0.05 / k) ** k, abs=5e-5)
        low, high = (float(v) for v in interval.strip("[]").split(", "))
        assert low <= float(measured) <= high and low <= float(exact) <= high  # 95%: fails 1 run in 20 per row


def test_laplace_tail_check_draws_in_the_order_of_its_settings():
    # the notebook's loop, written out: the same draws from the same generator give the same table
    rng = np.random.default_rng(7)
    released = mechanisms.laplace_mechanism(np.zeros(10), sensitivity=1, epsilon=0.5, rng=rng, trials=300)
    level = mechanisms.laplace_max_error_bound(k=10, beta=0.05, sensitivity=1, epsilon=0.5)
    share = np.mean(mechanisms.max_abs_error(released, np.zeros(10)) >= level)
    table = mechanisms.laplace_tail_check([(10, 0.5)], trials=300, rng=np.random.default_rng(7))
    assert table.rows[0][3] == f"{share:.4f}"


@pytest.mark.parametrize("settings", [[(0, 1.0)], [(2.5, 1.0)], [(3, 0.0)], [1.0, 2.0]])
def test_laplace_tail_check_refuses_bad_settings(settings):
    with pytest.raises(ValueError, match="settings"):
        mechanisms.laplace_tail_check(settings, trials=10)


def test_log_log_slope_recovers_a_power_laws_exponent_exactly_and_nan_for_one_point():
    x = np.geomspace(1, 1000, 7)
    assert mechanisms.log_log_slope(x, 3 * x**0.5) == pytest.approx(0.5, abs=1e-12)
    assert mechanisms.log_log_slope(x, 2 / x) == pytest.approx(-1.0, abs=1e-12)
    assert mechanisms.log_log_slope(x, np.full(7, 4.0)) == pytest.approx(0.0, abs=1e-12)
    assert np.isnan(mechanisms.log_log_slope([10], [2]))


@pytest.mark.parametrize(
    ("x", "y", "message"),
    [
        ([1, 2, 3], [1, 2], r"y must have shape \(3\)"),
        ([1, 0, 3], [1, 2, 3], "x must be > 0"),
        ([1, 2, 3], [1, -2, 3], "y must be > 0"),
        ([[1, 2]], [[1, 2]], "x must be a 1-dimensional"),
        ([1, float("nan"), 3], [1, 2, 3], "x must contain only finite"),
    ],
)
def test_log_log_slope_rejects_what_has_no_logarithm_or_no_pairing(x, y, message):
    with pytest.raises(ValueError, match=message):
        mechanisms.log_log_slope(x, y)
