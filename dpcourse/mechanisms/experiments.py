"""Empirical error of a mechanism over many trials, with confidence intervals.

Every notebook measures a mechanism the same way: one vectorised draw of ``trials``
releases, an error per trial (max or mean squared over the queries), then a summary with
a confidence interval, plotted as points with error bars beside a theory line from
:mod:`dpcourse.mechanisms.theory`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._validation import (
    ArrayLike,
    RngLike,
    as_generator,
    check_array,
    check_choice,
    check_integer,
    check_positive_array,
    check_probability,
    row_blocks,
)
from ..tables import Table
from .noise import laplace_mechanism
from .theory import laplace_max_error_bound, laplace_max_error_tail

__all__ = [
    "ERROR_METRICS",
    "ErrorSummary",
    "TailEstimate",
    "empirical_error",
    "empirical_tail",
    "laplace_tail_check",
    "log_log_slope",
    "max_abs_error",
    "mean_squared_error",
    "proportion_interval",
    "summarize",
]

ERROR_METRICS = ("max", "mse")


def _per_trial(released: ArrayLike, truth: ArrayLike, square: bool) -> np.ndarray:
    """max |released − truth| (or the mean of its square) over the last axis, one block of rows at a time.

    Each row is reduced exactly as ``np.max(np.abs(released - truth), axis=-1)`` (``np.mean(… ** 2, …)``)
    would reduce it, so the numbers are the same; a NaN in a row comes out as NaN for that row.
    """
    truth = check_array(truth, "truth", ndim=(0, 1))  # one number (the same for every query) or one per query
    released = check_array(released, "released", ndim=(1, 2), finite=False)
    if truth.ndim == 1 and released.shape[-1] != truth.size:
        raise ValueError(
            f"released must have one entry per true answer ({truth.size}) on its last axis; got shape {released.shape}"
        )
    rows = released.reshape(-1, released.shape[-1])
    out = np.empty(rows.shape[0])
    # a (20 000, 1000) release needs one 2 MB buffer instead of two more arrays of its own size (320 MB)
    blocks = row_blocks(*rows.shape)
    buffer = np.empty((blocks[0].stop, rows.shape[1]))
    for block in blocks:
        diff = np.subtract(rows[block], truth, out=buffer[: block.stop - block.start])
        if square:
            np.square(diff, out=diff)
            np.mean(diff, axis=-1, out=out[block])
        else:
            np.abs(diff, out=diff)
            np.max(diff, axis=-1, out=out[block])
    if np.isnan(out).any():  # NaN propagates through both reductions: this is the NaN check on ``released``
        raise ValueError("released must not contain NaN")
    return out.reshape(released.shape[:-1])[()]  # one release: a NumPy scalar, as np.max would give


def max_abs_error(released: ArrayLike, truth: ArrayLike) -> np.ndarray:
    """‖released − truth‖∞ over the last axis: one number per trial.

    Parameters
    ----------
    released : array_like, shape (k,) or (trials, k)
        One release, or one per row; ±∞ is allowed, NaN is not.
    truth : float or array_like, shape (k,)
        The true answers (finite), or one number for every query.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        One number for one release, else an array of shape ``(trials,)``.

    Raises
    ------
    ValueError
        If ``released`` is empty, not one- or two-dimensional, contains NaN, or its last axis does not
        match ``truth``; or ``truth`` is empty, has more than one dimension or an entry that is not finite.
    TypeError
        If ``released`` or ``truth`` is not numeric.
    """
    return _per_trial(released, truth, square=False)


def mean_squared_error(released: ArrayLike, truth: ArrayLike) -> np.ndarray:
    """(1/k)‖released − truth‖₂² over the last axis: one number per trial.

    Parameters
    ----------
    released : array_like, shape (k,) or (trials, k)
        One release, or one per row; ±∞ is allowed, NaN is not.
    truth : float or array_like, shape (k,)
        The true answers (finite), or one number for every query.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        One number for one release, else an array of shape ``(trials,)``.

    Raises
    ------
    ValueError
        If ``released`` is empty, not one- or two-dimensional, contains NaN, or its last axis does not
        match ``truth``; or ``truth`` is empty, has more than one dimension or an entry that is not finite.
    TypeError
        If ``released`` or ``truth`` is not numeric.
    """
    return _per_trial(released, truth, square=True)


@dataclass(frozen=True)
class ErrorSummary:
    """The mean of a per-trial error and a confidence interval for it.

    The interval is the normal one, mean ± z·s/√T; with T ≥ 100 trials of a variable with
    finite variance the central limit theorem makes it accurate to the stated level.

    Attributes
    ----------
    mean : float
        The mean of the per-trial values.
    low : float
        The interval's lower end, mean − z·s/√T.
    high : float
        The interval's upper end, mean + z·s/√T.
    std : float
        The sample standard deviation s of the per-trial values (with T − 1 in the denominator).
    trials : int
        The number T of per-trial values.
    confidence : float
        The interval's level, in (0, 1).
    """

    mean: float
    low: float
    high: float
    std: float
    trials: int
    confidence: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def __str__(self) -> str:
        return f"{self.mean:.4g} ± {self.half_width:.2g} ({self.confidence:.0%} CI, {self.trials} trials)"


def summarize(values: ArrayLike, *, confidence: float = 0.95) -> ErrorSummary:
    """Mean and normal-approximation confidence interval of per-trial ``values``.

    Parameters
    ----------
    values : array_like, shape (T,)
        One value per trial, T ≥ 2, all finite.
    confidence : float, optional
        The level of the interval, in (0, 1); 0.95 by default.

    Returns
    -------
    ErrorSummary
        The mean, the interval mean ± z·s/√T and what it was computed from.

    Raises
    ------
    ValueError
        If ``values`` is not one-dimensional, has fewer than 2 entries or one that is not finite, or
        ``confidence`` is not in (0, 1).
    TypeError
        If ``values`` is not numeric or ``confidence`` is not a real number.
    """
    v = check_array(values, "values", ndim=1, min_size=2)
    level = check_probability(confidence, "confidence")
    mean = float(v.mean())
    std = float(v.std(ddof=1))
    half = float(special.ndtri(0.5 + level / 2)) * std / np.sqrt(v.size)  # the normal quantile, scipy.stats.norm.ppf
    return ErrorSummary(mean, mean - half, mean + half, std, int(v.size), level)


def log_log_slope(x: ArrayLike, y: ArrayLike) -> float:
    """The measured exponent of a power law: the least-squares slope of ln y against ln x.

    How every sweep reports growth (error ∝ xᵃ: a = 1/2 for √K, 1 for a linear growth, 0 when flat).

    Parameters
    ----------
    x, y : array_like
        The settings and the measured values, one-dimensional, of the same length, all > 0.

    Returns
    -------
    float
        The slope; NaN for fewer than two points, where no slope is measured.

    Raises
    ------
    ValueError
        If ``x`` and ``y`` differ in length, are not one-dimensional, or hold a value ≤ 0 or not finite.
    TypeError
        If ``x`` or ``y`` is not an array of numbers.
    """
    xs = check_positive_array(x, "x", ndim=1)
    ys = check_positive_array(y, "y", ndim=1, shape=(xs.size,))
    if xs.size < 2:
        return float("nan")
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def proportion_interval(counts: ArrayLike, trials: int, *, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson interval for binomial proportions ``counts / trials`` (vectorised).

    The interval for a count c of T is [B(α/2; c, T − c + 1), B(1 − α/2; c + 1, T − c)] with
    B the beta quantile and α = 1 − confidence; it is exact (conservative) at every sample size.

    Parameters
    ----------
    counts : int or array_like
        The numbers of successes c, whole numbers in [0, ``trials``], any shape.
    trials : int
        The number of trials T, ≥ 1 (the same for every count).
    confidence : float, optional
        The level of each interval, in (0, 1); 0.95 by default.

    Returns
    -------
    low : numpy.ndarray
        The lower ends, shaped like ``counts`` (0 where c = 0).
    high : numpy.ndarray
        The upper ends, shaped like ``counts`` (1 where c = T).

    Raises
    ------
    ValueError
        If ``trials`` is < 1, a count is not a finite whole number in [0, ``trials``], or ``confidence`` is
        not in (0, 1).
    TypeError
        If ``trials`` is not an integer, ``counts`` is not numeric, or ``confidence`` is not a real number.
    """
    trials = check_integer(trials, "trials", minimum=1)
    count = check_array(counts, "counts", min_size=0)
    if np.any(count != np.round(count)):
        raise ValueError("counts must be whole numbers")
    if np.any(count < 0) or np.any(count > trials):
        raise ValueError(f"counts must lie in [0, trials = {trials}]")
    alpha = 1 - check_probability(confidence, "confidence")
    # B⁻¹ is special.betaincinv, the function behind scipy.stats.beta.ppf (same values, without importing scipy.stats)
    low = np.where(count > 0, special.betaincinv(np.maximum(count, 1), trials - count + 1, alpha / 2), 0.0)
    high = np.where(count < trials, special.betaincinv(count + 1, np.maximum(trials - count, 1), 1 - alpha / 2), 1.0)
    return low, high


