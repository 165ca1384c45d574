"""Choosing the top c of many counts with SVT: the data and the scores of Lyu, Su & Li's experiments.

Counts drawn from a Zipf law (:func:`zipf_counts`), the true top c (:func:`top_c_mask`), and the
three scores of a selection against it: the F-measure (:func:`f_measure`), the normalised
cumulative support NCS (:func:`normalized_cumulative_support`) and the normalised cumulative rank
NCR (:func:`normalized_cumulative_rank`). Notebook 05 scores SVT-S and SVT-ReTr
(:func:`dpcourse.svt.svt_retraversal`) with them.
"""

from __future__ import annotations

import numpy as np

from .._validation import ArrayLike, RngLike, as_generator, check_array, check_binary, check_integer, check_positive

__all__ = [
    "f_measure",
    "normalized_cumulative_rank",
    "normalized_cumulative_support",
    "top_c_mask",
    "zipf_counts",
]


def zipf_counts(num_items: int, total: int, *, exponent: float = 1.1, rng: RngLike = None) -> np.ndarray:
    """Item counts of ``total`` records drawn from a Zipf law over ``num_items`` items (item i ∝ (i + 1)^−s).

    Parameters
    ----------
    num_items : int
        The number of items k, ≥ 2.
    total : int
        The number of records n, ≥ 1.
    exponent : float, optional
        The Zipf exponent s, > 0 (default 1.1).
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the multinomial draw.

    Returns
    -------
    numpy.ndarray of float
        Shape ``(num_items,)``: each item's count (whole numbers summing to ``total``), item 0 the likeliest.

    Raises
    ------
    ValueError
        If ``num_items`` is not an integer ≥ 2, ``total`` is not an integer ≥ 1, ``exponent`` is not a finite
        number > 0, or ``rng`` is a negative seed.
    TypeError
        If a parameter is not a number of its kind, or ``rng`` is not a seed, ``SeedSequence`` or ``Generator``.
    """
    k = check_integer(num_items, "num_items", minimum=2)
    n = check_integer(total, "total", minimum=1)
    weights = np.arange(1, k + 1, dtype=float) ** -check_positive(exponent, "exponent")
    return as_generator(rng).multinomial(n, weights / weights.sum()).astype(float)


def top_c_mask(counts: ArrayLike, c: int) -> np.ndarray:
    """The true top c items (ties broken by index), as a boolean mask.

    Parameters
    ----------
    counts : array_like, shape (k,)
        The items' true counts, finite.
    c : int
        How many items to select, in [1, k].

    Returns
    -------
    numpy.ndarray of bool
        Shape ``(k,)``, True for exactly c items.

    Raises
    ------
    ValueError
        If ``counts`` is not a non-empty 1-D array of finite numbers or ``c`` is not an integer in [1, k].
    TypeError
        If ``counts`` is not numeric or ``c`` is not an integer.
    """
    counts = check_array(counts, "counts", ndim=1)
    mask = np.zeros(counts.size, dtype=bool)
    mask[np.argsort(-counts, kind="stable")[: check_integer(c, "c", minimum=1, maximum=counts.size)]] = True
    return mask


def f_measure(selected: ArrayLike, truth: ArrayLike) -> np.ndarray:
    """Harmonic mean of precision and recall of ``selected`` (``(trials, k)`` masks) against the ``truth`` mask.

    A selection with no true item scores 0 (also when it selects nothing).

    Parameters
    ----------
    selected : array_like of {0, 1}, shape (k,) or (trials, k)
        One selection mask, or one per trial.
    truth : array_like of {0, 1}, shape (k,)
        The mask of the true items (e.g. :func:`top_c_mask`).

    Returns
    -------
    numpy.ndarray of float
        The F-measure in [0, 1]: shape ``()`` for one mask, ``(trials,)`` for many.

    Raises
    ------
    ValueError
        If an entry of ``selected`` or ``truth`` is not 0 or 1 (or is not finite), or the shapes are not as above.
    TypeError
        If ``selected`` or ``truth`` is not numeric.
    """
    truth = check_binary(truth, "truth").astype(bool)
    selected = check_binary(selected, "selected").astype(bool)
    if truth.ndim != 1 or selected.ndim not in (1, 2) or selected.shape[-1] != truth.size:
        raise ValueError(
            f"truth must be one mask of length k and selected one or many of length k; got shapes "
            f"{truth.shape} and {selected.shape}"
        )
    hits = np.sum(selected & truth, axis=-1)
    precision = np.where(selected.sum(axis=-1) > 0, hits / np.maximum(selected.sum(axis=-1), 1), 0.0)
    recall = hits / max(int(np.sum(truth)), 1)
    return np.where(hits > 0, 2 * precision * recall / np.maximum(precision + recall, 1e-300), 0.0)


