"""The empirical auditor: any mechanism, StatDP's inputs, honest statistics, the peers' suites."""

import numpy as np
import pytest
from scipy import stats

from dpcourse import audit, mechanisms
from dpcourse.peer_suites import PEER_MECHANISMS
from dpcourse.svt_variants import VARIANTS


def laplace_first(scale_times_epsilon):
    """A one-number mechanism: the first answer plus Lap(s/ε) at ε = 1 (s = 1 is correct for Δ = 1)."""
    def mechanism(answers, *, trials, rng):
        return answers[0] + np.random.default_rng(rng).laplace(0.0, scale_times_epsilon, size=trials)
    return mechanism


def test_statdp_pairs_are_the_full_family_in_its_orientation():
    pairs = audit.statdp_pairs()
    assert len(pairs) == 16
    d, d_prime = pairs["half and half (m = 5)"]
    assert d.tolist() == [1, 1, 1, 1, 1] and d_prime.tolist() == [2, 2, 0, 0, 0]
    d, d_prime = pairs["X shape (m = 5)"]
    assert d.tolist() == [1, 1, 0, 0, 0] and d_prime.tolist() == [0, 0, 1, 1, 1]
    assert all(np.max(np.abs(a - b)) <= 1 for a, b in pairs.values())


def test_p_value_is_doubled_monotone_in_epsilon_and_exact():
    p = [audit.thinned_fisher_p_value(400, 200, 20_000, e) for e in (0.0, 0.3, 0.6, 0.69, 0.8, 2.0)]
    assert p == sorted(p) and p[0] < 1e-10 and p[-1] == 1.0
    # twice the exact expectation of Fisher's p-value over the thinning
    k = np.arange(0, 401)
    w = stats.binom.pmf(k, 400, np.exp(-0.3))
    expected = w @ stats.hypergeom.sf(k - 1, 40_000, 20_000, k + 200)
    assert p[1] == pytest.approx(min(1.0, 2 * expected), rel=1e-9)


def test_the_p_value_is_valid_under_the_null():
    # counts drawn with Pr[E | D] = e^ε Pr[E | D′] exactly (the boundary of H₀): rejections ≤ level
    rng = np.random.default_rng(3)
    n, eps, q = 4000, 0.5, 0.02
    x = rng.binomial(n, np.exp(eps) * q, size=400)
    y = rng.binomial(n, q, size=400)
    rejected = sum(audit.thinned_fisher_p_value(a, b, n, eps) < 0.1 for a, b in zip(x, y))
    assert rejected <= stats.binom.ppf(0.999, 400, 0.1)


def test_a_flawed_variant_is_flagged_on_a_given_pair_and_verdict_and_bound_agree():
    d, d_prime = audit.adversarial_pair(3)
    r = audit.audit("alg5", d, d_prime, epsilon=0.5, threshold=0.5, trials=4000, rng=0)
    assert r.flagged and r.p_value < 0.01 and r.epsilon_lower_bound > 0.5
    assert r.mechanism == "alg5" and r.pair == "given" or r.pair == "given (D and D′ swapped)"
    assert r.p_d_prime == 0.0 and r.ci_d[0] <= r.p_d <= r.ci_d[1]
    ok = audit.audit("alg1", d, d_prime, epsilon=0.5, threshold=0.5, trials=4000, rng=0)
    assert not ok.flagged and ok.epsilon_lower_bound <= 0.5


def test_any_callable_numbers_categories_and_the_users_pairs():
    pairs = [(np.array([0.0]), np.array([1.0])), (np.array([2.0]), np.array([1.0]))]
    bad = audit.audit(laplace_first(0.4), epsilon=1.0, pairs=pairs, trials=20_000, rng=1)
    assert bad.flagged and bad.epsilon_lower_bound > 1.0 and bad.pair in ("pair 0", "pair 1", "pair 0 (D and D′ swapped)",
                                                                          "pair 1 (D and D′ swapped)")
    good = audit.audit(laplace_first(1.0), epsilon=1.0, pairs=pairs, trials=20_000, rng=1)
    assert not good.flagged

    def noisy_max(answers, *, trials, rng):
        return mechanisms.report_noisy_max(answers, epsilon=0.5, rng=rng, trials=trials)
    assert not audit.audit(noisy_max, [1.0, 1.0, 0.0], [0.0, 1.0, 1.0], epsilon=0.5, trials=10_000, rng=2).flagged

    def noisy_max_value(answers, *, trials, rng):  # StatDP's noisy_max_v1b: returns the value, not the index
        return np.max(answers + np.random.default_rng(rng).laplace(0, 2 / 0.5, size=(trials, len(answers))), axis=1)
    assert audit.audit(noisy_max_value, [1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], epsilon=0.5,
                       trials=40_000, rng=2).flagged


def test_scan_gives_one_monotone_curve_from_one_sample():
    d, d_prime = audit.adversarial_pair(4)
    s = audit.scan("alg4", d, d_prime, epsilon=0.5, c=1, threshold=0.5, trials=20_000, rng=3,
                   test_epsilons=np.linspace(0.1, 1.5, 15))
    assert np.all(np.diff(s.p_values) >= 0)
    assert s.largest_rejected <= s.epsilon_lower_bound + 1e-9
    assert s.p_values[0] < 0.01 and s.p_values[-1] > 0.01
    assert s.result.p_value_at(0.5) == pytest.approx(s.result.p_value)