@dataclass(frozen=True)
class TailEstimate:
    """Empirical P[error ≥ t] at each level t, with exact Clopper–Pearson intervals.

    Attributes
    ----------
    levels : numpy.ndarray
        The levels t, shape ``(L,)``.
    probability : numpy.ndarray
        The fraction of trials whose error is ≥ t, one per level.
    low : numpy.ndarray
        The lower ends of the Clopper–Pearson intervals, one per level.
    high : numpy.ndarray
        The upper ends of the Clopper–Pearson intervals, one per level.
    trials : int
        The number of trials the fractions are taken over.
    """

    levels: np.ndarray
    probability: np.ndarray
    low: np.ndarray
    high: np.ndarray
    trials: int


def empirical_tail(values: ArrayLike, levels: ArrayLike, *, confidence: float = 0.95) -> TailEstimate:
    """The fraction of ``values`` at or above each of ``levels``, with Clopper–Pearson intervals.

    The intervals are Clopper–Pearson (:func:`proportion_interval`).

    Parameters
    ----------
    values : array_like, shape (T,)
        One value (e.g. an error) per trial, all finite.
    levels : array_like, shape (L,)
        The levels t (finite).
    confidence : float, optional
        The level of each interval, in (0, 1); 0.95 by default.

    Returns
    -------
    TailEstimate
        The fractions at or above each level, their intervals and T.

    Raises
    ------
    ValueError
        If ``values`` or ``levels`` is empty, not one-dimensional or not finite, or ``confidence`` is not in
        (0, 1).
    TypeError
        If ``values`` or ``levels`` is not numeric, or ``confidence`` is not a real number.
    """
    v = np.sort(check_array(values, "values", ndim=1, min_size=1))
    t = check_array(levels, "levels", ndim=1, min_size=1)
    count = v.size - np.searchsorted(v, t, side="left")
    low, high = proportion_interval(count, v.size, confidence=confidence)
    trials = v.size
    return TailEstimate(t, count / trials, low, high, trials)


