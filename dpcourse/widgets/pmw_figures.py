"""Figures and small studies of notebook 06 (Hedge, MW release, Private MW, its cap, the exponential mechanism).

Each ``show_*`` function draws one figure of the notebook with pyplot and shows it (``plt.show()``), so that a
notebook cell reads as what it measures: ``show_hedge_run(run, highlight=7)``. It returns nothing (a returned
figure, the cell's last value, would be drawn a second time); the tests read the figure from ``plt.gcf()``.
The studies (:func:`update_cap_by_n`, :func:`em_utility`) run an experiment and hold what it
measured, with a ``show()`` for its figure and, where the notebook prints one, a ``table()``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np

from .. import mechanisms, pmw
from .._validation import RngLike, check_integer, check_positive, check_probability
from ..plotting import color_for, fast_log_axes, few_ticks, plot_theory
from ..tables import Table

__all__ = [
    "CapStudy",
    "EMUtility",
    "em_utility",
    "mw_updates_table",
    "show_hedge_run",
    "show_mw_updates",
    "show_private_mw_run",
    "update_cap_by_n",
]


def show_hedge_run(run: pmw.HedgeResult, *, highlight: int, stride: int = 4) -> None:
    """Hedge's regret after each round against Theorem 1.5 and 2√(t ln N), and the weights over time.

    Parameters
    ----------
    run : HedgeResult
        A run of :func:`dpcourse.pmw.hedge`.
    highlight : int
        The expert whose weight is drawn in colour (the others in greys), in [0, N).
    stride : int, optional
        Draw every ``stride``-th round (default 4; ≥ 1).

    Raises
    ------
    ValueError
        If ``highlight`` is not an expert's index or ``stride`` is below 1.
    TypeError
        If ``highlight`` or ``stride`` is not an integer.
    """
    rounds, experts = run.weights.shape
    highlight = check_integer(highlight, "highlight", minimum=0, maximum=experts - 1)
    stride = check_integer(stride, "stride", minimum=1)
    t = np.arange(1, rounds + 1)[::stride]
    _, (ax_r, ax_w) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"wspace": 0.28})
    ax_r.plot(t, run.regret_curve[::stride], color=color_for("pmw"), label="Hedge regret (measured)")
    plot_theory(ax_r, t, np.log(experts) / run.eta + run.eta * t, label="ln N/η + ηt (Theorem 1.5)")
    plot_theory(ax_r, t, 2 * np.sqrt(t * np.log(experts)), label="2√(t ln N)", style="--")
    ax_r.set(xlabel="round t", ylabel="regret after t rounds", title="Regret stays below the bound")
    ax_r.legend()
    greys = [color_for("pmw") if i == highlight else plt.cm.Greys(0.25 + 0.05 * i) for i in range(experts)]
    ax_w.stackplot(t, run.weights[::stride].T, colors=greys)
    ax_w.set(xlabel="round t", ylabel="weight xₜ(i)", title=f"The weight moves to expert {highlight}")
    ax_w.set(xlim=(1, rounds), ylim=(0, 1))
    for ax in (ax_r, ax_w):
        few_ticks(ax, 4)
    plt.show()


def show_mw_updates(
    runs: Mapping[str, Sequence[pmw.MWReleaseResult]], alphas: Sequence[float], *, domain_size: int
) -> None:
    """MW release's updates against 4 ln|X|/α² for each adversary, and the potential KL(p ‖ p̃ₜ) at the first α.

    Parameters
    ----------
    runs : mapping of str to sequence of MWReleaseResult
        For each adversary (``"largest"``, ``"smallest"``), one run of :func:`dpcourse.pmw.mw_query_release`
        per α of ``alphas``.
    alphas : sequence of float
        The α of the runs, increasing; the potential is drawn for the first.
    domain_size : int
        |X|, the universe the runs released over (≥ 2).

    Raises
    ------
    ValueError
        If ``domain_size`` is below 2 or a run list is not as long as ``alphas``.
    TypeError
        If ``domain_size`` is not an integer.
    """
    domain_size = check_integer(domain_size, "domain_size", minimum=2)
    alpha_values = np.asarray(alphas, dtype=float)
    if any(len(rs) != alpha_values.size for rs in runs.values()):
        raise ValueError("runs must hold one run per alpha for each adversary")
    colour = {"largest": color_for("laplace"), "smallest": color_for("pmw")}
    _, (ax_u, ax_k) = plt.subplots(1, 2, figsize=(11, 4.0), gridspec_kw={"wspace": 0.28})
    grid = np.geomspace(alpha_values.min(), alpha_values.max(), 50)
    for (adversary, rs), marker in zip(runs.items(), "os", strict=False):
        ax_u.plot(
            alpha_values,
            [r.updates for r in rs],
            marker,
            color=colour.get(adversary),
            label=f"{adversary} gap first (measured)",
        )
    plot_theory(ax_u, grid, 4 * np.log(domain_size) / grid**2, label="4 ln|X|/α² (the bound)")
    fast_log_axes(ax_u)
    ax_u.set(xlabel="α", ylabel="updates", title="Updates until no query is off by α")
    ax_u.legend()
    for (adversary, rs), style in zip(runs.items(), ("-", "--"), strict=False):
        ax_k.plot(
            np.arange(rs[0].updates + 1),
            rs[0].potential,
            style,
            color=colour.get(adversary),
            label=f"KL(p ‖ p̃ₜ), {adversary} gap first",
        )
    steps = np.arange(max(rs[0].updates for rs in runs.values()) + 1)
    plot_theory(
        ax_k, steps, np.log(domain_size) - steps * alpha_values[0] ** 2 / 4, label="ln|X| − t·α²/4 (upper bound)"
    )
    ax_k.set(
        xlabel="update t", ylabel="potential", title=f"The potential falls (α = {alpha_values[0]:g})", ylim=(0, None)
    )
    ax_k.legend()
    few_ticks(ax_k, 4)
    plt.show()


def mw_updates_table(
    runs: Mapping[str, Sequence[pmw.MWReleaseResult]], alphas: Sequence[float], *, domain_size: int, num_queries: int
) -> Table:
    """MW release's updates for each α and adversary, beside 4 ln|X|/α².

    Parameters
    ----------
    runs : mapping of str to sequence of MWReleaseResult
        For ``"largest"`` and ``"smallest"``, one run of :func:`dpcourse.pmw.mw_query_release` per α of ``alphas``.
    alphas : sequence of float
        The α of the runs.
    domain_size : int
        |X| (≥ 2).
    num_queries : int
        How many queries the runs chose from (≥ 1), for the caption.

    Returns
    -------
    Table
        One row per α: updates with the largest gap first, with the smallest gap ≥ α first, and the bound.

    Raises
    ------
    ValueError
        If ``domain_size`` or ``num_queries`` is out of range, or a run list is not as long as ``alphas``.
    KeyError
        If ``runs`` lacks one of the two adversaries.
    """
    domain_size = check_integer(domain_size, "domain_size", minimum=2)
    num_queries = check_integer(num_queries, "num_queries", minimum=1)
    alpha_values = np.asarray(alphas, dtype=float)
    largest, smallest = ([r.updates for r in runs[adversary]] for adversary in ("largest", "smallest"))
    if len(largest) != alpha_values.size or len(smallest) != alpha_values.size:
        raise ValueError("runs must hold one run per alpha for each adversary")
    bound = 4 * np.log(domain_size) / alpha_values**2
    rows = list(zip(alpha_values, largest, smallest, bound, strict=True))
    return Table(
        ["α", "updates, largest gap first", "updates, smallest gap ≥ α first", "4 ln|X|/α²"],
        rows,
        caption=f"{num_queries} queries, |X| = {domain_size}",
    )


def show_private_mw_run(history: pmw.PMWHistory, truth: np.ndarray, potential: np.ndarray, *, alpha: float) -> None:
    """One Private MW stream: answers against the truth, errors against 11α/8, the potential, the updates.

    Parameters
    ----------
    history : PMWHistory
        The curator's :attr:`~dpcourse.pmw.PrivateMW.history` after the stream (every query answered).
    truth : numpy.ndarray
        The true answers q·p, one per query of the stream.
    potential : numpy.ndarray
        KL(p ‖ p̃ₜ) after each query (:func:`dpcourse.pmw.run_stream_with_potential`).
    alpha : float
        The α the curator was calibrated with (> 0).

    Raises
    ------
    ValueError
        If ``alpha`` is not > 0, or ``truth`` or ``potential`` has not one entry per answer.
    TypeError
        If ``alpha`` is not a number.
    """
    alpha = check_positive(alpha, "alpha")
    answers, updated = history.answers, history.updated
    truth, potential = np.asarray(truth, dtype=float), np.asarray(potential, dtype=float)
    if truth.shape != answers.shape or potential.shape != answers.shape:
        raise ValueError(f"truth and potential must have one entry per answer ({answers.size})")
    idx = np.arange(1, answers.size + 1)
    _, ((ax_a, ax_e), (ax_p, ax_n)) = plt.subplots(
        2, 2, figsize=(11, 6.6), gridspec_kw={"wspace": 0.28, "hspace": 0.42}
    )
    ax_a.plot(truth[~updated], answers[~updated], ".", ms=2, color=color_for("pmw"), label="free, from p̃")
    ax_a.plot(truth[updated], answers[updated], "x", ms=4, color=color_for("laplace"), label="paid (Laplace) + update")
    ax_a.plot([0, 0.6], [0, 0.6], color=color_for("exact"), lw=0.8)
    ax_a.set(xlabel="true answer q·p", ylabel="released answer", title="Answers against the truth")
    ax_a.legend(loc="upper left")
    ax_e.plot(idx, np.abs(answers - truth), ".", ms=2, color=color_for("pmw"), label="|error|")
    ax_e.axhline(11 * alpha / 8, color=color_for("bound"), ls="--", label="11α/8 (Theorem 4.3)")
    ax_e.axhline(alpha, color=color_for("bound"), ls=":", label="α")
    ax_e.set(xlabel="query", ylabel="|released − true|", title="Error over the stream", ylim=(0, 1.35 * 11 * alpha / 8))
    ax_e.legend(loc="upper right", ncols=3)
    ax_p.plot(idx, potential, color=color_for("pmw"))
    ax_p.set(xlabel="query", ylabel="KL(p ‖ p̃ₜ)", title="The synthetic data approaches the data")
    ax_n.step(idx, np.cumsum(updated), where="post", color=color_for("svt"))
    ax_n.set(xlabel="query", ylabel="updates so far", title="Updates come early")
    for ax in (ax_a, ax_e, ax_p, ax_n):
        few_ticks(ax, 4)
    plt.show()


@dataclass(frozen=True)
class CapStudy:
    """Private MW on one stream at several n (one α): where the cap N on updates binds.

    Attributes
    ----------
    n : numpy.ndarray
        The data set sizes.
    updates : numpy.ndarray of int
        The updates each run made.
    max_updates : int
        N = 16 ln|X|/α², the same for every n.
    answered : numpy.ndarray of int
        The queries each run answered before its budget ran out.
    least_alpha : numpy.ndarray
        Theorem 4.3's least α at each n (β = 0.05).
    alpha : float
        The α of every run.
    domain_size : int
        |X|.
    num_queries : int
        The stream's length.
    """

    n: np.ndarray
    updates: np.ndarray
    max_updates: int
    answered: np.ndarray
    least_alpha: np.ndarray
    alpha: float
    domain_size: int
    num_queries: int

    def table(self) -> Table:
        """The study as a table: n, updates, N, answered, Theorem 4.3's least α.

        Returns
        -------
        Table
            One row per n, captioned with α and |X|.
        """
        rows = [
            [f"{n:.3g}", u, self.max_updates, a, least]
            for n, u, a, least in zip(self.n, self.updates, self.answered, self.least_alpha, strict=True)
        ]
        return Table(
            ["n", "updates", "N", "answered", "Theorem 4.3's least α"],
            rows,
            caption=f"α = {self.alpha:g}, |X| = {self.domain_size}",
        )

    def show(self) -> None:
        """Updates and queries answered against n, N as a line, the n where α is below the theorem's shaded."""
        _, ax = plt.subplots(figsize=(7.5, 3.8))
        ax.plot(self.n, self.updates, "o-", color=color_for("pmw"), label="updates (measured)")
        ax.plot(
            self.n, self.answered, "s:", color=color_for("laplace"), label=f"queries answered of {self.num_queries}"
        )
        ax.axhline(self.max_updates, color=color_for("bound"), ls="--", label="N = 16 ln|X|/α²")
        admissible = self.least_alpha <= self.alpha
        first_admissible = self.n[np.argmax(admissible)] if admissible.any() else self.n[-1]
        ax.axvspan(self.n[0], first_admissible, color=color_for("bound"), alpha=0.08, label="α below Theorem 4.3's")
        fast_log_axes(ax)
        ax.set(xlabel="n", ylabel="count", title="The cap binds only when n is too small for α")
        ax.legend(loc="center right")
        plt.show()


