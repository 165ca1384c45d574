import numpy as np
import pytest
from scipy import sparse
from scipy.sparse import linalg as sparse_linalg

from dpcourse import linear_queries, mechanisms
from tests.linear_queries.test_workloads import explicit

STRATEGIES = {
    "identity": linear_queries.identity_strategy,
    "prefix": linear_queries.prefix_strategy,
    "binary tree": lambda d: linear_queries.hierarchical_strategy(d, 2),
    "ternary tree, no root": lambda d: linear_queries.hierarchical_strategy(d, 3, include_root=False),
    "wavelet": linear_queries.wavelet_strategy,
}


def brute_force_error(workload, strategy, epsilon, noise="laplace", delta=None):
    """Dense pseudo-inverse and the explicit W: mean over queries of Var(w·A⁺z)."""
    w, a = explicit(workload), strategy.matrix.toarray()
    reconstruct = w @ np.linalg.pinv(a)
    if noise == "laplace":
        variance = 2 * (strategy.l1_sensitivity / epsilon) ** 2
    else:
        variance = mechanisms.gaussian_sigma(l2_sensitivity=strategy.l2_sensitivity, epsilon=epsilon, delta=delta) ** 2
    return variance * np.sum(reconstruct**2) / w.shape[0]


@pytest.mark.parametrize("name", STRATEGIES)
@pytest.mark.parametrize("d", [2, 5, 16])
@pytest.mark.parametrize("build", [linear_queries.prefix_workload, linear_queries.all_range_workload])
def test_exact_error_against_brute_force(name, d, build):
    workload, strategy = build(d), STRATEGIES[name](d)
    assert linear_queries.expected_error(workload, strategy, epsilon=0.7) == pytest.approx(
        brute_force_error(workload, strategy, 0.7), rel=1e-9
    )
    assert linear_queries.expected_error(
        workload, strategy, epsilon=0.7, noise="gaussian", delta=1e-6
    ) == pytest.approx(brute_force_error(workload, strategy, 0.7, "gaussian", 1e-6), rel=1e-9)


def test_sensitivities_of_the_strategies():
    assert linear_queries.identity_strategy(10).l1_sensitivity == 1
    assert linear_queries.prefix_strategy(10).l1_sensitivity == 10
    assert linear_queries.hierarchical_strategy(1024).l1_sensitivity == 11  # log₂ 1024 + 1 levels
    assert linear_queries.hierarchical_strategy(1000, 10).l1_sensitivity == 4  # 1, 10, 100, 1000
    assert linear_queries.hierarchical_strategy(1024, include_root=False).l1_sensitivity == 10
    assert linear_queries.wavelet_strategy(64).l1_sensitivity == 7
    assert linear_queries.hierarchical_strategy(16).l2_sensitivity == pytest.approx(np.sqrt(5))
    for d in (16, 64, 1024):  # the notes' claim Δ₁ ≤ 2 log₂ d
        assert linear_queries.hierarchical_strategy(d).l1_sensitivity <= 2 * np.log2(d)


def brute_force_replace_one(strategy):
    """max over pairs of cells u ≠ v of ‖A eᵤ − A e_v‖₁, from the dense matrix."""
    a = strategy.matrix.toarray()
    return max(np.abs(a[:, u] - a[:, v]).sum() for u in range(a.shape[1]) for v in range(a.shape[1]))


@pytest.mark.parametrize("name", STRATEGIES)
@pytest.mark.parametrize("d", [1, 2, 7, 16, 33])
def test_replace_one_sensitivity_matches_brute_force(name, d):
    strategy = STRATEGIES[name](d)
    replace = linear_queries.l1_sensitivity(strategy, neighbours="replace_one")
    assert replace == brute_force_replace_one(strategy)
    add_remove = linear_queries.l1_sensitivity(strategy)
    assert add_remove == strategy.l1_sensitivity
    assert replace <= 2 * add_remove  # triangle inequality: eᵤ − e_v is two add/remove steps


def test_replace_one_sensitivity_of_a_general_matrix(rng):
    # entries outside {−1, 0, 1} take the pair-by-pair path
    strategy = linear_queries.Strategy(sparse.csr_array(rng.normal(size=(6, 5))), "random")
    assert linear_queries.l1_sensitivity(strategy, neighbours="replace_one") == pytest.approx(
        brute_force_replace_one(strategy)
    )