def empirical_error(
    mechanism: Callable[..., np.ndarray],
    truth: ArrayLike,
    *,
    trials: int,
    rng: RngLike = None,
    metric: str = "max",
    confidence: float = 0.95,
) -> tuple[ErrorSummary, np.ndarray]:
    """Run ``mechanism(truth, rng=..., trials=...)`` once for all trials and summarise its error.

    Parameters
    ----------
    mechanism : callable
        Any sampler of this package with the keyword interface ``(truth, *, rng, trials)``,
        e.g. ``functools.partial(laplace_mechanism, sensitivity=1, epsilon=0.5)``;
        it must return a ``(trials, k)`` array.
    truth : array_like, shape (k,)
        The exact answers (finite).
    trials : int
        The number of independent releases, ≥ 2.
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator, optional
        Seed or generator, passed to ``mechanism`` as a Generator; None draws fresh entropy.
    metric : {"max", "mse"}, optional
        ``"max"`` (the default): ‖y − f(x)‖∞ per trial; ``"mse"``: (1/k)‖y − f(x)‖₂² per trial.
    confidence : float, optional
        The level of the summary's confidence interval, in (0, 1); 0.95 by default.

    Returns
    -------
    summary : ErrorSummary
        The mean error and its confidence interval (:func:`summarize`).
    errors : numpy.ndarray
        The per-trial errors, shape ``(trials,)`` (for histograms and tail plots).

    Raises
    ------
    ValueError
        If ``metric`` is not ``"max"`` or ``"mse"``, ``trials`` is < 2, ``truth`` is empty, not one-dimensional
        or not finite, ``mechanism`` does not return shape ``(trials, k)`` or returns NaN, ``confidence`` is not
        in (0, 1), or ``rng`` is a negative seed.
    TypeError
        If ``trials`` is not an integer, ``truth`` is not numeric, ``confidence`` is not a real number, or
        ``rng`` is not a seed, SeedSequence or Generator.
    """
    check_choice(metric, "metric", ERROR_METRICS)
    trials = check_integer(trials, "trials", minimum=2)
    truth = check_array(truth, "truth", ndim=1)
    released = np.asarray(mechanism(truth, rng=as_generator(rng), trials=trials))
    if released.shape != (trials, truth.size):
        raise ValueError(f"mechanism must return shape {(trials, truth.size)}; got {released.shape}")
    errors = max_abs_error(released, truth) if metric == "max" else mean_squared_error(released, truth)
    return summarize(errors, confidence=confidence), errors


