"""The reconstruction attack: too many too-accurate answers are blatantly non-private.

The setting is Dinur & Nissim's (2003): a curator holds n secret bits x ∈ {0, 1}ⁿ, one per
person, and answers **subset-sum queries over individuals**, a·x for a ∈ {0, 1}ⁿ, each with
error at most E. Neighbouring databases differ in **one person's bit**, which moves every
subset sum containing that person by 1. What is known:

* all 2ⁿ subset queries with E = o(n): any x̂ consistent with every answer agrees with x on
  all but 4E bits (Dinur & Nissim 2003; an exponential-time attack);
* polynomially many queries with E = o(√n): Dinur & Nissim's polynomial-time attack used
  O(n log² n) random queries and linear programming; O(n) queries suffice for LP decoding
  (Dwork, McSherry & Talwar 2007, which tolerates even a constant fraction of arbitrary
  answers) and for the efficient attacks of Dwork & Yekhanin (2008).

This module runs the simplest member of the O(n)-query family: m random subset sums, the
least-squares estimate x̂ = A⁺y, rounded to {0, 1}. Noise of magnitude ≳ √n, which any DP
mechanism must leave on some such queries (else the attack would succeed against it), stops
it; ε-DP Laplace noise Lap(m/ε) is far larger still.

Everything is vectorised over trials: the pseudo-inverse of A is computed once and applied
to all trials' answers in one matrix product.
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
    check_choice,
    check_integer,
    check_nonnegative,
    check_trials,
)

__all__ = [
    "NOISE_KINDS",
    "AttackResult",
    "all_subsets_max_error",
    "least_squares_estimate",
    "pseudo_inverse",
    "reconstruct",
    "run_attack",
    "subset_sum_queries",
]

NOISE_KINDS = ("bounded", "laplace")


def all_subsets_max_error(errors: ArrayLike) -> np.ndarray:
    """The largest normalised error over **all 2ⁿ** subset sums, from each person's error.

    If person i's released value is off by eᵢ and every subset sum is answered by adding released
    values, the error of subset S is Σ_{i ∈ S} eᵢ, and the worst S takes every positive or every
    negative eᵢ: max over S of |Σ_{i ∈ S} eᵢ| = max(Σᵢ max(eᵢ, 0), Σᵢ max(−eᵢ, 0)). Divided by n,
    exact without listing the 2ⁿ subsets.

    Parameters
    ----------
    errors : array_like, shape (n,) or (trials, n)
        Each person's error eᵢ, or one row of errors per trial.

    Returns
    -------
    numpy.float64 or numpy.ndarray
        The largest error over all subsets divided by n: one number, or shape ``(trials,)``.

    Raises
    ------
    ValueError
        If ``errors`` is not 1- or 2-dimensional, is empty or contains NaN or ∞.
    TypeError
        If ``errors`` is not an array of numbers.
    """
    e = check_array(errors, "errors", ndim=(1, 2))
    worst = np.maximum(np.clip(e, 0.0, None).sum(axis=-1), np.clip(-e, 0.0, None).sum(axis=-1))
    return worst / e.shape[-1]


def subset_sum_queries(num_queries: int, n: int, *, rng: RngLike = None) -> np.ndarray:
    """m random subset-sum queries over n people: a 0/1 matrix, each entry 1 with probability ½.

    Parameters
    ----------
    num_queries : int
        The number of queries m, ≥ 1.
    n : int
        The number of people, ≥ 1.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the draw.

    Returns
    -------
    numpy.ndarray
        A float array of zeros and ones, shape ``(num_queries, n)``.

    Raises
    ------
    ValueError
        If ``num_queries`` or ``n`` < 1, or ``rng`` is a negative seed.
    TypeError
        If ``num_queries`` or ``n`` is not an integer, or ``rng`` is not a seed, a SeedSequence or a Generator.
    """
    m = check_integer(num_queries, "num_queries", minimum=1)
    n = check_integer(n, "n", minimum=1)
    return (as_generator(rng).random((m, n)) < 0.5).astype(float)


def pseudo_inverse(queries: ArrayLike) -> np.ndarray:
    """A⁺, shape (n, m): (AᵀA)⁻¹Aᵀ when A has full column rank (m ≥ n, as in the attack), else ``np.linalg.pinv``.

    Both are the same matrix when A has full column rank. The normal equations take two matrix
    products and one n × n solve; the SVD behind ``np.linalg.pinv`` synchronises its BLAS threads
    so often that on a 2-core machine with one core busy it took 4–6 s instead of 25 ms for
    800 × 200 queries. The result is checked as a left inverse (A⁺A = I to 1e-9); a nearly
    rank-deficient A fails the check and gets the SVD.

    Parameters
    ----------
    queries : array_like, shape (m, n)
        A, one query per row.

    Returns
    -------
    numpy.ndarray
        A⁺, shape ``(n, m)``.

    Raises
    ------
    ValueError
        If ``queries`` is not 2-dimensional, is empty or contains NaN or ∞.
    TypeError
        If ``queries`` is not an array of numbers.
    """
    a = check_array(queries, "queries", ndim=2)
    m, n = a.shape
    if m >= n:
        try:
            left = np.linalg.solve(a.T @ a, a.T)
        except np.linalg.LinAlgError:
            left = None
        if left is not None and np.all(np.isfinite(left)) and np.abs(left @ a - np.eye(n)).max() < 1e-9:
            return left
    return np.linalg.pinv(a)


_pseudo_inverse = pseudo_inverse  # least_squares_estimate's keyword of the same name hides the function


def least_squares_estimate(
    queries: ArrayLike, answers: ArrayLike, *, pseudo_inverse: np.ndarray | None = None
) -> np.ndarray:
    """x̂ = A⁺y, the least-squares solution of A x̂ ≈ y, for ``answers`` of shape ``(m,)`` or ``(trials, m)``.

    Parameters
    ----------
    queries : array_like, shape (m, n)
        A, one subset-sum query per row.
    answers : array_like, shape (m,) or (trials, m)
        y, the (noisy) answers to the queries, or one set of answers per row.
    pseudo_inverse : numpy.ndarray or None, optional
        A⁺, shape (n, m), from :func:`pseudo_inverse`, to reuse it across calls with the same queries
        (not checked); None computes it.

    Returns
    -------
    numpy.ndarray
        x̂, shape ``(n,)`` or ``(trials, n)``.

    Raises
    ------
    ValueError
        If ``queries`` is not 2-dimensional, ``answers`` is not 1- or 2-dimensional or does not have one
        entry per query on its last axis, or either is empty or contains NaN or ∞.
    TypeError
        If ``queries`` or ``answers`` is not an array of numbers.
    """
    a = check_array(queries, "queries", ndim=2)
    y = check_array(answers, "answers", ndim=(1, 2))
    if y.shape[-1] != a.shape[0]:
        raise ValueError(f"answers must have one entry per query ({a.shape[0]}) on the last axis; got shape {y.shape}")
    pinv = _pseudo_inverse(a) if pseudo_inverse is None else pseudo_inverse
    return y @ pinv.T


def reconstruct(queries: ArrayLike, answers: ArrayLike, *, pseudo_inverse: np.ndarray | None = None) -> np.ndarray:
    """Least-squares reconstruction rounded to bits: 1 where A⁺y > ½, else 0 (shape ``(…, n)``).

    Parameters
    ----------
    queries : array_like, shape (m, n)
        A, one subset-sum query per row.
    answers : array_like, shape (m,) or (trials, m)
        y, the (noisy) answers to the queries, or one set of answers per row.
    pseudo_inverse : numpy.ndarray or None, optional
        A⁺, shape (n, m), from :func:`pseudo_inverse`, to reuse it across calls with the same queries
        (not checked); None computes it.

    Returns
    -------
    numpy.ndarray
        The guessed bits as ``int8``, shape ``(n,)`` or ``(trials, n)``.

    Raises
    ------
    ValueError
        If ``queries`` is not 2-dimensional, ``answers`` is not 1- or 2-dimensional or does not have one
        entry per query on its last axis, or either is empty or contains NaN or ∞.
    TypeError
        If ``queries`` or ``answers`` is not an array of numbers.
    """
    return (least_squares_estimate(queries, answers, pseudo_inverse=pseudo_inverse) > 0.5).astype(np.int8)


@dataclass(frozen=True)
class AttackResult:
    """Per trial, the fraction of secret bits the attacker recovered.

    Attributes
    ----------
    fraction_recovered : numpy.ndarray or numpy.float64
        The fraction of the n bits guessed right, shape ``(trials,)``, or one number when
        :func:`run_attack` ran without ``trials``.
    noise_scale : float
        The noise scale E the answers were released with.
    """

    fraction_recovered: np.ndarray
    noise_scale: float

    @property
    def mean(self) -> float:
        """The fraction recovered, averaged over the trials."""
        return float(np.mean(self.fraction_recovered))


def run_attack(
    secret_bits: ArrayLike,
    *,
    num_queries: int,
    noise_scale: float,
    noise: str = "bounded",
    rng: RngLike = None,
    trials: int | None = None,
) -> AttackResult:
    """Answer m random subset-sum queries with noise, reconstruct, and score the attack.

    Parameters
    ----------
    secret_bits : array_like of {0, 1}, shape (n,)
        The curator's secret x, one bit per person (n ≥ 1).
    num_queries : int
        m, the number of random subset sums asked (≥ 1), drawn by :func:`subset_sum_queries`.
    noise_scale : float
        E, a finite number ≥ 0. ``"bounded"``: each answer is off by a uniform error in [−E, E] (the curator
        promises accuracy E, as in Dinur & Nissim). ``"laplace"``: Lap(E) errors; E = m/ε makes the m
        answers ε-DP for neighbours that differ in one person's bit, which can move every
        subset sum by 1 (Δ₁ = m).
    noise : {"bounded", "laplace"}, optional
        The kind of error on each answer (default ``"bounded"``); see ``noise_scale``.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the queries and the errors (the queries are drawn once, for every trial).
    trials : int or None, optional
        Number of independent sets of answers to the same queries; None runs one.

    Returns
    -------
    AttackResult
        The fraction of bits recovered (per trial) by rounding the least-squares estimate, and E.

    Raises
    ------
    ValueError
        If ``secret_bits`` is empty or holds a value other than 0 and 1, ``noise`` is unknown,
        ``noise_scale`` is negative or not finite, ``num_queries`` or ``trials`` < 1, or ``rng`` is a
        negative seed.
    TypeError
        If ``secret_bits`` is not an array of numbers, ``noise_scale`` is not a number, ``num_queries`` or
        ``trials`` is not an integer, or ``rng`` is not a seed, a SeedSequence or a Generator.
    """
    x = check_binary(secret_bits, "secret_bits")
    check_choice(noise, "noise", NOISE_KINDS)
    scale = check_nonnegative(noise_scale, "noise_scale")
    trials = check_trials(trials)
    gen = as_generator(rng)
    a = subset_sum_queries(num_queries, x.size, rng=gen)
    shape = (1 if trials is None else trials, a.shape[0])
    errors = gen.uniform(-scale, scale, size=shape) if noise == "bounded" else gen.laplace(0.0, scale, size=shape)
    guesses = reconstruct(a, a @ x + errors)
    fraction = np.mean(guesses == x, axis=1)
    return AttackResult(fraction[0] if trials is None else fraction, scale)
