"""Foundation and notebook 01: sampler throughput, notebook run time, widget redraw time."""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import numpy as np
from nbclient import NotebookClient

from dpcourse import mechanisms
from dpcourse.widgets import laplace_tail_panel

from ._harness import Section

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "01_laplace_utility.ipynb"


def _execute(nb) -> float:
    start = time.perf_counter()
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    return time.perf_counter() - start


def run() -> Section:
    section = Section("Foundation and notebook 01 (Laplace utility)")
    trials, k = 1000, 1000
    truth = np.zeros(k)
    raw = np.random.default_rng(0)
    section.ratio(
        "laplace_mechanism, 1000 × 1000 draws",
        lambda: mechanisms.laplace_mechanism(truth, sensitivity=1, epsilon=1, rng=1, trials=trials),
        "numpy Generator.laplace",
        lambda: truth + raw.laplace(0, 1, size=(trials, k)),
    )
    section.ratio(
        "gaussian_mechanism (analytic σ), 1000 × 1000 draws",
        lambda: mechanisms.gaussian_mechanism(truth, l2_sensitivity=1, epsilon=1, delta=1e-6, rng=1, trials=trials),
        "numpy Generator.normal",
        lambda: truth + raw.normal(0, 1, size=(trials, k)),
    )
    bits = raw.integers(0, 2, size=k)
    section.ratio(
        "randomized_response, 1000 × 1000 reports",
        lambda: mechanisms.randomized_response(bits, epsilon=1, rng=1, trials=trials),
        "numpy Generator.random",
        lambda: raw.random((trials, k)),
    )

    panel = laplace_tail_panel(trials=10_000, max_k=1000, rng=2026)
    section.panel_redraw(
        "tail panel: one redraw (k slider → new PNG), 10 000 trials", panel, "k", [10, 500, 1000, 3, 100], repeat=15
    )

    nb = nbformat.read(NOTEBOOK, as_version=4)
    empty = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import dpcourse")])
    empty.metadata = nb.metadata
    seconds = min(_execute(nbformat.from_dict(nb)) for _ in range(2))
    baseline = min(_execute(nbformat.from_dict(empty)) for _ in range(2))
    section.rows.append(
        (
            "notebook 01, top to bottom (nbclient)",
            f"{seconds * 1e3:.4g} ms",
            f"{seconds / baseline:.3g}× a one-cell notebook that imports dpcourse ({baseline * 1e3:.4g} ms)",
        )
    )
    return section
