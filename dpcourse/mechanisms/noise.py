"""Noise-adding mechanisms, each with its calibration and the reason it is private.

Every sampler takes ``rng`` (a seed or a ``numpy.random.Generator``) and ``trials``: with
``trials=None`` it returns one release shaped like the input, with ``trials=T`` a
``(T, *shape)`` array of independent releases drawn in one call.

The theory that goes with each mechanism (variances, tail bounds, error rates) lives in
:mod:`dpcourse.mechanisms.theory`; the calibrations (Laplace's scale, Gaussian σ, randomized response's
probability) live in :mod:`dpcourse.mechanisms.calibration`, below both. This module
holds what is needed to *run* the mechanisms.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_array,
    check_binary,
    check_epsilon,
    check_integer,
    check_positive,
    check_trials,
    row_blocks,
    sample_shape,
)
from .calibration import gaussian_sigma, laplace_scale, rr_keep_probability

__all__ = [
    "exponential_mechanism",
    "report_noisy_max",
    "gaussian_mechanism",
    "k_randomized_response",
    "k_rr_debias_counts",
    "k_rr_probabilities",
    "laplace_maximum",
    "laplace_mechanism",
    "randomized_response",
    "rr_debias",
    "rr_estimate",
]


def _answers(true_answers: ArrayLike) -> np.ndarray:
    return check_array(true_answers, "true_answers", ndim=(0, 1))


# --------------------------------------------------------------------------------------
# Laplace
# --------------------------------------------------------------------------------------
def laplace_mechanism(
    true_answers: ArrayLike, *, sensitivity: float, epsilon: float, rng: RngLike = None, trials: int | None = None
) -> float | np.ndarray:
    """Release ``true_answers + Z`` with Z_i ~ Lap(Δf/ε) i.i.d.

    Parameters
    ----------
    true_answers : float or array_like, shape (k,)
        The exact answers f(x) ∈ ℝᵏ (finite), or one number.
    sensitivity : float
        L1 sensitivity Δf of the whole vector f (not of one coordinate), > 0.
    epsilon : float
        Privacy parameter ε > 0.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the noise; None draws fresh entropy.
    trials : int or None, optional
        Number of independent releases, ≥ 1, drawn at once; None gives one release.

    Returns
    -------
    numpy.ndarray or float
        Shape ``(k,)``, or ``(trials, k)`` when ``trials`` is given; one number (a NumPy float) for a
        single number ``true_answers`` and ``trials=None``.

    Raises
    ------
    ValueError
        If ``true_answers`` is empty, has more than one dimension or an entry that is not finite,
        ``sensitivity`` or ``epsilon`` is not a finite number > 0, ``trials`` is < 1, or ``rng`` is a
        negative seed.
    TypeError
        If ``true_answers`` is not numeric, ``sensitivity`` or ``epsilon`` not a real number, ``trials`` not
        an integer, or ``rng`` not a seed, SeedSequence or Generator.

    Notes
    -----
    **Privacy.** For neighbours x, y the density ratio of the release at any point v is
    ∏ᵢ exp(−ε|vᵢ − fᵢ(x)|/Δf) / exp(−ε|vᵢ − fᵢ(y)|/Δf) ≤ exp(ε‖f(x) − f(y)‖₁/Δf) ≤ e^ε,
    by the triangle inequality, so the mechanism is ε-DP (Lecture 2, Theorem 3.6 of
    Dwork & Roth). Utility: Theorem 3.8, :func:`dpcourse.mechanisms.theory.laplace_max_error_bound`.

    Examples
    --------
    >>> laplace_mechanism([10.0, 20.0], sensitivity=1, epsilon=1.0, rng=0, trials=3).shape
    (3, 2)
    """
    answers = _answers(true_answers)
    b = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    shape = sample_shape(check_trials(trials), answers.shape)
    noise = as_generator(rng).laplace(0.0, b, size=shape)
    if noise.ndim == 0:
        return answers + noise
    noise += answers  # in place: the same sums as answers + noise, without a second (trials, k) array
    return noise


# --------------------------------------------------------------------------------------
# Gaussian
# --------------------------------------------------------------------------------------
def gaussian_mechanism(
    true_answers: ArrayLike,
    *,
    l2_sensitivity: float,
    epsilon: float,
    delta: float,
    rng: RngLike = None,
    trials: int | None = None,
    calibration: str = "analytic",
) -> float | np.ndarray:
    """Release ``true_answers + Z`` with Z ~ N(0, σ² I), σ from :func:`gaussian_sigma`.

    Parameters
    ----------
    true_answers : float or array_like, shape (k,)
        The exact answers f(x) ∈ ℝᵏ (finite), or one number.
    l2_sensitivity : float
        L2 sensitivity Δ₂ of the whole vector f, > 0.
    epsilon : float
        Privacy parameter ε > 0 (< 1 with ``calibration="classic"``).
    delta : float
        Privacy parameter δ ∈ (0, 1).
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the noise; None draws fresh entropy.
    trials : int or None, optional
        Number of independent releases, ≥ 1, drawn at once; None gives one release.
    calibration : {"analytic", "classic"}, optional
        How σ is chosen, as in :func:`dpcourse.mechanisms.calibration.gaussian_sigma`; ``"analytic"`` by default.

    Returns
    -------
    numpy.ndarray or float
        Shape ``(k,)``, or ``(trials, k)`` when ``trials`` is given; one number (a NumPy float) for a
        single number ``true_answers`` and ``trials=None``.

    Raises
    ------
    ValueError
        If ``true_answers`` is empty, has more than one dimension or an entry that is not finite,
        ``l2_sensitivity`` or ``epsilon`` is not a finite number > 0, ``delta`` is not in (0, 1),
        ``calibration`` is unknown or ``"classic"`` with ε ≥ 1, ``trials`` is < 1, or ``rng`` is a negative seed.
    TypeError
        If ``true_answers`` is not numeric, a privacy parameter is not a real number, ``trials`` is not an
        integer, or ``rng`` is not a seed, SeedSequence or Generator.

    Notes
    -----
    **Privacy.** The privacy loss of a Gaussian shift by a vector of norm ≤ Δ₂ is itself Gaussian;
    Balle & Wang (2018) give the exact δ for each ε, and the classic bound (Dwork &
    Roth, Theorem A.1) is a looser sufficient condition for ε < 1. Either calibration
    makes the release (ε, δ)-DP.
    """
    answers = _answers(true_answers)
    sigma = gaussian_sigma(l2_sensitivity=l2_sensitivity, epsilon=epsilon, delta=delta, calibration=calibration)
    shape = sample_shape(check_trials(trials), answers.shape)
    return answers + as_generator(rng).normal(0.0, sigma, size=shape)


# --------------------------------------------------------------------------------------
# Randomized response
# --------------------------------------------------------------------------------------
def randomized_response(
    bits: ArrayLike, *, epsilon: float, rng: RngLike = None, trials: int | None = None
) -> np.ndarray:
    """Each person reports their bit with probability p = e^ε/(1+e^ε), and its flip otherwise.

    Parameters
    ----------
    bits : array_like of {0, 1}, shape (n,)
        One private bit per person (booleans accepted).
    epsilon : float
        ε > 0.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the noise; None draws fresh entropy.
    trials : int or None, optional
        Number of independent releases, ≥ 1, drawn at once; None gives one release.

    Returns
    -------
    numpy.ndarray of int8
        Reports, shape ``(n,)`` or ``(trials, n)``.

    Raises
    ------
    ValueError
        If ``bits`` is empty or holds anything but 0 and 1, ``epsilon`` is not a finite number > 0,
        ``trials`` is < 1, or ``rng`` is a negative seed.
    TypeError
        If ``bits`` is not numeric, ``epsilon`` is not a real number, ``trials`` is not an integer, or
        ``rng`` is not a seed, SeedSequence or Generator.

    Notes
    -----
    **Privacy.** Changing one person's bit changes the probability of any report of theirs by the
    factor p/(1 − p) = e^ε at most, and the other reports not at all: ε-DP (indeed ε-local DP).
    """
    x = check_binary(bits, "bits")
    p = rr_keep_probability(epsilon)
    shape = sample_shape(check_trials(trials), x.shape)
    gen = as_generator(rng)
    if len(shape) < 2:
        return np.bitwise_xor(x, (gen.random(shape) >= p).astype(np.int8))
    # blocks of trials drawn one after the other are the same draws as one (trials, n) draw, without
    # a (trials, n) array of floats (160 MB for 20 000 × 1000): only the int8 reports are kept
    reports = np.empty(shape, dtype=np.int8)
    for block in row_blocks(shape[0], x.size):
        np.bitwise_xor(x, gen.random(reports[block].shape) >= p, out=reports[block])
    return reports


def rr_debias(reports: ArrayLike, *, epsilon: float) -> np.ndarray:
    """Per-person unbiased estimates x̂ = ½ + (Y − ½)/(2p − 1) of the true bits.

    E[x̂] = x for x ∈ {0, 1}; each x̂ takes one of the two values ½ ± ½/(2p − 1), a range
    of width 1/(2p − 1) = (e^ε + 1)/(e^ε − 1) (the Hoeffding range of Lecture 3).

    Parameters
    ----------
    reports : array_like of {0, 1}
        Randomized-response reports Y, any shape (e.g. ``(n,)`` or ``(trials, n)``).
    epsilon : float
        The ε the reports were made with, > 0.

    Returns
    -------
    numpy.ndarray
        The estimates x̂ as floats, shaped like ``reports``.

    Raises
    ------
    ValueError
        If ``reports`` is empty or holds anything but 0 and 1, or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``reports`` is not numeric or ``epsilon`` is not a real number.
    """
    y = check_binary(reports, "reports")
    two_p_minus_one = np.tanh(check_epsilon(epsilon) / 2.0)  # 2p − 1 = (e^ε − 1)/(e^ε + 1)
    return 0.5 + (y - 0.5) / two_p_minus_one


def rr_estimate(reports: ArrayLike, *, epsilon: float) -> float | np.ndarray:
    """The unbiased estimate of the proportion of ones: the mean of :func:`rr_debias` over people.

    Its variance is e^ε / (n (e^ε − 1)²) (:func:`dpcourse.mechanisms.theory.rr_proportion_variance`).

    Parameters
    ----------
    reports : array_like of {0, 1}, shape (n,) or (trials, n)
        Randomized-response reports, one per person (a row per trial).
    epsilon : float
        The ε the reports were made with, > 0.

    Returns
    -------
    float or numpy.ndarray
        The estimated proportion: a float for reports of shape ``(n,)``, one estimate per trial
        (shape ``(trials,)``) for ``(trials, n)``.

    Raises
    ------
    ValueError
        If ``reports`` is empty or holds anything but 0 and 1, or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``reports`` is not numeric or ``epsilon`` is not a real number.
    """
    y = check_binary(reports, "reports")
    debiased = rr_debias(np.array([0, 1], dtype=np.int8), epsilon=epsilon)  # the two values x̂ takes
    if y.ndim < 2:
        estimate = debiased[y].mean(axis=-1)
    else:  # the same row means as rr_debias(reports).mean(axis=-1), a block of trials at a time
        rows = y.reshape(-1, y.shape[-1])
        estimate = np.empty(rows.shape[0])
        for block in row_blocks(*rows.shape):
            estimate[block] = debiased[rows[block]].mean(axis=-1)
        estimate = estimate.reshape(y.shape[:-1])
    return float(estimate) if np.ndim(estimate) == 0 else estimate


def k_rr_probabilities(*, epsilon: float, categories: int) -> tuple[float, float]:
    """k-ary randomized response's (p, q): report the true category w.p. p = e^ε/(e^ε + k − 1), each other w.p. q.

    q = 1/(e^ε + k − 1), so p/q = e^ε. For k = 2 this is binary randomized response.
    (Warner 1965 for k = 2; the k-ary form is "direct encoding" in Wang et al., USENIX Security 2017.)

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε, > 0.
    categories : int
        The number of categories k, ≥ 2.

    Returns
    -------
    tuple of (float, float)
        (p, q): the probability of reporting the true category, and of reporting each given other one.

    Raises
    ------
    ValueError
        If ``epsilon`` is not a finite number > 0 or ``categories`` is < 2.
    TypeError
        If ``epsilon`` is not a real number or ``categories`` is not an integer.
    """
    k = check_integer(categories, "categories", minimum=2)
    denominator = np.exp(check_epsilon(epsilon)) + k - 1
    return float(np.exp(epsilon) / denominator), float(1.0 / denominator)


def k_randomized_response(
    values: ArrayLike, *, epsilon: float, categories: int, rng: RngLike = None, trials: int | None = None
) -> np.ndarray:
    """Each person reports their category in {0, …, k − 1} w.p. p, else one of the other k − 1 uniformly.

    Parameters
    ----------
    values : array_like, shape (n,)
        Each person's true category, a whole number in {0, …, k − 1}.
    epsilon : float
        ε > 0.
    categories : int
        The number of categories k, ≥ 2.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the noise; None draws fresh entropy.
    trials : int or None, optional
        Number of independent releases, ≥ 1, drawn at once; None gives one release.

    Returns
    -------
    numpy.ndarray of int64
        Reports in {0, …, k − 1}, shape ``(n,)`` or ``(trials, n)``, from one vectorised draw.

    Raises
    ------
    ValueError
        If ``values`` is empty, not one-dimensional, or holds anything but whole numbers in
        0 … ``categories`` − 1; ``categories`` is < 2; ``epsilon`` is not a finite number > 0;
        ``trials`` is < 1; or ``rng`` is a negative seed.
    TypeError
        If ``values`` is not numeric, ``categories`` or ``trials`` is not an integer, ``epsilon`` is not a
        real number, or ``rng`` is not a seed, SeedSequence or Generator.

    Notes
    -----
    **Privacy.** Any report has probability p or q under any true category, and p/q = e^ε: ε-local DP.
    """
    k = check_integer(categories, "categories", minimum=2)
    x = check_array(values, "values", ndim=1, dtype=float)
    if np.any(x != np.rint(x)) or np.any(x < 0) or np.any(x >= k):
        raise ValueError(f"values must be whole numbers in 0 … categories − 1 = {k - 1}")
    p, _ = k_rr_probabilities(epsilon=epsilon, categories=k)
    generator = as_generator(rng)
    shape = sample_shape(check_trials(trials), x.shape)
    keep = generator.random(shape) < p
    other = (x.astype(np.int64) + 1 + generator.integers(0, k - 1, size=shape)) % k
    return np.where(keep, x.astype(np.int64), other)


def k_rr_debias_counts(report_counts: ArrayLike, *, epsilon: float) -> np.ndarray:
    """Unbiased estimates of the true category counts from the histogram of k-RR reports.

    E[count_j] = p·c_j + q·(n − c_j), so ĉ_j = (count_j − n·q)/(p − q), n = Σ counts.

    Parameters
    ----------
    report_counts : array_like, shape (k,)
        How many people reported each of the k ≥ 2 categories (counts ≥ 0); k is read from its length.
    epsilon : float
        The ε the reports were made with, > 0.

    Returns
    -------
    numpy.ndarray
        The estimates ĉ, shape ``(k,)``; they sum to n, and an entry may be negative or exceed n.

    Raises
    ------
    ValueError
        If ``report_counts`` is not one-dimensional, has fewer than 2 entries or an entry that is
        negative or not finite, or ``epsilon`` is not a finite number > 0.
    TypeError
        If ``report_counts`` is not numeric or ``epsilon`` is not a real number.
    """
    counts = check_array(report_counts, "report_counts", ndim=1, min_size=2)
    if np.any(counts < 0):
        raise ValueError("report_counts must be >= 0")
    p, q = k_rr_probabilities(epsilon=epsilon, categories=counts.size)
    return (counts - counts.sum() * q) / (p - q)


# --------------------------------------------------------------------------------------
# Selection: the exponential mechanism and report noisy max (notebook 05)
# --------------------------------------------------------------------------------------
def exponential_mechanism(
    scores: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float = 1.0,
    k: int = 1,
    monotonic: bool = False,
    rng: RngLike = None,
    trials: int | None = None,
) -> np.ndarray:
    """Select k distinct indices, each round with Pr[i] ∝ exp(ε_round·scoreᵢ/(2Δ)), ε_round = ε/k.

    With ``monotonic=True`` (every score moves in the same direction between neighbours, e.g.
    counts under adding a person) the factor 2 is dropped: Pr[i] ∝ exp(ε_round·scoreᵢ/Δ).

    Drawn with the Gumbel top-k trick: the indices of the k largest scoreᵢ·ε/(2kΔ) + Gᵢ, Gᵢ
    i.i.d. standard Gumbel, have exactly the distribution of k sequential exponential-mechanism
    draws without replacement; one vectorised draw covers all trials.

    Parameters
    ----------
    scores : array_like, shape (m,)
        The utility scoreᵢ of each of the m candidates (finite).
    epsilon : float
        The total privacy parameter ε > 0, split evenly over the k rounds.
    sensitivity : float, optional
        The sensitivity Δ of every score, > 0; 1 by default.
    k : int, optional
        How many distinct indices to select, 1 ≤ k ≤ m; 1 by default.
    monotonic : bool, optional
        Whether the scores are monotone (drops the factor 2); False by default.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the noise; None draws fresh entropy.
    trials : int or None, optional
        Number of independent releases, ≥ 1, drawn at once; None gives one release.

    Returns
    -------
    numpy.ndarray of int64
        The selected indices, best first: shape ``(k,)``, or ``(trials, k)``.

    Raises
    ------
    ValueError
        If ``scores`` is empty, not one-dimensional or not finite, ``k`` is not in [1, m], ``epsilon`` or
        ``sensitivity`` is not a finite number > 0, ``trials`` is < 1, or ``rng`` is a negative seed.
    TypeError
        If ``scores`` is not numeric, ``k`` or ``trials`` is not an integer, ``epsilon`` or ``sensitivity``
        is not a real number, or ``rng`` is not a seed, SeedSequence or Generator.

    Notes
    -----
    **Privacy.** One round is ε/k-DP when every score has sensitivity Δ (McSherry & Talwar 2007); k rounds
    compose to ε.
    """
    u = check_array(scores, "scores", ndim=1)
    k = check_integer(k, "k", minimum=1, maximum=u.size)
    eps = check_epsilon(epsilon)
    weight = eps / ((1.0 if monotonic else 2.0) * k * check_positive(sensitivity, "sensitivity"))
    shape = sample_shape(check_trials(trials), u.shape)
    keys = weight * u + as_generator(rng).gumbel(size=shape)
    top = np.argpartition(-keys, k - 1, axis=-1)[..., :k]
    order = np.argsort(-np.take_along_axis(keys, top, axis=-1), axis=-1)
    return np.take_along_axis(top, order, axis=-1)


def report_noisy_max(
    scores: ArrayLike,
    *,
    epsilon: float,
    sensitivity: float = 1.0,
    monotonic: bool = False,
    rng: RngLike = None,
    trials: int | None = None,
) -> int | np.ndarray:
    """The index of the largest scoreᵢ + Lap(b): ε-DP selection.

    ``b = 2Δ/ε`` by default: for any scores of sensitivity Δ, comparing two noisy scores is a
    query of sensitivity 2Δ (both can move by Δ in opposite directions). With
    ``monotonic=True`` (every score moves by at most Δ in the same direction between
    neighbours, as counting queries do when one person is added or removed) ``b = Δ/ε``
    suffices: that is Dwork & Roth's Claim 3.9, stated for counting queries with Lap(1/ε).

    Parameters
    ----------
    scores : array_like, shape (m,)
        The score of each of the m candidates (finite).
    epsilon : float
        The privacy parameter ε > 0.
    sensitivity : float, optional
        The sensitivity Δ of every score, > 0; 1 by default.
    monotonic : bool, optional
        Whether the scores are monotone, which halves the noise scale; False by default.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the noise; None draws fresh entropy.
    trials : int or None, optional
        Number of independent releases, ≥ 1, drawn at once; None gives one release.

    Returns
    -------
    int or numpy.ndarray
        The index of the noisy maximum: an int, or an array of shape ``(trials,)``.

    Raises
    ------
    ValueError
        If ``scores`` is empty, not one-dimensional or not finite, ``epsilon`` or ``sensitivity`` is not a
        finite number > 0, ``trials`` is < 1, or ``rng`` is a negative seed.
    TypeError
        If ``scores`` is not numeric, ``epsilon`` or ``sensitivity`` is not a real number, ``trials`` is not
        an integer, or ``rng`` is not a seed, SeedSequence or Generator.
    """
    u = check_array(scores, "scores", ndim=1)
    b = (1.0 if monotonic else 2.0) * check_positive(sensitivity, "sensitivity") / check_epsilon(epsilon)
    shape = sample_shape(check_trials(trials), u.shape)
    winner = np.argmax(u + as_generator(rng).laplace(0.0, b, size=shape), axis=-1)
    return int(winner) if trials is None else winner


def laplace_maximum(count: ArrayLike, *, scale: float, rng: RngLike = None, size: Any = None) -> np.ndarray:
    """The largest of ``count`` independent Lap(scale) draws, sampled in one step (−∞ where ``count`` is 0).

    The maximum of n i.i.d. draws has CDF Fⁿ, so it is F⁻¹(U^{1/n}) for one uniform U: the same
    distribution as drawing all n and taking their maximum, at the cost of one draw. For U^{1/n} > ½,
    F⁻¹ is −b·ln(2(1 − U^{1/n})), with 1 − U^{1/n} = −expm1(ln U / n) computed without cancellation.
    ``count`` broadcasts against ``size`` (e.g. one count per block of queries).

    Parameters
    ----------
    count : int or array_like of int
        The number n of Laplace draws whose maximum is wanted, a whole number ≥ 0 (any shape).
    scale : float
        The Laplace scale b, > 0.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator for the draw; None draws fresh entropy.
    size : int, tuple of int or None, optional
        The shape of the draw, broadcast with ``count``'s shape; None draws one per entry of ``count``.

    Returns
    -------
    numpy.ndarray
        The maxima, of the shape ``count`` and ``size`` broadcast to (0-dimensional for one ``count`` and no
        ``size``); −∞ where the count is 0.

    Raises
    ------
    ValueError
        If ``scale`` is not a finite number > 0, ``count`` is empty or holds anything but whole numbers ≥ 0,
        ``count`` does not broadcast against ``size``, or ``rng`` is a negative seed.
    TypeError
        If ``scale`` is not a real number, ``count`` is not numeric, or ``rng`` is not a seed, SeedSequence
        or Generator.
    """
    scale = check_positive(scale, "scale")
    n = check_array(count, "count", min_size=1)
    if not np.all((n >= 0) & (n == np.round(n))):
        raise ValueError(f"count must hold whole numbers ≥ 0; got {count!r}")
    shape = () if size is None else tuple(int(s) for s in np.atleast_1d(size))
    u = as_generator(rng).random(size=np.broadcast_shapes(n.shape, shape))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_v = np.log(u) / n  # ln(U^{1/n})
        upper = -scale * np.log(2 * -np.expm1(log_v))
        lower = scale * (np.log(2) + log_v)
    return np.where(n > 0, np.where(log_v > -np.log(2), upper, lower), -np.inf)
