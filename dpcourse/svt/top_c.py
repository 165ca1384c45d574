"""Lyu, Su & Li's top-c experiments: SVT against its budget splits, and against the exponential mechanism.

A top-c task is a list of counts in the order the queries arrive; the threshold sits halfway between
the c-th and the (c + 1)-th largest count (the true boundary, itself private information, which the
experiments hand to SVT). :func:`interactive_top_c` runs Dwork & Roth's SVT (Alg. 2) and SVT-S with
four budget splits, one pass over the list; :func:`non_interactive_top_c` runs the exponential
mechanism (c picks without replacement) and SVT-S with retraversal at raised thresholds. Both score
every run with the F-measure, NCS and NCR (:mod:`~dpcourse.svt.selection`) and return the means
as a :class:`TopCScores`. Notebook 05 draws them in its *Going further* part.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .._validation import ArrayLike, RngLike, as_generator, check_array, check_integer, check_positive_array
from ..mechanisms.noise import exponential_mechanism
from ..tables import Table
from .selection import f_measure, normalized_cumulative_rank, normalized_cumulative_support, top_c_mask
from .variants import VARIANTS, svt_retraversal, svt_standard

__all__ = ["TopCScores", "interactive_top_c", "non_interactive_top_c"]

METRICS = ("F-measure", "NCS", "NCR")


@dataclass(frozen=True)
class TopCScores:
    """The mean score of each method at each ε on one top-c task.

    Parameters
    ----------
    methods : tuple of str
        The methods' names, in the order they ran.
    epsilons : tuple of float
        The budgets ε, in the order they ran.
    means : numpy.ndarray
        Shape ``(methods, metrics, epsilons)``: the mean over the runs of each score (metrics as
        :data:`METRICS`: F-measure, NCS, NCR).
    largest_standard_error : float
        The largest standard error of any mean.
    runs : int
        The runs per method and ε.

    Examples
    --------
    >>> scores = interactive_top_c([50, 3, 40, 1, 2, 30], 2, epsilons=[100.0], trials=20, rng=1)
    >>> float(scores.mean("1:c^(2/3), monotonic", "F-measure")[0])
    1.0
    """

    methods: tuple[str, ...]
    epsilons: tuple[float, ...]
    means: np.ndarray = field(repr=False)
    largest_standard_error: float
    runs: int

    def mean(self, method: str, metric: str) -> np.ndarray:
        """The means of one method and one metric, one per ε.

        Parameters
        ----------
        method : str
            One of :attr:`methods`.
        metric : str
            ``"F-measure"``, ``"NCS"`` or ``"NCR"``.

        Returns
        -------
        numpy.ndarray
            Shape ``(len(epsilons),)``.

        Raises
        ------
        ValueError
            If ``method`` or ``metric`` is not one of those.
        """
        if method not in self.methods:
            raise ValueError(f"method must be one of {', '.join(self.methods)}; got {method!r}")
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {', '.join(METRICS)}; got {metric!r}")
        return self.means[self.methods.index(method), METRICS.index(metric)]

    def table(self, *, metrics: Sequence[str] = METRICS, caption: str = "") -> Table:
        """The means as a table: one row per metric and method, one column per ε, to three decimals.

        Parameters
        ----------
        metrics : sequence of str, optional
            The metrics to show, in order (default all three).
        caption : str, optional
            The table's caption.

        Returns
        -------
        dpcourse.tables.Table
            Columns ``metric``, ``method`` and ``ε = …`` for each ε.

        Raises
        ------
        ValueError
            If a metric is not one of ``"F-measure"``, ``"NCS"``, ``"NCR"``.
        """
        rows = [
            [metric, method, *(f"{v:.3f}" for v in self.mean(method, metric))]
            for metric in metrics
            for method in self.methods
        ]
        return Table(["metric", "method", *(f"ε = {e}" for e in self.epsilons)], rows, caption=caption)


def _task(counts: ArrayLike, c: int) -> tuple[np.ndarray, int, float, np.ndarray]:
    """The counts, c, the threshold halfway between the c-th and (c + 1)-th counts, and the true top-c mask."""
    counts = check_array(counts, "counts", ndim=1, min_size=2)
    c = check_integer(c, "c", minimum=1, maximum=counts.size - 1)
    ranked = np.sort(counts)[::-1]
    return counts, c, float((ranked[c - 1] + ranked[c]) / 2), top_c_mask(counts, c)


def _epsilons(epsilons: ArrayLike) -> tuple[float, ...]:
    values = check_positive_array(epsilons, "epsilons", ndim=1)
    return tuple(float(e) for e in values)


def _score(
    runs: Callable[[float], dict[str, np.ndarray]],
    counts: np.ndarray,
    c: int,
    truth: np.ndarray,
    epsilons: tuple[float, ...],
    trials: int,
) -> TopCScores:
    """Run ``runs(ε)`` (method → ``(trials, k)`` selection masks) at each ε and average the three scores."""
    scorers = {
        "F-measure": lambda s: f_measure(s, truth),
        "NCS": lambda s: normalized_cumulative_support(s, counts, c),
        "NCR": lambda s: normalized_cumulative_rank(s, counts, c),
    }
    columns: list[np.ndarray] = []
    methods: tuple[str, ...] = ()
    largest = 0.0
    for epsilon in epsilons:
        chosen = runs(epsilon)
        methods = tuple(chosen)
        scores = np.array([[scorers[m](mask) for m in METRICS] for mask in chosen.values()])  # method × metric × run
        columns.append(scores.mean(axis=-1))
        largest = max(largest, float(np.max(scores.std(axis=-1, ddof=1)) / np.sqrt(trials)))
    return TopCScores(methods, epsilons, np.stack(columns, axis=-1), largest, trials)


def interactive_top_c(
    counts: ArrayLike, c: int, *, epsilons: ArrayLike, trials: int, rng: RngLike = None
) -> TopCScores:
    """Dwork & Roth's SVT (Alg. 2) and SVT-S with four budget splits, one pass over the counts.

    The splits ε₁ : ε₂ are 1 : 1, 1 : c, Lyu et al.'s 1 : (2c)^(2/3), and 1 : c^(2/3) with the halved
    query noise of monotonic queries (counts are monotonic). At each ε the methods run in that order,
    Alg. 2 first, ``trials`` runs each, drawing from one generator.

    Parameters
    ----------
    counts : array_like, shape (k,)
        The items' counts in the order the queries arrive, k ≥ 2.
    c : int
        How many items to find, in [1, k − 1].
    epsilons : array_like
        The budgets ε to try, each > 0.
    trials : int
        Runs per method and ε, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Returns
    -------
    TopCScores
        Methods ``"Dwork & Roth (Alg. 2)"``, ``"1:1"``, ``"1:c"``, ``"1:(2c)^(2/3)"``,
        ``"1:c^(2/3), monotonic"``.

    Raises
    ------
    ValueError
        If ``counts`` is not a 1-D array of at least 2 finite numbers, ``c`` is not in [1, k − 1], an ε is
        not > 0, ``trials`` is not ≥ 2, or ``rng`` is a negative seed.
    TypeError
        If a parameter is not a number (or array of numbers) of its kind, or ``rng`` is not a seed or generator.
    """
    counts, c, threshold, truth = _task(counts, c)
    epsilons, trials, gen = _epsilons(epsilons), check_integer(trials, "trials", minimum=2), as_generator(rng)
    # SVT-S's splits: name → (ε₂/ε₁, or None for Lyu et al.'s optimum; whether the queries are monotonic)
    splits = {"1:1": (1.0, False), "1:c": (float(c), False), "1:(2c)^(2/3)": (None, False)}
    splits["1:c^(2/3), monotonic"] = (None, True)

    def runs(epsilon: float) -> dict[str, np.ndarray]:
        out = {
            "Dwork & Roth (Alg. 2)": VARIANTS["alg2"].run(
                counts, threshold=threshold, epsilon=epsilon, c=c, trials=trials, rng=gen
            )
        }
        for name, (ratio, monotonic) in splits.items():
            out[name] = svt_standard(
                counts,
                threshold=threshold,
                epsilon=epsilon,
                c=c,
                ratio=ratio,
                monotonic=monotonic,
                trials=trials,
                rng=gen,
            )
        return {name: np.isposinf(codes) for name, codes in out.items()}

    return _score(runs, counts, c, truth, epsilons, trials)


def non_interactive_top_c(
    counts: ArrayLike,
    c: int,
    *,
    epsilons: ArrayLike,
    raises: ArrayLike = (0, 1, 3, 5),
    trials: int,
    rng: RngLike = None,
) -> TopCScores:
    """The exponential mechanism against SVT-S with retraversal (SVT-ReTr) at raised thresholds.

    The exponential mechanism picks c items in c rounds of ε/c each, without replacement, with
    the monotonic scores' weights e^{εq/(cΔ)}; SVT-ReTr (1 : c^(2/3), monotonic) scans the list again
    until it has c items, its threshold raised by each of ``raises`` times D, the query noise's
    standard deviation. At each ε the exponential mechanism runs first, then each raise in order.

    Parameters
    ----------
    counts : array_like, shape (k,)
        The items' counts in the order the queries arrive, k ≥ 2.
    c : int
        How many items to find, in [1, k − 1].
    epsilons : array_like
        The budgets ε to try, each > 0.
    raises : array_like, optional
        The threshold raises, in units of D, each ≥ 0 (default 0, 1, 3 and 5, Lyu et al.'s with 0 added).
    trials : int
        Runs per method and ε, ≥ 2.
    rng : int, numpy.random.SeedSequence, numpy.random.Generator or None, optional
        Seed or generator for the noise.

    Returns
    -------
    TopCScores
        Methods ``"exponential mechanism"`` and ``"SVT-ReTr + {r}D"`` for each raise r.

    Raises
    ------
    ValueError
        As :func:`interactive_top_c`, or if ``raises`` is empty or has an entry < 0.
    TypeError
        As :func:`interactive_top_c`, or if ``raises`` is not an array of numbers.
    """
    counts, c, threshold, truth = _task(counts, c)
    epsilons, trials, gen = _epsilons(epsilons), check_integer(trials, "trials", minimum=2), as_generator(rng)
    raised = check_array(raises, "raises", ndim=1)
    if np.any(raised < 0):
        raise ValueError(f"raises must all be ≥ 0; got {raised.tolist()}")

    def runs(epsilon: float) -> dict[str, np.ndarray]:
        picks = exponential_mechanism(counts, epsilon=epsilon, k=c, monotonic=True, rng=gen, trials=trials)
        chosen = np.zeros((trials, counts.size), dtype=bool)
        np.put_along_axis(chosen, picks, True, axis=1)
        out = {"exponential mechanism": chosen}
        for r in raised:
            out[f"SVT-ReTr + {r:g}D"] = svt_retraversal(
                counts,
                threshold=threshold,
                epsilon=epsilon,
                c=c,
                monotonic=True,
                raise_by=float(r),
                trials=trials,
                rng=gen,
            )
        return out

    return _score(runs, counts, c, truth, epsilons, trials)
