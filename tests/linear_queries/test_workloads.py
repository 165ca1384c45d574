import numpy as np
import pytest

from dpcourse import linear_queries


def explicit(workload):
    """W written out row by row, the brute-force reference."""
    d = workload.domain_size
    if isinstance(workload, linear_queries.PrefixWorkload):
        return np.tril(np.ones((d, d)))
    rows = []
    for s in range(d):
        for t in range(s, d):
            row = np.zeros(d)
            row[s : t + 1] = 1
            rows.append(row)
    return np.array(rows)


@pytest.mark.parametrize("build", [linear_queries.prefix_workload, linear_queries.all_range_workload])
@pytest.mark.parametrize("d", [1, 2, 7, 16])
def test_implicit_workloads_match_their_explicit_matrix(build, d, rng):
    w = build(d)
    m = explicit(w)
    x = rng.integers(0, 9, size=(3, d))
    assert w.num_queries == m.shape[0]
    np.testing.assert_allclose(w.gram(), m.T @ m)
    np.testing.assert_allclose(w.column_counts(), m.sum(axis=0))
    np.testing.assert_allclose(w.answer(x), x @ m.T)
    assert w.l1_sensitivity == m.sum(axis=0).max()
    assert w.l2_sensitivity == pytest.approx(np.sqrt((m**2).sum(axis=0).max()))


def test_all_range_sensitivity_is_a_quarter_of_the_loose_bound():
    for d in (10, 11, 1000):
        w = linear_queries.all_range_workload(d)
        assert w.l1_sensitivity == (d // 2 + 1) * ((d + 1) // 2)
        assert w.l1_sensitivity <= d**2 / 4 + d + 1


def test_interval_order():
    s, t = linear_queries.all_range_workload(3).intervals()
    assert list(zip(s.tolist(), t.tolist(), strict=True)) == [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]


def test_bad_input():
    with pytest.raises(ValueError, match="d must be an integer"):
        linear_queries.all_range_workload(0)
    with pytest.raises(TypeError, match="d must be an integer"):
        linear_queries.prefix_workload(2.5)
    with pytest.raises(ValueError, match="histogram_counts must have 4 cells"):
        linear_queries.prefix_workload(4).answer(np.ones(3))
