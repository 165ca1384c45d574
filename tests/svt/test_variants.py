import numpy as np
import pytest

from dpcourse import mechanisms, svt

B, T, N = -np.inf, np.inf, np.nan


def codes(outputs):
    return np.where(np.isnan(outputs), 2, np.where(np.isposinf(outputs) | np.isfinite(outputs), 1, 0))


@pytest.mark.parametrize("key", list(svt.VARIANTS))
def test_each_runner_matches_its_exact_probabilities(key, rng):
    # every observed output pattern: frequency within 5 standard errors of the exact probability,
    # and the exact probabilities of all possible patterns sum to 1
    q, threshold, trials = np.array([0.5, 1.5, 0.0]), 1.0, 100_000
    out = svt.VARIANTS[key].run(q, threshold=threshold, epsilon=1.0, c=2, trials=trials, rng=rng)
    patterns, counts = np.unique(codes(out), axis=0, return_counts=True)
    total = 0.0
    for pattern, count in zip(patterns, counts, strict=True):
        spec = [{0: B, 1: T, 2: N}[k] for k in pattern]
        if key == "alg3":
            spec = [(-1e9, 1e9) if k == 1 else x for k, x in zip(pattern, spec, strict=True)]
        exact = svt.variant_pattern_probability(key, q, spec, threshold=threshold, epsilon=1.0, c=2)
        total += exact
        assert abs(count / trials - exact) <= 5 * np.sqrt(exact * (1 - exact) / trials) + 1e-12
    assert total == pytest.approx(1.0, abs=1e-9)


def test_alg3_releases_the_compared_value_and_interval_events_are_exact(rng):
    out = svt.VARIANTS["alg3"].run([0.0, 0.0], threshold=0.0, epsilon=1.0, c=1, trials=200_000, rng=rng)
    released = out[:, 1][np.isfinite(out[:, 1])]
    assert np.all(released >= -50)  # numbers are released, and only when above the noisy threshold
    hits = np.mean(np.isneginf(out[:, 0]) & np.isfinite(out[:, 1]) & (out[:, 1] <= -1.0))
    exact = svt.variant_pattern_probability("alg3", [0.0, 0.0], [B, (-1e9, -1.0)], threshold=0.0, epsilon=1.0, c=1)
    assert hits == pytest.approx(exact, abs=5 * np.sqrt(exact / 200_000))


def test_stopping_rules():
    big = np.full(6, 100.0)
    for key in ("alg1", "alg2", "alg3", "alg4", "svt_s"):
        out = svt.VARIANTS[key].run(big, threshold=0.0, epsilon=50.0, c=2, trials=3, rng=0)
        assert np.all(np.isnan(out[:, 2:])) and not np.any(np.isnan(out[:, :2])), key
    for key in ("alg5", "alg6"):
        out = svt.VARIANTS[key].run(big, threshold=0.0, epsilon=50.0, c=2, trials=3, rng=0)
        assert np.all(np.isposinf(out)), key


def test_impossible_patterns_have_probability_zero():
    q = [0.0, 1.0, 2.0]
    assert svt.variant_pattern_probability("alg1", q, [T, B, B], threshold=0.5, epsilon=1.0, c=1) == 0.0
    assert svt.variant_pattern_probability("alg1", q, [T, N, N], threshold=0.5, epsilon=1.0, c=1) > 0
    assert svt.variant_pattern_probability("alg6", q, [T, N, N], threshold=0.5, epsilon=1.0, c=1) == 0.0


def test_registry_claims_and_truths():
    assert set(svt.VARIANTS) == {"alg1", "alg2", "alg3", "alg4", "alg5", "alg6", "svt_s"}
    assert [k for k, v in svt.VARIANTS.items() if v.is_private] == ["alg1", "alg2", "svt_s"]
    assert svt.VARIANTS["alg4"].true_epsilon(1.0, 3) == pytest.approx(19 / 4)
    assert all(v.claim == "ε-DP" for v in svt.VARIANTS.values())
    assert svt.VARIANTS is svt.VARIANTS


