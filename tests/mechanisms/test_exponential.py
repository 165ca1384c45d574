import numpy as np
import pytest

from dpcourse import mechanisms
from dpcourse.mechanisms import proportion_interval


def test_pmf_is_the_softmax_with_the_factor_two():
    u = np.array([0.0, 1.0, 3.0])
    pmf = mechanisms.exponential_mechanism_pmf(u, epsilon=2.0, sensitivity=0.5)
    assert pmf == pytest.approx(np.exp(2.0 * u / (2 * 0.5)) / np.exp(2.0 * u / (2 * 0.5)).sum())
    without_two = mechanisms.exponential_mechanism_pmf(u, epsilon=2.0, sensitivity=0.5, factor=1)
    assert without_two == pytest.approx(np.exp(2.0 * u / 0.5) / np.exp(2.0 * u / 0.5).sum())


def test_sampler_matches_the_exact_pmf():
    # mechanisms.exponential_mechanism (Gumbel trick) against the exact pmf: Clopper–Pearson
    # intervals at level 1 − 1e-6 per outcome.
    u = np.array([3.0, 1.0, 0.0, 2.5, 2.0])
    trials = 100_000
    draws = mechanisms.exponential_mechanism(u, epsilon=1.0, rng=1, trials=trials)[:, 0]
    low, high = proportion_interval(np.bincount(draws, minlength=u.size), trials, confidence=1 - 1e-6)
    exact = mechanisms.exponential_mechanism_pmf(u, epsilon=1.0)
    assert np.all((low <= exact) & (exact <= high))


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 2.5])
def test_privacy_loss_and_the_proofs_two_factors(epsilon):
    rng = np.random.default_rng(3)
    for _ in range(50):
        u = rng.normal(size=12)
        v = u + rng.uniform(-1, 1, size=12)
        loss = mechanisms.exponential_privacy_loss(u, v, epsilon=epsilon)
        assert loss.max_loss <= epsilon * (1 + 1e-12)
        assert loss.score_factor <= np.exp(epsilon / 2) * (1 + 1e-12)
        assert loss.normaliser_factor <= np.exp(epsilon / 2) * (1 + 1e-12)
        r = int(np.argmax(loss.loss))
        assert np.exp(loss.loss[r]) == pytest.approx(np.exp(epsilon * (u[r] - v[r]) / 2) * loss.normaliser_factor)


def test_adversarial_scores_approach_epsilon_and_two_epsilon_without_the_two():
    # Outcome 0's loss is ε/2 + ln((e^{ε/2} + R − 1)/(1 + (R − 1)e^{-ε/2}))·…: it tends to ε
    # (2ε with the factor 2 missing) as R grows. A formula without the 2 fails the first assert.
    d, dp = mechanisms.adversarial_scores(4096)
    assert mechanisms.exponential_privacy_loss(d, dp, epsilon=1.0).max_loss == pytest.approx(1.0, abs=1e-3)
    assert mechanisms.exponential_privacy_loss(d, dp, epsilon=1.0).max_loss <= 1.0
    assert mechanisms.exponential_privacy_loss(d, dp, epsilon=1.0, factor=1).max_loss == pytest.approx(2.0, abs=1e-3)
    # two outcomes: exactly ε/2 (and ε without the 2)
    d2, dp2 = mechanisms.adversarial_scores(2)
    assert mechanisms.exponential_privacy_loss(d2, dp2, epsilon=1.0).max_loss == pytest.approx(0.5)


def test_pricing_revenue():
    assert mechanisms.pricing_revenue([1, 3, 3, 5], [1, 2, 3, 4, 5, 6]).tolist() == [4, 6, 9, 4, 5, 0]
    # adding a consumer changes the revenue at price p by 0 or p: Δu = max price, monotone
    v = np.random.default_rng(0).integers(1, 101, size=50)
    prices = np.arange(1, 101)
    change = mechanisms.pricing_revenue(np.append(v, 60), prices) - mechanisms.pricing_revenue(v, prices)
    assert np.all((change == 0) | (change == prices)) and change.max() <= 100


def test_utility_theorem_holds_and_is_tight_in_shape():
    # Theorem 3.11: Pr[gap ≥ 2Δ(ln|R| + t)/ε] ≤ e^{−t}; exact, so no tolerance. With |R| outcomes
    # all at OPT − g except one at OPT, the exact tail at g is (R−1)e^{−εg/2Δ}/(1 + (R−1)e^{−εg/2Δ}),
    # which a bound with Δ/ε in place of 2Δ/ε would not cover.
    r, eps, sens = 50, 1.0, 1.0
    for t in (0.0, 1.0, 3.0):
        g = mechanisms.exponential_mechanism_utility_bound(num_outcomes=r, sensitivity=sens, epsilon=eps, t=t)
        u = np.r_[g, np.zeros(r - 1)]
        tail = mechanisms.utility_gap_tail(u, [g], epsilon=eps, sensitivity=sens)[0]
        assert tail <= np.exp(-t)
        half = g / 2
        u_half = np.r_[half, np.zeros(r - 1)]
        assert mechanisms.utility_gap_tail(u_half, [half], epsilon=eps, sensitivity=sens)[0] > np.exp(-t) / 2


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: mechanisms.exponential_mechanism_pmf([1.0], epsilon=0), "epsilon"),
        (lambda: mechanisms.exponential_mechanism_pmf([1.0], epsilon=1, factor=3), "factor"),
        (lambda: mechanisms.exponential_privacy_loss([0.0, 0.0], [0.0, 2.0], epsilon=1), "sensitivity"),
        (lambda: mechanisms.adversarial_scores(1), "num_outcomes"),
        (lambda: mechanisms.pricing_revenue([1, 2], [0, 1]), "prices"),
        (
            lambda: mechanisms.exponential_mechanism_utility_bound(num_outcomes=5, sensitivity=1, epsilon=1, t=-1),
            "t must",
        ),
    ],
)
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
