"""Panels of notebook 01 (Laplace utility)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .._validation import RngLike, as_generator, check_integer, check_size
from ..linear_queries import CountingQuerySweep, UniverseSizeSweep
from ..mechanisms import (
    ErrorSummary,
    empirical_tail,
    laplace_max_error_bound,
    laplace_max_error_quantile,
    laplace_max_error_tail,
)
from ..plotting import color_for, fast_log_axes, few_ticks, new_figure, plot_empirical, plot_theory
from ._panel import Panel, int_slider, log_slider

__all__ = ["counting_queries_figure", "direct_vs_histogram_figure", "laplace_tail_panel", "universe_size_figure"]

LEVELS = 200
BINS = 60
MAX_TRIALS = 100_000
MAX_K = 5000


def laplace_tail_panel(*, trials: int = 4000, max_k: int = 1000, rng: RngLike = 2026, render: bool = True) -> Panel:
    """Theorem 3.8 live: the tail of ‖f(x) − y‖∞ for k Laplace coordinates, against the bound.

    Controls: ε, k, β and Δf. The ``trials × max_k`` magnitudes |Lap(1)| ~ Exp(1) are drawn once;
    since |Lap(b)| = b·|Lap(1)| and the error of the first k coordinates is a running maximum,
    every redraw only rescales one column of the running maximum. Measured in units of
    b = Δf/ε, the tail and its intervals depend on k and β alone: they are computed once per
    (k, β), so moving ε or Δf only rescales the x axis.

    Left: P[‖Z‖∞ ≥ t] measured (points with Clopper–Pearson intervals), exact
    (1 − (1 − e^{−t/b})ᵏ) and the level ln(k/β)·Δf/ε. Right: the histogram of the error.

    ``trials`` ≤ 100 000 and ``max_k`` ≤ 5000 (``trials × max_k`` floats are kept in memory).

    Parameters
    ----------
    trials : int, optional
        The number of simulated releases, in [100, 100 000] (default 4000).
    max_k : int, optional
        The largest k the slider offers, in [1, 5000] (default 1000).
    rng : int, numpy.random.Generator or None, optional
        Seed or generator for the magnitudes, drawn when the panel is made (default 2026).
    render : bool, optional
        Render the figure to the panel's image on each redraw (default True; False times the
        computation alone).

    Returns
    -------
    Panel
        The panel, drawn once for the controls' starting values.

    Raises
    ------
    ValueError
        If ``trials`` or ``max_k`` is outside its range, ``trials × max_k`` would need more than 1 GiB, or
        ``rng`` is a negative seed.
    TypeError
        If ``trials`` or ``max_k`` is not an integer, or ``rng`` is not a seed or a Generator.
    """
    trials = check_integer(trials, "trials", minimum=100, maximum=MAX_TRIALS)
    max_k = check_integer(max_k, "max_k", minimum=1, maximum=MAX_K)
    check_size(2 * trials * max_k * 8, "trials × max_k")
    # |Lap(1)| is Exp(1): drawing the magnitudes directly (ziggurat) is about 4× faster than Laplace noise and abs
    running_max = as_generator(rng).standard_exponential(size=(trials, max_k))
    np.maximum.accumulate(running_max, axis=1, out=running_max)  # in place: one trials × max_k array in all

    @lru_cache(maxsize=64)
    def in_units_of_b(k: int, beta: float) -> tuple:
        """Errors / b, levels / b, the measured tail with its intervals, and the histogram, for this (k, β)."""
        errors = running_max[:, k - 1]
        level = laplace_max_error_bound(k=k, beta=beta, sensitivity=1.0, epsilon=1.0)  # Theorem 3.8's level / b
        quantile = laplace_max_error_quantile(k=k, beta=beta, sensitivity=1.0, epsilon=1.0)  # exact quantile / b
        levels = np.linspace(0.0, max(1.25 * level, float(errors.max())), LEVELS)
        tail = empirical_tail(errors, levels)
        at_level = empirical_tail(errors, [level])
        counts, edges = np.histogram(errors, bins=BINS)
        return errors, level, quantile, levels, tail, at_level, counts, edges

    artists: dict[str, Any] = {}

    def build(fig: Figure) -> None:
        ax_tail, ax_hist = fig.subplots(1, 2)
        c = color_for("laplace")
        artists["band"] = ax_tail.fill_between([0, 1], [1, 1], [1, 1], color=c, alpha=0.25, lw=0, label="95% interval")
        (artists["measured"],) = ax_tail.plot([], [], ".", ms=4, color=c, label=f"measured ({trials:,} trials)")
        (artists["exact"],) = ax_tail.plot(
            [], [], "-", lw=1.8, color=color_for("exact"), label="exact 1 − (1 − e^(−t/b))^k"
        )
        artists["level"] = ax_tail.axvline(1, color=color_for("bound"), ls="--", label="Thm 3.8: ln(k/β)·Δf/ε")
        artists["beta"] = ax_tail.axhline(0.05, color=color_for("bound"), ls=":", label="β")
        fast_log_axes(ax_tail, x=False)
        ax_tail.set_ylim(max(0.5 / trials, 1e-5), 1.5)
        ax_tail.set_xlabel("error level t")
        ax_tail.set_ylabel("P[‖f(x) − y‖∞ ≥ t]")
        artists["title"] = ax_tail.set_title(" ")
        ax_tail.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncols=2, fontsize=9)

        artists["hist"] = ax_hist.stairs(
            np.zeros(BINS), np.arange(BINS + 1.0), fill=True, color=c, alpha=0.7, label="measured errors"
        )
        artists["quantile"] = ax_hist.axvline(1, color=color_for("exact"), label="exact (1 − β)-quantile")
        artists["hist_level"] = ax_hist.axvline(1, color=color_for("bound"), ls="--", label="Thm 3.8 level")
        ax_hist.set_xlabel("‖f(x) − y‖∞")
        ax_hist.set_ylabel("trials")
        ax_hist.set_title("where the errors fall")
        ax_hist.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2), ncols=2, fontsize=9)
        few_ticks(ax_tail)
        few_ticks(ax_hist)
        artists["axes"] = (ax_tail, ax_hist)

    def draw(fig: Figure, *, epsilon: float, k: int, beta: float, sensitivity: float) -> dict[str, Any]:
        if not artists:
            build(fig)
        ax_tail, ax_hist = artists["axes"]
        k = int(k)
        b = sensitivity / epsilon
        unit_errors, unit_level, unit_quantile, unit_levels, tail, at_level, counts, edges = in_units_of_b(k, beta)
        levels, bound, quantile = b * unit_levels, b * unit_level, b * unit_quantile
        shown = tail.probability > 0
        artists["band"].set_data(levels[shown], tail.low[shown], tail.high[shown])
        artists["measured"].set_data(levels[shown], tail.probability[shown])
        artists["exact"].set_data(levels, laplace_max_error_tail(levels, k=k, sensitivity=sensitivity, epsilon=epsilon))
        artists["level"].set_xdata([bound, bound])
        artists["beta"].set_ydata([beta, beta])
        ax_tail.set_xlim(0, levels[-1])
        artists["title"].set_text(f"k = {k}, b = Δf/ε = {b:.3g}")
        artists["hist"].set_data(counts, b * edges)
        artists["quantile"].set_xdata([quantile, quantile])
        artists["hist_level"].set_xdata([bound, bound])
        ax_hist.set_xlim(b * edges[0], max(b * edges[-1], 1.05 * bound))
        ax_hist.set_ylim(0, 1.08 * counts.max())
        return {
            "theorem 3.8 level": bound,
            "exact quantile": quantile,
            "measured P[error ≥ level]": float(at_level.probability[0]),
            "95% interval": [float(at_level.low[0]), float(at_level.high[0])],
            "β": beta,
            "mean max error": float(b * unit_errors.mean()),
        }

    controls = {
        "epsilon": log_slider("ε", value=1.0, min_exp=-2, max_exp=1),
        "k": int_slider("k", value=min(100, max_k), min=1, max=max_k),
        "beta": log_slider("β", value=0.05, min_exp=-3, max_exp=-0.31, step=0.01),
        "sensitivity": log_slider("Δf", value=1.0, min_exp=0, max_exp=2),
    }
    return Panel(
        draw,
        controls,
        figsize=(10.5, 4.6),
        render=render,
        margins={"left": 0.075, "right": 0.985, "bottom": 0.32, "top": 0.92, "wspace": 0.22},
    )


def _plot_summaries(ax: Axes, x: np.ndarray, summaries: Sequence[ErrorSummary], *, method: str, label: str) -> None:
    """Measured means with their 95% intervals, as points in the method's colour."""
    means, lows, highs = ([getattr(s, field) for s in summaries] for field in ("mean", "low", "high"))
    plot_empirical(ax, x, means, lows, highs, method=method, label=label)


