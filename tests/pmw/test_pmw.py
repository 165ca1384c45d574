"""Tests of dpcourse.pmw and the notebook-06 bounds: Hedge, MW query release, Private MW, baselines."""

import numpy as np
import pytest
from scipy import sparse, stats

from dpcourse import mechanisms, pmw, svt
from dpcourse.svt import HaltedError


def _instance(num_bits=8, n=10**6, k=300, seed=1, width=2):
    x = pmw.product_histogram(n, num_bits, rng=seed)
    w = pmw.conjunction_workload(k, num_bits, width=width, rng=seed + 1)
    return x, w, w.answers(x / x.sum())


# ------------------------------------------------------------------------------ Hedge
def test_hedge_weights_follow_the_multiplicative_recursion(rng):
    losses = rng.uniform(-1, 1, size=(40, 5))
    result = pmw.hedge(losses, eta=0.3)
    w = np.ones(5)
    for t in range(40):  # the lecture's W_{t+1}(i) = W_t(i) e^{−η ℓ_t(i)}, one round at a time
        np.testing.assert_allclose(result.weights[t], w / w.sum(), rtol=1e-12)
        w = w * np.exp(-0.3 * losses[t])
    np.testing.assert_allclose(result.expected_losses, np.sum(result.weights * losses, axis=1))


@pytest.mark.parametrize("eta", [0.05, 0.2, 1.0, None])
def test_hedge_regret_within_theorem(rng, eta):
    horizon, experts = 500, 20
    losses = rng.uniform(-1, 1, size=(horizon, experts))
    losses[:, 3] -= 0.2 * (losses[:, 3] > -0.8)  # one expert a little better
    step = np.sqrt(np.log(experts) / horizon) if eta is None else eta
    result = pmw.hedge(losses, eta=step)
    assert result.regret <= result.bound + 1e-9
    assert result.bound <= pmw.hedge_regret_bound(num_experts=experts, horizon=horizon, eta=step) + 1e-9
    assert np.all(result.regret_curve <= pmw.hedge_regret_bound(num_experts=experts, horizon=horizon, eta=step))


def test_hedge_tuned_bound_is_the_minimum_over_eta():
    etas = np.linspace(0.01, 1, 2000)
    values = [pmw.hedge_regret_bound(num_experts=50, horizon=1000, eta=e) for e in etas]
    assert pmw.hedge_regret_bound(num_experts=50, horizon=1000) == pytest.approx(min(values), rel=1e-4)
    assert pmw.hedge_regret_bound(num_experts=50, horizon=1000) == pytest.approx(2 * np.sqrt(1000 * np.log(50)))


def test_hedge_competes_with_any_distribution(rng):
    # Corollary 4.2: regret against any p ≤ regret against the best expert ≤ 2√(T ln N); a point
    # mass on the best expert attains the first inequality exactly.
    horizon, experts = 400, 8
    losses = rng.uniform(-1, 1, size=(horizon, experts))
    result = pmw.hedge(losses, eta=np.sqrt(np.log(experts) / horizon))
    ps = rng.dirichlet(np.ones(experts), size=500)
    against = result.regret_against(ps)
    assert against.shape == (500,)
    assert np.all(against <= result.regret + 1e-9)
    assert result.regret_against(np.eye(experts)[result.best_expert]) == pytest.approx(result.regret)
    assert result.regret <= pmw.hedge_regret_bound(num_experts=experts, horizon=horizon)
    with pytest.raises(ValueError, match="probability"):
        result.regret_against(np.full(experts, 0.5))


def test_hedge_tuned_for_the_wrong_horizon_breaks_the_tuned_bound():
    # Why Theorem 4.1's η = √(ln N/T) is circular: it must know T. Two experts, one always right;
    # η tuned for T₀ = 10⁴ but run for T = 300 rounds exceeds 2√(T ln N) (deterministic).
    losses = np.tile([1.0, 0.0], (300, 1))
    wrong = pmw.hedge(losses, eta=np.sqrt(np.log(2) / 10_000))
    right = pmw.hedge(losses, eta=np.sqrt(np.log(2) / 300))
    tuned = pmw.hedge_regret_bound(num_experts=2, horizon=300)
    assert right.regret <= tuned < wrong.regret
    # the η-form ln N/η + ηT holds for both
    for r in (wrong, right):
        assert r.regret <= pmw.hedge_regret_bound(num_experts=2, horizon=300, eta=r.eta)