def test_alg4_loss_tends_to_its_true_guarantee():
    for c in (1, 2, 3):
        losses = [svt.exact_variant_loss("alg4", m, epsilon=1.0, c=c)[0] for m in (c + 1, c + 10, c + 60)]
        assert losses[0] < losses[1] < losses[2] <= (1 + 6 * c) / 4 + 1e-9
        assert losses[2] == pytest.approx((1 + 6 * c) / 4, rel=1e-3)


def test_alg6_and_alg3_losses_grow_without_bound_and_alg5_is_infinite():
    alg6 = [svt.exact_variant_loss("alg6", m, epsilon=1.0)[0] for m in (2, 10, 40)]
    assert alg6[0] < alg6[1] < alg6[2] and alg6[2] > 15
    alg3 = [svt.exact_variant_loss("alg3", m, epsilon=1.0)[0] for m in (2, 10)]
    assert alg3[1] > alg3[0] and alg3[1] > 4
    assert svt.exact_variant_loss("alg5", 3, epsilon=1.0)[0] == np.inf


@pytest.mark.parametrize("key", ["alg1", "alg2", "svt_s"])
def test_private_variants_never_exceed_epsilon_on_their_worst_case(key):
    for c in (1, 3):
        for m in (c, 8, 30):
            assert svt.exact_variant_loss(key, m, epsilon=0.7, c=c)[0] <= 0.7 * (1 + 1e-9)


def test_svt_standard_allocation():
    spec = svt.svt_standard_spec(1.0, 8, 1.0)
    e1, e2 = 1 / spec.threshold_scale, 16 / spec.query_scale
    assert e1 + e2 == pytest.approx(1.0) and e2 / e1 == pytest.approx(16 ** (2 / 3))
    mono = svt.svt_standard_spec(1.0, 8, 1.0, monotonic=True)
    assert (8 / mono.query_scale) / (1 / mono.threshold_scale) == pytest.approx(8 ** (2 / 3))
    numeric = svt.svt_standard(np.full(3, 100.0), threshold=0.0, epsilon=1.0, c=3, numeric_epsilon=0.5, trials=2, rng=0)
    assert np.all(np.isfinite(numeric))


def test_retraversal_finds_c_items(rng):
    scores = np.r_[np.full(5, 100.0), np.zeros(45)]
    chosen = svt.svt_retraversal(scores, threshold=90.0, epsilon=5.0, c=5, monotonic=True, trials=50, rng=rng)
    assert chosen.shape == (50, 50) and np.all(chosen.sum(axis=1) <= 5)
    assert np.mean(chosen[:, :5]) > 0.9


