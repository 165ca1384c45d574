"""Notebook 02: releasing 10³ queries about 10⁴ people, and the two panels' redraws."""

from __future__ import annotations

import numpy as np

from dpcourse import linear_queries, mechanisms
from dpcourse.widgets import reconstruction_panel, release_comparison_panel

from ._harness import Section


def run() -> Section:
    section = Section("Notebook 02 (randomized response vs Laplace vs Gaussian)")
    n, g, k, trials = 10_000, 64, 1000, 40
    population = linear_queries.make_population(n, g, rng=0)
    workload = linear_queries.random_type_queries(k, g, rng=1)
    types = np.repeat(np.arange(g), population.type_sizes)
    bits = np.concatenate(
        [np.r_[np.ones(c), np.zeros(s - c)] for c, s in zip(population.ones, population.type_sizes, strict=True)]
    )
    per_person_queries = workload.matrix()[:, types].T / n
    gen = np.random.default_rng(2)

    def per_person():
        reports = mechanisms.randomized_response(bits, epsilon=1.0, rng=gen, trials=trials)
        return mechanisms.rr_debias(reports, epsilon=1.0) @ per_person_queries

    section.ratio(
        f"randomized response, n = {n:,}, |Q| = {k}, {trials} trials (binomial counts per type)",
        lambda: linear_queries.randomized_response_answers(population, workload, epsilon=1.0, rng=gen, trials=trials),
        "simulating every person's report",
        per_person,
        repeat=3,
    )
    for method in ("laplace", "laplace_histogram", "gaussian"):
        section.timing(
            f"{method}, |Q| = {k}, {trials} trials",
            lambda method=method: linear_queries.release(
                method, population, workload, epsilon=1.0, delta=1e-6, rng=gen, trials=trials
            ),
            repeat=3,
        )
    comparison = release_comparison_panel(num_types=g, max_queries=k, trials=trials)
    eps = iter(np.tile([0.5, 1.0, 2.0, 0.7], 50))
    section.timing(
        "comparison panel: one redraw at n = 10⁴, |Q| up to 10³ (ε slider)",
        lambda: comparison.set(epsilon=float(next(eps))),
        repeat=8,
    )
    attack = reconstruction_panel()
    noise = iter(np.tile([0.1, 1.0, 3.0, 0.3], 50))
    section.timing("attack panel: one redraw (noise slider)", lambda: attack.set(noise=float(next(noise))), repeat=8)
    return section
