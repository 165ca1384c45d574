"""The empirical auditor: any mechanism, StatDP's inputs, honest statistics, the peers' suites."""

import numpy as np
import pytest
from scipy import stats

from dpcourse import audit, mechanisms, svt
from dpcourse.audit.peer_suites import PEER_MECHANISMS, checkdp_mechanisms
from dpcourse.svt import VARIANTS


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


def test_the_fisher_tails_are_computed_once_and_are_the_exact_values():
    # the ε bound's bisection and a p-value curve reuse one table per (count_d, count_d_prime, n): each entry
    # is the exact tail hypergeom.sf gives (summed by the audit itself: equal to rounding, relative 1e-8),
    # whichever range of thinned counts asked for it first
    from dpcourse.audit.statistics import _fisher_tails

    _fisher_tails.cache_clear()
    for e in (0.7, 0.0, 0.3, 2.0, 0.31):
        audit.thinned_fisher_p_value(400, 200, 20_000, e)
    table = _fisher_tails(400, 200, 20_000)
    assert _fisher_tails.cache_info().misses == 1
    done = np.flatnonzero(~np.isnan(table.values))
    assert done.size > 100
    np.testing.assert_allclose(table.values[done], stats.hypergeom.sf(done - 1, 40_000, 20_000, done + 200), rtol=1e-8)
    # a fresh table gives the same p-values as the one filled in another order
    before = [audit.thinned_fisher_p_value(400, 200, 20_000, e) for e in (0.3, 0.69)]
    _fisher_tails.cache_clear()
    assert [audit.thinned_fisher_p_value(400, 200, 20_000, e) for e in (0.69, 0.3)][::-1] == before


def test_the_p_value_is_valid_under_the_null():
    # counts drawn with Pr[E | D] = e^ε Pr[E | D′] exactly (the boundary of H₀): rejections ≤ level
    rng = np.random.default_rng(3)
    n, eps, q = 4000, 0.5, 0.02
    x = rng.binomial(n, np.exp(eps) * q, size=400)
    y = rng.binomial(n, q, size=400)
    rejected = sum(audit.thinned_fisher_p_value(a, b, n, eps) < 0.1 for a, b in zip(x, y, strict=True))
    assert rejected <= stats.binom.ppf(0.999, 400, 0.1)


def test_a_flawed_variant_is_flagged_on_a_given_pair_and_verdict_and_bound_agree():
    d, d_prime = svt.adversarial_pair(3)
    r = audit.audit("alg5", d, d_prime, epsilon=0.5, threshold=0.5, trials=4000, rng=0)
    assert r.flagged and r.p_value < 0.01 and r.epsilon_lower_bound > 0.5
    assert r.mechanism == "alg5" and r.pair == "given" or r.pair == "given (D and D′ swapped)"
    assert r.p_d_prime == 0.0 and r.ci_d[0] <= r.p_d <= r.ci_d[1]
    ok = audit.audit("alg1", d, d_prime, epsilon=0.5, threshold=0.5, trials=4000, rng=0)
    assert not ok.flagged and ok.epsilon_lower_bound <= 0.5


def test_any_callable_numbers_categories_and_the_users_pairs():
    pairs = [(np.array([0.0]), np.array([1.0])), (np.array([2.0]), np.array([1.0]))]
    bad = audit.audit(laplace_first(0.4), epsilon=1.0, pairs=pairs, trials=20_000, rng=1)
    assert (
        bad.flagged
        and bad.epsilon_lower_bound > 1.0
        and bad.pair in ("pair 0", "pair 1", "pair 0 (D and D′ swapped)", "pair 1 (D and D′ swapped)")
    )
    good = audit.audit(laplace_first(1.0), epsilon=1.0, pairs=pairs, trials=20_000, rng=1)
    assert not good.flagged

    def noisy_max(answers, *, trials, rng):
        return mechanisms.report_noisy_max(answers, epsilon=0.5, rng=rng, trials=trials)

    assert not audit.audit(noisy_max, [1.0, 1.0, 0.0], [0.0, 1.0, 1.0], epsilon=0.5, trials=10_000, rng=2).flagged

    def noisy_max_value(answers, *, trials, rng):  # StatDP's noisy_max_v1b: returns the value, not the index
        return np.max(answers + np.random.default_rng(rng).laplace(0, 2 / 0.5, size=(trials, len(answers))), axis=1)

    assert audit.audit(
        noisy_max_value, [1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0], epsilon=0.5, trials=40_000, rng=2
    ).flagged