def test_tree_sensitivity_under_both_relations():
    # the notes' claim Δ₁ ≤ 2 log₂ d: add/remove gives log₂ d + 1 (one node per level), the notes'
    # replace-one relation gives exactly 2 log₂ d (two nodes per level below the root)
    for d in (8, 64, 1024, 4096):
        tree = linear_queries.hierarchical_strategy(d)
        assert linear_queries.l1_sensitivity(tree, neighbours="add_remove") == np.log2(d) + 1
        assert linear_queries.l1_sensitivity(tree, neighbours="replace_one") == 2 * np.log2(d)
    assert (
        linear_queries.l1_sensitivity(linear_queries.hierarchical_strategy(4**5, 4), neighbours="replace_one") == 10
    )  # 2·log₄ d
    assert (
        linear_queries.l1_sensitivity(
            linear_queries.hierarchical_strategy(64, include_root=False), neighbours="replace_one"
        )
        == 12
    )  # 2·levels
    assert linear_queries.l1_sensitivity(linear_queries.identity_strategy(5), neighbours="replace_one") == 2
    assert (
        linear_queries.l1_sensitivity(linear_queries.prefix_strategy(10), neighbours="replace_one") == 9
    )  # prefixes u … v − 1


@pytest.mark.parametrize("d, b, root", [(16, 2, True), (13, 3, True), (20, 4, False), (1, 2, True), (100, 16, True)])
def test_two_pass_consistency_equals_least_squares(rng, d, b, root):
    strategy = linear_queries.hierarchical_strategy(d, b, root)
    y = rng.normal(size=(4, strategy.num_queries))
    dense = np.linalg.lstsq(strategy.matrix.toarray(), y.T, rcond=None)[0].T
    np.testing.assert_allclose(linear_queries.tree_least_squares(strategy, y), dense, atol=1e-10)
    generic = sparse_linalg.lsqr(strategy.matrix, y[0], atol=1e-14, btol=1e-14, iter_lim=10_000)[0]
    np.testing.assert_allclose(linear_queries.tree_least_squares(strategy, y[0]), generic, atol=1e-8)


@pytest.mark.parametrize("name", ["identity", "prefix", "wavelet"])
def test_least_squares_of_square_strategies_inverts_them(rng, name):
    strategy = STRATEGIES[name](12)
    x = rng.normal(size=12)
    np.testing.assert_allclose(linear_queries.least_squares(strategy, strategy.matrix @ x), x, atol=1e-10)


def test_canonical_decomposition_partitions_every_interval_minimally():
    for d, b in ((16, 2), (13, 3), (40, 4)):
        tree = linear_queries.hierarchical_strategy(d, b)
        levels = len(tree.level_sizes) - 1
        for s in range(d):
            for t in range(s, d):
                nodes = linear_queries.canonical_decomposition(tree, s, t)
                cover = np.zeros(d)
                for level, index in nodes:
                    size = tree.level_sizes[level]
                    cover[index * size : min((index + 1) * size, d)] += 1
                assert np.array_equal(cover, (np.arange(d) >= s) & (np.arange(d) <= t))
                assert len(nodes) <= max(1, 2 * (b - 1) * levels)
    assert linear_queries.canonical_decomposition(linear_queries.hierarchical_strategy(8), 0, 7) == [(3, 0)]


def test_decomposition_answers_sum_the_noisy_nodes():
    tree = linear_queries.hierarchical_strategy(8)
    answers = np.arange(tree.num_queries, dtype=float)
    assert linear_queries.answer_by_decomposition(tree, answers, 0, 7) == answers[-1]
    assert linear_queries.answer_by_decomposition(tree, answers, 2, 2) == answers[2]


@pytest.mark.parametrize("noise", ["laplace", "gaussian"])
def test_sampled_error_matches_the_exact_error(noise):
    # 2000 trials; each trial's error is a quadratic form in the noise, with a coefficient of
    # variation below 1 here, so the mean has relative SE < 1/sqrt(2000) ≈ 2.2%; allow 5 SE (11%).
    workload, strategy = linear_queries.all_range_workload(32), linear_queries.hierarchical_strategy(32)
    x = np.random.default_rng(0).integers(0, 50, size=32)
    sampled = linear_queries.sampled_error(
        workload, strategy, x, epsilon=1.0, noise=noise, delta=1e-6, rng=1, trials=2000
    )
    exact = linear_queries.expected_error(workload, strategy, epsilon=1.0, noise=noise, delta=1e-6)
    assert sampled.std() / sampled.mean() < 1
    assert sampled.mean() == pytest.approx(exact, rel=5 / np.sqrt(2000))