# ------------------------------------------------------------------------------ MW (no privacy)
def test_mw_update_by_hand():
    p = np.array([0.1, 0.2, 0.3, 0.4])
    q = np.array([1.0, 1.0, 0.0, 0.5])
    # q·p̃ = 0.5 > y = 0.2: the counted cells lose weight by e^{−η q(u)}
    expected = p * np.exp(-0.5 * q)
    np.testing.assert_allclose(pmw.mw_update(p, q, 0.2, eta=0.5), expected / expected.sum())
    expected = p * np.exp(0.5 * q)
    np.testing.assert_allclose(pmw.mw_update(p, q, 0.9, eta=0.5), expected / expected.sum())


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("alpha", [0.03, 0.1, 0.3])
@pytest.mark.parametrize("adversary", ["largest", "smallest"])
def test_update_count_never_exceeds_bound_on_adversarial_streams(seed, alpha, adversary):
    gen = np.random.default_rng(seed)
    d = 64
    if seed % 2:  # a point mass: the hardest data for a uniform start
        x = np.zeros(d)
        x[gen.integers(d)] = 100
    else:
        x = gen.multinomial(1000, gen.dirichlet(np.full(d, 0.2))).astype(float)
    queries = (gen.random((200, d)) < gen.uniform(0.05, 0.5, size=(200, 1))).astype(float)
    queries = np.vstack([queries, np.eye(d)])
    result = pmw.mw_query_release(x, queries, alpha=alpha, adversary=adversary)
    bound = pmw.mw_update_count_bound(domain_size=d, alpha=alpha)
    assert result.updates <= bound
    assert result.final_max_error < alpha  # the adversary ran out of bad queries
    assert np.all(result.gaps >= alpha)
    # η = α/2: the KL potential falls by at least α²/4 per update (the proof of the bound)
    assert np.all(np.diff(result.potential) <= -(alpha**2) / 4 + 1e-12)
    assert result.potential[0] <= np.log(d) + 1e-12 and result.potential[-1] >= 0


def test_mw_in_order_stream_and_sparse_queries_agree():
    x, w, _ = _instance(num_bits=6, n=5000, k=100)
    dense = w.matrix()
    a = pmw.mw_query_release(x, dense, alpha=0.05, adversary="in_order")
    b = pmw.mw_query_release(x, sparse.csr_array(dense), alpha=0.05, adversary="in_order")
    assert a.updates == b.updates > 0
    np.testing.assert_allclose(a.synthetic, b.synthetic)


def test_kl_potential():
    p = np.array([0.5, 0.5, 0.0])
    assert pmw.kl_potential(p, np.full(3, 1 / 3)) == pytest.approx(np.log(3) - np.log(2))
    assert pmw.kl_potential(p, p + 0) == 0


# ------------------------------------------------------------------------------ queries
def test_conjunction_query_matches_dense_and_sparse(rng):
    v = rng.random(2**7)
    q = pmw.ConjunctionQuery(7, (5, 0, 2), (1, 0, 1))
    u = np.arange(2**7)
    mask = (((u >> 5) & 1) == 1) & ((u & 1) == 0) & (((u >> 2) & 1) == 1)
    np.testing.assert_array_equal(q.dense(), mask.astype(float))
    assert q.view(v).sum() == pytest.approx(v[mask].sum())
    w = v.copy()
    pmw.conjunctions._as_query(q, 2**7).scale(w, np.log(2))
    np.testing.assert_allclose(w, np.where(mask, 2 * v, v))
    row = sparse.csr_array(mask.astype(float)[None, :])
    assert pmw.conjunctions._as_query(row, 2**7).dot(v) == pytest.approx(v[mask].sum())


def test_workload_rows_are_the_checked_queries():
    # the workload checks its rows once and builds its queries without checking again: the same queries
    w = pmw.conjunction_workload(200, 9, width=3, rng=5)
    for i in range(len(w)):
        q = pmw.ConjunctionQuery(9, tuple(w.attributes[i].tolist()), tuple(w.values[i].tolist()))
        assert w[i] == q and hash(w[i]) == hash(q)
    with pytest.raises(TypeError):
        w[1:3]


def test_workload_returns_one_query_object_per_row():
    # a stream asked again and again (PMW and its baselines) reuses each query and its view's layout
    w = pmw.conjunction_workload(50, 8, width=2, rng=1)
    assert w[3] is w[3] and w[-1] is w[49] and w[-50] is w[0]
    assert list(w) == [w[i] for i in range(50)]
    for i in (50, -51):
        with pytest.raises(IndexError, match="out of range"):
            w[i]
    v = np.arange(2.0**8)
    assert w.answers(v).tolist() == [float(w[i].dense() @ v) for i in range(50)]


@pytest.mark.parametrize("num_bits, k, width", [(6, 2000, 2), (12, 3000, 2), (9, 300, 3), (5, 40, 5), (16, 50, 1)])
def test_workload_answers_are_each_querys_own_sum(num_bits, k, width):
    # answers() sums each distinct query once and shares it with the rows that repeat it (2000 two-way
    # queries over 6 bits have at most 60 distinct ones): bit for bit each query's own strided sum
    w = pmw.conjunction_workload(k, num_bits, width=width, rng=3)
    v = np.random.default_rng(4).random(2**num_bits)
    own = [pmw.conjunctions._as_query(w[i], 2**num_bits).dot(v) for i in range(k)]
    assert w.answers(v).tolist() == own
    m = np.zeros((k, 2**num_bits))  # and the same as the dense rows, up to rounding
    for i in range(k):
        m[i] = w[i].dense()
    np.testing.assert_allclose(w.answers(v), m @ v, rtol=1e-12)