def counting_queries_figure(sweep: CountingQuerySweep) -> Figure:
    """The direct release's largest error against K, with its exact mean and Theorem 3.8's level.

    Parameters
    ----------
    sweep : CountingQuerySweep
        What :func:`~dpcourse.linear_queries.counting_query_sweep` measured.

    Returns
    -------
    matplotlib.figure.Figure
        Measured means with 95% intervals, the exact mean b·H_K/n and the level (dashed), on log axes.
    """
    fig, (ax,) = new_figure(width=6.4, height=4.2)
    k = sweep.query_counts
    _plot_summaries(ax, k, sweep.direct, method="laplace", label="measured mean of max error (95% CI)")
    plot_theory(ax, k, sweep.expected, method="laplace", label="exact mean  b·H_K / n")
    plot_theory(ax, k, sweep.level, method="bound", style="--", label=f"Theorem 3.8 level, β = {sweep.beta}")
    fast_log_axes(ax)
    ax.set_xlabel("number of queries K")
    ax.set_ylabel("max normalised error over the K queries")
    ax.set_title(f"K counting queries, Laplace at the workload's Δf  (n = {sweep.n:,}, ε = {sweep.epsilon:g})")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend()
    return fig


def direct_vs_histogram_figure(sweep: CountingQuerySweep) -> Figure:
    """The K answers released directly against the same answers from the noisy histogram, with both bounds.

    Parameters
    ----------
    sweep : CountingQuerySweep
        What :func:`~dpcourse.linear_queries.counting_query_sweep` measured.

    Returns
    -------
    matplotlib.figure.Figure
        Both measured mean largest errors with 95% intervals and their bounds (dashed), on log axes.
    """
    fig, (ax,) = new_figure(width=6.4, height=4.2)
    k = sweep.query_counts
    for name, summaries, method, bound in (
        ("K queries, Laplace at Δf", sweep.direct, "laplace", sweep.level),
        ("noisy histogram", sweep.from_histogram, "laplace_histogram", sweep.histogram_level),
    ):
        _plot_summaries(ax, k, summaries, method=method, label=f"{name}: measured")
        plot_theory(ax, k, bound, method=method, style="--", label=f"{name}: bound, β = {sweep.beta}")
    fast_log_axes(ax)
    ax.set_xlabel("number of queries K")
    ax.set_ylabel("max normalised error over the K queries")
    ax.set_title(f"|X| = {sweep.domain_size}, n = {sweep.n:,}, ε = {sweep.epsilon:g}")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=9)
    return fig


