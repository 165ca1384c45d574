"""Notebook 03: tree least squares at d = 2²⁰, exact error at d = 4096, panel redraws."""

from __future__ import annotations

import numpy as np
from scipy.sparse import linalg as sparse_linalg

from dpcourse import linear_queries
from dpcourse.widgets import tree_panel

from ._harness import Section


def run() -> Section:
    section = Section("Notebook 03 (threshold queries, trees, factorization)")
    d = 2**20
    tree = linear_queries.hierarchical_strategy(d)
    rng = np.random.default_rng(0)
    y = tree.matrix @ rng.integers(0, 10, size=d).astype(float) + rng.laplace(0, 21.0, size=tree.num_queries)
    generic = {}

    def lsqr():
        generic["x"] = sparse_linalg.lsqr(tree.matrix, y, atol=1e-10, btol=1e-10, iter_lim=500)[0]

    ratio = section.ratio(
        "two-pass tree least squares, d = 2²⁰ (2,097,151 nodes)",
        lambda: linear_queries.tree_least_squares(tree, y),
        "scipy.sparse.linalg.lsqr on the same system",
        lsqr,
        repeat=3,
    )
    gap = float(np.abs(linear_queries.tree_least_squares(tree, y) - generic["x"]).max())
    section.notes.append(f"The two-pass estimate is {1 / ratio:.0f}× faster than lsqr and agrees with it to {gap:.1e}.")
    workload = linear_queries.all_range_workload(4096)
    tree4096 = linear_queries.hierarchical_strategy(4096)
    section.ratio(
        "exact expected error, binary tree, all 8.4 million intervals at d = 4096 (shipped table)",
        lambda: linear_queries.expected_error(workload, tree4096, epsilon=1.0),
        "computing it (Cholesky of AᵀA, what `python -m dpcourse.data` does)",
        lambda: linear_queries.factorization._trace_gram_inverse(workload.gram(), tree4096.gram()),
        repeat=3,
        note="Gram matrix of W cached after the first call",
    )
    panel = tree_panel()
    panel.set(d=1024, strategy="tree")
    eps = iter(np.tile([0.5, 1.0, 2.0], 50))
    section.timing(
        "notebook 03 panel: one redraw at d = 1024 (ε slider)", lambda: panel.set(epsilon=float(next(eps))), repeat=8
    )
    intervals = iter([(3, 250), (37, 200), (0, 128), (100, 101)] * 20)
    section.timing(
        "notebook 03 panel: one redraw at d = 1024 (interval slider)",
        lambda: panel.set(interval=next(intervals)),
        repeat=8,
    )
    return section
