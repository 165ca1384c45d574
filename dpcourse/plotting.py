"""One look for every figure: a colour per method, theory as lines, measurements as points.

The same method has the same colour in every notebook, so a student can tell Laplace from
randomized response at a glance anywhere in the workbook.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullLocator

__all__ = ["METHOD_COLORS", "color_for", "fast_log_axes", "new_figure", "plot_empirical", "plot_theory"]

METHOD_COLORS = {
    "laplace": "#1f77b4",
    "laplace_histogram": "#17becf",
    "gaussian": "#2ca02c",
    "randomized_response": "#d62728",
    "matrix_mechanism": "#9467bd",
    "tree": "#8c564b",
    "svt": "#ff7f0e",
    "pmw": "#e377c2",
    "exponential": "#bcbd22",
    "bound": "#444444",
    "exact": "#000000",
}


def color_for(method: str) -> str:
    """The colour of ``method`` (a key of :data:`METHOD_COLORS`); grey for anything else."""
    return METHOD_COLORS.get(method, "#7f7f7f")


def new_figure(ncols: int = 1, *, width: float = 5.2, height: float = 3.6) -> tuple[Figure, list]:
    """A figure with ``ncols`` axes side by side, not registered with pyplot.

    Figures made this way are never left open in pyplot's registry, so widgets can redraw
    thousands of times without the "more than 20 figures" warning.
    """
    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    for ax in axes:
        ax.grid(True, which="both", alpha=0.25)
    return fig, axes


def plot_theory(ax, x, y, *, method: str = "bound", label: str, style: str = "-"):
    """A theory line in the method's colour."""
    return ax.plot(x, y, style, color=color_for(method), label=label, lw=1.8)[0]


def plot_empirical(ax, x, mean, low, high, *, method: str, label: str, capsize: float = 2.5):
    """Measured values as points with confidence-interval error bars, in the method's colour.

    Widgets pass ``capsize=0``: the caps are separate artists and cost redraw time.
    """
    mean = np.asarray(mean, dtype=float)
    err = np.vstack([mean - np.asarray(low, dtype=float), np.asarray(high, dtype=float) - mean])
    return ax.errorbar(x, mean, yerr=np.clip(err, 0, None), fmt="o", ms=4, capsize=capsize,
                       color=color_for(method), label=label)


def _plain(value, _position):
    return f"{value:g}"


def fast_log_axes(ax, *, x: bool = True, y: bool = True) -> None:
    """Log scales with plain tick labels ("0.01", "1000") and no minor ticks.

    Matplotlib's default log labels are typeset as mathtext (10⁻²), which costs most of a
    widget redraw; plain labels keep a panel well under a quarter of a second.
    """
    for on, axis, set_scale in ((x, ax.xaxis, ax.set_xscale), (y, ax.yaxis, ax.set_yscale)):
        if on:
            set_scale("log")
            axis.set_major_formatter(FuncFormatter(_plain))
            axis.set_minor_locator(NullLocator())