def test_workload_answers_tell_apart_queries_on_the_same_bits():
    # the same attributes with other values, or the same values on other attributes, are other queries
    w = pmw.ConjunctionWorkload(4, [[0, 1], [1, 0], [0, 1], [0, 2], [2, 0]], [[1, 0], [0, 1], [0, 1], [1, 0], [0, 1]])
    v = 2.0 ** np.arange(16)  # every cell its own bit: a sum names its cells
    cells = [
        [u for u in range(16) if all((u >> a) & 1 == b for a, b in zip(row, vals, strict=True))]
        for row, vals in zip(w.attributes.tolist(), w.values.tolist(), strict=True)
    ]
    assert w.answers(v).tolist() == [float(sum(2.0**u for u in c)) for c in cells]
    assert pmw.ConjunctionWorkload(3, np.zeros((0, 2)), np.zeros((0, 2))).answers(np.ones(8)).shape == (0,)


def test_a_workload_stream_is_answered_as_query_by_query():
    # run_stream sums a workload's true answers at once; the curator's answers and its state are the same
    x, w, _ = _instance(num_bits=9, k=600)
    alpha = 0.1
    whole = pmw.PrivateMW(x, epsilon=1.0, alpha=alpha, max_queries=600, rng=7)
    one_by_one = pmw.PrivateMW(x, epsilon=1.0, alpha=alpha, max_queries=600, rng=7)
    released = pmw.run_stream(whole, w)
    assert released.tolist() == [one_by_one.answer(q) for q in w]
    assert whole.updates == one_by_one.updates > 0 and np.array_equal(whole.synthetic, one_by_one.synthetic)


def test_a_workload_run_to_the_end_answers_the_refused_queries_from_the_synthetic_data():
    # a tiny n spends PMW's updates early: the queries it refuses get q·p̃ of its final synthetic data
    base = pmw.product_histogram(10**9, 6, rng=5) / 10**9
    w = pmw.conjunction_workload(200, 6, width=2, rng=6)
    alpha = min(1.0, pmw.pmw_notes_alpha(n=300, epsilon=0.5, domain_size=64, num_queries=len(w), beta=0.05))
    whole = pmw.PrivateMW(base * 300, epsilon=0.5, alpha=alpha, max_queries=len(w), rng=7)
    stopped = pmw.PrivateMW(base * 300, epsilon=0.5, alpha=alpha, max_queries=len(w), rng=7)
    answers = pmw.run_stream_then_synthetic(whole, w)
    released = pmw.run_stream(stopped, w)
    refused = stopped.answered
    assert 0 < refused < len(w) and whole.answered == refused
    assert answers[:refused].tolist() == released[:refused].tolist()
    assert answers[refused:].tolist() == [stopped.synthetic_answer(w[i]) for i in range(refused, len(w))]
    with pytest.raises(TypeError, match="curator must be a PrivateMW"):
        pmw.run_stream_then_synthetic(pmw.LaplacePerQuery(base * 300, epsilon=0.5, num_queries=len(w)), w)
    with pytest.raises(TypeError, match="workload must be a ConjunctionWorkload"):
        pmw.run_stream_then_synthetic(stopped, [w[0]])


def test_workload_is_compact():
    w = pmw.conjunction_workload(5000, 16, width=3, rng=0)
    assert w.attributes.nbytes + w.values.nbytes == 2 * 5000 * 3
    assert all(len(set(row)) == 3 for row in w.attributes.tolist())


