import numpy as np
import pytest
from scipy import sparse

from dpcourse import linear_queries


def brute_force_sensitivity(w, order):
    """max over one added person u of ‖W e_u‖ — the definition, one neighbour at a time."""
    d = w.shape[1]
    return max(np.linalg.norm(w @ np.eye(d)[u], ord=order) for u in range(d))


def test_sensitivities_match_the_definition(rng):
    w = rng.random((7, 11)) * (rng.random((7, 11)) < 0.5)
    workload = linear_queries.MatrixWorkload(w)
    assert workload.l1_sensitivity == pytest.approx(brute_force_sensitivity(w, 1))
    assert workload.l2_sensitivity == pytest.approx(brute_force_sensitivity(w, 2))
    sparse_workload = linear_queries.MatrixWorkload(sparse.csr_array(w))
    assert sparse_workload.l1_sensitivity == pytest.approx(workload.l1_sensitivity)
    assert sparse_workload.l2_sensitivity == pytest.approx(workload.l2_sensitivity)
    np.testing.assert_allclose(sparse_workload.gram(), w.T @ w)


def test_identity_is_the_histogram():
    w = linear_queries.identity_workload(6)
    assert (w.num_queries, w.domain_size, w.l1_sensitivity, w.l2_sensitivity) == (6, 6, 1.0, 1.0)
    x = np.array([3, 0, 1, 0, 2, 4])
    np.testing.assert_array_equal(w.answer(x), x)
    np.testing.assert_allclose(w.normalized_answer(x), x / 10)


def test_random_counting_queries_have_sensitivities_k_and_sqrt_k_at_full_density():
    w = linear_queries.random_counting_workload(9, 5, density=0.999999, rng=1)
    assert w.l1_sensitivity == 9 and w.l2_sensitivity == pytest.approx(3.0)


def test_answers_are_vectorised_over_trials(rng):
    w = linear_queries.random_counting_workload(4, 8, rng=rng)
    xs = rng.integers(0, 5, size=(3, 8))
    np.testing.assert_allclose(w.answer(xs), np.stack([w.matrix() @ x for x in xs]))
    np.testing.assert_allclose(w.normalized_answer(xs), w.answer(xs) / xs.sum(axis=1, keepdims=True))


def test_histogram_counts_records():
    np.testing.assert_array_equal(linear_queries.histogram([0, 2, 2, 3], 5), [1, 0, 2, 1, 0])
    with pytest.raises(ValueError, match=r"records must be integers in \[0, 4\]"):
        linear_queries.histogram([0, 5], 5)
    with pytest.raises(ValueError, match="domain_size must be an integer"):
        linear_queries.histogram([0], 0)


def test_bad_workloads_and_histograms_are_rejected():
    with pytest.raises(ValueError, match="queries must be a 2-dimensional array"):
        linear_queries.MatrixWorkload(np.ones(3))
    with pytest.raises(ValueError, match="queries must contain only finite numbers"):
        linear_queries.MatrixWorkload(sparse.csr_array(np.array([[np.nan, 1.0]])))
    w = linear_queries.identity_workload(3)
    with pytest.raises(ValueError, match="histogram_counts must have 3 cells"):
        w.answer(np.ones(4))
    with pytest.raises(ValueError, match="positive total"):
        w.normalized_answer(np.zeros(3))
    with pytest.raises(ValueError, match=r"density must be a number in the open interval"):
        linear_queries.random_counting_workload(3, 3, density=1.0)
    with pytest.raises(ValueError, match="num_queries"):
        linear_queries.random_counting_workload(0, 3)
