"""Small exact tables shipped with the package; ``python -m dpcourse.data`` regenerates them.

* ``interval_errors.npz``: the tree panel's per-length error curves of notebook 03
  (:func:`dpcourse.widgets.trees.write_table`);
* ``all_range_traces.npz``: trace(WᵀW (AᵀA)⁻¹) of the all-range workload for the prefix, wavelet
  and tree strategies up to d = 4096 (:func:`dpcourse.linear_queries.write_all_range_table`), so
  ``expected_error`` answers notebook 03's tables at once. Each entry carries a fingerprint of its
  strategy matrix and is used only when the matrix matches;
* ``variant_losses.npz``: the exact loss (and both probabilities) of every SVT variant's counterexample
  at ε = 1, c = 1 … 5, m ≤ 42 (and m = 150 for the private ones), as notebook 05 and its panel show
  them (:func:`dpcourse.svt.write_variant_loss_table`). Each entry carries a fingerprint of the
  variant's noise and of the counterexample, and is used only when both match.

``tests/widgets/test_trees.py``, ``tests/linear_queries/test_factorization.py`` and
``tests/svt/test_exact.py`` recompute entries and compare.
"""

from functools import cache
from pathlib import Path

import numpy as np

DIRECTORY = Path(__file__).resolve().parent


@cache
def load_table(name: str) -> dict:
    """The arrays of the shipped table ``name`` (e.g. ``"interval_errors.npz"``) by key, read once;
    empty when the file is missing (then every caller computes instead)."""
    path = DIRECTORY / name
    if not path.exists():
        return {}
    with np.load(path) as data:
        return {key: data[key] for key in data.files}