def update_cap_by_n(
    probs: np.ndarray,
    stream: pmw.ConjunctionWorkload,
    n_grid: Sequence[float],
    *,
    alpha: float,
    epsilon: float = 1.0,
    rng: RngLike = None,
) -> CapStudy:
    """Run Private MW on ``stream`` with the data ``probs · n`` for each n of ``n_grid``.

    Every run is seeded with ``rng`` (the same seed at each n) and answers the stream until its budget of N
    updates runs out.

    Parameters
    ----------
    probs : numpy.ndarray
        The data's proportions over the universe (sum 1).
    stream : ConjunctionWorkload
        The queries, in order.
    n_grid : sequence of float
        The data set sizes, increasing.
    alpha : float
        Private MW's α (> 0).
    epsilon : float, optional
        Its ε (default 1).
    rng : int, SeedSequence, Generator or None, optional
        The seed of each run.

    Returns
    -------
    CapStudy
        What each run did, and Theorem 4.3's least α at each n.

    Raises
    ------
    ValueError
        If ``alpha`` or ``epsilon`` is not > 0, or as :class:`~dpcourse.pmw.PrivateMW` raises.
    TypeError
        If a parameter has the wrong type.
    """
    alpha, epsilon = check_positive(alpha, "alpha"), check_positive(epsilon, "epsilon")
    sizes = np.asarray(n_grid, dtype=float)
    runs = [pmw.PrivateMW(probs * n, epsilon=epsilon, alpha=alpha, max_queries=len(stream), rng=rng) for n in sizes]
    for run in runs:
        pmw.run_stream(run, stream)
    least = [
        pmw.pmw_notes_alpha(n=n, epsilon=epsilon, domain_size=probs.size, num_queries=len(stream), beta=0.05)
        for n in sizes
    ]
    return CapStudy(
        sizes,
        np.array([r.updates for r in runs]),
        runs[0].max_updates,
        np.array([r.answered for r in runs]),
        np.array(least),
        alpha,
        probs.size,
        len(stream),
    )


