"""Exact pattern probabilities of the SVT variants against an independent adaptive integral."""

import numpy as np
import pytest
from scipy import integrate, stats

from dpcourse import svt


def independent_probability(key, q, t, pattern, *, epsilon, c):
    """Pr[pattern] by scipy's adaptive quadrature, written from the variants' definitions alone."""
    spec = svt.VARIANTS[key].spec(epsilon, c, 1.0)
    answered_so_far, segments, current = 0, [], []
    for i, item in enumerate(pattern):
        halted = spec.c is not None and answered_so_far >= spec.c
        is_halted = not isinstance(item, tuple) and np.isnan(item)
        if halted != is_halted:
            return 0.0
        if is_halted:
            continue
        current.append(i)
        if isinstance(item, tuple) or item == np.inf:
            answered_so_far += 1
            if spec.redraw_scale is not None:
                segments.append(current)
                current = []
    if current:
        segments.append(current)

    def cdf(x):
        return float(x > 0) if spec.query_scale == 0 else stats.laplace.cdf(x, scale=spec.query_scale)

    total = 1.0
    for number, segment in enumerate(segments):
        b = spec.threshold_scale if number == 0 or spec.redraw_scale is None else spec.redraw_scale

        def integrand(z, segment=segment, b=b):
            value = stats.laplace.pdf(z, scale=b)
            for i in segment:
                item, x = pattern[i], t + z - q[i]
                if isinstance(item, tuple):
                    lo, hi = item
                    value *= max(0.0, cdf(hi - q[i]) - cdf(max(t + z, lo) - q[i]))
                elif item == np.inf:
                    value *= 1 - cdf(x)
                else:
                    value *= cdf(x)
            return value

        breaks = [0.0] + [q[i] - t for i in segment]
        breaks += [end - t for i in segment if isinstance(pattern[i], tuple) for end in pattern[i]]
        edges = np.unique(np.clip(np.r_[-60 * b, breaks, 60 * b], -60 * b, 60 * b))
        total *= sum(
            integrate.quad(integrand, lo, hi, epsabs=1e-14, epsrel=1e-11, limit=200)[0]
            for lo, hi in zip(edges[:-1], edges[1:], strict=True)
        )
    return total


def observed_patterns(key, q, t, c, rng, count=3):
    out = svt.VARIANTS[key].run(q, threshold=t, epsilon=1.0, c=c, trials=400, rng=rng)
    rows = []
    for row in out[rng.permutation(out.shape[0])]:
        pattern = []
        for x in row:
            if np.isfinite(x):  # a released number: a random interval around it
                pattern.append((float(x - rng.uniform(0.1, 3)), float(x + rng.uniform(0.1, 3))))
            else:
                pattern.append(float(x))
        if pattern not in rows:
            rows.append(pattern)
        if len(rows) == count:
            break
    return rows


@pytest.mark.parametrize("key", list(svt.VARIANTS))
def test_pattern_probabilities_match_an_independent_adaptive_integral(key):
    rng = np.random.default_rng(sorted(svt.VARIANTS).index(key))
    for _ in range(3):
        q, t, c = rng.normal(1.0, 1.5, size=4), float(rng.normal(1.0, 0.5)), int(rng.integers(1, 3))
        for pattern in observed_patterns(key, q, t, c, rng):
            got = svt.variant_pattern_probability(key, q, pattern, threshold=t, epsilon=1.0, c=c)
            want = independent_probability(key, q, t, pattern, epsilon=1.0, c=c)
            assert got == pytest.approx(want, rel=1e-7, abs=1e-12), pattern


def test_alg3_interval_whose_upper_end_meets_the_threshold_noise():
    # The released number's event [lo, hi] puts a kink at z = hi − T; without a break there the
    # quadrature was off by up to about 1% (issue 13, item 4).
    q, t = np.array([0.0, 0.3]), 0.0
    for hi in (-0.7, 0.4, 2.5):
        pattern = [-np.inf, (-5.0, hi)]
        got = svt.variant_pattern_probability("alg3", q, pattern, threshold=t, epsilon=1.0, c=1)
        want = independent_probability("alg3", q, t, pattern, epsilon=1.0, c=1)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-15)


def test_alg3_counterexample_loss_is_m_epsilon_over_2c():
    for m, c in [(3, 1), (11, 1), (6, 2)]:
        loss = svt.exact_variant_loss("alg3", m, epsilon=1.0, c=c)[0]
        assert loss == pytest.approx(m / (2 * c), rel=1e-6)


@pytest.mark.parametrize("key", ["alg1", "alg2", "svt_s"])
def test_private_variants_reach_epsilon_for_every_c(key):
    for c in (1, 2, 3):
        loss = svt.exact_variant_loss(key, 150, epsilon=0.5, c=c)[0]
        assert 0.5 * (1 - 1e-3) <= loss <= 0.5 * (1 + 1e-9)