def test_exponential_mechanism_probabilities(rng):
    scores = np.array([0.0, 1.0, 2.0])
    picks = mechanisms.exponential_mechanism(scores, epsilon=2.0, rng=rng, trials=100_000)[:, 0]
    p = np.exp(scores) / np.exp(scores).sum()
    assert np.all(np.abs(np.bincount(picks) / 1e5 - p) <= 5 * np.sqrt(p * (1 - p) / 1e5))
    top2 = mechanisms.exponential_mechanism(scores, epsilon=1.0, k=2, rng=0, trials=10)
    assert top2.shape == (10, 2) and np.all(top2[:, 0] != top2[:, 1])
    assert mechanisms.report_noisy_max([0.0, 100.0], epsilon=10.0, rng=0) == 1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: svt.VARIANTS["alg1"].run([0.0], threshold=0, epsilon=0, c=1), "epsilon"),
        (lambda: svt.VARIANTS["alg1"].run([0.0], threshold=0, epsilon=1, c=0), "c must be an integer"),
        (
            lambda: svt.VARIANTS["alg1"].run([0.0, 1.0], threshold=[0, 1, 2], epsilon=1, c=1),
            "threshold must have shape",
        ),
        (
            lambda: svt.variant_pattern_probability("alg1", [0.0], [B, B], threshold=0, epsilon=1, c=1),
            "one entry per query",
        ),
        (
            lambda: svt.variant_pattern_probability("alg1", [0.0], [3.0], threshold=0, epsilon=1, c=1),
            "pattern entries",
        ),
        (lambda: svt.counterexample("alg9", 3), "variant_key must be one of"),
        (lambda: mechanisms.exponential_mechanism([1.0, 2.0], epsilon=1, k=3), "k must be an integer"),
        (lambda: svt.svt_standard_spec(1.0, 2, numeric_epsilon=-1), "numeric_epsilon"),
    ],
)
def test_bad_input_is_rejected(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call()


def test_retraversal_needs_monotonic_said_and_raises_the_threshold_by_multiples_of_the_noise_sd(rng):
    scores = np.r_[np.full(5, 100.0), np.zeros(45)]
    with pytest.raises(TypeError, match="monotonic"):
        svt.svt_retraversal(scores, threshold=90.0, epsilon=5.0, c=5)
    # raise_by = k is the same run as a threshold k·√2·b higher (b the query-noise scale)
    spec = svt.svt_standard_spec(2.0, 5, 1.0, monotonic=False)
    raised = svt.svt_retraversal(
        scores, threshold=90.0, epsilon=2.0, c=5, monotonic=False, raise_by=3, trials=200, rng=7
    )
    shifted = svt.svt_retraversal(
        scores, threshold=90.0 + 3 * np.sqrt(2) * spec.query_scale, epsilon=2.0, c=5, monotonic=False, trials=200, rng=7
    )
    assert np.array_equal(raised, shifted)


def _retraversal_pass_by_pass(q, threshold, spec, c, passes, trials, rng):
    """SVT-ReTr as Lyu et al. state it: scan the list again and again, fresh Laplace noise for every look."""
    gen = np.random.default_rng(rng)
    rho = gen.laplace(0.0, spec.threshold_scale, size=(trials, 1))
    chosen = np.zeros((trials, q.size), dtype=bool)
    for _ in range(passes):
        remaining = c - chosen.sum(axis=1, keepdims=True)
        above = (q + gen.laplace(0.0, spec.query_scale, size=(trials, q.size)) >= threshold + rho) & ~chosen
        chosen |= above & (np.cumsum(above, axis=1) <= remaining)
    return chosen


@pytest.mark.parametrize("c, passes, raise_by", [(1, 3, 0.0), (2, 2, 1.0), (2, 10, 3.0)])
def test_retraversal_samples_the_pass_by_pass_distribution(c, passes, raise_by):
    # svt_retraversal draws each item's first pass above the threshold (geometric given rho) instead of
    # scanning: the chosen sets of 5 items (32 patterns) must have the same distribution as the scan's.
    # Two samples of n each: every pattern's frequencies within 5 standard errors of their difference,
    # sqrt(2 p(1 - p)/n). Choosing by position instead of (pass, position), or ignoring max_passes,
    # moves some pattern by more than 15 standard errors at these settings.
    q, threshold, n = np.array([1.0, 3.0, 0.0, 4.0, 2.0]), 2.5, 50_000
    spec = svt.svt_standard_spec(1.0, c, 1.0, monotonic=True)
    raised = threshold + raise_by * np.sqrt(2) * spec.query_scale
    fast = svt.svt_retraversal(
        q, threshold=threshold, epsilon=1.0, c=c, monotonic=True, raise_by=raise_by, max_passes=passes, trials=n, rng=11
    )
    slow = _retraversal_pass_by_pass(q, raised, spec, c, passes, n, rng=12)
    assert np.all(fast.sum(axis=1) <= c)
    weights = 2 ** np.arange(q.size)
    f_fast = np.bincount(fast @ weights, minlength=32) / n
    f_slow = np.bincount(slow @ weights, minlength=32) / n
    p = (f_fast + f_slow) / 2
    assert np.all(np.abs(f_fast - f_slow) <= 5 * np.sqrt(2 * p * (1 - p) / n) + 1e-12)


def test_normalized_cumulative_rank():
    counts = np.array([5.0, 50.0, 40.0, 1.0])
    assert svt.normalized_cumulative_rank(np.array([False, True, True, False]), counts, 2) == pytest.approx(1.0)
    assert svt.normalized_cumulative_rank(np.array([False, True, False, True]), counts, 2) == pytest.approx(2 / 3)
    assert svt.normalized_cumulative_rank(np.array([[True, False, True, False]]), counts, 2) == pytest.approx([1 / 3])


def test_report_noisy_max_scale_matches_its_citation(rng):
    # the winner's distribution for two scores: Pr[second wins] = Pr[L₁ − L₂ > gap], Laplace difference
    gap, eps = 1.0, 1.0
    for monotonic, b in ((False, 2.0), (True, 1.0)):
        wins = mechanisms.report_noisy_max([gap, 0.0], epsilon=eps, monotonic=monotonic, rng=rng, trials=200_000)
        t = gap / b
        exact = 0.5 * np.exp(-t) * (1 + t / 2)  # P[L₂ − L₁ > gap] for L ~ Lap(b)
        assert np.mean(wins == 1) == pytest.approx(exact, abs=5 * np.sqrt(exact / 200_000))


@pytest.mark.parametrize("scale", [0.5, 4.0])
def test_the_exponential_difference_sampler_is_laplace(scale):
    # DKW: with n draws, sup |F_n − F| ≤ √(ln(2/α)/(2n)) except with probability α = 1e-6, i.e. 0.0059 at n = 200 000.
    # Scale ×√2 (a variance mix-up) or ×1/2 moves the empirical CDF by more than 0.05 somewhere.
    from scipy import stats

    n = 200_000
    draws = np.sort(svt.variants._laplace_noise(np.random.default_rng(5), scale, n))
    cdf = stats.laplace(scale=scale).cdf(draws)
    gap = max(np.max(np.arange(1, n + 1) / n - cdf), np.max(cdf - np.arange(n) / n))
    assert gap <= np.sqrt(np.log(2 / 1e-6) / (2 * n))
    assert svt.variants._laplace_noise(np.random.default_rng(5), scale, (3, 4)).shape == (3, 4)


def test_svt_s_lemmas_hold_and_are_tight():
    """Lyu et al.'s lemmas: all-⊥ and all-⊤ outputs of SVT-S cost at most ε₁, and the bound is reached for long
    outputs; a wrong ε₁ (e.g. the even split's ε/2) would fail the tightness check."""
    from dpcourse.svt import svt_s_lemma_losses

    for epsilon, c in ((1.0, 20), (0.5, 5)):
        bottom, top, epsilon_1 = svt_s_lemma_losses([1, 3, 10, 60], epsilon=epsilon, c=c)
        assert epsilon_1 == pytest.approx(epsilon / (1 + (2 * c) ** (2 / 3)))
        assert np.all(bottom <= epsilon_1 + 1e-9) and bottom[-1] == pytest.approx(epsilon_1, rel=1e-3)
        finite = top[~np.isnan(top)]
        assert np.all(finite <= epsilon_1 + 1e-9) and np.all(np.diff(bottom) > 0)
        assert np.isnan(top[-1])  # 60 > c: SVT-S stops before 60 ⊤


def test_numeric_svt_s_costs_exactly_epsilon_3_more():
    """SVT-S with ε₃ > 0: its worst event tends to ε + ε₃ (each of c fresh Laplace releases pays ε₃/c) and never
    passes it; without the c in the release's scale cΔ/ε₃ the loss would tend to ε + c·ε₃."""
    from dpcourse.svt import numeric_svt_s_loss

    for c in (1, 2, 3):
        losses = [numeric_svt_s_loss(m, epsilon=1.0, numeric_epsilon=0.5, c=c) for m in (4, 30, 150)]
        assert np.all(np.diff(losses) >= 0) and max(losses) <= 1.5 + 1e-9
        assert losses[-1] == pytest.approx(1.5, abs=1e-6)
    with pytest.raises(ValueError, match="numeric_epsilon"):
        numeric_svt_s_loss(5, epsilon=1.0, numeric_epsilon=0.0, c=1)
