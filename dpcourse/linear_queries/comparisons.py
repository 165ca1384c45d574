"""Notebook 02's measurements: randomized response, Laplace and the noisy table as the workload grows.

Each function runs one experiment over a grid of settings (ε, the number of queries, the table's
size, the number of people, the noise level of an attack), every setting vectorised over trials,
and returns what it measured: a frozen dataclass whose ``str`` is the lines the notebook prints,
or a :class:`~dpcourse.tables.Table`. The draws are taken from ``rng`` in the order of the grid,
so a notebook that passes its own generator gets the numbers it printed before these
experiments moved here. The figures of these results are drawn by
:mod:`dpcourse.widgets.rr_vs_laplace`.

>>> sweep = table_size_sweep(1000, [4, 16], num_queries=5, epsilon=1.0, trials=20, rng=0)
>>> [int(g) for g in sweep.table_sizes], len(sweep.error)
([4, 16], 2)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_array,
    check_binary,
    check_epsilon,
    check_integer,
    check_probability,
)
from ..mechanisms import (
    ErrorSummary,
    all_subsets_error_lower_bound,
    dp_bit_guess_bound,
    gaussian_mechanism,
    laplace_variance,
    log_log_slope,
    max_abs_error,
    noisy_histogram_max_error_bound,
    noisy_table_all_queries_mean_error,
    randomized_response,
    rr_estimate,
    rr_max_error_bound,
    rr_proportion_variance,
    rr_reports_all_subsets_error,
    summarize,
)
from ..tables import Table
from .reconstruction import all_subsets_max_error, run_attack
from .rr_vs_laplace import (
    Population,
    histogram_all_subsets_max_error,
    histogram_answers,
    laplace_answers,
    make_population,
    prefix_max_errors,
    random_type_queries,
    randomized_response_answers,
    rr_split_budget_answers,
)
from .workloads import MatrixWorkload

__all__ = [
    "AttackSweep",
    "CrossoverSweep",
    "QueryCountSweep",
    "RootNSweep",
    "TableSizeSweep",
    "all_subsets_errors",
    "attack_sweep",
    "crossover_sweep",
    "gaussian_root_n_errors",
    "release_variances",
    "rr_proportion_variances",
    "rr_query_count_sweep",
    "table_size_sweep",
    "type_queries_max_errors",
]


def _count_grid(values: ArrayLike, name: str, *, maximum: int | None = None) -> np.ndarray:
    """A one-dimensional grid of whole numbers in [1, ``maximum``], as an int array."""
    grid = check_array(values, name, ndim=1)
    if np.any(grid != np.round(grid)) or grid.min() < 1 or (maximum is not None and grid.max() > maximum):
        high = "" if maximum is None else f" and at most {maximum}"
        raise ValueError(f"{name} must hold whole numbers ≥ 1{high}; got {values!r}")
    return grid.astype(int)


def _positive_grid(values: ArrayLike, name: str) -> np.ndarray:
    """A one-dimensional grid of finite numbers > 0."""
    grid = check_array(values, name, ndim=1)
    if grid.min() <= 0:
        raise ValueError(f"{name} must hold numbers > 0; got {values!r}")
    return grid


def _first_queries(workload: MatrixWorkload, k: int) -> MatrixWorkload:
    return MatrixWorkload(workload.matrix()[:k])


@dataclass(frozen=True)
class QueryCountSweep:
    """Randomized response's largest error against the number of queries |Q| (:func:`rr_query_count_sweep`).

    Attributes
    ----------
    query_counts : numpy.ndarray of int
        The numbers of queries |Q| measured.
    one_report : tuple of ErrorSummary
        Per |Q|, the largest normalised error when each person sends one ε-report that answers every query.
    split_budget : tuple of ErrorSummary
        Per |Q|, the same when the queries ask about |Q| unrelated bits, each reported with ε/|Q|.
    bound : numpy.ndarray
        Hoeffding's bound with a union bound over |Q| queries, at ε.
    bound_split : numpy.ndarray
        The same bound at ε/|Q|.
    n : int
        The number of people.
    epsilon : float
        The privacy parameter of each person's reports.
    """

    query_counts: np.ndarray
    one_report: tuple[ErrorSummary, ...]
    split_budget: tuple[ErrorSummary, ...]
    bound: np.ndarray
    bound_split: np.ndarray
    n: int
    epsilon: float

    def __str__(self) -> str:
        return "\n".join(
            f"|Q| = {k:4d}: one report {a.mean:.4f}, budget split {b.mean:.4f}"
            for k, a, b in zip(self.query_counts, self.one_report, self.split_budget, strict=True)
        )


def rr_query_count_sweep(
    population: Population,
    workload: MatrixWorkload,
    query_counts: ArrayLike,
    *,
    epsilon: float,
    beta: float = 0.05,
    trials: int,
    rng: RngLike = None,
) -> QueryCountSweep:
    """Randomized response on the first |Q| queries of ``workload``, one report per person or a split budget.

    For each |Q|: ``trials`` releases of the first |Q| queries from one ε-report per person
    (:func:`~dpcourse.linear_queries.randomized_response_answers`), then ``trials`` releases of |Q|
    unrelated bits (each person's mean drawn uniformly from [0.1, 0.9)) reported with ε/|Q| each
    (:func:`~dpcourse.linear_queries.rr_split_budget_answers`).

    Parameters
    ----------
    population : Population
        The people, their types and bits.
    workload : MatrixWorkload
        The queries, in the order they are added; at least ``max(query_counts)`` of them.
    query_counts : array_like of int
        The numbers of queries |Q| to measure, each in [1, ``workload.num_queries``].
    epsilon : float
        The privacy parameter ε > 0 of each person's reports.
    beta : float, optional
        The failure probability of the bounds, in (0, 1) (default 0.05).
    trials : int
        The number of releases per setting, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for every draw, taken in the order of ``query_counts``.

    Returns
    -------
    QueryCountSweep
        The measured largest errors and their bounds; ``str`` gives one line per |Q|.

    Raises
    ------
    ValueError
        If ``query_counts`` is not a grid of whole numbers in [1, ``workload.num_queries``], ``epsilon`` or
        ``beta`` is out of range, ``trials`` < 2, or ``rng`` is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    counts = _count_grid(query_counts, "query_counts", maximum=workload.num_queries)
    epsilon = check_epsilon(epsilon)
    beta = check_probability(beta, "beta")
    trials = check_integer(trials, "trials", minimum=2)
    gen = as_generator(rng)
    n = population.n
    one_report, split_budget = [], []
    for k in counts:
        first = _first_queries(workload, int(k))
        answers = randomized_response_answers(population, first, epsilon=epsilon, rng=gen, trials=trials)
        one_report.append(summarize(max_abs_error(answers, population.answers(first))))
        bit_means = gen.uniform(0.1, 0.9, size=k)  # k unrelated bits per person
        split = rr_split_budget_answers(bit_means, n, epsilon=epsilon, rng=gen, trials=trials)
        split_budget.append(summarize(max_abs_error(split, np.rint(bit_means * n) / n)))
    bound = [rr_max_error_bound(n=n, num_queries=int(k), beta=beta, epsilon=epsilon) for k in counts]
    bound_split = [rr_max_error_bound(n=n, num_queries=int(k), beta=beta, epsilon=epsilon / k) for k in counts]
    return QueryCountSweep(
        counts, tuple(one_report), tuple(split_budget), np.array(bound), np.array(bound_split), n, epsilon
    )


def release_variances(
    population: Population,
    workload: MatrixWorkload,
    query_counts: ArrayLike,
    *,
    epsilon: float,
    trials: int,
    rng: RngLike = None,
) -> Table:
    """The variance per answer of Laplace per query and of the noisy table, measured and exact.

    For each |Q|, ``trials`` releases of the first |Q| queries by each method; the measured variance of
    each answer over the releases, averaged over the |Q| queries, beside the exact 2(Δ₁/ε)² of Laplace
    per query and 2|S|/(εn)² of the table (averaged over the queries' sets S).

    Parameters
    ----------
    population : Population
        The people, their types and bits.
    workload : MatrixWorkload
        The queries; at least ``max(query_counts)`` of them.
    query_counts : array_like of int
        The numbers of queries |Q|, each in [1, ``workload.num_queries``].
    epsilon : float
        The privacy parameter ε > 0 of each release.
    trials : int
        The number of releases per setting, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Returns
    -------
    Table
        One row per |Q|: the measured and exact variances of both methods.

    Raises
    ------
    ValueError
        If ``query_counts`` is not a grid of whole numbers in [1, ``workload.num_queries``], ``epsilon`` is
        out of range, ``trials`` < 2, or ``rng`` is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    counts = _count_grid(query_counts, "query_counts", maximum=workload.num_queries)
    epsilon = check_epsilon(epsilon)
    trials = check_integer(trials, "trials", minimum=2)
    gen = as_generator(rng)
    n, rows = population.n, []
    for k in counts:
        first = _first_queries(workload, int(k))
        lap = laplace_answers(population, first, epsilon=epsilon, rng=gen, trials=trials)
        tab = histogram_answers(population, first, epsilon=epsilon, rng=gen, trials=trials)
        lap_exact = laplace_variance(sensitivity=first.l1_sensitivity / n, epsilon=epsilon)
        tab_exact = (
            first.answer(np.ones(population.num_types)) * laplace_variance(sensitivity=1, epsilon=epsilon) / n**2
        )
        rows.append([int(k), lap.var(axis=0).mean(), lap_exact, tab.var(axis=0).mean(), tab_exact.mean()])
    return Table(
        [
            "|Q|",
            "Laplace per query: measured variance",
            "exact 2(Δ₁/ε)²",
            "table: measured variance",
            "exact 2|S|/(εn)²",
        ],
        rows,
        caption=f"variance per answer, averaged over the |Q| queries; n = {n:,}, ε = {epsilon}, {trials} runs",
    )


@dataclass(frozen=True)
class TableSizeSweep:
    """The noisy table's largest error against its size G (:func:`table_size_sweep`).

    Attributes
    ----------
    table_sizes : numpy.ndarray of int
        The table sizes G measured.
    error : tuple of ErrorSummary
        Per G, the largest normalised error over the queries.
    bound : numpy.ndarray
        Per G, the level the largest error stays below with probability 1 − β.
    num_queries : int
        The number of random queries answered at each G.
    slope : float
        The measured growth: the slope of log(mean error) against log G (theory: 0.5).
    """

    table_sizes: np.ndarray
    error: tuple[ErrorSummary, ...]
    bound: np.ndarray
    num_queries: int
    slope: float

    def __str__(self) -> str:
        return f"measured growth: G^{self.slope:.2f} (theory: G^0.5)"


def table_size_sweep(
    n: int,
    table_sizes: ArrayLike,
    *,
    num_queries: int,
    epsilon: float,
    beta: float = 0.05,
    trials: int,
    rng: RngLike = None,
) -> TableSizeSweep:
    """The noisy table's largest error over ``num_queries`` random queries, for tables of several sizes G.

    For each G: a population of ``n`` people with G types, ``num_queries`` random queries over them, and
    ``trials`` releases of the table with Lap(1/ε) per cell.

    Parameters
    ----------
    n : int
        The number of people, ≥ 1.
    table_sizes : array_like of int
        The numbers of types G, each ≥ 1.
    num_queries : int
        The number of random queries answered from each table, ≥ 1.
    epsilon : float
        The privacy parameter ε > 0 of the table.
    beta : float, optional
        The failure probability of the bound, in (0, 1) (default 0.05).
    trials : int
        The number of releases per G, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the populations, the queries and the noise, in the order of ``table_sizes``.

    Returns
    -------
    TableSizeSweep
        The measured largest errors, the bounds and the measured growth; ``str`` gives the growth.

    Raises
    ------
    ValueError
        If ``n``, ``num_queries`` or ``trials`` is out of range, ``table_sizes`` is not a grid of whole
        numbers ≥ 1, ``epsilon`` or ``beta`` is out of range, or ``rng`` is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    n = check_integer(n, "n", minimum=1)
    sizes = _count_grid(table_sizes, "table_sizes")
    num_queries = check_integer(num_queries, "num_queries", minimum=1)
    epsilon = check_epsilon(epsilon)
    beta = check_probability(beta, "beta")
    trials = check_integer(trials, "trials", minimum=2)
    gen = as_generator(rng)
    error = []
    for g in sizes:
        population = make_population(n, int(g), rng=gen)
        queries = random_type_queries(num_queries, int(g), rng=gen)
        released = histogram_answers(population, queries, epsilon=epsilon, rng=gen, trials=trials)
        error.append(summarize(max_abs_error(released, population.answers(queries))))
    bound = [
        noisy_histogram_max_error_bound(domain_size=int(g), num_queries=num_queries, beta=beta, epsilon=epsilon, n=n)
        for g in sizes
    ]
    slope = log_log_slope(sizes, [s.mean for s in error])
    return TableSizeSweep(sizes, tuple(error), np.array(bound), num_queries, slope)


@dataclass(frozen=True)
class CrossoverSweep:
    """Randomized response and Laplace per query on every prefix of one workload, for several n.

    Attributes
    ----------
    sizes : numpy.ndarray of int
        The numbers of people n measured.
    randomized_response : numpy.ndarray
        Shape ``(len(sizes), K)``: the mean largest error over the first k queries, k = 1, …, K.
    laplace : numpy.ndarray
        The same for Laplace per query.
    crossover : numpy.ndarray of int
        Per n, the smallest k from which randomized response's error is below Laplace's.
    epsilon : float
        The privacy parameter of both releases.
    """

    sizes: np.ndarray
    randomized_response: np.ndarray
    laplace: np.ndarray
    crossover: np.ndarray
    epsilon: float

    def __str__(self) -> str:
        return "\n".join(
            f"n = {n:>7,}: randomized response beats Laplace per query from |Q| ≈ {k:4d} on   "
            f"(√n = {np.sqrt(n):.0f}, ratio {k / np.sqrt(n):.2f})"
            for n, k in zip(self.sizes, self.crossover, strict=True)
        )


def crossover_sweep(
    workload: MatrixWorkload, sizes: ArrayLike, *, epsilon: float, trials: int, rng: RngLike = None
) -> CrossoverSweep:
    """Where randomized response overtakes Laplace per query, for populations of several sizes.

    For each n: a population of n people over the workload's types, then ``trials`` releases by each
    method of every prefix of the workload at once (:func:`~dpcourse.linear_queries.prefix_max_errors`).

    Parameters
    ----------
    workload : MatrixWorkload
        The K queries, in the order they are added.
    sizes : array_like of int
        The numbers of people n, each ≥ 1.
    epsilon : float
        The privacy parameter ε > 0 of both releases.
    trials : int
        The number of releases per n and method, ≥ 1.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the populations and the noise, in the order of ``sizes``.

    Returns
    -------
    CrossoverSweep
        The mean largest errors of both methods on every prefix, and where they cross (K when they do
        not); ``str`` gives one line per n.

    Raises
    ------
    ValueError
        If ``sizes`` is not a grid of whole numbers ≥ 1, ``epsilon`` is out of range, ``trials`` < 1, or
        ``rng`` is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    people = _count_grid(sizes, "sizes")
    epsilon = check_epsilon(epsilon)
    trials = check_integer(trials, "trials", minimum=1)
    gen = as_generator(rng)
    rr: list[np.ndarray] = []
    lap: list[np.ndarray] = []
    for n in people:
        population = make_population(int(n), workload.domain_size, rng=gen)
        for method, errors in (("randomized_response", rr), ("laplace", lap)):
            prefix = prefix_max_errors(method, population, workload, epsilon=epsilon, rng=gen, trials=trials)
            errors.append(prefix.mean(axis=0))
    rr_error, lap_error = np.array(rr), np.array(lap)
    wins = rr_error < lap_error
    crossover = np.where(wins.any(axis=1), wins.argmax(axis=1) + 1, workload.num_queries)
    return CrossoverSweep(people, rr_error, lap_error, crossover, epsilon)


@dataclass(frozen=True)
class AttackSweep:
    """The least-squares reconstruction attack against the answers' accuracy (:func:`attack_sweep`).

    Attributes
    ----------
    noise_levels : numpy.ndarray
        The accuracies E/√n measured: each answer off by a uniform error in [−E, E].
    recovered : numpy.ndarray
        Per level, the mean fraction of the bits recovered.
    dp_recovered : float
        The mean fraction recovered from ε-DP answers, Lap(m/ε) on each of the m answers.
    dp_noise_level : float
        That noise scale m/ε, over √n.
    guess_bound : float
        The largest fraction of uniformly random bits any ε-DP release lets an attacker guess, per bit.
    epsilon : float
        The ε of the DP answers.
    """

    noise_levels: np.ndarray
    recovered: np.ndarray
    dp_recovered: float
    dp_noise_level: float
    guess_bound: float
    epsilon: float

    def __str__(self) -> str:
        lines = [
            f"E = {e:5.2f}·√n: {r:.3f} of the bits recovered"
            for e, r in zip(self.noise_levels, self.recovered, strict=True)
        ]
        eps = f"{self.epsilon:g}"
        lines.append(f"ε = {eps} Laplace noise (E = m/ε = {self.dp_noise_level:.0f}·√n): {self.dp_recovered:.3f}")
        lines.append(f"what any {eps}-DP release allows per bit: at most {self.guess_bound:.3f}")
        return "\n".join(lines)


def attack_sweep(
    secret_bits: ArrayLike,
    noise_levels: ArrayLike,
    *,
    num_queries: int,
    epsilon: float,
    trials: int,
    rng: RngLike = None,
) -> AttackSweep:
    """Dinur & Nissim's attack by least squares on m random subset sums, at several accuracies, and on DP answers.

    For each level e: ``trials`` sets of answers to m random subset sums, each off by a uniform error in
    [−e√n, e√n] (:func:`~dpcourse.linear_queries.run_attack`); then the same attack on answers with
    Lap(m/ε) noise, which makes the m answers ε-DP (Δ₁ = m).

    Parameters
    ----------
    secret_bits : array_like of {0, 1}, shape (n,)
        The secret bits, n ≥ 1.
    noise_levels : array_like of float
        The accuracies E/√n, each > 0.
    num_queries : int
        m, the number of subset sums asked, ≥ 1.
    epsilon : float
        The privacy parameter ε > 0 of the DP answers.
    trials : int
        The number of sets of answers per level, ≥ 1.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the queries and the errors, in the order of ``noise_levels``, then the DP answers.

    Returns
    -------
    AttackSweep
        The fractions recovered and the per-bit bound of ε-DP; ``str`` gives one line per level and two
        for DP.

    Raises
    ------
    ValueError
        If ``secret_bits`` is empty or not 0/1, ``noise_levels`` is not a grid of numbers > 0,
        ``num_queries`` or ``trials`` < 1, ``epsilon`` is out of range, or ``rng`` is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    levels = _positive_grid(noise_levels, "noise_levels")
    num_queries = check_integer(num_queries, "num_queries", minimum=1)
    epsilon = check_epsilon(epsilon)
    trials = check_integer(trials, "trials", minimum=1)
    gen = as_generator(rng)
    bits = np.asarray(secret_bits)
    root_n = np.sqrt(np.size(bits))
    recovered = [
        run_attack(bits, num_queries=num_queries, noise_scale=e * root_n, rng=gen, trials=trials).mean for e in levels
    ]
    dp_scale = num_queries / epsilon
    dp = run_attack(bits, num_queries=num_queries, noise_scale=dp_scale, noise="laplace", rng=gen, trials=trials)
    return AttackSweep(
        levels, np.array(recovered), dp.mean, dp_scale / root_n, dp_bit_guess_bound(epsilon=epsilon), epsilon
    )


def rr_proportion_variances(bits: ArrayLike, epsilons: ArrayLike, *, trials: int, rng: RngLike = None) -> Table:
    """Randomized response on one bit per person: the debiased proportion's variance, measured and exact.

    For each ε: ``trials`` rounds of randomized response on ``bits``, each debiased to an estimate of the
    proportion of ones; their sample variance beside e^ε/(n(e^ε − 1)²), and their mean.

    Parameters
    ----------
    bits : array_like of {0, 1}
        One private bit per person (n ≥ 1).
    epsilons : array_like of float
        The privacy parameters ε, each > 0.
    trials : int
        The number of rounds per ε, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the reports, in the order of ``epsilons``.

    Returns
    -------
    Table
        One row per ε: the measured variance, the exact one and the mean estimate.

    Raises
    ------
    ValueError
        If ``bits`` is empty or not 0/1, ``epsilons`` is not a grid of numbers > 0, ``trials`` < 2, or ``rng``
        is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    x = check_binary(bits, "bits")
    grid = _positive_grid(epsilons, "epsilons")
    trials = check_integer(trials, "trials", minimum=2)
    gen = as_generator(rng)
    rows = []
    for epsilon in grid:
        reports = randomized_response(x, epsilon=epsilon, rng=gen, trials=trials)
        estimates = np.asarray(rr_estimate(reports, epsilon=epsilon))  # one debiased proportion per round
        exact = rr_proportion_variance(n=x.size, epsilon=epsilon)
        rows.append([float(epsilon), estimates.var(ddof=1), exact, estimates.mean()])
    return Table(
        ["ε", "measured variance", "e^ε/(n(e^ε−1)²)", "mean estimate"],
        rows,
        caption=f"{x.size} people, true proportion {x.mean():.3f}, {trials} runs per ε",
    )


@dataclass(frozen=True)
class RootNSweep:
    """The Gaussian mechanism's largest error on k = √n queries, against 1/√n (:func:`gaussian_root_n_errors`).

    Attributes
    ----------
    sizes : numpy.ndarray of int
        The numbers of people n.
    error : numpy.ndarray
        Per n, the mean largest normalised error over the k = round(√n) answers.
    slope : float
        The slope of log(error·√n) against log n: how the ratio to 1/√n falls.
    epsilon : float
        The privacy parameter ε.
    delta : float
        The δ of the Gaussian mechanism.
    """

    sizes: np.ndarray
    error: np.ndarray
    slope: float
    epsilon: float
    delta: float

    def __str__(self) -> str:
        return f"the ratio falls like n^{self.slope:.2f}"

    def table(self) -> Table:
        """Per n: k, the mean largest error, 1/√n and their ratio.

        Returns
        -------
        Table
            One row per n.
        """
        rows = [
            [int(n), int(round(np.sqrt(n))), e, 1 / np.sqrt(n), e * np.sqrt(n)]
            for n, e in zip(self.sizes, self.error, strict=True)
        ]
        return Table(
            ["n", "k = √n", "Gaussian: mean max error", "1/√n", "ratio"],
            rows,
            caption=f"k = √n queries, ε = {self.epsilon:g}, δ = {self.delta:g}".replace("e-0", "e-"),
        )


def gaussian_root_n_errors(
    sizes: ArrayLike, *, epsilon: float, delta: float, trials: int, rng: RngLike = None
) -> RootNSweep:
    """The Gaussian mechanism on k = √n counting queries that one person can all be in, for several n.

    Each answer gets N(0, σ²) with σ calibrated (analytically) to Δ₂ = √k/n; only the noise matters, so
    the true answers are 0.

    Parameters
    ----------
    sizes : array_like of int
        The numbers of people n, each ≥ 1.
    epsilon : float
        The privacy parameter ε > 0.
    delta : float
        The δ of the Gaussian mechanism, in (0, 1).
    trials : int
        The number of releases per n, ≥ 1.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise, in the order of ``sizes``.

    Returns
    -------
    RootNSweep
        The mean largest errors and how their ratio to 1/√n falls; ``str`` gives the slope.

    Raises
    ------
    ValueError
        If ``sizes`` is not a grid of whole numbers ≥ 1, ``epsilon`` or ``delta`` is out of range, ``trials``
        < 1, or ``rng`` is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    people = _count_grid(sizes, "sizes")
    epsilon = check_epsilon(epsilon)
    delta = check_probability(delta, "delta")
    trials = check_integer(trials, "trials", minimum=1)
    gen = as_generator(rng)
    error = []
    for n in people:
        k = int(round(np.sqrt(n)))
        noisy = gaussian_mechanism(
            np.zeros(k), l2_sensitivity=np.sqrt(k) / n, epsilon=epsilon, delta=delta, rng=gen, trials=trials
        )
        error.append(max_abs_error(noisy, np.zeros(k)).mean())
    ratio = np.array(error) * np.sqrt(people)
    slope = log_log_slope(people, ratio)
    return RootNSweep(people, np.array(error), slope, epsilon, delta)


def type_queries_max_errors(
    num_types: int, sizes: ArrayLike, *, epsilon: float, trials: int, rng: RngLike = None
) -> Table:
    """The noisy table's largest error over all 2^G type queries, measured and approximated, for several n.

    Parameters
    ----------
    num_types : int
        The number of types G, ≥ 1.
    sizes : array_like of int
        The numbers of people n, each ≥ 1.
    epsilon : float
        The privacy parameter ε > 0 of the table.
    trials : int
        The number of releases per n, ≥ 1.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the populations and the noise, in the order of ``sizes``.

    Returns
    -------
    Table
        One row per n: the measured mean and 95th percentile, (G/2 + √(G/π))/(εn), G/(2εn), 1/√n and how
        far the mean lies below 1/√n.

    Raises
    ------
    ValueError
        If ``num_types`` or ``trials`` is out of range, ``sizes`` is not a grid of whole numbers ≥ 1,
        ``epsilon`` is out of range, or ``rng`` is a negative seed.
    TypeError
        If an argument has the wrong type.
    """
    g = check_integer(num_types, "num_types", minimum=1)
    people = _count_grid(sizes, "sizes")
    epsilon = check_epsilon(epsilon)
    trials = check_integer(trials, "trials", minimum=1)
    gen = as_generator(rng)
    rows = []
    for n in people:
        population = make_population(int(n), g, rng=gen)
        worst = histogram_all_subsets_max_error(population, epsilon=epsilon, rng=gen, trials=trials)
        approx = noisy_table_all_queries_mean_error(num_types=g, epsilon=epsilon, n=int(n))
        root = 1 / np.sqrt(n)
        rows.append(
            [int(n), worst.mean(), np.quantile(worst, 0.95), approx, g / (2 * epsilon * n), root, root / worst.mean()]
        )
    return Table(
        ["n", "measured mean", "95th percentile", "≈ (G/2 + √(G/π))/(εn)", "G/(2εn)", "1/√n", "(1/√n) / mean"],
        rows,
        caption=f"largest error over all 2^{g} type queries, ε = {epsilon:g}, {trials} releases",
    )


def all_subsets_errors(n: int, epsilons: ArrayLike, *, trials: int, rng: RngLike = None) -> Table:
    """The largest error over all 2ⁿ subset sums of n people whose bits are all 1: the DP lower bound, randomized
    response's raw reports, and a noisy cell per person.

    Parameters
    ----------
    n : int
        The number of people, ≥ 1.
    epsilons : array_like of float
        The privacy parameters ε, each > 0.
    trials : int
        The number of releases per ε, ≥ 1.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the reports and the noise, in the order of ``epsilons``.

    Returns
    -------
    Table
        One row per ε: 1/(4(1 + e^ε)), the reports' measured error and 1/(1 + e^ε), the noisy cells' error.

    Raises
    ------
    ValueError
        If ``n`` or ``trials`` is out of range, ``epsilons`` is not a grid of numbers > 0, or ``rng`` is a
        negative seed.
    TypeError
        If an argument has the wrong type.
    """
    n = check_integer(n, "n", minimum=1)
    grid = _positive_grid(epsilons, "epsilons")
    trials = check_integer(trials, "trials", minimum=1)
    gen = as_generator(rng)
    ones = np.ones(n, dtype=int)
    rows = []
    for epsilon in grid:
        reports = randomized_response(ones, epsilon=epsilon, rng=gen, trials=trials)
        cell_noise = gen.laplace(scale=1 / epsilon, size=(trials, n))  # the noisy table's error in each person's cell
        rows.append(
            [
                float(epsilon),
                all_subsets_error_lower_bound(epsilon=epsilon),
                all_subsets_max_error(reports - ones).mean(),
                rr_reports_all_subsets_error(epsilon=epsilon),
                all_subsets_max_error(cell_noise).mean(),
            ]
        )
    return Table(
        ["ε", "DP lower bound 1/(4(1+e^ε))", "RR reports: measured", "1/(1+e^ε)", "noisy cell per person: measured"],
        rows,
        caption=f"largest normalised error over all 2ⁿ subset sums, n = {n}, every bit 1; ignoring the data: 0.5",
    )