def test_the_c1_event_stays_below_epsilon_for_c2():
    # ⊥^{m−1}⊤ on the notebook's hard pair tends to 0.75ε for Alg. 1 at c = 2: only one ⊤ pays
    d, d_prime = svt.adversarial_pair(80)
    pattern = [-np.inf] * 79 + [np.inf]
    p, p_prime = (
        svt.variant_pattern_probability("alg1", x, pattern, threshold=0.5, epsilon=1.0, c=2) for x in (d, d_prime)
    )
    assert np.log(p / p_prime) == pytest.approx(0.75, rel=1e-3)


class _Generic:
    """A frozen scipy distribution behind a wrapper that ``exact`` does not recognise: the generic path."""

    def __init__(self, frozen):
        self.frozen = frozen

    def __getattr__(self, name):
        return getattr(self.frozen, name)


def test_fast_laplace_gives_scipy_s_numbers_exactly():
    # exact swaps frozen scipy Laplace distributions for its own class; every method must return the same floats
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.normal(0, 5, 2000), [0.0, -0.0, np.inf, -np.inf, 1e-300, 40.0, -800.0]])
    p = np.concatenate([rng.random(2000), [1e-18, 1e-9, 0.5, 1 - 1e-12]])
    for loc, scale in [(0.0, 2.0), (0.0, 4.0 / 0.3), (1.5, 0.7)]:
        frozen = stats.laplace(loc=loc, scale=scale)
        fast = svt.exact._fast(frozen)
        assert isinstance(fast, svt.exact._Laplace)
        for method, arg in [("pdf", x), ("cdf", x), ("sf", x), ("ppf", p), ("isf", p), ("ppf", 1e-18), ("isf", 1e-18)]:
            np.testing.assert_array_equal(getattr(fast, method)(arg), getattr(frozen, method)(arg), err_msg=method)
        assert fast.median() == frozen.median() and fast.std() == frozen.std()
    assert svt.exact._fast(stats.norm()) is not None and not isinstance(
        svt.exact._fast(stats.norm()), svt.exact._Laplace
    )


def test_pmf_and_loss_with_the_fast_laplace_equal_the_generic_path():
    rng = np.random.default_rng(5)
    for _ in range(20):
        m, eps = int(rng.integers(1, 15)), float(rng.uniform(0.1, 3))
        d = rng.normal(0, 3, size=m)
        d_prime = d + rng.uniform(-1, 1, size=m)
        rho, nu = stats.laplace(scale=2 / eps), stats.laplace(scale=4 / eps)
        generic = dict(threshold_noise=_Generic(rho), query_noise=_Generic(nu))
        np.testing.assert_array_equal(
            svt.above_threshold_pmf(d, threshold=0.3, epsilon=eps),
            svt.generalized_above_threshold_pmf(d, threshold=0.3, **generic),
        )
        assert (
            svt.max_privacy_loss(d, d_prime, threshold=0.3, epsilon=eps).max_loss
            == svt.max_privacy_loss(d, d_prime, threshold=0.3, epsilon=eps, **generic).max_loss
        )


def test_shipped_variant_losses_match_a_fresh_computation(tmp_path):
    # the table holds exact losses: recomputing the small cases and one long one gives the same numbers,
    # every entry's fingerprint matches today's variants and counterexamples (else it would be silently
    # ignored), every loss notebook 05 and its panel show at ε = 1 is there, and exact_variant_loss uses
    # an entry only for exactly the same case
    fresh = svt.write_variant_loss_table(tmp_path / "t.npz", max_queries=9, cs=(1, 2), long=None)
    with np.load(fresh) as new, np.load(svt.VARIANT_LOSS_TABLE) as shipped:
        stored = dict(zip(shipped["keys"].tolist(), shipped["rows"], strict=True))
        for key, row in zip(new["keys"].tolist(), new["rows"], strict=True):
            np.testing.assert_allclose(stored[key], row, rtol=1e-12)
    for key, row in stored.items():
        variant, m, c = key.rsplit("-", 2)
        assert np.array_equal(
            row[3:], svt.exact_variants._variant_loss_fingerprint(variant, int(m), 1.0, int(c), 1.0)
        ), key
    long = svt.exact_variants._computed_variant_loss("alg2", 150, epsilon=1.0, c=3, sensitivity=1.0)
    np.testing.assert_allclose(stored["alg2-150-3"][:3], long, rtol=1e-12)
    needed = (
        [f"alg4-{m}-{c}" for c in (1, 2, 3) for m in range(c + 1, c + 40, 2)]
        + [f"alg6-{m}-1" for m in range(2, 41, 2)]
        + [f"{k}-150-{c}" for k in ("alg1", "alg2", "svt_s") for c in (1, 2, 3)]
        + [f"{k}-{m}-{c}" for k in svt.VARIANTS for c in range(1, 6) for m in range(max(c, 1), 41)]
    )
    assert set(needed) <= set(stored)
    assert svt.exact_variant_loss("alg4", 41, epsilon=1.0, c=2) == tuple(stored["alg4-41-2"][:3])
    assert svt.exact_variants._stored_variant_loss("alg4", 41, 0.5, 2, 1.0) is None
    assert svt.exact_variants._stored_variant_loss("alg4", 41, 1.0, 2, 2.0) is None
    assert svt.exact_variants._stored_variant_loss("alg4", 43, 1.0, 2, 1.0) is None
