"""Notebook 01's measurements: K counting queries answered directly with Laplace noise, or from the noisy histogram.

:func:`counting_query_sweep` answers K random counting queries for several K both ways;
:func:`universe_size_sweep` measures the noisy histogram's error as the universe grows. Each setting
is vectorised over trials; the draws are taken from ``rng`` in the order of the grid, so a notebook
that passes its own generator prints the numbers it printed when these loops were its cells. The
figures are drawn by :mod:`dpcourse.widgets.laplace`.

>>> x = histogram(np.arange(100) % 8, 8)
>>> sweep = counting_query_sweep(x, [1, 10], epsilon=1.0, trials=20, rng=0)
>>> [int(k) for k in sweep.query_counts], len(sweep.direct)
([1, 10], 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_epsilon,
    check_histogram,
    check_integer,
    check_probability,
)
from ..mechanisms import (
    ErrorSummary,
    laplace_expected_max_error,
    laplace_max_error_bound,
    laplace_mechanism,
    log_log_slope,
    max_abs_error,
    noisy_histogram_max_error_bound,
    summarize,
)
from ..tables import Table
from .comparisons import _count_grid
from .workloads import histogram, random_counting_workload

__all__ = ["CountingQuerySweep", "UniverseSizeSweep", "counting_query_sweep", "universe_size_sweep"]


@dataclass(frozen=True)
class CountingQuerySweep:
    """K random counting queries answered two ways, for several K (:func:`counting_query_sweep`).

    Attributes
    ----------
    query_counts : numpy.ndarray of int
        The numbers of queries K.
    sensitivities : numpy.ndarray of int
        Per K, the workload's L1 sensitivity Δf: the largest number of its queries one record type is in.
    direct : tuple of ErrorSummary
        Per K, the largest normalised error of the K answers released with Lap(Δf/ε).
    from_histogram : tuple of ErrorSummary
        Per K, the same for the answers computed from the histogram released with Lap(1/ε) per cell.
    expected : numpy.ndarray
        Per K, the exact mean of the direct release's largest error, b·H_K/n with b = Δf/ε.
    level : numpy.ndarray
        Per K, Theorem 3.8's level for the direct release at β.
    histogram_level : numpy.ndarray
        Per K, the noisy histogram's bound at β.
    n : int
        The number of people.
    domain_size : int
        The number of record types |X|.
    epsilon : float
        The privacy parameter of each release.
    trials : int
        The number of releases per K.
    beta : float
        The failure probability of both bounds.
    """

    query_counts: np.ndarray
    sensitivities: np.ndarray
    direct: tuple[ErrorSummary, ...]
    from_histogram: tuple[ErrorSummary, ...]
    expected: np.ndarray
    level: np.ndarray
    histogram_level: np.ndarray
    n: int
    domain_size: int
    epsilon: float
    trials: int
    beta: float

    def table(self) -> Table:
        """The direct release per K: Δf, the measured mean largest error with its 95% interval, exact mean, level.

        Returns
        -------
        Table
            One row per K.
        """
        rows = [
            [int(k), int(s), f"{s / k:.3f}", f"{m.mean:.5f}", f"{m.half_width:.5f}", f"{e:.5f}", f"{lv:.5f}"]
            for k, s, m, e, lv in zip(
                self.query_counts, self.sensitivities, self.direct, self.expected, self.level, strict=True
            )
        ]
        return Table(
            ["K", "Δf", "Δf / K", "measured mean max error", "± (95%)", "exact mean", f"level (β = {self.beta})"],
            rows,
            caption=f"n = {self.n:,}, ε = {self.epsilon}, {self.trials} releases per K",
        )

    def comparison_table(self) -> Table:
        """Per K: the direct and the histogram's mean largest errors, and how far above its mean the bound lies.

        Returns
        -------
        Table
            One row per K.
        """
        rows = [
            [int(k), f"{a.mean:.5f}", f"{b.mean:.5f}", f"{lv / b.mean:.1f}"]
            for k, a, b, lv in zip(
                self.query_counts, self.direct, self.from_histogram, self.histogram_level, strict=True
            )
        ]
        return Table(
            ["K", "direct: mean max error", "noisy histogram: mean max error", "histogram bound ÷ its mean"], rows
        )

    @property
    def histogram_wins_from(self) -> int | None:
        """The smallest K at which the histogram's mean error is below the direct release's (None if none)."""
        wins = [
            int(k)
            for k, a, b in zip(self.query_counts, self.direct, self.from_histogram, strict=True)
            if b.mean < a.mean
        ]
        return min(wins) if wins else None


def counting_query_sweep(
    histogram: ArrayLike,
    query_counts: ArrayLike,
    *,
    epsilon: float,
    beta: float = 0.05,
    trials: int,
    rng: RngLike = None,
) -> CountingQuerySweep:
    """K random counting queries over ``histogram``, released directly and from the noisy histogram, per K.

    For each K: a random counting workload W (:func:`~dpcourse.linear_queries.random_counting_workload`),
    ``trials`` releases of its K counts with Lap(Δf/ε) at the workload's own sensitivity Δf =
    ``W.l1_sensitivity``, then ``trials`` releases of the histogram with Lap(1/ε) per cell, each answering
    the K queries. Every error is normalised by n, the histogram's total.

    Parameters
    ----------
    histogram : array_like of int
        The histogram x: the number of people with each record type (at least one person).
    query_counts : array_like of int
        The numbers of queries K, each ≥ 1.
    epsilon : float
        The privacy parameter ε > 0 of each release.
    beta : float, optional
        The failure probability of the bounds, in (0, 1) (default 0.05).
    trials : int
        The number of releases per K and method, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the workloads and the noise, in the order of ``query_counts``.

    Returns
    -------
    CountingQuerySweep
        The measured largest errors, the exact mean, both bounds and the tables of them.

    Raises
    ------
    ValueError
        If ``histogram`` is empty, has a negative count or counts nobody, ``query_counts`` is not a grid of whole
        numbers ≥ 1, ``epsilon`` or ``beta`` is out of range, ``trials`` < 2, or ``rng`` is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    x = check_histogram(histogram, "histogram")
    counts = _count_grid(query_counts, "query_counts")
    epsilon = check_epsilon(epsilon)
    beta = check_probability(beta, "beta")
    trials = check_integer(trials, "trials", minimum=2)
    gen = as_generator(rng)
    n, d = int(x.sum()), x.size
    direct, from_histogram, sensitivities = [], [], []
    for k in counts:
        workload = random_counting_workload(int(k), d, rng=gen)
        truth = workload.answer(x) / n
        answers = laplace_mechanism(
            workload.answer(x), sensitivity=workload.l1_sensitivity, epsilon=epsilon, rng=gen, trials=trials
        )
        noisy_x = laplace_mechanism(x, sensitivity=1, epsilon=epsilon, rng=gen, trials=trials)
        direct.append(summarize(max_abs_error(answers / n, truth)))
        from_histogram.append(summarize(max_abs_error(workload.answer(noisy_x) / n, truth)))
        sensitivities.append(workload.l1_sensitivity)
    s = np.array(sensitivities)
    expected = [
        laplace_expected_max_error(k=int(k), sensitivity=v, epsilon=epsilon, n=n)
        for k, v in zip(counts, s, strict=True)
    ]
    level = [
        laplace_max_error_bound(k=int(k), beta=beta, sensitivity=v, epsilon=epsilon, n=n)
        for k, v in zip(counts, s, strict=True)
    ]
    histogram_level = [
        noisy_histogram_max_error_bound(domain_size=d, num_queries=int(k), beta=beta, epsilon=epsilon, n=n)
        for k in counts
    ]
    return CountingQuerySweep(
        counts,
        s,
        tuple(direct),
        tuple(from_histogram),
        np.array(expected),
        np.array(level),
        np.array(histogram_level),
        n,
        d,
        epsilon,
        trials,
        beta,
    )