# ------------------------------------------------------------------------------ PrivateMW
def test_notes_calibration_constants():
    x = np.full(2**10, 100.0)
    c = pmw.PrivateMW(x, epsilon=2.0, alpha=0.2, rng=0)
    n = x.sum()
    assert c.max_updates == int(np.floor(16 * np.log(2**10) / 0.2**2))
    assert c.epsilon0 == pytest.approx(2.0 / (2 * c.max_updates))
    assert c.noise_scales == pytest.approx(
        {"threshold": 2 / (n * c.epsilon0), "query": 4 / (n * c.epsilon0), "release": 1 / (n * c.epsilon0)}
    )
    assert c.threshold == 0.2 and c.eta == 0.05


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_dwork_roth_calibration_constants(delta):
    x = np.full(2**10, 100.0)
    n, eps, alpha = x.sum(), 2.0, 0.2
    c = pmw.PrivateMW(x, epsilon=eps, alpha=alpha, delta=delta, calibration="dwork_roth", rng=0)
    cc = int(np.floor(4 * np.log(2**10) / alpha**2))
    assert c.max_updates == cc and c.threshold == 2 * alpha and c.eta == alpha / 2
    # Dwork & Roth, Algorithm 3: σ(ε) = 2c/ε (δ = 0) or √(32c ln(2/δ))/ε; threshold Lap(σ(ε₁)),
    # comparisons Lap(2σ(ε₁)), released values Lap(σ(ε₂)); all divided by n. ε₁ = 8ε/9, ε₂ = 2ε/9
    # for δ = 0; ε₁ = √512 ε/(√512 + 1), ε₂ = 2ε/(√512 + 1) for δ > 0 (the 8/9 split fails this).
    sigma = (lambda e: 2 * cc / e) if delta == 0 else (lambda e: np.sqrt(32 * cc * np.log(2 / delta)) / e)
    r = 8.0 if delta == 0 else np.sqrt(512)
    eps1, eps2 = r / (r + 1) * eps, 2 * eps / (r + 1)
    assert c.noise_scales["threshold"] == pytest.approx(sigma(eps1) / n, rel=1e-12)
    assert c.noise_scales["query"] == pytest.approx(2 * sigma(eps1) / n, rel=1e-12)
    assert c.noise_scales["release"] == pytest.approx(sigma(eps2) / n, rel=1e-12)


def test_dwork_roth_requirement_matches_the_core_calibration():
    # R(α) is NumericSparse's Theorem 3.28 α for c = ⌊4 ln|X|/α²⌋ … written with c = 4 ln|X|/α²
    # and k′ = 2|Q|, normalised by n. Rebuild it from the comparison noise the curator really
    # uses (4σ₁(ln 2|Q| + ln(4c/β))/n with c unrounded): equal for δ = 0 and δ > 0. With the 8/9
    # split at δ > 0 this is 1.077× R(α), and the guaranteed 3α would be about 4% optimistic.
    n, eps, d, k, beta, alpha = 1e9, 1.0, 2**10, 500, 0.05, 0.05
    for delta in (0.0, 1e-6):
        c_real = 4 * np.log(d) / alpha**2
        sigma1 = svt.numeric_sparse_scales(epsilon=eps, c=1, delta=delta)[0]
        sigma1 *= c_real if delta == 0 else np.sqrt(c_real)  # σ ∝ c (δ = 0) or √c (δ > 0)
        rebuilt = 4 * sigma1 * (np.log(2 * k) + np.log(4 * c_real / beta)) / n
        assert pmw.pmw_dwork_roth_requirement(
            alpha, n=n, epsilon=eps, domain_size=d, num_queries=k, beta=beta, delta=delta
        ) == pytest.approx(rebuilt, rel=1e-12)


@pytest.mark.parametrize("calibration", ["notes", "dwork_roth"])
def test_privacy_accounting_and_refusal(calibration):
    # Tiny n and ε: the noise swamps the comparisons, so updates come fast and the budget runs out.
    x = np.array([3.0, 1.0, 0.0, 6.0])
    c = pmw.PrivateMW(x, epsilon=0.05, alpha=0.5, calibration=calibration, rng=7)
    queries = [np.array(b, dtype=float) for b in np.ndindex(2, 2, 2, 2)][1:]
    spent = []
    with pytest.raises(pmw.BudgetExhaustedError, match="updates"):
        for i in range(100_000):
            c.answer(queries[i % len(queries)])
            spent.append(c.privacy_spent)
    assert c.exhausted and c.updates == c.max_updates
    assert np.all(np.diff(spent) >= 0) and max(spent) <= 0.05 * (1 + 1e-12)
    if calibration == "notes":
        assert spent[-1] == pytest.approx(0.05)  # 2ε₀N = ε exactly once all N rounds are used
    before = c.privacy_spent
    with pytest.raises(HaltedError):
        c.answer(queries[0])
    assert c.privacy_spent == before and c.answered == len(spent)
    assert 0 <= c.synthetic_answer(queries[0]) <= 1  # free post-processing still works
    h = c.history
    assert h.updated.sum() == c.updates and h.answers.size == c.answered


def test_max_queries_refusal_and_privacy_starts_at_zero():
    x, w, _ = _instance(num_bits=5, n=10**4, k=3)
    c = pmw.PrivateMW(x, epsilon=1.0, alpha=0.3, max_queries=2, rng=0)
    assert c.privacy_spent == 0
    c.answer(w[0])
    c.answer(w[1])
    with pytest.raises(pmw.BudgetExhaustedError, match="max_queries"):
        c.answer(w[2])