def test_variant_objects_and_keys_agree():
    d, d_prime = audit.adversarial_pair(4)
    a = audit.audit(VARIANTS["alg1"], d, d_prime, epsilon=1.0, threshold=0.5, trials=2000, rng=0)
    b = audit.audit("alg1", d, d_prime, epsilon=1.0, threshold=0.5, trials=2000, rng=0)
    assert a.p_value == b.p_value and a.mechanism == "alg1" and a.trials == 2000 and a.selection_trials == 500


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: audit.audit("alg1", [0.0, 0.0], None, epsilon=1.0), "give both"),
        (lambda: audit.audit("alg1", [0.0], [3.0], epsilon=1.0), "differ by at most"),
        (lambda: audit.audit("alg1", [0.0], [1.0], epsilon=1.0, trials=2 * 10**6), "trials must be an integer"),
        (lambda: audit.audit("alg1", [0.0], [1.0], epsilon=-1.0, trials=1000), "epsilon"),
        (lambda: audit.audit("alg9", [0.0], [1.0], epsilon=1.0), "mechanism must be"),
        (lambda: audit.audit(lambda a, *, trials, rng: np.zeros(3), [0.0], [1.0], epsilon=1.0, trials=1000),
         "first axis"),
        (lambda: audit.audit("alg1", [0.0], [1.0], epsilon=1.0, pairs=[([0.0], [1.0])]), "not both"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_level_over_many_seeds_for_a_correct_mechanism():
    # 300 audits of a correct mechanism at level 0.1: the number flagged is Binomial(300, ≤ 0.1)
    flags = sum(audit.audit(laplace_first(1.0), [0.0], [1.0], epsilon=1.0, trials=2000, level=0.1, rng=seed).flagged
                for seed in range(300))
    assert flags <= stats.binom.ppf(0.999, 300, 0.1)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["alg1", "alg2", "svt_s", "statdp_svt", "dpsniper_numerical_svt", "checkdp_gapsparsevector"])
def test_correct_mechanisms_are_not_flagged_beyond_the_level_in_the_full_search(key):
    # 40 full searches over StatDP's 16 pairs at level 0.1: the number flagged is at most Binomial(40, 0.1)
    mechanism = PEER_MECHANISMS.get(key, key)
    epsilon = getattr(mechanism, "epsilon", 0.2)
    flags = sum(audit.audit(mechanism, epsilon=epsilon, trials=20_000, level=0.1, rng=seed).flagged for seed in range(40))
    assert flags <= stats.binom.ppf(0.999, 40, 0.1)


_MISSED = {"checkdp_badadaptivesparsevector": "on StatDP's pairs its violation lives only in events of probability about "
                                               "one in a million: out of reach of 10⁶ runs (see the test below)"}


def test_badadaptive_violation_is_out_of_sampling_reach_on_statdps_pairs():
    # CheckDP's BadAdaptive (examples/badadaptivesparsevector.c, N = 2, T = 1, ε = 1): given the threshold
    # T̂ = z the answers are independent; "nine −100, then a top-branch value q + η₃ ≤ a" pins T̂ ≤ a − 16,
    # and each −100 then costs up to 1/8 (η₂ ~ Lap(8)) that the shifted threshold cannot repay.
    from scipy import integrate
    eps, t, b1, b3, b2 = 1.0, 1.0, 2.0, 16.0, 8.0
    lap = stats.laplace

    def probability(qs, k, a):
        def f(u):
            below = np.prod([lap.cdf(16 + u - q, scale=b3) * lap.cdf(u - q, scale=b2) for q in qs[:k]])
            top = max(0.0, lap.cdf(a - qs[k], scale=b3) - lap.cdf(16 + u - qs[k], scale=b3))
            return lap.pdf(u - t, scale=b1) * below * top
        edges = sorted({t - 60, t + 60, t, a - 16, *[q - 16 for q in qs], *qs})
        return sum(integrate.quad(f, lo, hi, limit=200, epsabs=1e-16)[0] for lo, hi in zip(edges[:-1], edges[1:]))

    pairs = audit.statdp_pairs(10)
    d, d_prime = pairs["all above (m = 10)"]
    p, p_prime = probability(d, 9, 18.0), probability(d_prime, 9, 18.0)
    assert np.log(p / p_prime) > eps and 1e-7 < p < 1e-5  # a real violation, one run in a million
    z = (p - np.exp(eps) * p_prime) * np.sqrt(750_000) / np.sqrt(p + np.exp(2 * eps) * p_prime)
    assert z < 1  # expected significance with 750,000 test runs


@pytest.mark.slow
@pytest.mark.parametrize("key", [pytest.param(k, marks=pytest.mark.xfail(reason=_MISSED[k], strict=True)) if k in _MISSED
                                 else k for k in PEER_MECHANISMS])
def test_every_peer_mechanism_is_judged_as_its_suite_publishes(key):
    m = PEER_MECHANISMS[key]
    r = audit.audit(m, epsilon=m.epsilon, trials=750_000, selection_trials=250_000, rng=1)
    assert r.flagged == m.flawed, r.summary()


@pytest.mark.slow
@pytest.mark.parametrize("key", ["alg3", "alg4", "alg5", "alg6"])
def test_lyus_flawed_variants_are_flagged_at_epsilon_02_for_several_seeds(key):
    for seed in (11, 12, 13):
        r = audit.audit(key, epsilon=0.2, threshold=1.0, trials=750_000, selection_trials=250_000, rng=seed)
        assert r.flagged, r.summary()