@dataclass(frozen=True)
class UniverseSizeSweep:
    """The noisy histogram's largest error over K queries against the universe size |X| (:func:`universe_size_sweep`).

    Attributes
    ----------
    universe_sizes : numpy.ndarray of int
        The universe sizes |X| measured.
    error : tuple of ErrorSummary
        Per |X|, the largest normalised error over the K queries.
    bound : numpy.ndarray
        Per |X|, the noisy histogram's bound at β.
    split_bound : float
        Theorem 3.8's level for K queries with ε/K each (Δf = K), the same at every |X|.
    num_queries : int
        K.
    slope : float
        The measured growth: the slope of log(mean error) against log |X| (theory: 0.5).
    """

    universe_sizes: np.ndarray
    error: tuple[ErrorSummary, ...]
    bound: np.ndarray
    split_bound: float
    num_queries: int
    slope: float

    def __str__(self) -> str:
        return (
            f"measured growth of the histogram's error: |X|^{self.slope:.2f} (theory: |X|^0.5)\n"
            f"K queries with ε/K each: bound {self.split_bound:.3g} at every |X|"
        )


def universe_size_sweep(
    n: int,
    universe_sizes: ArrayLike,
    *,
    num_queries: int,
    epsilon: float,
    beta: float = 0.05,
    trials: int,
    rng: RngLike = None,
) -> UniverseSizeSweep:
    """The noisy histogram's largest error over ``num_queries`` random counting queries, for several universe sizes.

    For each |X|: n people with uniformly random record types, a random counting workload of K queries,
    and ``trials`` releases of the histogram with Lap(1/ε) per cell.

    Parameters
    ----------
    n : int
        The number of people, ≥ 1.
    universe_sizes : array_like of int
        The universe sizes |X|, each ≥ 1.
    num_queries : int
        K, the number of queries, ≥ 1.
    epsilon : float
        The privacy parameter ε > 0 of the histogram.
    beta : float, optional
        The failure probability of the bounds, in (0, 1) (default 0.05).
    trials : int
        The number of releases per |X|, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the records, the workloads and the noise, in the order of ``universe_sizes``.

    Returns
    -------
    UniverseSizeSweep
        The measured largest errors, the bounds and the measured growth; ``str`` gives the two key lines.

    Raises
    ------
    ValueError
        If ``n``, ``num_queries`` or ``trials`` is out of range, ``universe_sizes`` is not a grid of whole
        numbers ≥ 1, ``epsilon`` or ``beta`` is out of range, or ``rng`` is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    n = check_integer(n, "n", minimum=1)
    sizes = _count_grid(universe_sizes, "universe_sizes")
    num_queries = check_integer(num_queries, "num_queries", minimum=1)
    epsilon = check_epsilon(epsilon)
    beta = check_probability(beta, "beta")
    trials = check_integer(trials, "trials", minimum=2)
    gen = as_generator(rng)
    error = []
    for d in sizes:
        x = histogram(gen.integers(0, d, size=n), int(d))
        workload = random_counting_workload(num_queries, int(d), rng=gen)
        noisy_x = laplace_mechanism(x, sensitivity=1, epsilon=epsilon, rng=gen, trials=trials)
        error.append(summarize(max_abs_error(workload.answer(noisy_x) / n, workload.answer(x) / n)))
    bound = [
        noisy_histogram_max_error_bound(domain_size=int(d), num_queries=num_queries, beta=beta, epsilon=epsilon, n=n)
        for d in sizes
    ]
    split = laplace_max_error_bound(k=num_queries, beta=beta, sensitivity=num_queries, epsilon=epsilon, n=n)
    slope = log_log_slope(sizes, [e.mean for e in error])
    return UniverseSizeSweep(sizes, tuple(error), np.array(bound), split, num_queries, slope)