def universe_size_figure(sweep: UniverseSizeSweep) -> Figure:
    """The noisy histogram's largest error against the universe size |X|, beside the split budget's bound.

    Parameters
    ----------
    sweep : UniverseSizeSweep
        What :func:`~dpcourse.linear_queries.universe_size_sweep` measured.

    Returns
    -------
    matplotlib.figure.Figure
        Measured means with 95% intervals, the histogram's bound (dashed) and, as a horizontal line, the
        bound of K queries with ε/K each; |X| on a base-2 log axis.
    """
    fig, (ax,) = new_figure(width=6.4, height=4.2)
    d, k = sweep.universe_sizes, sweep.num_queries
    _plot_summaries(ax, d, sweep.error, method="laplace_histogram", label="noisy histogram: measured")
    plot_theory(ax, d, sweep.bound, method="laplace_histogram", style="--", label="bound, β = 0.05")
    ax.axhline(
        sweep.split_bound,
        color=color_for("laplace"),
        ls="--",
        label=f"K queries, ε/K each: bound {sweep.split_bound:.3g} (any |X|)",
    )
    fast_log_axes(ax, y=False, base=2)
    fast_log_axes(ax, x=False)
    ax.set_ylim(top=2 * sweep.split_bound)  # a tick above the line
    ax.set_xlabel("universe size |X|")
    ax.set_ylabel(f"max normalised error over K = {k} queries")
    ax.grid(True, which="both", alpha=0.25)
    ax.legend(fontsize=9)
    return fig
