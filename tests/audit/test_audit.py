import numpy as np
import pytest
from scipy import integrate, stats

from dpcourse import svt


def difference_of_laplaces_sf(t, a, b):
    """P[ν − ρ ≥ t] for ν ~ Lap(a), ρ ~ Lap(b), a ≠ b, in closed form."""
    if t < 0:
        return 1 - difference_of_laplaces_sf(-t, a, b)
    return (a * a * np.exp(-t / a) - b * b * np.exp(-t / b)) / (2 * (a * a - b * b))


@pytest.mark.parametrize("q, threshold, epsilon", [(0.0, 1.0, 0.7), (3.0, 0.0, 0.2), (2.0, 2.0, 5.0)])
def test_single_query_against_the_closed_form(q, threshold, epsilon):
    p = svt.above_threshold_pmf([q], threshold=threshold, epsilon=epsilon)
    top = difference_of_laplaces_sf(threshold - q, 4 / epsilon, 2 / epsilon)
    assert p == pytest.approx([top, 1 - top], abs=1e-12)


def test_every_outcome_against_adaptive_quadrature():
    q, t = np.array([0.0, 1.0, 3.0, -2.0, 0.5]), 1.2
    p = svt.above_threshold_pmf(q, threshold=t, epsilon=0.7)
    rho, nu = svt.above_threshold_noise(epsilon=0.7)
    kinks = np.sort(np.r_[0.0, q - t])
    edges = np.r_[-120.0, kinks, 120.0]
    for k in range(q.size + 1):

        def f(z, k=k):
            return svt.outcome_integrand(z, k, q, threshold=t, threshold_noise=rho, query_noise=nu)[0]

        value = sum(
            integrate.quad(f, a, b, epsabs=1e-15, epsrel=1e-13, limit=200)[0]
            for a, b in zip(edges[:-1], edges[1:], strict=True)
        )
        assert p[k] == pytest.approx(value, abs=1e-9)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)


def test_per_query_thresholds_and_no_noise_cases():
    p = svt.generalized_above_threshold_pmf(
        [0.0, 2.0, 5.0], threshold=[1.0, 1.0, 1.0], threshold_noise=None, query_noise=None
    )
    assert p.tolist() == [0.0, 1.0, 0.0, 0.0]
    rho, _ = svt.above_threshold_noise(epsilon=1.0)
    p = svt.generalized_above_threshold_pmf([0.0], threshold=1.0, threshold_noise=rho, query_noise=None)
    assert p[0] == pytest.approx(rho.cdf(-1.0), abs=1e-12)  # ⊤ iff 0 ≥ 1 + ρ


def test_privacy_loss_conventions():
    loss = svt.privacy_loss([0.5, 0.0, 0.2, 0.0], [0.25, 0.0, 0.0, 0.3])
    assert loss[0] == pytest.approx(np.log(2)) and loss[1] == 0.0 and loss[2] == np.inf and loss[3] == -np.inf
    with pytest.raises(ValueError, match="same shape"):
        svt.privacy_loss([0.5], [0.2, 0.3])


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_adversarial_loss_approaches_epsilon_and_never_exceeds_it(epsilon):
    losses = [
        svt.max_privacy_loss(*svt.adversarial_pair(m), threshold=0.5, epsilon=epsilon).max_loss for m in (1, 4, 16, 64)
    ]
    assert np.all(np.diff(losses) > 0)
    assert max(losses) <= epsilon * (1 + 1e-9)
    assert losses[-1] >= 0.97 * epsilon


def test_loss_never_exceeds_epsilon_on_random_neighbours(rng):
    for _ in range(200):
        m = int(rng.integers(1, 12))
        sensitivity = float(rng.uniform(0.2, 3.0))
        d = rng.normal(0, 3 * sensitivity, size=m)
        d_prime = d + sensitivity * rng.uniform(-1, 1, size=m)
        epsilon = float(rng.uniform(0.1, 3.0))
        result = svt.max_privacy_loss(
            d, d_prime, threshold=float(rng.normal()), epsilon=epsilon, sensitivity=sensitivity
        )
        assert result.max_loss <= epsilon * (1 + 1e-9)


@pytest.mark.parametrize("broken", ["halved query noise", "no threshold noise", "no query noise"])
def test_broken_variants_exceed_epsilon(broken):
    epsilon = 1.0
    d, d_prime = svt.adversarial_pair(10)
    noise = {
        "halved query noise": dict(query_noise=stats.laplace(scale=2 / epsilon)),
        "no threshold noise": dict(threshold_noise=None),
        "no query noise": dict(query_noise=None),
    }[broken]
    assert svt.max_privacy_loss(d, d_prime, threshold=0.5, epsilon=epsilon, **noise).max_loss > 1.2 * epsilon


def test_proof_steps_hold_and_are_tight():
    d, d_prime = svt.adversarial_pair(8)
    steps = svt.proof_steps(d, d_prime, 7, threshold=0.5, epsilon=1.0)
    assert steps.change_of_variables_gap < 1e-10
    assert steps.threshold_factor == pytest.approx(steps.half_epsilon_bound, rel=1e-9)
    assert steps.top_factor <= steps.half_epsilon_bound * (1 + 1e-9)
    assert steps.top_factor == pytest.approx(steps.half_epsilon_bound, rel=1e-6)
    assert steps.bottom_factor_min_gain >= 0


def test_accuracy_bound_holds_empirically(rng):
    # queries far below T − α never trigger, and with probability ≥ 1 − β one at ≥ T + α does
    k, beta, epsilon = 50, 0.1, 1.0
    alpha = svt.above_threshold_accuracy_bound(num_queries=k, beta=beta, epsilon=epsilon)
    assert alpha == pytest.approx(8 * (np.log(k) + np.log(2 / beta)) / epsilon)
    answers = np.r_[np.full(k - 1, -alpha), alpha]
    r = svt.above_threshold(answers, threshold=0.0, epsilon=epsilon, rng=rng, trials=20_000)
    assert np.mean(r.first_above != k - 1) <= beta


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: svt.above_threshold_pmf([0.0], threshold=0.0, epsilon=-1), "epsilon"),
        (lambda: svt.max_privacy_loss([0.0, 0.0], [2.0, 0.0], threshold=0.0, epsilon=1), "differ by at most"),
        (
            lambda: svt.max_privacy_loss([0.0, 0.0], [0.0], threshold=0.0, epsilon=1),
            "answers_d_prime must have shape",
        ),
        (lambda: svt.proof_steps([0.0], [1.0], 3, threshold=0.0, epsilon=1), "outcome must be an integer"),
        (lambda: svt.adversarial_pair(0), "num_queries"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_fisher_tails_summed_directly_equal_scipys():
    """The audit's own sum of the hypergeometric tail (one vectorised sliding window) against scipy's
    ``hypergeom.sf``, on counts drawn over the ranges audits see; both are exact sums, so they agree to rounding
    (a tail with a wrong term range, e.g. y terms instead of y + 1, is off by a whole term)."""
    from dpcourse.audit.statistics import _hypergeom_upper_tails

    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(1, 100_000))
        y = int(rng.integers(0, min(n, 2_000) + 1))
        k = np.unique(rng.integers(0, min(n, 3_000) + 1, size=40))
        ours = _hypergeom_upper_tails(k, y, n)
        theirs = stats.hypergeom.sf(k - 1, 2 * n, n, k + y)
        assert np.allclose(ours, theirs, rtol=1e-7, atol=1e-300)