def test_matrix_mechanism_is_unbiased_and_shaped(rng):
    x = rng.integers(0, 20, size=16).astype(float)
    est = linear_queries.matrix_mechanism(x, linear_queries.wavelet_strategy(16), epsilon=2.0, rng=rng, trials=4000)
    assert est.shape == (4000, 16)
    var = linear_queries.noise_variance(linear_queries.wavelet_strategy(16), epsilon=2.0)
    np.testing.assert_allclose(est.mean(axis=0), x, atol=5 * np.sqrt(var / 4000))
    assert linear_queries.matrix_mechanism(x, linear_queries.identity_strategy(16), epsilon=1.0, rng=0).shape == (16,)


def test_svd_bound_is_below_every_strategy():
    for d in (8, 32, 64):
        for build in (linear_queries.prefix_workload, linear_queries.all_range_workload):
            bound = linear_queries.svd_lower_bound(build(d), epsilon=1.0)
            for name, strategy in STRATEGIES.items():
                assert bound <= linear_queries.expected_error(build(d), strategy(d), epsilon=1.0) * (1 + 1e-9), name


def test_larger_branching_beats_binary_for_large_domains():
    # Qardaji, Yang & Li: with consistency, b well above 2 is best (their approximate formula gives
    # b ≈ 16, essentially whatever d); at d = 1024 the exact errors of b = 4, 16 and 32 are all at
    # least 30% below binary's
    w = linear_queries.all_range_workload(1024)
    errors = {
        b: linear_queries.expected_error(w, linear_queries.hierarchical_strategy(1024, b), epsilon=1.0)
        for b in (2, 4, 16, 32)
    }
    assert all(errors[b] < 0.7 * errors[2] for b in (4, 16, 32))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: linear_queries.hierarchical_strategy(0), ValueError, "d must be an integer"),
        (
            lambda: linear_queries.hierarchical_strategy(8, 1),
            ValueError,
            "branching must be an integer in \\[2, inf\\]",
        ),
        (lambda: linear_queries.hierarchical_strategy(8, 2, include_root="no"), TypeError, "include_root"),
        (
            lambda: linear_queries.l1_sensitivity(linear_queries.identity_strategy(4), neighbours="swap"),
            ValueError,
            "neighbours must be one of",
        ),
        (lambda: linear_queries.l1_sensitivity(np.eye(4)), TypeError, "strategy must be a Strategy"),
        (
            lambda: linear_queries.expected_error(
                linear_queries.all_range_workload(4), linear_queries.identity_strategy(5), epsilon=1
            ),
            ValueError,
            "share the domain size",
        ),
        (
            lambda: linear_queries.expected_error(
                linear_queries.all_range_workload(4), linear_queries.identity_strategy(4), epsilon=1, noise="gaussian"
            ),
            TypeError,
            "delta",
        ),
        (
            lambda: linear_queries.expected_error(
                linear_queries.all_range_workload(4), linear_queries.identity_strategy(4), epsilon=0
            ),
            ValueError,
            "epsilon",
        ),
        (
            lambda: linear_queries.matrix_mechanism(np.ones(3), linear_queries.identity_strategy(4), epsilon=1),
            ValueError,
            "histogram must have 4 cells",
        ),
        (
            lambda: linear_queries.tree_least_squares(linear_queries.identity_strategy(4), np.ones(4)),
            ValueError,
            "hierarchical",
        ),
        (
            lambda: linear_queries.least_squares(linear_queries.prefix_strategy(4), np.ones(5)),
            ValueError,
            "noisy_answers must have 4 entries",
        ),
        (
            lambda: linear_queries.canonical_decomposition(linear_queries.hierarchical_strategy(8), 5, 3),
            ValueError,
            "t must be an integer in \\[5, 7\\]",
        ),
        (
            lambda: linear_queries.matrix_mechanism(
                np.ones(4), linear_queries.identity_strategy(4), epsilon=1, noise="cauchy"
            ),
            ValueError,
            "noise must be one of",
        ),
    ],
)
def test_bad_input_is_rejected(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_shipped_all_range_traces_match_a_fresh_computation(tmp_path):
    # the table holds exact traces: recomputing the small sizes gives the same numbers, every key
    # the notebook and panels need is there, and expected_error uses an entry only for the same matrix
    fresh = linear_queries.write_all_range_table(tmp_path / "t.npz", domain_sizes=(16, 64, 256))
    with np.load(fresh) as new_arrays, np.load(linear_queries.ALL_RANGE_TABLE) as shipped_arrays:
        new, shipped = (
            linear_queries.factorization.table_entries(new_arrays),
            linear_queries.factorization.table_entries(shipped_arrays),
        )
    assert set(new) <= set(shipped)
    for key in new:
        np.testing.assert_allclose(shipped[key], new[key], rtol=1e-10)
    assert {
        "svd-4096",
        "identity-4096-0",
        "prefix-4096-0",
        "Haar wavelet-4096-0",
        "2-ary tree-4096-2",
        "64-ary tree-1024-64",
    } <= set(shipped)
    # notebook 03 (and its exercise best-branching, d = 80) searches every branching factor up to d
    assert {f"{b}-ary tree-{d}-{b}" for d in (64, 80, 256, 1024) for b in range(2, d + 1)} <= set(shipped)
    w = linear_queries.all_range_workload(64)
    tree = linear_queries.hierarchical_strategy(64, 4)
    direct = (
        linear_queries.factorization._trace_gram_inverse(w.gram(), tree.gram())
        * 2
        * (tree.l1_sensitivity / 0.5) ** 2
        / w.num_queries
    )
    assert linear_queries.expected_error(w, tree, epsilon=0.5) == pytest.approx(direct, rel=1e-12)
    # a strategy with the same name and size but another matrix is not looked up
    other = linear_queries.Strategy(tree.matrix * 2.0, tree.name, tree.branching, tree.level_sizes, tree.include_root)
    assert linear_queries.factorization._stored_all_range_trace(w, other) is None


def test_sampled_error_of_all_range_queries_by_prefix_sums_matches_the_gram_form():
    # the O(d) prefix-sum identity must give eᵀ(WᵀW)e / |W| exactly (to rounding)
    d = 37
    w = linear_queries.all_range_workload(d)
    tree = linear_queries.hierarchical_strategy(d, 3)
    x = np.arange(d, dtype=float)
    fast = linear_queries.sampled_error(w, tree, x, epsilon=1.0, rng=5, trials=7)
    e = linear_queries.matrix_mechanism(x, tree, epsilon=1.0, rng=5, trials=7) - x
    slow = np.sum((e @ w.gram()) * e, axis=1) / w.num_queries
    np.testing.assert_allclose(fast, slow, rtol=1e-10)


@pytest.mark.parametrize("build", [linear_queries.prefix_strategy, linear_queries.wavelet_strategy])
@pytest.mark.parametrize("d", [1, 2, 7, 64, 100])
def test_square_strategies_inverted_by_structure_match_a_sparse_lu(build, d):
    # prefix sums by differences, the Haar wavelet by its orthogonal rows: the same x̂ as a general sparse LU
    from scipy.sparse import linalg as sparse_linalg

    strategy = build(d)
    y = np.random.default_rng(d).normal(size=(5, strategy.num_queries))
    lu = sparse_linalg.splu(strategy.matrix.tocsc()).solve(np.ascontiguousarray(y.T)).T
    np.testing.assert_allclose(linear_queries.least_squares(strategy, y), lu, atol=1e-10)
    np.testing.assert_allclose(linear_queries.least_squares(strategy, y[0]), lu[0], atol=1e-10)
    # a matrix under the same name that is not the known one is solved in general
    changed = strategy.matrix.copy()
    changed.data[-1] = 3.0
    other = linear_queries.Strategy(changed, strategy.name)
    lu_other = sparse_linalg.splu(changed.tocsc()).solve(np.ascontiguousarray(y.T)).T
    np.testing.assert_allclose(linear_queries.least_squares(other, y), lu_other, atol=1e-10)