@dataclass(frozen=True)
class EMUtility:
    """The exponential mechanism's revenue lost, exactly and in draws, beside report noisy max's.

    Attributes
    ----------
    gaps : numpy.ndarray
        The losses g at which the tails are evaluated, 0 … 2500.
    exact_tail : numpy.ndarray
        Pr[loss ≥ g] for the exponential mechanism, exactly (:func:`~dpcourse.mechanisms.utility_gap_tail`).
    theorem_tail : numpy.ndarray
        Theorem 3.11's |R|·e^(−εg/(2Δu)), capped at 1.
    em_loss : numpy.ndarray
        OPT − u(x, M(x)) in each draw of the exponential mechanism.
    rnm_loss : numpy.ndarray
        The same for report noisy max.
    consumers : int
        How many consumers the revenue counts.
    epsilon : float
        The ε of both mechanisms.
    """

    gaps: np.ndarray
    exact_tail: np.ndarray
    theorem_tail: np.ndarray
    em_loss: np.ndarray
    rnm_loss: np.ndarray
    consumers: int
    epsilon: float

    def exact_quantile(self, level: float) -> float:
        """The least g on the grid with Pr[loss ≥ g] ≤ 1 − ``level``, exactly.

        Parameters
        ----------
        level : float
            The quantile's level, in (0, 1).

        Returns
        -------
        float
            That g.

        Raises
        ------
        ValueError
            If ``level`` is not in (0, 1).
        TypeError
            If ``level`` is not a number.
        """
        level = check_probability(level, "level")
        return float(self.gaps[np.argmax(self.exact_tail <= 1 - level)])

    def show(self) -> None:
        """Pr[loss > g]: exact, measured for both mechanisms, and Theorem 3.11's bound, on a log scale."""
        draws = self.em_loss.size
        _, ax = plt.subplots(figsize=(7, 3.6))
        ax.plot(self.gaps, self.exact_tail, color=color_for("exponential"), label="exponential mechanism, exact")
        for sample, style, method, name in (
            (self.em_loss, ":", "exponential", "exponential mechanism"),
            (self.rnm_loss, "--", "laplace", "report noisy max"),
        ):
            tail = 1 - np.searchsorted(np.sort(sample), self.gaps, side="right") / sample.size  # Pr[loss > g]
            ax.plot(self.gaps, tail, style, color=color_for(method), label=f"{name}, {draws:,} draws")
        plot_theory(ax, self.gaps, self.theorem_tail, label="|R|·e^(−εg/(2Δu)) (Theorem 3.11)")
        fast_log_axes(ax, x=False)
        ax.set_ylim(1e-5, 1.5)
        ax.set(
            xlabel="revenue lost g = OPT − u(x, M(x))",
            ylabel="Pr[loss > g]",
            title=f"Pricing: {self.consumers} consumers, ε = {self.epsilon:g}",
        )
        ax.legend()
        few_ticks(ax, 4)
        plt.show()