@pytest.mark.parametrize("calibration, delta", [("notes", 0.0), ("dwork_roth", 0.0), ("dwork_roth", 1e-6)])
def test_answers_within_theorem_error(calibration, delta):
    # Each run is one draw of the event "every answer within the theorem's error", which fails
    # with probability ≤ β. Over R runs the failures are ≤ Binomial(R, β); we allow the
    # binomial's 1 − 10⁻⁶ quantile, so a correct implementation fails this test with prob. < 10⁻⁶.
    beta, runs, k, d = 0.05, 12, 200, 10
    n_needed = {"notes": 5e9, "dwork_roth": 2e9}[calibration]
    x = pmw.product_histogram(int(n_needed), d, rng=3)
    w = pmw.conjunction_workload(k, d, width=2, rng=4)
    truth = w.answers(x / x.sum())
    failures = 0
    for seed in range(runs):
        c = pmw.PrivateMW(
            x, epsilon=1.0, alpha=0.1, beta=beta, delta=delta, max_queries=k, calibration=calibration, rng=seed
        )
        level = c.guaranteed_error
        assert level is not None, "the instance must meet the theorem's condition"
        answers = pmw.run_stream(c, w)
        failures += not np.all(np.abs(answers - truth) <= level)
        assert c.updates <= c.max_updates and c.privacy_spent <= 1.0
    assert failures <= stats.binom.isf(1e-6, runs, beta)


def test_guaranteed_error_is_none_when_the_condition_fails():
    x = np.full(2**6, 10.0)
    assert pmw.PrivateMW(x, epsilon=1.0, alpha=0.1, max_queries=100, rng=0).guaranteed_error is None
    assert pmw.PrivateMW(x, epsilon=1.0, alpha=0.1, rng=0).guaranteed_error is None


def test_released_noise_has_the_notes_scale():
    # With α above every possible gap... no: with a huge n every update is a Laplace release of scale
    # 1/(nε₀); force updates with α small and collect y − q·p. Mean |Z| of Lap(b) is b, sd b;
    # 5 standard errors b·5/√m is the tolerance.
    d = 2**6
    x = np.zeros(d)
    x[0] = 10**6
    c = pmw.PrivateMW(x, epsilon=50.0, alpha=0.05, rng=11)
    q = np.zeros(d)
    q[0] = 1.0
    noise = []
    for _ in range(400):
        y = c.answer(q)
        if c.history.updated[-1]:
            noise.append(y - 1.0)
    m = len(noise)
    assert m > 100
    b = c.noise_scales["release"]
    assert np.mean(np.abs(noise)) == pytest.approx(b, abs=5 * b / np.sqrt(m))


# ------------------------------------------------------------------------------ baselines
def test_release_errors_scores_every_method_on_every_query():
    # A tiny n exhausts PMW's updates early; the refused tail is scored with q·p̃ (not dropped),
    # so the PMW error is a max over all k queries, like the baselines'.
    base = pmw.product_histogram(10**9, 6, rng=5) / 10**9
    w = pmw.conjunction_workload(200, 6, width=2, rng=6)
    r = pmw.release_errors(base * 300, w, epsilon=0.5, rng=7)
    assert r.pmw_answered < len(w)
    c = pmw.PrivateMW(
        base * 300, epsilon=0.5, alpha=r.alpha, beta=0.05, max_queries=len(w), rng=np.random.default_rng(7)
    )
    answers = pmw.run_stream(c, w)
    answers[c.answered :] = [c.synthetic_answer(w[i]) for i in range(c.answered, len(w))]
    truth = w.answers(base)
    assert r.pmw == pytest.approx(np.max(np.abs(answers - truth)))
    assert r.pmw >= np.nanmax(
        np.abs(
            pmw.run_stream(
                pmw.PrivateMW(base * 300, epsilon=0.5, alpha=r.alpha, max_queries=len(w), rng=np.random.default_rng(7)),
                w,
            )
            - truth
        )
    )


def test_per_query_epsilon():
    assert pmw.per_query_epsilon(epsilon=1.0, num_queries=10) == 0.1
    e0 = pmw.per_query_epsilon(epsilon=1.0, num_queries=1000, delta=1e-6)
    assert e0 * np.sqrt(2 * 1000 * np.log(1e6)) + 1000 * e0 * np.expm1(e0) == pytest.approx(1.0)
    assert e0 > 1.0 / 1000
    assert pmw.per_query_epsilon(epsilon=1.0, num_queries=2, delta=1e-6) == 0.5  # basic wins for small k


def test_laplace_per_query_noise_and_refusal():
    # m answers of Lap(b): mean |Z| = b with standard error b/√m; 5 standard errors.
    x = np.array([200.0, 300.0, 500.0])
    m = 4000
    base = pmw.LaplacePerQuery(x, epsilon=2.0, num_queries=m, rng=0)
    z = np.array([base.answer([1.0, 0.0, 1.0]) for _ in range(m)]) - 0.7
    b = m / (1000 * 2.0)
    assert base.noise_scale == pytest.approx(b)
    assert np.mean(np.abs(z)) == pytest.approx(b, abs=5 * b / np.sqrt(m))
    assert base.privacy_spent == pytest.approx(2.0)
    with pytest.raises(pmw.BudgetExhaustedError):
        base.answer([1.0, 0.0, 0.0])


