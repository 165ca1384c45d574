"""Notebook 06: Private MW throughput at |X| = 2¹⁶ against a straightforward implementation, panel redraw time."""

from __future__ import annotations

import numpy as np

from dpcourse import pmw
from dpcourse.svt import OnlineSparseVector
from dpcourse.widgets import pmw_panel

from ._harness import Section, best_time

BITS, QUERIES, N_RECORDS, EPSILON, ALPHA = 16, 1000, 10**9, 1.0, 0.05


def straightforward_pmw(x, workload, *, epsilon, alpha, seed):
    """Lecture 4's Private MW written directly: each query materialised as a dense 0/1 vector over 𝒳
    (a bit test on every cell), dense dot products, and a full-vector MW update. Same calibration and
    the same sparse vector core as :class:`dpcourse.pmw.PrivateMW`."""
    gen = np.random.default_rng(seed)
    d, n = x.size, x.sum()
    p = x / n
    big_n = int(np.floor(16 * np.log(d) / alpha**2))
    eps0 = epsilon / (2 * big_n)
    sv = OnlineSparseVector(threshold=alpha, epsilon=big_n * eps0, c=big_n, sensitivity=1 / n, rng=gen)
    cells = np.arange(d)
    synthetic = np.full(d, 1.0 / d)
    answers = np.empty(len(workload))
    for i in range(len(workload)):
        attrs, vals = workload.attributes[i], workload.values[i]
        q = np.all(((cells[:, None] >> attrs) & 1) == vals, axis=1).astype(float)
        s, t = q @ synthetic, q @ p
        if sv.test(abs(s - t)):
            y = t + gen.laplace(0.0, 1 / (n * eps0))
            synthetic = synthetic * np.exp(-alpha / 4 * np.sign(s - y) * q)
            synthetic /= synthetic.sum()
            answers[i] = y
        else:
            answers[i] = s
    return answers


def run() -> Section:
    section = Section("Notebook 06 (Private Multiplicative Weights)")
    x = pmw.product_histogram(N_RECORDS, BITS, rng=1)
    workload = pmw.conjunction_workload(QUERIES, BITS, width=2, rng=2)

    def package():
        pmw.run_stream(pmw.PrivateMW(x, epsilon=EPSILON, alpha=ALPHA, rng=3), workload)

    def baseline():
        straightforward_pmw(x, workload, epsilon=EPSILON, alpha=ALPHA, seed=3)

    probe = pmw.PrivateMW(x, epsilon=EPSILON, alpha=ALPHA, rng=3)
    pmw.run_stream(probe, workload)
    seconds = best_time(package, repeat=3)
    base = best_time(baseline, repeat=3)
    section.notes.append(
        f"With |X| = 2^{BITS}, {QUERIES} two-way marginal queries, n = {N_RECORDS:.0e}, ε = {EPSILON}, "
        f"α = {ALPHA}: {probe.updates} updates of N = {probe.max_updates}."
    )
    section.rows.append(
        (
            f"PrivateMW, {QUERIES} queries over 2^{BITS} cells (strided views, O(support) per query)",
            f"{seconds * 1e3:.3g} ms",
            f"{seconds / base:.3g}× straightforward dense PMW ({base * 1e3:.3g} ms); "
            f"{QUERIES / seconds:,.0f} vs {QUERIES / base:,.0f} queries/s",
        )
    )

    panel = pmw_panel(seed=2026)
    section.panel_redraw(
        "PMW panel: one redraw (α slider → new PNG, PMW re-run on 200 queries)",
        panel,
        "alpha",
        [0.05, 0.2, 0.1, 0.3, 0.08],
        repeat=10,
    )
    return section
