"""Releasing many linear queries: randomized response, Laplace, the noisy table, Gaussian.

The setting of notebook 02 (Lecture 3, "Apply randomized response to answer linear queries").
Each of n people has a public *type* gᵢ ∈ {0, …, G − 1} (an age band, a district) and a private
bit xᵢ ∈ {0, 1}. A counting query is a set S of types and asks for the fraction of people who
have a type in S and bit 1:

    q_S(x) = (1/n) Σᵢ 1[gᵢ ∈ S]·xᵢ = (1/n) Σ_{g ∈ S} c_g,    c_g = #{i : gᵢ = g, xᵢ = 1}.

The contingency table c ∈ ℕᴳ is a histogram. Neighbouring datasets here differ in **one
person's bit** (n and every type are public): that changes one cell of c by 1, and each
query containing that person's type by 1/n. A workload of k queries is a 0/1 matrix W (k × G)
and its answers are W c / n.

Four ways to release them, each vectorised over trials:

* :func:`randomized_response_answers`: every person sends one ε-LDP report of their bit;
  the curator debiases the reports and answers every query from them.
* :func:`laplace_answers`: the Laplace mechanism on the k answers (ε split across them).
* :func:`histogram_answers`: the Laplace mechanism on the table c, then every query from it.
* :func:`gaussian_answers`: the Gaussian mechanism on the k answers, (ε, δ)-DP.

:func:`prefix_max_errors` measures randomized response and Laplace per query on every prefix of
a workload at once (where the two cross, notebook 02 §5).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_choice,
    check_epsilon,
    check_integer,
    check_probability,
    check_trials,
    check_unit_interval_array,
)
from ..mechanisms.noise import gaussian_mechanism, laplace_mechanism, rr_keep_probability
from .workloads import MatrixWorkload

__all__ = [
    "METHODS",
    "Population",
    "gaussian_answers",
    "histogram_all_subsets_max_error",
    "histogram_answers",
    "laplace_answers",
    "make_population",
    "prefix_max_errors",
    "random_type_queries",
    "randomized_response_answers",
    "release",
    "rr_split_budget_answers",
]

METHODS = ("randomized_response", "laplace", "laplace_histogram", "gaussian")


@dataclass(frozen=True)
class Population:
    """n people summarised by type: ``type_sizes[g]`` people of type g, ``ones[g]`` of them with bit 1.

    Neither array is checked here; :func:`make_population` draws a consistent pair.

    Parameters
    ----------
    type_sizes : numpy.ndarray of int, shape (G,)
        n_g, the number of people of each type; they sum to n.
    ones : numpy.ndarray of int, shape (G,)
        c_g ≤ n_g, the number of people of type g with bit 1: the contingency table c.
    """

    type_sizes: np.ndarray
    ones: np.ndarray

    @property
    def n(self) -> int:
        """The number of people, Σ_g n_g."""
        return int(self.type_sizes.sum())

    @property
    def num_types(self) -> int:
        """The number of types G."""
        return int(self.type_sizes.size)

    def answers(self, workload: MatrixWorkload) -> np.ndarray:
        """The exact normalised answers W c / n.

        Parameters
        ----------
        workload : MatrixWorkload
            The k queries, one column per type.

        Returns
        -------
        numpy.ndarray
            The true fractions, shape ``(k,)``.

        Raises
        ------
        ValueError
            If ``workload`` does not have one column per type.
        """
        return workload.answer(self.ones) / self.n


def make_population(n: int, num_types: int, *, rng: RngLike = None, rate: ArrayLike | None = None) -> Population:
    """n people with uniformly random types and bits, P[bit = 1 | type g] = ``rate[g]`` (random if None).

    Parameters
    ----------
    n : int
        The number of people, ≥ 1; the type sizes are one multinomial draw with G equal probabilities.
    num_types : int
        The number of types G, ≥ 1.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the rates (if drawn), the types and the bits.
    rate : array_like, shape (num_types,), optional
        The probability of bit 1 for each type, in [0, 1]; None draws each uniformly from [0.1, 0.9).

    Returns
    -------
    Population
        The type sizes and, per type, the number of people with bit 1 (a binomial draw).

    Raises
    ------
    ValueError
        If ``n`` or ``num_types`` < 1, ``rate`` does not have shape ``(num_types,)`` or has an entry outside
        [0, 1] (or NaN), or ``rng`` is a negative seed.
    TypeError
        If ``n`` or ``num_types`` is not an integer, ``rate`` is not an array of numbers, or ``rng`` is not
        a seed, a SeedSequence or a Generator.
    """
    n = check_integer(n, "n", minimum=1)
    g = check_integer(num_types, "num_types", minimum=1)
    gen = as_generator(rng)
    p = gen.uniform(0.1, 0.9, size=g) if rate is None else check_unit_interval_array(rate, "rate", shape=(g,))
    sizes = gen.multinomial(n, np.full(g, 1.0 / g))
    ones = gen.binomial(sizes, p)
    return Population(sizes, ones)


def random_type_queries(num_queries: int, num_types: int, *, rng: RngLike = None) -> MatrixWorkload:
    """k counting queries, each a uniformly random subset of the G types (every subset equally likely).

    Parameters
    ----------
    num_queries : int
        The number of queries k, ≥ 1.
    num_types : int
        The number of types G, ≥ 1.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the subsets.

    Returns
    -------
    MatrixWorkload
        A dense 0/1 matrix of shape ``(num_queries, num_types)``, each entry 1 with probability ½
        (the empty subset included), named ``"random type subsets"``.

    Raises
    ------
    ValueError
        If ``num_queries`` or ``num_types`` < 1, or ``rng`` is a negative seed.
    TypeError
        If ``num_queries`` or ``num_types`` is not an integer, or ``rng`` is not a seed, a SeedSequence or
        a Generator.
    """
    k = check_integer(num_queries, "num_queries", minimum=1)
    g = check_integer(num_types, "num_types", minimum=1)
    return MatrixWorkload((as_generator(rng).random((k, g)) < 0.5).astype(float), name="random type subsets")


def _check_pair(population: Population, workload: MatrixWorkload) -> None:
    if workload.domain_size != population.num_types:
        raise ValueError(f"workload must have one column per type ({population.num_types}); got {workload.domain_size}")


def randomized_response_answers(
    population: Population, workload: MatrixWorkload, *, epsilon: float, rng: RngLike = None, trials: int | None = None
) -> np.ndarray:
    """Every person reports their bit once with randomized response; all queries answered from the reports.

    The debiased report x̂ = ½ + (Y − ½)/(2p − 1) is linear in Y, so every answer depends on the
    reports only through the number of reported ones per type and true bit. Among the c_g people
    of type g with bit 1, Bin(c_g, p) report 1; among the other n_g − c_g, Bin(n_g − c_g, 1 − p) do.
    Drawing these counts is exactly the same in distribution as drawing n reports, and costs
    O(G) instead of O(n) per trial (``tests/linear_queries/test_rr_vs_laplace.py`` checks the two agree).

    Parameters
    ----------
    population : Population
        The people: their type sizes and, per type, how many have bit 1.
    workload : MatrixWorkload
        The k queries, one column per type (k × G).
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent releases; None returns one release.

    Returns
    -------
    numpy.ndarray
        The normalised answers from the debiased reports, shape ``(k,)`` or ``(trials, k)``.

    Raises
    ------
    ValueError
        If ``workload`` does not have one column per type, ``epsilon`` is not a finite number > 0,
        ``trials`` < 1 or ``rng`` is a negative seed.
    TypeError
        If ``epsilon`` is not a number, ``trials`` not an integer, or ``rng`` not a seed, a SeedSequence
        or a Generator.

    Notes
    -----
    **Privacy.** Each person's report is ε-DP (ε-local DP), so the whole release is ε-DP, for every
    query at once: the queries are post-processing.
    """
    _check_pair(population, workload)
    p = rr_keep_probability(epsilon)
    gen = as_generator(rng)
    checked = check_trials(trials)
    shape = (1 if checked is None else checked, population.num_types)
    reported_ones = gen.binomial(np.broadcast_to(population.ones, shape), p) + gen.binomial(
        np.broadcast_to(population.type_sizes - population.ones, shape), 1 - p
    )
    # Σ over type g of x̂ = n_g/2 + (reported_ones − n_g/2)/(2p − 1)
    debiased = population.type_sizes / 2 + (reported_ones - population.type_sizes / 2) / (2 * p - 1)
    answers = workload.answer(debiased) / population.n
    return answers[0] if trials is None else answers


def rr_split_budget_answers(
    bit_means: ArrayLike, n: int, *, epsilon: float, rng: RngLike = None, trials: int | None = None
) -> np.ndarray:
    """k unrelated bits per person, each sent with randomized response at ε/k (basic composition).

    ``bit_means[j]`` is the true fraction of the n people whose j-th bit is 1; query j asks for it.
    As in :func:`randomized_response_answers`, the reported ones are drawn as binomial counts.

    Parameters
    ----------
    bit_means : array_like, shape (k,)
        The true fraction of people with each bit set, in [0, 1]; the true count of ones is
        ``bit_means * n`` rounded to the nearest integer.
    n : int
        The number of people, ≥ 1.
    epsilon : float
        The total privacy parameter ε, a finite number > 0; each bit is sent at ε/k.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent releases; None returns one release.

    Returns
    -------
    numpy.ndarray
        The debiased fractions, shape ``(k,)`` or ``(trials, k)``.

    Raises
    ------
    ValueError
        If ``bit_means`` is not 1-dimensional, is empty or has an entry outside [0, 1] (or NaN or ∞),
        ``n`` < 1, ``epsilon`` is not a finite number > 0, ``trials`` < 1 or ``rng`` is a negative seed.
    TypeError
        If ``bit_means`` is not an array of numbers, ``n`` or ``trials`` is not an integer, ``epsilon`` is
        not a number, or ``rng`` is not a seed, a SeedSequence or a Generator.
    """
    means = check_unit_interval_array(bit_means, "bit_means", ndim=1)
    n = check_integer(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    k = means.size
    p = rr_keep_probability(epsilon / k)
    ones = np.rint(means * n).astype(np.int64)
    checked = check_trials(trials)
    shape = (1 if checked is None else checked, k)
    gen = as_generator(rng)
    reported = gen.binomial(np.broadcast_to(ones, shape), p) + gen.binomial(np.broadcast_to(n - ones, shape), 1 - p)
    answers = 0.5 + (reported / n - 0.5) / (2 * p - 1)
    return answers[0] if trials is None else answers


def laplace_answers(
    population: Population, workload: MatrixWorkload, *, epsilon: float, rng: RngLike = None, trials: int | None = None
) -> np.ndarray:
    """The Laplace mechanism on the k normalised answers: Lap(Δ₁/(nε)), Δ₁ = ``workload.l1_sensitivity``.

    Neighbours differ in one person's bit, which moves every query that contains their type by
    1/n, so Δ₁ = the largest number of queries that share a type (at most k), divided by n:
    answering k queries this way is ε/k per query.

    Parameters
    ----------
    population : Population
        The people: their type sizes and, per type, how many have bit 1.
    workload : MatrixWorkload
        The k queries, one column per type (k × G).
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent releases; None returns one release.

    Returns
    -------
    numpy.ndarray
        The noisy normalised answers, shape ``(k,)`` or ``(trials, k)``.

    Raises
    ------
    ValueError
        If ``workload`` does not have one column per type, ``epsilon`` is not a finite number > 0,
        ``trials`` < 1, the workload is all zeros (Δ₁ = 0) or ``rng`` is a negative seed.
    TypeError
        If ``epsilon`` is not a number, ``trials`` not an integer, or ``rng`` not a seed, a SeedSequence
        or a Generator.
    """
    _check_pair(population, workload)
    return np.asarray(
        laplace_mechanism(
            population.answers(workload),
            sensitivity=workload.l1_sensitivity / population.n,
            epsilon=epsilon,
            rng=rng,
            trials=trials,
        )
    )


def histogram_answers(
    population: Population, workload: MatrixWorkload, *, epsilon: float, rng: RngLike = None, trials: int | None = None
) -> np.ndarray:
    """The Laplace mechanism on the table c (Δ₁ = 1: one person's bit moves one cell by 1), then every query from it.

    Parameters
    ----------
    population : Population
        The people: their type sizes and, per type, how many have bit 1.
    workload : MatrixWorkload
        The k queries, one column per type (k × G).
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent releases; None returns one release.

    Returns
    -------
    numpy.ndarray
        The normalised answers W c̃ / n from the noisy table c̃, shape ``(k,)`` or ``(trials, k)``.

    Raises
    ------
    ValueError
        If ``workload`` does not have one column per type, ``epsilon`` is not a finite number > 0,
        ``trials`` < 1 or ``rng`` is a negative seed.
    TypeError
        If ``epsilon`` is not a number, ``trials`` not an integer, or ``rng`` not a seed, a SeedSequence
        or a Generator.
    """
    _check_pair(population, workload)
    noisy = laplace_mechanism(population.ones, sensitivity=1.0, epsilon=epsilon, rng=rng, trials=trials)
    return workload.answer(noisy) / population.n


def histogram_all_subsets_max_error(
    population: Population, *, epsilon: float, rng: RngLike = None, trials: int | None = None
) -> np.ndarray:
    """The largest normalised error over **all 2ᴳ** type-subset queries answered from one noisy table.

    The table is released as in :func:`histogram_answers`, c̃ = c + Z with Zᵍ ~ Lap(1/ε), and
    q_S is answered as Σ_{g ∈ S} c̃_g / n, so its error is Σ_{g ∈ S} Z_g / n. The worst S takes
    every cell whose noise is positive, or every cell whose noise is negative:

        max over S of |Σ_{g ∈ S} Z_g| = max(Σ_g max(Z_g, 0), Σ_g max(−Z_g, 0)),

    so the maximum over all 2ᴳ queries is exact without listing them. It equals
    (Σ|Z_g| + |Σ Z_g|)/2, of mean about (G/2 + √(G/π))/ε (the second term from the normal
    approximation of Σ Z_g): about G/(2εn) normalised, O(1/n) for a fixed number of types,
    however many queries are asked.

    Parameters
    ----------
    population : Population
        The people: the true table c is ``population.ones``.
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent releases; None returns one release.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        The largest normalised error: one number, or shape ``(trials,)``.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0, ``trials`` < 1 or ``rng`` is a negative seed.
    TypeError
        If ``epsilon`` is not a number, ``trials`` not an integer, or ``rng`` not a seed, a SeedSequence
        or a Generator.
    """
    noisy = laplace_mechanism(population.ones, sensitivity=1.0, epsilon=epsilon, rng=rng, trials=trials)
    noise = noisy - population.ones
    worst = np.maximum(np.clip(noise, 0.0, None).sum(axis=-1), np.clip(-noise, 0.0, None).sum(axis=-1))
    return worst / population.n


def prefix_max_errors(
    method: str,
    population: Population,
    workload: MatrixWorkload,
    *,
    epsilon: float,
    rng: RngLike = None,
    trials: int | None = None,
) -> np.ndarray:
    """The largest normalised error over the first k queries of ``workload``, for every k at once.

    Column k − 1 of the result is max over the first k queries of |answer − truth|, as if only
    those k queries had been released with ``method``:

    * ``"randomized_response"``: one set of reports answers every query, so the release of the
      first k queries *is* the first k answers of one release of all of them: a running maximum.
    * ``"laplace"``: releasing the first k queries adds Lap(Δ₁(k)/(nε)) to each, Δ₁(k) the largest
      number of them that share a type. One draw of standard Laplace noise Z serves every k
      (common random numbers): the error for k is Δ₁(k)/(nε) times the running maximum of |Z|,
      exactly distributed as a fresh release of the first k queries.

    Parameters
    ----------
    method : {"randomized_response", "laplace"}
        The release to measure.
    population : Population
        The people: their type sizes and, per type, how many have bit 1.
    workload : MatrixWorkload
        The K queries, one column per type (K × G), in the order they are added.
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent releases; None returns one release.

    Returns
    -------
    numpy.ndarray
        Shape ``(K,)``, or ``(trials, K)`` with K = ``workload.num_queries``.

    Raises
    ------
    ValueError
        If ``method`` is not one of the two names, ``workload`` does not have one column per type,
        ``epsilon`` is not a finite number > 0, ``trials`` < 1 or ``rng`` is a negative seed.
    TypeError
        If ``epsilon`` is not a number, ``trials`` not an integer, or ``rng`` not a seed, a SeedSequence
        or a Generator.
    """
    check_choice(method, "method", ("randomized_response", "laplace"))
    _check_pair(population, workload)
    checked = check_trials(trials)
    gen = as_generator(rng)
    if method == "randomized_response":
        answers = randomized_response_answers(population, workload, epsilon=epsilon, rng=gen, trials=checked or 1)
        running = np.maximum.accumulate(np.abs(answers - population.answers(workload)), axis=-1)
    else:
        sensitivity = np.cumsum(np.abs(workload.matrix()), axis=0).max(axis=1)  # Δ₁ of the first k queries
        noise = np.abs(gen.laplace(size=(checked or 1, workload.num_queries)))
        running = np.maximum.accumulate(noise, axis=-1) * sensitivity / (population.n * check_epsilon(epsilon))
    return running[0] if trials is None else running


def gaussian_answers(
    population: Population,
    workload: MatrixWorkload,
    *,
    epsilon: float,
    delta: float,
    rng: RngLike = None,
    trials: int | None = None,
    calibration: str = "analytic",
) -> np.ndarray:
    """The Gaussian mechanism on the k normalised answers, Δ₂ = ``workload.l2_sensitivity``/n.

    Neighbours differ in one person's bit: it moves each of the (at most k) queries containing
    their type by 1/n, so Δ₂ = √(that number)/n ≤ √k/n.

    Parameters
    ----------
    population : Population
        The people: their type sizes and, per type, how many have bit 1.
    workload : MatrixWorkload
        The k queries, one column per type (k × G).
    epsilon : float
        The privacy parameter ε, a finite number > 0 (< 1 for the classic calibration).
    delta : float
        The privacy parameter δ, in the open interval (0, 1).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent releases; None returns one release.
    calibration : {"analytic", "classic"}, optional
        How σ is calibrated (see :func:`dpcourse.mechanisms.gaussian_sigma`); default ``"analytic"``.

    Returns
    -------
    numpy.ndarray
        The noisy normalised answers, shape ``(k,)`` or ``(trials, k)``.

    Raises
    ------
    ValueError
        If ``workload`` does not have one column per type or is all zeros (Δ₂ = 0), ``epsilon`` is not a
        finite number > 0 (or not < 1 with ``"classic"``), ``delta`` is not in (0, 1), ``calibration`` is
        unknown, ``trials`` < 1 or ``rng`` is a negative seed.
    TypeError
        If ``epsilon`` or ``delta`` is not a number, ``trials`` not an integer, or ``rng`` not a seed, a
        SeedSequence or a Generator.
    """
    _check_pair(population, workload)
    return np.asarray(
        gaussian_mechanism(
            population.answers(workload),
            l2_sensitivity=workload.l2_sensitivity / population.n,
            epsilon=epsilon,
            delta=delta,
            rng=rng,
            trials=trials,
            calibration=calibration,
        )
    )


def release(
    method: str,
    population: Population,
    workload: MatrixWorkload,
    *,
    epsilon: float,
    delta: float | None = None,
    rng: RngLike = None,
    trials: int | None = None,
) -> np.ndarray:
    """Dispatch to one of :data:`METHODS` (``delta`` is needed by, and only by, ``"gaussian"``).

    Parameters
    ----------
    method : {"randomized_response", "laplace", "laplace_histogram", "gaussian"}
        :func:`randomized_response_answers`, :func:`laplace_answers`, :func:`histogram_answers` or
        :func:`gaussian_answers` (with its default, analytic, calibration).
    population : Population
        The people: their type sizes and, per type, how many have bit 1.
    workload : MatrixWorkload
        The k queries, one column per type (k × G).
    epsilon : float
        The privacy parameter ε, a finite number > 0.
    delta : float or None, optional
        The privacy parameter δ ∈ (0, 1) of ``"gaussian"``; checked, but unused, for the other methods.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.
    trials : int or None, optional
        Number of independent releases; None returns one release.

    Returns
    -------
    numpy.ndarray
        The noisy normalised answers, shape ``(k,)`` or ``(trials, k)``.

    Raises
    ------
    ValueError
        If ``method`` is not one of :data:`METHODS`, ``delta`` is given and not in (0, 1), or the chosen
        sampler refuses its arguments (see its Raises).
    TypeError
        If ``method`` is ``"gaussian"`` and ``delta`` is None, ``delta`` is not a number, or the chosen
        sampler refuses its arguments.
    """
    check_choice(method, "method", METHODS)
    if delta is not None and method != "gaussian":  # unused, but a δ given is checked
        check_probability(delta, "delta")
    if method == "gaussian":
        return gaussian_answers(
            population, workload, epsilon=epsilon, delta=check_probability(delta, "delta"), rng=rng, trials=trials
        )
    samplers: Mapping = {
        "randomized_response": randomized_response_answers,
        "laplace": laplace_answers,
        "laplace_histogram": histogram_answers,
    }
    return samplers[method](population, workload, epsilon=epsilon, rng=rng, trials=trials)