def test_scan_gives_one_monotone_curve_from_one_sample():
    d, d_prime = svt.adversarial_pair(4)
    s = audit.scan(
        "alg4",
        d,
        d_prime,
        epsilon=0.5,
        c=1,
        threshold=0.5,
        trials=20_000,
        rng=3,
        test_epsilons=np.linspace(0.1, 1.5, 15),
    )
    assert np.all(np.diff(s.p_values) >= 0)
    assert s.largest_rejected <= s.epsilon_lower_bound + 1e-9
    assert s.p_values[0] < 0.01 and s.p_values[-1] > 0.01
    assert s.result.p_value_at(0.5) == pytest.approx(s.result.p_value)
    again = s.result.scan(np.linspace(0.1, 1.5, 15))  # the same curve from the audit, without new runs
    assert np.array_equal(again.p_values, s.p_values) and again.epsilon_lower_bound == s.epsilon_lower_bound


def test_variant_objects_and_keys_agree():
    d, d_prime = svt.adversarial_pair(4)
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
        (
            lambda: audit.audit(lambda a, *, trials, rng: np.zeros(3), [0.0], [1.0], epsilon=1.0, trials=1000),
            "first axis",
        ),
        (lambda: audit.audit("alg1", [0.0], [1.0], epsilon=1.0, pairs=[([0.0], [1.0])]), "not both"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_level_over_many_seeds_for_a_correct_mechanism():
    # 300 audits of a correct mechanism at level 0.1: the number flagged is Binomial(300, ≤ 0.1)
    flags = sum(
        audit.audit(laplace_first(1.0), [0.0], [1.0], epsilon=1.0, trials=2000, level=0.1, rng=seed).flagged
        for seed in range(300)
    )
    assert flags <= stats.binom.ppf(0.999, 300, 0.1)


_CORRECT = ["alg1", "alg2", "svt_s", *(k for k, m in PEER_MECHANISMS.items() if not m.flawed)]

# Full searches (StatDP's 16 pairs, 2000 selection and 5000 fresh test runs per input, level 0.1), run once for the
# module and shared by the three tests below. Every search has a seed of its own, so the searches are independent.
_LEVEL = 0.1
_SVT_SEEDS = range(200, 200 + len(_CORRECT))  # one search of each correct SVT of the workbook and of the suites
_TIGHT_SEEDS = range(100)  # laplace_first(1.0) at ε = 1: ε-DP, and tight on every pair
_TOO_LITTLE_NOISE_SEEDS = range(100, 120)  # laplace_first(0.8) at ε = 1: its loss is 1.25


@pytest.fixture(scope="module")
def full_searches():
    """The shared full searches: the correct SVTs' by key, and lists for the two Laplace mechanisms."""

    def search(mechanism, epsilon, seed):
        return audit.audit(
            mechanism, epsilon=epsilon, trials=5000, selection_trials=2000, level=_LEVEL, threshold=1.0, rng=seed
        )

    svts = {key: PEER_MECHANISMS.get(key, key) for key in _CORRECT}
    return {
        "svt": {
            key: search(m, getattr(m, "epsilon", 0.2), seed)
            for (key, m), seed in zip(svts.items(), _SVT_SEEDS, strict=True)
        },
        "tight": [search(laplace_first(1.0), 1.0, seed) for seed in _TIGHT_SEEDS],
        "too little noise": [search(laplace_first(0.8), 1.0, seed) for seed in _TOO_LITTLE_NOISE_SEEDS],
    }


def test_correct_mechanisms_are_not_flagged_beyond_the_level_in_the_full_search(full_searches):
    # The test runs are fresh whatever the search chose, so a search flags a correct mechanism with probability at
    # most the level, 0.1, and the number flagged among N independent searches is stochastically at most
    # Binomial(N, 0.1). Each count below is asserted at that law's 0.999 quantile, so a valid auditor fails each
    # assertion with probability ≤ 10⁻³ over the seeds, both together ≤ 2·10⁻³ (fixed seeds fix the outcome, one of
    # those draws). Two kinds of case:
    # - every correct SVT of the workbook and of the three suites, one search each. On StatDP's pairs they stay well
    #   inside their claim (all 11 p-values are 1): they show that the search invents no violation, but could not
    #   tell a valid p-value from a lenient one;
    # - the strong cases, 100 searches of laplace_first(1.0) at ε = 1. On each of StatDP's pairs the first answer
    #   moves by exactly 1, so every tail beyond both inputs' first answers has Pr[E | D] = e^ε·Pr[E | D′]: the
    #   event chosen sits on the boundary of H₀, where a lenient statistic is flagged often (the next test).
    # Bounds: 20 of the 100 tight searches, 22 of all 111; measured: none flagged (the smallest p-value is 0.108).
    # (Twelve searches of each SVT, which stood here before, took a minute of CPU and tested no more: their
    # p-values are 1 whatever the statistic.)
    tight = full_searches["tight"]
    cases = [*full_searches["svt"].values(), *tight]
    assert all(r.pairs_searched == 16 for r in cases)
    assert sum(r.flagged for r in tight) <= stats.binom.ppf(0.999, len(tight), _LEVEL)
    flagged = [(r.mechanism, r.p_value) for r in cases if r.flagged]
    assert len(flagged) <= stats.binom.ppf(0.999, len(cases), _LEVEL), flagged


def test_the_level_check_fails_a_statistic_lenient_about_epsilon(full_searches):
    # The check above has teeth: the same fresh counts, tested at 0.85ε (the thinning e^{−0.85ε}, a statistic 15%
    # too lenient about ε), flag 55 of the 100 tight searches, far beyond the bound of 20 (measured; 29 at 0.9ε).
    # Had the search stopped choosing boundary events, this would fail before the check lost its power.
    tight = full_searches["tight"]
    assert all(r.p_value_at(r.claimed_epsilon) == r.p_value for r in tight)  # the auditor's own statistic
    lenient = sum(r.p_value_at(0.85 * r.claimed_epsilon) < _LEVEL for r in tight)
    assert lenient > stats.binom.ppf(0.999, len(tight), _LEVEL), lenient


def test_the_same_full_search_flags_a_mechanism_with_too_little_noise(full_searches):
    # Power at the same sizes: laplace_first(0.8) claims ε = 1 but loses 1.25 on the tails of every pair. Each of
    # its 20 searches is flagged (the largest p-value is 0.006, and 0.015 over seeds 0-99, against the level 0.1); a
    # statistic too conservative, or a search that missed the tails, would leave some unflagged.
    results = full_searches["too little noise"]
    assert all(r.pairs_searched == 16 and r.flagged for r in results), [r.p_value for r in results]


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
        return sum(
            integrate.quad(f, lo, hi, limit=200, epsabs=1e-16)[0] for lo, hi in zip(edges[:-1], edges[1:], strict=True)
        )

    pairs = audit.statdp_pairs(10)
    d, d_prime = pairs["all above (m = 10)"]
    p, p_prime = probability(d, 9, 18.0), probability(d_prime, 9, 18.0)
    assert np.log(p / p_prime) > eps and 1e-7 < p < 1e-5  # a real violation, one run in a million
    z = (p - np.exp(eps) * p_prime) * np.sqrt(750_000) / np.sqrt(p + np.exp(2 * eps) * p_prime)
    assert z < 1  # expected significance with 750,000 test runs


def _badadaptive_expected_z(epsilon, a_grid, b_grid, v_grid, k_grid, n=10**6, top_shift=0.0):
    """Exact expected z at n test runs of the event "k times −100, then a top-branch value ≤ V" of CheckDP's
    BadAdaptive (N = 2, T = 1) on the pairs D = (a, …, a, b), D′ = (a + 1, …, a + 1, b + top_shift), for every
    grid point (CheckDP's ALL_DIFFER lets every query move by up to 1, the top one too).

    Given T̂ = u the answers are independent: a −100 has probability F₃(16 + u − q)·F₂(u − q) (η₃ ~ Lap(8N/ε),
    η₂ ~ Lap(4N/ε)) and the last answer's released q + η₃ lies in [16 + u, V] with probability
    F₃(V − b) − F₃(16 + u − b); the integral over u ~ T + Lap(2/ε) is a trapezoid sum on a grid fine enough
    (step 0.01/ε) that the best point agrees with adaptive quadrature to 1e-3 (asserted below)."""
    b1, b2, b3 = 2 / epsilon, 8 / epsilon, 16 / epsilon
    u = np.linspace(1 - 35 * b1, 1 + 35 * b1, 7001)
    w = stats.laplace.pdf(u - 1, scale=b1) * (u[1] - u[0])

    def below(q):
        return stats.laplace.cdf(16 + u - q, scale=b3) * stats.laplace.cdf(u - q, scale=b2)

    best = (-np.inf, None)
    for a in a_grid:
        low, high = below(a), below(a + 1)
        for b in b_grid:
            for v in v_grid:
                top, top_prime = (
                    w * np.clip(stats.laplace.cdf(v - c, scale=b3) - stats.laplace.cdf(16 + u - c, scale=b3), 0, None)
                    for c in (b, b + top_shift)
                )
                for k in k_grid:
                    p, p_prime = top @ low**k, top_prime @ high**k
                    z = (p - np.exp(epsilon) * p_prime) * np.sqrt(n) / np.sqrt(p + np.exp(2 * epsilon) * p_prime)
                    best = max(best, (z, (a, b, v, k, p, p_prime)))
    return best


@pytest.mark.parametrize(
    "epsilon, a_grid, b_grid, v_grid",
    [
        (1.0, np.arange(-2.0, 5.0), np.arange(12.0, 26.0, 2.0), np.arange(16.0, 30.0, 2.0)),
        (0.2, np.arange(-8.0, 12.0, 4.0), np.arange(8.0, 48.0, 8.0), np.arange(16.0, 48.0, 8.0)),
    ],
)
def test_badadaptive_violation_is_out_of_sampling_reach_on_any_pair_near_the_threshold(epsilon, a_grid, b_grid, v_grid):
    # Beyond StatDP's pairs: the family where BadAdaptive's flaw shows (the released q + η₃ pins T̂ low, and
    # every −100 before it then gains up to 1/8 at ε = 1 that nothing repays): −100 queries at a and a + 1
    # near T, one top query b, a cap V on its released value, k = 4 … 15 queries. The largest violation of
    # ε, as an expected z with 10⁶ test runs, is 0.33 at ε = 1 (a = 1, b = 18, V = 20, k = 11: Pr[E | D] =
    # 5.0e-6, loss 1.30) and 0.04 at ε = 0.2 (a = 4, b = 24, V = 32, k = 8: loss 0.24): no sampler with
    # 10⁶ runs per input can flag it. (Finer and wider grids, a ∈ [−6, 8], b ∈ [0, 38], V up to b + 28 or ∞
    # at ε = 1 and five times as wide at ε = 0.2, found the same maxima; the test runs coarse grids round them.)
    z, (a, b, v, k, p, p_prime) = _badadaptive_expected_z(epsilon, a_grid, b_grid, v_grid, range(4, 16))
    assert np.log(p / p_prime) > epsilon and p < 1e-5  # a real violation, a few runs in a million at most
    assert z < 0.5, (z, a, b, v, k)
    if epsilon == 1.0:  # the top query may move too: the largest z is then 0.42 (either way), still far below 2.58
        for shift in (-1.0, 1.0):
            assert _badadaptive_expected_z(epsilon, a_grid, b_grid, v_grid, range(4, 16), top_shift=shift)[0] < 0.5
    if epsilon == 1.0:  # the best point by adaptive quadrature
        from scipy import integrate

        lap = stats.laplace

        def probability(a_value):
            def f(u):
                below = (lap.cdf(16 + u - a_value, scale=16) * lap.cdf(u - a_value, scale=8)) ** k
                return (
                    lap.pdf(u - 1, scale=2) * below * max(0.0, lap.cdf(v - b, scale=16) - lap.cdf(16 + u - b, scale=16))
                )

            edges = sorted({-70.0, 70.0, 1.0, a_value, v - 16})
            return sum(
                integrate.quad(f, lo, hi, limit=200, epsabs=1e-16)[0]
                for lo, hi in zip(edges[:-1], edges[1:], strict=True)
            )

        assert probability(a) == pytest.approx(p, rel=1e-3) and probability(a + 1) == pytest.approx(p_prime, rel=1e-3)


# Each flawed mechanism on the pair of StatDP's family where the full search finds it (benchmarks/bench_audit.py
# ran that search with 250,000 + 750,000 runs per input for three seeds when these were sized, and recorded the
# pair, the event and its frequencies p, p′), with runs sized from those frequencies: n test runs give that event an
# expected z of (p − e^ε p′)·√n / √(p + e^{2ε} p′), and n is at least the size at which this reaches 4.9, the one-sided
# critical value of the doubled test at level 0.01 (2.58) plus 2.33 (power 99% against that event). Below,
# "z750" is that expected z at 750,000 runs and n the runs at which it reaches 4.9. Where the violation is
# weak (z750 < 20), fewer runs also make the search pick a weaker event by chance: there the selection gets
# as many runs as the test, which made every one of seeds 1, 2, 3 flag it (checked when these sizes were set).
_FLAWED = {  # key: (pair, selection runs, test runs)   z750 and n (from the event the full search found)
    "statdp_isvt1": ("one above rest below (m = 10)", 2000, 5000),  # Pr[E | D′] = 0; n = 252
    "statdp_isvt2": ("half and half (m = 10)", 10_000, 20_000),  # z750 = 33; n = 16,401
    "statdp_isvt3": ("half and half (m = 10)", 170_000, 170_000),  # z750 = 10.4; n = 165,378
    "statdp_isvt4": ("X shape (m = 10)", 400_000, 400_000),  # z750 = 8.3; n = 263,724 (seed 1 missed at 270,000)
    "dpsniper_svt4": ("X shape (m = 10)", 500_000, 500_000),  # best union of outputs, exactly: z750 = 6.2; n = 470,000
    "dpsniper_svt5": ("one above rest below (m = 10)", 2000, 5000),  # Pr[E | D′] = 0; n = 493
    "dpsniper_svt6": ("half and half (m = 10)", 40_000, 80_000),  # z750 = 15.5; n = 74,881
    "dpsniper_svt34parallel": ("X shape (m = 5)", 300_000, 300_000),  # z750 = 9.2; n = 214,708
    "checkdp_badgapsparsevector": ("half and half (m = 10)", 280_000, 280_000),  # z750 = 8.1; n = 273,888
    "checkdp_badsparsevector1": ("one below rest above (m = 5)", 2000, 5000),  # Pr[E | D′] = 0; n = 61
    "checkdp_badsparsevector2": ("half and half (m = 10)", 2000, 5000),  # z750 = 151; n = 794
    "checkdp_badsparsevector3": ("X shape (m = 10)", 20_000, 40_000),  # z750 = 58; n = 5,336 (missed at 4000 + 10,000)
}
# DP-Sniper's SVT3 is left to the test of the full search below, which flags it at its suite's ε: a second audit on
# its best pair of the families (half and half (m = 10), z750 = 5.8, n = 542,623; 500,000 + 500,000 runs) cost
# another 5 s of CPU and showed nothing more.
_FLAGGED_BY_THE_FULL_SEARCH = {"dpsniper_svt3"}
_MISSED = {
    "checkdp_badadaptivesparsevector": "its largest violation on any pair near the threshold has an expected z of "
    "0.33 with 10⁶ test runs (0.42 when its top query moves too): out of "
    "reach of any sampler (tests above)"
}


@pytest.mark.slow  # 15-20 s of CPU, sized to the edge (below): the one test here that cannot be made smaller
def test_the_full_search_finds_dpsnipers_svt3_with_the_learned_region():
    # DP-Sniper's SVT3 at ε = 0.1 leaks thinly: its best event on its best pair (exact quadrature over the
    # outputs "⊤ at position k with a value in a bin") has an expected z of 5.3 with 500,000 test runs, and no
    # single output or position comes close. The families alone flagged 2 of seeds 1-6 in a full search with
    # 250,000 + 750,000 runs; with the learned region (a finalist pair of its own in the screening, and tested
    # beside the families' event at level / 2) the search flagged all of seeds 1-8 with 400,000 + 600,000
    # (benchmarks/bench_audit.py records seeds 1-3). One seed here: the whole search, 10⁶ runs per input.
    m = PEER_MECHANISMS["dpsniper_svt3"]
    r = audit.audit(m, epsilon=m.epsilon, trials=600_000, selection_trials=400_000, rng=1)
    assert r.flagged and r.pairs_searched == 16 and r.tests == 2, r.summary()


def test_every_peer_mechanism_is_listed_as_flawed_or_correct():
    assert set(_FLAWED) | _FLAGGED_BY_THE_FULL_SEARCH | set(_MISSED) == {
        k for k, m in PEER_MECHANISMS.items() if m.flawed
    }
    assert set(_CORRECT) >= {k for k, m in PEER_MECHANISMS.items() if not m.flawed}


@pytest.mark.parametrize("key", sorted(_FLAWED))
def test_every_flawed_peer_mechanism_is_flagged_at_its_suites_epsilon(key):
    m = PEER_MECHANISMS[key]
    pair, selection, trials = _FLAWED[key]
    r = audit.audit(m, *audit.statdp_pairs()[pair], epsilon=m.epsilon, trials=trials, selection_trials=selection, rng=1)
    assert r.flagged, r.summary()


@pytest.mark.parametrize(
    "key", ["statdp_isvt1", "dpsniper_svt5", "checkdp_badsparsevector1", "checkdp_badsparsevector2"]
)
def test_the_full_search_finds_the_pair_by_itself(key):
    # the blatant flaws (an output impossible on one input, or a ratio far beyond e^ε) at 2000 + 5000 runs per input
    m = PEER_MECHANISMS[key]
    r = audit.audit(m, epsilon=m.epsilon, trials=5000, selection_trials=2000, rng=1)
    assert r.flagged and r.pairs_searched == 16, r.summary()


# CheckDP's suite at ε = 0.2 (its PSI programs use ε = 1; its checker is symbolic in ε), sized as above from a
# full search at 250,000 + 750,000 runs: BadSparseVector1 Pr[E | D′] = 0; BadSparseVector2 z750 = 32, n = 17,500;
# BadSparseVector3 z750 = 11.8, n = 129,600. BadGap and BadAdaptive are out of reach at ε = 0.2: see the tests
# of their exact violations.
_CHECKDP_02 = {
    "checkdp_badsparsevector1": ("one above rest below (m = 5)", 2000, 5000),
    "checkdp_badsparsevector2": ("X shape (m = 10)", 10_000, 20_000),
    "checkdp_badsparsevector3": ("half and half (m = 5)", 130_000, 130_000),
}


@pytest.mark.parametrize("key", sorted(_CHECKDP_02))
def test_checkdps_flawed_sparse_vectors_are_flagged_at_epsilon_02(key):
    pair, selection, trials = _CHECKDP_02[key]
    r = audit.audit(
        checkdp_mechanisms(0.2)[key],
        *audit.statdp_pairs()[pair],
        epsilon=0.2,
        trials=trials,
        selection_trials=selection,
        rng=1,
    )
    assert r.flagged, r.summary()


def test_badgap_violation_at_epsilon_02_is_out_of_sampling_reach():
    # CheckDP's BadGap (ρ ~ Lap(2/ε), ν ~ Lap(4/ε), releases q + ν on the one ⊤, −100 for ⊥) is Alg. 3's flaw with
    # other scales, so its exact pattern probabilities come from the same quadrature. Its loss grows with the
    # number of ⊥ before a low released value, but at ε = 0.2 the event becomes rare as fast: over the pairs
    # D = (a^{m−1}, b), D′ = ((a + 1)^{m−1}, b) and events "⊥^{m−1}, then a value ≤ v" (m = 2 … 20, a ∈ [−10, 10],
    # b ∈ [−10, 30], v ∈ [−20, 40]) the largest expected z with 10⁶ test runs is 1.67 (m = 9, a = 0, b = 5,
    # v = 12; loss 0.28 > 0.2), below the 2.58 the test needs at level 0.01. The test checks the best point and
    # its neighbours.
    import dataclasses

    from dpcourse.svt import NoiseSpec

    badgap = dataclasses.replace(
        VARIANTS["alg3"], key="badgap", spec=lambda e, c, s: NoiseSpec(2 * s / e, 4 * s / e, c=1, numeric="compared")
    )
    eps, best = 0.2, -np.inf
    for m, a, v in [(9, 0.0, 12.0), (8, 0.0, 12.0), (10, 0.0, 12.0), (9, 2.0, 12.0), (9, 0.0, 8.0), (9, 0.0, 16.0)]:
        pattern = [-np.inf] * (m - 1) + [(-1e9, v)]
        p, p_prime = (
            svt.variant_pattern_probability(
                badgap, np.r_[np.full(m - 1, x), 5.0], pattern, threshold=1.0, epsilon=eps, c=1
            )
            for x in (a, a + 1)
        )
        assert np.log(p / p_prime) > eps  # a real violation
        best = max(best, (p - np.exp(eps) * p_prime) * 1e3 / np.sqrt(p + np.exp(2 * eps) * p_prime))
    assert 1.5 < best < 2.0
    # and the same mechanism run by the peer suite matches the quadrature on the best point
    runs = checkdp_mechanisms(eps)["checkdp_badgapsparsevector"](np.r_[np.zeros(8), 5.0], trials=200_000, rng=0)
    hit = np.all(runs[:, :8] == -100, axis=1) & (runs[:, 8] != -100) & (runs[:, 8] <= 12.0)  # −100 is its ⊥
    p = svt.variant_pattern_probability(
        badgap, np.r_[np.zeros(8), 5.0], [-np.inf] * 8 + [(-1e9, 12.0)], threshold=1.0, epsilon=eps, c=1
    )
    assert abs(hit.mean() - p) < 5 * np.sqrt(p / 200_000)  # 5 standard errors


# Lyu et al.'s flawed variants at ε = 0.2, c = 1, T = 1, for three seeds each, on the pair where the full search
# finds them, with runs sized as above (z750 → n for z = 4.9): Alg. 3 10.5 → 164,437 (with 80,000 + 170,000 runs
# seed 13 missed: a weaker event won the selection; 300,000 + 300,000 flagged seeds 11-16); Alg. 4 10.4 → 168,040;
# Alg. 6 31.5 → 18,136; Alg. 5 has Pr[E | D′] = 0.
_LYU = {
    "alg3": ("half and half (m = 10)", 300_000, 300_000),
    "alg4": ("X shape (m = 5)", 170_000, 170_000),
    "alg5": ("one above rest below (m = 10)", 2000, 5000),
    "alg6": ("half and half (m = 10)", 10_000, 20_000),
}


@pytest.mark.parametrize("key", sorted(_LYU))
def test_lyus_flawed_variants_are_flagged_at_epsilon_02_for_several_seeds(key):
    pair, selection, trials = _LYU[key]
    for seed in (11, 12, 13):
        r = audit.audit(
            key,
            *audit.statdp_pairs()[pair],
            epsilon=0.2,
            threshold=1.0,
            trials=trials,
            selection_trials=selection,
            rng=seed,
        )
        assert r.flagged, r.summary()


def _spread(answers, *, trials, rng):
    gen = np.random.default_rng(rng)
    return np.asarray(answers, dtype=float)[None, :] + gen.laplace(0.0, 1.0, size=(trials, 3))


def test_the_learned_region_is_a_real_violation_on_fresh_runs():
    # Three Laplace(1) columns, each shifted by 0.3 between D and D′: the loss 0.9 is spread over the
    # columns. The logistic score, fitted on the selection runs, must add them up: its chosen tail is
    # tested on fresh runs and must reject ε = 0.5 (the best tail's expected z at 100,000 runs is above 10).
    from dpcourse.audit import _best_event, _Encoder

    d, d_prime = [0.0] * 3, [0.3] * 3
    encoder = _Encoder(
        *(audit._as_outputs(_spread(x, trials=40_000, rng=seed), 40_000) for x, seed in ((d, 1), (d_prime, 2)))
    )
    candidate = _best_event(encoder, 0.5, 10, learned_region=True)
    assert candidate is not None and "logistic-regression score" in candidate.description
    feature = encoder.features[candidate.feature]
    fresh = [_spread(x, trials=100_000, rng=seed) for x, seed in ((d, 3), (d_prime, 4))]
    if candidate.reverse:
        fresh = fresh[::-1]
    counts = [int(np.sum(candidate.members[feature.values(encoder.codes(o))])) for o in fresh]
    assert audit.thinned_fisher_p_value(*counts, 100_000, 0.5) < 0.01, (candidate.description, counts)


def test_two_finalists_are_paid_for_in_the_p_value_and_the_bound():
    # The audit tests the families' best event and the best learned region: its p-value is twice the better
    # raw one, its bound on ε is taken at level / 2, and the two agree with each other and with the scan.
    r = audit.audit(_spread, [0.0] * 3, [0.3] * 3, epsilon=0.5, trials=60_000, selection_trials=40_000, rng=3)
    assert r.tests == 2
    raw = audit.thinned_fisher_p_value(r.count_d, r.count_d_prime, r.trials, 0.5)
    assert r.p_value == pytest.approx(min(1.0, 2 * raw))
    assert r.p_value_at(0.5) == pytest.approx(r.p_value)
    assert r.flagged == (r.epsilon_lower_bound > 0.5), r.summary()
    bound = r.epsilon_lower_bound
    assert r.p_value_at(bound * 0.999) < r.level <= r.p_value_at(bound * 1.01)  # the bisection's tolerance


def test_matches_counted_in_bytes_leave_every_audit_bit_for_bit_the_same(monkeypatch):
    # encoding._matches keeps its counts in a byte for speed: the same counts as the intp count it replaced, so the
    # same features, events and p-values; checked on codes directly (a byte up to 255 columns, intp beyond) and on a
    # full search whose outputs have all three counting features (of a value, of numbers, Hamming distances)
    from dpcourse.audit import encoding

    def in_intp(codes, columns, values, at_least=False):  # the former implementation
        count = np.zeros(codes.shape[0], dtype=np.intp)
        for j, v in zip(columns, values, strict=True):
            count += codes[:, j] >= v if at_least else codes[:, j] == v
        return count

    rng = np.random.default_rng(5)
    for k in (1, 10, 255, 256, 300):
        codes, reference = rng.integers(0, 3, size=(500, k)).astype(np.int16), rng.integers(0, 3, size=k)
        for at_least in (False, True):
            ours = encoding._matches(codes, range(k), reference, at_least)
            assert ours.dtype == np.intp and np.array_equal(ours, in_intp(codes, range(k), reference, at_least))
    assert encoding._matches(np.zeros((4, 255), np.int16), range(255), np.zeros(255)).tolist() == [255] * 4

    m = PEER_MECHANISMS["checkdp_numsparsevector"]
    results = [audit.audit(m, epsilon=m.epsilon, trials=2000, selection_trials=1000, rng=4)]
    monkeypatch.setattr(encoding, "_matches", in_intp)
    results.append(audit.audit(m, epsilon=m.epsilon, trials=2000, selection_trials=1000, rng=4))
    new, old = ((r.pair, r.event, r.count_d, r.count_d_prime, r.p_value, r.tests) for r in results)
    assert new == old