def normalized_cumulative_support(selected: ArrayLike, counts: ArrayLike, c: int) -> np.ndarray:
    """NCS: the true counts of the selected items over the true counts of the top c (Lyu et al.).

    Parameters
    ----------
    selected : array_like of {0, 1}, shape (k,) or (trials, k)
        One selection mask, or one per trial.
    counts : array_like, shape (k,)
        The items' true counts, finite.
    c : int
        The number of items a selection should find, in [1, k].

    Returns
    -------
    float or numpy.ndarray
        The NCS: one number for one mask, shape ``(trials,)`` for many. It is 1 for the true top c; a selection of
        more than c items may score above 1.

    Raises
    ------
    ValueError
        If ``counts`` is not a non-empty 1-D array of finite numbers, ``c`` is not an integer in [1, k], or
        ``selected`` has an entry other than 0 and 1 or is not shaped ``(k,)`` or ``(trials, k)``.
    TypeError
        If ``counts`` or ``selected`` is not numeric, or ``c`` is not an integer.
    """
    counts = check_array(counts, "counts", ndim=1)
    best = np.sort(counts)[::-1][: check_integer(c, "c", minimum=1, maximum=counts.size)].sum()
    return np.sum(_selection_masks(selected, counts.size) * counts, axis=-1) / best


def _selection_masks(selected: ArrayLike, k: int) -> np.ndarray:
    """One 0/1 mask of length k, or a ``(trials, k)`` array of them, as booleans."""
    masks = check_binary(selected, "selected").astype(bool)
    if masks.ndim not in (1, 2) or masks.shape[-1] != k:
        raise ValueError(
            f"selected must be one mask of length {k} or a (trials, {k}) array of them; got shape {masks.shape}"
        )
    return masks


def normalized_cumulative_rank(selected: ArrayLike, counts: ArrayLike, c: int) -> np.ndarray:
    """NCR (Lyu et al.): the ranks of the selected items over the ranks of the true top c.

    The true top item has rank c, the next c − 1, …, the c-th rank 1, and every other item 0;
    the sum over the selected items is divided by the largest possible, c(c + 1)/2. Unlike NCS
    it does not forgive missing a top item for a near-tie with a lower one.

    Parameters
    ----------
    selected : array_like of {0, 1}, shape (k,) or (trials, k)
        One selection mask, or one per trial.
    counts : array_like, shape (k,)
        The items' true counts, finite (ties ranked by index).
    c : int
        The number of items a selection should find, in [1, k].

    Returns
    -------
    float or numpy.ndarray
        The NCR in [0, 1]: one number for one mask, shape ``(trials,)`` for many.

    Raises
    ------
    ValueError
        If ``counts`` is not a non-empty 1-D array of finite numbers, ``c`` is not an integer in [1, k], or
        ``selected`` has an entry other than 0 and 1 or is not shaped ``(k,)`` or ``(trials, k)``.
    TypeError
        If ``counts`` or ``selected`` is not numeric, or ``c`` is not an integer.
    """
    counts = check_array(counts, "counts", ndim=1)
    c = check_integer(c, "c", minimum=1, maximum=counts.size)
    rank = np.zeros(counts.size)
    rank[np.argsort(-counts, kind="stable")[:c]] = np.arange(c, 0, -1)
    return np.sum(_selection_masks(selected, counts.size) * rank, axis=-1) / (c * (c + 1) / 2)