def em_utility(
    revenue: np.ndarray,
    *,
    consumers: int,
    epsilon: float,
    sensitivity: float,
    draws: int = 10_000,
    rng: tuple[RngLike, RngLike] = (None, None),
) -> EMUtility:
    """The revenue the exponential mechanism and report noisy max lose, in ``draws`` runs each.

    Parameters
    ----------
    revenue : numpy.ndarray
        u(x, r) for each outcome r of the range.
    consumers : int
        How many consumers the revenue counts (for the figure's title; ≥ 1).
    epsilon : float
        The mechanisms' ε (> 0).
    sensitivity : float
        Δu (> 0).
    draws : int, optional
        Runs of each mechanism (default 10 000).
    rng : pair of seeds, optional
        The exponential mechanism's seed, then report noisy max's.

    Returns
    -------
    EMUtility
        The exact and measured tails of the loss, and Theorem 3.11's bound.

    Raises
    ------
    ValueError
        If ``epsilon``, ``sensitivity``, ``consumers`` or ``draws`` is not positive.
    TypeError
        If a parameter has the wrong type.
    """
    epsilon, sensitivity = check_positive(epsilon, "epsilon"), check_positive(sensitivity, "sensitivity")
    consumers = check_integer(consumers, "consumers", minimum=1)
    draws = check_integer(draws, "draws", minimum=1)
    revenue = np.asarray(revenue, dtype=float)
    gaps = np.arange(0.0, 2501.0)
    exact = mechanisms.utility_gap_tail(revenue, gaps, epsilon=epsilon, sensitivity=sensitivity)
    theorem = np.minimum(1.0, revenue.size * np.exp(-epsilon * gaps / (2 * sensitivity)))  # e^{-t} at 2Δu(ln|R| + t)/ε
    chosen = mechanisms.exponential_mechanism(
        revenue, epsilon=epsilon, sensitivity=sensitivity, rng=rng[0], trials=draws
    )
    noisy_max = mechanisms.report_noisy_max(revenue, epsilon=epsilon, sensitivity=sensitivity, rng=rng[1], trials=draws)
    best = revenue.max()
    return EMUtility(gaps, exact, theorem, best - revenue[chosen[:, 0]], best - revenue[noisy_max], consumers, epsilon)
