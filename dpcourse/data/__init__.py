"""Small exact tables shipped with the package; ``python -m dpcourse.data`` regenerates them.

* ``interval_errors.npz``: the tree panel's per-length error curves of notebook 03
  (:func:`dpcourse.widgets.trees.write_table`);
* ``all_range_traces.npz``: trace(WᵀW (AᵀA)⁻¹) of the all-range workload for the prefix, wavelet
  and tree strategies up to d = 4096 (:func:`dpcourse.factorization.write_all_range_table`), so
  ``expected_error`` answers notebook 03's tables at once. Each entry carries a fingerprint of its
  strategy matrix and is used only when the matrix matches.

``tests/test_widgets_trees.py`` and ``tests/test_factorization.py`` recompute entries and compare.
"""
