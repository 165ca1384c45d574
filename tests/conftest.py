"""Shared fixtures: a fixed-seed generator and an Agg backend for widget tests."""

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402


@pytest.fixture
def rng():
    """A fixed-seed generator: every statistical test here is reproducible."""
    return np.random.default_rng(20261122)