def laplace_tail_check(settings: ArrayLike, *, beta: float = 0.05, trials: int, rng: RngLike = None) -> Table:
    """Theorem 3.8 measured: how often the Laplace mechanism's error reaches ln(k/β)·Δf/ε, against the exact tail.

    For each setting (k, ε): ``trials`` releases of k coordinates with Lap(1/ε) noise (Δf = 1), the
    frequency of ‖f(x) − y‖∞ ≥ ln(k/β)/ε with its Clopper–Pearson interval, beside the exact
    probability 1 − (1 − β/k)ᵏ (:func:`~dpcourse.mechanisms.laplace_max_error_tail`).

    Parameters
    ----------
    settings : array_like, shape (s, 2)
        The settings (k, ε): k a whole number ≥ 1, ε > 0.
    beta : float, optional
        The theorem's failure probability β, in (0, 1) (default 0.05).
    trials : int
        The number of releases per setting, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise, drawn in the order of ``settings``.

    Returns
    -------
    Table
        One row per setting: k, ε, the level, the measured frequency, its 95% interval and the exact tail.

    Raises
    ------
    ValueError
        If ``settings`` is not an (s, 2) array of finite numbers with whole k ≥ 1 and ε > 0, ``beta`` is
        not in (0, 1), ``trials`` < 2, or ``rng`` is a negative seed.
    TypeError
        If ``settings`` is not numeric, ``beta`` not a real number, ``trials`` not an integer, or ``rng`` not
        a seed, a SeedSequence or a Generator.
    """
    grid = check_array(settings, "settings", shape=(None, 2))
    if np.any(grid[:, 0] < 1) or np.any(grid[:, 0] != np.round(grid[:, 0])) or np.any(grid[:, 1] <= 0):
        raise ValueError(f"settings must be pairs (k, ε) with k a whole number ≥ 1 and ε > 0; got {settings!r}")
    beta = check_probability(beta, "beta")
    trials = check_integer(trials, "trials", minimum=2)
    gen = as_generator(rng)
    rows = []
    for k, epsilon in zip(grid[:, 0].astype(int), grid[:, 1], strict=True):
        truth = np.zeros(k)
        errors = max_abs_error(laplace_mechanism(truth, sensitivity=1, epsilon=epsilon, rng=gen, trials=trials), truth)
        level = laplace_max_error_bound(k=int(k), beta=beta, sensitivity=1, epsilon=epsilon)
        tail = empirical_tail(errors, [level])
        exact = laplace_max_error_tail(level, k=int(k), sensitivity=1, epsilon=epsilon)
        rows.append(
            [
                int(k),
                float(epsilon),
                f"{level:.3f}",
                f"{tail.probability[0]:.4f}",
                f"[{tail.low[0]:.4f}, {tail.high[0]:.4f}]",
                f"{exact:.4f}",
            ]
        )
    return Table(
        ["k", "ε", "level ln(k/β)·Δf/ε", "measured P[error ≥ level]", "95% interval", "exact tail"],
        rows,
        caption=f"{trials:,} releases per setting, Δf = 1, β = {beta}",
    )
