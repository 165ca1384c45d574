import numpy as np
import pytest

from dpcourse import mechanisms, svt

EPSILONS = [0.1, 1.0]


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(7)
    counts = svt.zipf_counts(60, 5_000, rng=rng)
    return counts[rng.permutation(counts.size)]


def _loop_interactive(counts, c, epsilons, trials, rng):
    """The notebook's former cell, written out: Alg. 2, then SVT-S's four splits, at each ε, from one generator."""
    ranked = np.sort(counts)[::-1]
    threshold = (ranked[c - 1] + ranked[c]) / 2
    splits = {"1:1": {"ratio": 1.0}, "1:c": {"ratio": float(c)}, "1:(2c)^(2/3)": {}, "1:c^(2/3), monotonic": {}}
    splits["1:c^(2/3), monotonic"] = {"monotonic": True}
    means = {}
    for epsilon in epsilons:
        common = {"threshold": threshold, "epsilon": epsilon, "c": c, "trials": trials, "rng": rng}
        runs = {"Dwork & Roth (Alg. 2)": svt.VARIANTS["alg2"].run(counts, **common)}
        runs |= {name: svt.svt_standard(counts, **common, **kw) for name, kw in splits.items()}
        for name, out in runs.items():
            means.setdefault(name, []).append(svt.normalized_cumulative_support(np.isposinf(out), counts, c).mean())
    return means


def test_interactive_runs_the_methods_in_order_from_one_generator(counts):
    scores = svt.interactive_top_c(counts, 5, epsilons=EPSILONS, trials=40, rng=np.random.default_rng(3))
    expected = _loop_interactive(counts, 5, EPSILONS, 40, np.random.default_rng(3))
    assert scores.methods == tuple(expected)
    for name, values in expected.items():
        assert scores.mean(name, "NCS") == pytest.approx(values, abs=1e-12)
    assert scores.epsilons == (0.1, 1.0) and scores.runs == 40 and scores.means.shape == (5, 3, 2)


def test_non_interactive_runs_the_exponential_mechanism_then_each_raise(counts):
    rng = np.random.default_rng(4)
    scores = svt.non_interactive_top_c(counts, 5, epsilons=[0.5], raises=(0, 2), trials=30, rng=rng)
    rng = np.random.default_rng(4)
    ranked = np.sort(counts)[::-1]
    threshold = (ranked[4] + ranked[5]) / 2
    picks = mechanisms.exponential_mechanism(counts, epsilon=0.5, k=5, monotonic=True, rng=rng, trials=30)
    chosen = np.zeros((30, counts.size), dtype=bool)
    np.put_along_axis(chosen, picks, True, axis=1)
    truth = svt.top_c_mask(counts, 5)
    assert scores.mean("exponential mechanism", "F-measure")[0] == pytest.approx(svt.f_measure(chosen, truth).mean())
    for raised in (0, 2):
        chosen = svt.svt_retraversal(
            counts, threshold=threshold, epsilon=0.5, c=5, monotonic=True, raise_by=raised, trials=30, rng=rng
        )
        ncr = svt.normalized_cumulative_rank(chosen, counts, 5).mean()
        assert scores.mean(f"SVT-ReTr + {raised}D", "NCR")[0] == pytest.approx(ncr)


def test_a_huge_budget_finds_the_true_top_c_exactly(counts):
    # ε = 10⁶: the noise is negligible against gaps of at least one count, so every method that spends it well is exact
    scores = svt.interactive_top_c(counts, 4, epsilons=[1e6], trials=5, rng=1)
    for name in ("1:c", "1:(2c)^(2/3)", "1:c^(2/3), monotonic"):
        assert scores.mean(name, "F-measure")[0] == pytest.approx(1.0)
    assert scores.largest_standard_error == 0.0
    exact = svt.non_interactive_top_c(counts, 4, epsilons=[1e6], raises=[0], trials=5, rng=1)
    assert exact.mean("exponential mechanism", "NCR")[0] == pytest.approx(1.0)


def test_the_standard_error_is_that_of_the_noisiest_mean(counts):
    scores = svt.interactive_top_c(counts, 5, epsilons=[0.2], trials=30, rng=2)
    assert 0 < scores.largest_standard_error <= 0.5 / np.sqrt(30) + 1e-12  # a score in [0, 1] has sd ≤ 1/2


def test_the_table_has_one_row_per_metric_and_method(counts):
    scores = svt.non_interactive_top_c(counts, 5, epsilons=[0.5, 1.0], raises=(0, 1), trials=10, rng=5)
    table = str(scores.table(metrics=("NCS", "NCR"), caption="two metrics"))
    lines = table.splitlines()
    assert lines[0] == "two metrics" and "ε = 0.5" in lines[1] and "ε = 1.0" in lines[1]
    rows = [line.split("  ")[0] for line in lines[3:]]
    assert rows == ["NCS"] * 3 + ["NCR"] * 3
    assert "SVT-ReTr + 1D" in table and "F-measure" not in table


@pytest.mark.parametrize(
    ("kwargs", "error", "named"),
    [
        ({"c": 60}, ValueError, "c"),  # c must leave one item below the boundary
        ({"epsilons": [0.5, -1.0]}, ValueError, "epsilons"),
        ({"trials": 1}, ValueError, "trials"),
        ({"counts": [3.0]}, ValueError, "counts"),
    ],
)
def test_bad_inputs_are_refused_by_name(counts, kwargs, error, named):
    call = {"counts": counts, "c": 5, "epsilons": [0.5], "trials": 5, "rng": 0} | kwargs
    with pytest.raises(error, match=named):
        svt.interactive_top_c(**call)
    with pytest.raises(error, match=named):
        svt.non_interactive_top_c(**call)


def test_negative_raises_and_unknown_names_are_refused(counts):
    with pytest.raises(ValueError, match="raises"):
        svt.non_interactive_top_c(counts, 5, epsilons=[0.5], raises=[1, -1], trials=5, rng=0)
    scores = svt.interactive_top_c(counts, 5, epsilons=[0.5], trials=5, rng=0)
    with pytest.raises(ValueError, match="method"):
        scores.mean("EM", "NCS")
    with pytest.raises(ValueError, match="metric"):
        scores.mean("1:1", "precision")
