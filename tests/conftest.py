"""Shared fixtures: a fixed-seed generator and an Agg backend for widget tests."""

import matplotlib

# This process only: an MPLBACKEND environment variable would be inherited by the kernels nbval starts
# in the same pytest-xdist worker, and their figures would no longer be displayed.
matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def rng():
    """A fixed-seed generator: every statistical test here is reproducible."""
    return np.random.default_rng(20261122)