def test_noisy_histogram_answers_from_one_release():
    x = np.array([200.0, 300.0, 500.0])
    h = pmw.NoisyHistogram(x, epsilon=1.0, rng=0)
    q = np.array([1.0, 0.5, 0.0])
    assert h.answer(q) == pytest.approx(q @ h.noisy_histogram / 1000)
    assert h.answer(q) == h.answer(q) and h.privacy_spent == 1.0


def test_noisy_histogram_is_calibrated_to_replace_one_neighbours():
    """Replace-one moves two counts by 1: L1 sensitivity 2, noise Lap(2/ε) per cell (Lap(1/ε) would be 2ε-DP)."""
    x = np.zeros(2)
    x[0], x[1] = 5.0, 5.0
    neighbour = np.array([4.0, 6.0])  # one record replaced
    assert np.abs(x - neighbour).sum() == pmw.REPLACE_ONE_HISTOGRAM_SENSITIVITY == 2.0
    eps, m = 0.5, 200_000
    h = pmw.NoisyHistogram(np.full(m, 3.0), epsilon=eps, rng=1)
    assert h.noise_scale == pytest.approx(2 / eps)  # fails on the old 1/ε
    # E|Lap(b)| = b, sd b; 5 standard errors of the mean of m draws
    assert np.mean(np.abs(h.noisy_histogram - 3.0)) == pytest.approx(2 / eps, abs=5 * (2 / eps) / np.sqrt(m))
    # the bound is the Lap(1/ε) level at ε/2
    kw = {"domain_size": 1024, "num_queries": 100, "beta": 0.05, "n": 1e6}
    assert pmw.replace_one_histogram_max_error_bound(epsilon=eps, **kw) == pytest.approx(
        mechanisms.noisy_histogram_max_error_bound(epsilon=eps / 2, **kw)
    )
    assert pmw.replace_one_histogram_max_error_bound(epsilon=eps, **kw) > 1.9 * (
        mechanisms.noisy_histogram_max_error_bound(epsilon=eps, **kw)
    )


def test_smallest_gap_adversary_forces_more_updates_than_the_largest():
    """The largest gap drops the potential most per update, so it *minimises* the count."""
    x = pmw.product_histogram(100_000, 8, rng=1)
    w = pmw.conjunction_workload(400, 8, width=2, rng=2)
    queries = np.vstack([w.matrix(), np.eye(256)])
    largest = pmw.mw_query_release(x, queries, alpha=0.05, adversary="largest")
    smallest = pmw.mw_query_release(x, queries, alpha=0.05, adversary="smallest")
    assert (largest.updates, smallest.updates) == (156, 663)
    assert np.mean(-np.diff(largest.potential)) > 3 * np.mean(-np.diff(smallest.potential))
    assert np.all(smallest.gaps >= 0.05)
    with pytest.raises(ValueError, match="adversary"):
        pmw.mw_query_release(x, queries, alpha=0.05, adversary="worst")


# ------------------------------------------------------------------------------ bounds
def test_notes_alpha_spends_exactly_epsilon():
    n, eps, d, k, beta = 1e7, 0.5, 2**12, 500, 0.05
    a = pmw.pmw_notes_alpha(n=n, epsilon=eps, domain_size=d, num_queries=k, beta=beta)
    eps0 = pmw.pmw_notes_epsilon0(n=n, alpha=a, num_queries=k, beta=beta)
    assert 2 * eps0 * pmw.pmw_update_count_bound(domain_size=d, alpha=a) == pytest.approx(eps)
    assert pmw.pmw_notes_error_bound(n=n, epsilon=eps, domain_size=d, num_queries=k, beta=beta) == 1.375 * a


def test_notes_epsilon0_written_out():
    # 3k/β = e² makes the logarithm 2: ε₀ = 32/(nα)
    assert pmw.pmw_notes_epsilon0(n=100.0, alpha=0.5, num_queries=1, beta=3 / np.e**2) == pytest.approx(32 / 50)
    assert pmw.pmw_notes_epsilon0(n=1e9, alpha=0.04, num_queries=3000, beta=0.05) == pytest.approx(
        16 * np.log(180_000) / 4e7
    )


def test_guaranteed_error_needs_the_notes_epsilon0():
    # ε₀ = ε/(2N) against the theorem's 16 ln(3k/β)/(nα): the guarantee holds from the n where they meet, not before
    d, k, eps, alpha, beta = 2**6, 100, 1.0, 0.2, 0.05
    big_n = np.floor(pmw.pmw_update_count_bound(domain_size=d, alpha=alpha))
    n_meet = 16 * np.log(3 * k / beta) / (alpha * eps / (2 * big_n))
    for n, holds in ((1.001 * n_meet, True), (0.999 * n_meet, False)):
        c = pmw.PrivateMW(np.full(d, n / d), epsilon=eps, alpha=alpha, beta=beta, max_queries=k, rng=0)
        assert (c.guaranteed_error == pytest.approx(11 * alpha / 8)) if holds else c.guaranteed_error is None


@pytest.mark.parametrize("delta", [0.0, 1e-6])
def test_dwork_roth_alpha_is_the_fixed_point(delta):
    kw = dict(n=1e7, epsilon=1.0, domain_size=2**12, num_queries=500, beta=0.05, delta=delta)
    a = pmw.pmw_dwork_roth_alpha(**kw)
    assert pmw.pmw_dwork_roth_requirement(a, **kw) == pytest.approx(a, rel=1e-9)
    assert pmw.pmw_dwork_roth_requirement(0.9 * a, **kw) > 0.9 * a
    assert pmw.pmw_dwork_roth_error_bound(**kw) == pytest.approx(3 * a)
    # the δ = 0 right-hand side written out
    L = np.log(2**12)
    r = 36 * L * (np.log(500) + np.log(32 * L / (0.04 * 0.05))) / (1.0 * 0.04 * 1e7)
    if delta == 0:
        assert pmw.pmw_dwork_roth_requirement(0.2, **kw) == pytest.approx(r)


def test_update_count_bounds():
    assert pmw.mw_update_count_bound(domain_size=1024, alpha=0.1) == pytest.approx(400 * np.log(1024))
    assert pmw.mw_update_count_bound(domain_size=1024, alpha=0.1, statement="notes") == pytest.approx(
        100 * np.log(1024)
    )
    assert pmw.pmw_update_count_bound(domain_size=1024, alpha=0.1) == pytest.approx(1600 * np.log(1024))


# ------------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(histogram=[1.0, -1.0, 3.0]), ValueError, "histogram"),
        (dict(histogram=[0.0, 0.0]), ValueError, "positive total"),
        (dict(histogram=[5.0]), ValueError, "histogram"),
        (dict(alpha=0.0), ValueError, "alpha"),
        (dict(alpha=-0.1), ValueError, "alpha"),
        (dict(alpha=1.5), ValueError, "alpha"),
        (dict(epsilon=0.0), ValueError, "epsilon"),
        (dict(beta=1.0), ValueError, "beta"),
        (dict(delta=1e-6, calibration="notes"), ValueError, "delta"),
        (dict(delta=2.0), ValueError, "delta"),
        (dict(max_queries=0), ValueError, "max_queries"),
        (dict(calibration="paper"), ValueError, "calibration"),
        (dict(rng="seed"), TypeError, "rng"),
    ],
)
def test_private_mw_rejects_bad_input(kwargs, error, match):
    args = dict(histogram=[1.0, 2.0, 3.0, 4.0], epsilon=1.0, alpha=0.2)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        pmw.PrivateMW(args.pop("histogram"), **args)


def test_queries_outside_unit_cube_rejected():
    c = pmw.PrivateMW([1.0, 2.0, 3.0, 4.0], epsilon=1.0, alpha=0.2, rng=0)
    for bad in ([1.0, 2.0, 0.0, 0.0], [-0.1, 0, 0, 0], [1.0, 0.0, 0.0], [np.nan, 0, 0, 0]):
        with pytest.raises(ValueError, match="query"):
            c.answer(bad)
    with pytest.raises(ValueError, match="query"):
        c.answer(sparse.csr_array(np.array([[0.0, 2.0, 0.0, 0.0]])))
    with pytest.raises(ValueError, match="universe"):
        c.answer(pmw.ConjunctionQuery(3, (0,), (1,)))
    assert c.answered == 0 and c.privacy_spent == 0


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pmw.hedge([[2.0, 0.0]], eta=0.1), "losses"),
        (lambda: pmw.hedge([[0.5, 0.0]], eta=0.0), "eta"),
        (lambda: pmw.hedge([0.5, 0.0], eta=0.1), "losses"),
        (lambda: pmw.mw_update([0.5, 0.6], [1, 0], 0.5, eta=0.1), "synthetic"),
        (lambda: pmw.mw_update([0.5, 0.5], [1, 2], 0.5, eta=0.1), "query"),
        (lambda: pmw.mw_update([0.5, 0.5], [1, 0], 0.5, eta=-1), "eta"),
        (lambda: pmw.mw_query_release([1, 2], [[1, 0]], alpha=0), "alpha"),
        (lambda: pmw.mw_query_release([1, 2], [[1, 0, 0]], alpha=0.1), "queries"),
        (lambda: pmw.mw_query_release([-1, 2], [[1, 0]], alpha=0.1), "histogram"),
        (lambda: pmw.kl_potential([0.5, 0.5], [1.0]), "synthetic"),
        (lambda: pmw.ConjunctionQuery(3, (0, 0), (1, 1)), "attributes"),
        (lambda: pmw.ConjunctionQuery(3, (5,), (1,)), "attributes"),
        (lambda: pmw.ConjunctionQuery(3, (1,), (2,)), "values"),
        (lambda: pmw.ConjunctionWorkload(3, np.array([[0, 0]]), np.array([[1, 1]])), "attributes"),
        (lambda: pmw.ConjunctionWorkload(3, np.array([[5]]), np.array([[1]])), "attributes"),
        (lambda: pmw.ConjunctionWorkload(3, np.array([[1]]), np.array([[2]])), "values"),
        (lambda: pmw.ConjunctionWorkload(3, np.array([[1]]), np.array([[1, 0]])), "values"),
        (lambda: pmw.conjunction_workload(10, 4, width=5), "width"),
        (lambda: pmw.product_histogram(10, 4, skew=0.7), "skew"),
        (lambda: pmw.per_query_epsilon(epsilon=1, num_queries=0), "num_queries"),
        (lambda: pmw.per_query_epsilon(epsilon=1, num_queries=5, delta=1.5), "delta"),
        (lambda: pmw.LaplacePerQuery([1, -2], epsilon=1, num_queries=3), "histogram"),
        (lambda: pmw.NoisyHistogram([1, 2], epsilon=0), "epsilon"),
        (lambda: pmw.hedge_regret_bound(num_experts=0, horizon=5), "num_experts"),
        (lambda: pmw.hedge_regret_bound(num_experts=3, horizon=5, eta=2.0), "eta"),
        (lambda: pmw.mw_update_count_bound(domain_size=8, alpha=0.1, statement="book"), "statement"),
        (lambda: pmw.pmw_update_count_bound(domain_size=1, alpha=0.1), "domain_size"),
        (lambda: pmw.pmw_notes_alpha(n=0, epsilon=1, domain_size=8, num_queries=5, beta=0.1), "n"),
        (lambda: pmw.pmw_notes_epsilon0(n=10, alpha=0, num_queries=5, beta=0.1), "alpha"),
        (lambda: pmw.pmw_notes_epsilon0(n=10, alpha=0.1, num_queries=5, beta=1.5), "beta"),
        (lambda: pmw.pmw_notes_error_bound(n=10, epsilon=1, domain_size=8, num_queries=5, beta=0), "beta"),
        (
            lambda: pmw.pmw_dwork_roth_requirement(0, n=10, epsilon=1, domain_size=8, num_queries=5, beta=0.1),
            "alpha",
        ),
        (
            lambda: pmw.pmw_dwork_roth_alpha(n=10, epsilon=1, domain_size=8, num_queries=5, beta=0.1, delta=1),
            "delta",
        ),
        (
            lambda: pmw.pmw_dwork_roth_error_bound(n=10, epsilon=-1, domain_size=8, num_queries=5, beta=0.1),
            "epsilon",
        ),
    ],
)
def test_functions_reject_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda w, x: pmw.release_errors(x, w, epsilon=0.0), ValueError, "epsilon"),
        (lambda w, x: pmw.release_errors(x, w, epsilon=1.0, truth=np.zeros(3)), ValueError, "truth"),
        (
            lambda w, x: pmw.run_stream_with_potential(pmw.PrivateMW(x, epsilon=1, alpha=0.2), w, np.ones(3)),
            ValueError,
            "p",
        ),
        (lambda w, x: pmw.conjunction_workload(0, 4), ValueError, "num_queries"),
        (lambda w, x: pmw.product_histogram(0, 4), ValueError, "n"),
        (lambda w, x: w.answers(np.ones(5)), ValueError, "vector"),
    ],
)
def test_stream_helpers_reject_bad_input(call, error, match):
    x = pmw.product_histogram(1000, 4, rng=0)
    w = pmw.conjunction_workload(5, 4, rng=0)
    with pytest.raises(error, match=match):
        call(w, x)


def test_release_errors_matches_the_curators():
    x = pmw.product_histogram(10**6, 6, rng=0)
    w = pmw.conjunction_workload(50, 6, rng=1)
    r = pmw.release_errors(x, w, epsilon=1.0, alpha=0.2, rng=5)
    assert r.pmw_answered == 50 and r.alpha == 0.2 and r.pmw_privacy_spent <= 1.0
    # the Laplace baseline's max error is below Theorem 3.8's level except with probability β = 10⁻⁶
    assert r.laplace <= mechanisms.composed_laplace_max_error_bound(num_queries=50, beta=1e-6, epsilon=1.0, n=10**6)
    assert r.histogram <= pmw.replace_one_histogram_max_error_bound(
        domain_size=64, num_queries=50, beta=1e-6, epsilon=1.0, n=10**6
    )


def test_noisy_histogram_counts_only_the_queries_it_answered():
    curator = pmw.NoisyHistogram(np.arange(1.0, 17.0), epsilon=1.0, rng=0)
    curator.answer(np.ones(16))
    with pytest.raises(ValueError, match="query"):
        curator.answer(np.full(16, 2.0))  # entries outside [0, 1]: refused, and not counted as answered
    assert curator.answered == 1
