"""One look for every figure: a colour per method, theory as lines, measurements as points.

The same method has the same colour in every notebook, so a student can tell Laplace from
randomized response at a glance anywhere in the workbook. The colours are Paul Tol's *muted*
scheme, designed to stay distinguishable under the common forms of colour blindness, plus
black and grey for exact values and bounds.

Importing this module applies :data:`STYLE` to matplotlib's ``rcParams`` once (every notebook
imports it through ``dpcourse.plotting`` or ``dpcourse.widgets``): text of at least 9 pt,
shown at 100 px per inch, and in a notebook PNGs rendered at twice that resolution
("retina"), so figures stay sharp on high-density screens. :func:`apply_style` does it again,
e.g. after ``plt.rcdefaults()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib as mpl
import numpy as np
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullLocator
from matplotlib.typing import RcKeyType

from ._validation import ArrayLike

__all__ = [
    "METHOD_COLORS",
    "PALETTE",
    "RENDER_SCALE",
    "SCREEN_DPI",
    "STYLE",
    "apply_style",
    "color_for",
    "fast_log_axes",
    "new_figure",
    "plot_empirical",
    "plot_theory",
]

#: Paul Tol's muted qualitative scheme (colour-blind safe), in cycle order.
PALETTE = ("#332288", "#CC6677", "#117733", "#88CCEE", "#AA4499", "#44AA99", "#999933", "#882255", "#DDCC77")

METHOD_COLORS = {
    "laplace": "#332288",  # indigo
    "laplace_histogram": "#88CCEE",  # cyan
    "gaussian": "#117733",  # green
    "randomized_response": "#CC6677",  # rose
    "matrix_mechanism": "#AA4499",  # purple
    "tree": "#999933",  # olive
    "svt": "#882255",  # wine
    "pmw": "#44AA99",  # teal
    "exponential": "#DDCC77",  # sand
    "bound": "#555555",
    "exact": "#000000",
}

#: Pixels per inch at which figures are shown (matplotlib's default ``figure.dpi``): a panel
#: 10.5 inches wide is shown 1050 px wide, and 9 pt text is 12.5 px tall on screen.
SCREEN_DPI = 100
#: Panels and inline figures are rendered at this many pixels per shown pixel (sharp on
#: high-density screens) and displayed at their shown size.
RENDER_SCALE = 2
MIN_FONT_PT = 9

STYLE: dict[RcKeyType, Any] = {
    "figure.dpi": SCREEN_DPI,
    "savefig.dpi": SCREEN_DPI * RENDER_SCALE,
    "font.size": 10.5,
    "axes.titlesize": 11,
    "axes.labelsize": 10.5,
    "xtick.labelsize": 9.5,
    "ytick.labelsize": 9.5,
    "legend.fontsize": 9,
    "legend.title_fontsize": 9,
    "legend.framealpha": 0.92,
    "legend.borderaxespad": 0.4,
    "axes.prop_cycle": cycler(color=list(PALETTE)),
    "axes.grid": True,
    "axes.grid.which": "major",
    "grid.alpha": 0.25,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "errorbar.capsize": 0,
    "image.cmap": "viridis",
}


def apply_style() -> None:
    """Set :data:`STYLE` in matplotlib's ``rcParams`` and, inside IPython, render inline figures at 2×."""
    mpl.rcParams.update(STYLE)
    try:
        from IPython import get_ipython

        shell = get_ipython()
    except ImportError:  # pragma: no cover - IPython is a dependency of ipywidgets
        shell = None
    if shell is not None and getattr(shell, "kernel", None) is not None:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        # zlib level 1, as the panels use: the PNG is 10-15% larger, and encoding a figure at twice the
        # resolution no longer costs a third of drawing it (0.09 s over notebook 06's eight figures)
        set_matplotlib_formats("retina", pil_kwargs={"compress_level": 1})


apply_style()


def color_for(method: str) -> str:
    """The colour of ``method`` (a key of :data:`METHOD_COLORS`); grey for anything else."""
    if not isinstance(method, str):
        raise TypeError(f"method must be a string; got {type(method).__name__} {method!r}")
    return METHOD_COLORS.get(method, "#7f7f7f")


def new_figure(ncols: int = 1, *, width: float = 5.2, height: float = 3.6) -> tuple[Figure, list]:
    """A figure with ``ncols`` axes side by side, not registered with pyplot.

    Figures made this way are never left open in pyplot's registry, so widgets can redraw
    thousands of times without the "more than 20 figures" warning.
    """
    from ._validation import check_integer, check_positive

    ncols = check_integer(ncols, "ncols", minimum=1, maximum=8)
    width = check_positive(width, "width")
    height = check_positive(height, "height")
    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def plot_theory(ax: Axes, x: ArrayLike, y: ArrayLike, *, method: str = "bound", label: str, style: str = "-") -> Line2D:
    """A theory line in the method's colour."""
    return ax.plot(x, y, style, color=color_for(method), label=label, lw=1.8)[0]


def plot_empirical(
    ax: Axes,
    x: ArrayLike,
    mean: ArrayLike,
    low: ArrayLike,
    high: ArrayLike,
    *,
    method: str,
    label: str,
    capsize: float = 2.5,
) -> ErrorbarContainer:
    """Measured values as points with confidence-interval error bars, in the method's colour.

    Widgets pass ``capsize=0``: the caps are separate artists and cost redraw time.
    """
    from ._validation import check_array

    mean = check_array(mean, "mean", ndim=1, finite=False)
    low = check_array(low, "low", shape=mean.shape, finite=False)
    high = check_array(high, "high", shape=mean.shape, finite=False)
    err = np.vstack([mean - low, high - mean])
    return ax.errorbar(
        x, mean, yerr=np.clip(err, 0, None), fmt="o", ms=4, capsize=capsize, color=color_for(method), label=label
    )


_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_PLAIN_RANGE = (1e-3, 1e4)  # decimals read well inside it; beyond it every label is a power of ten


def _log_labels(axis: Axis) -> Callable[[float, float], str]:
    """Tick labels in one style for the whole axis: decimals ("0.01", "1000") when every tick in view fits
    them, else powers of ten for all ("10⁻⁵", "10⁻³"), in Unicode superscripts rather than mathtext."""

    def label(value: float, _position: float) -> str:
        low, high = sorted(axis.get_view_interval())
        exponent = np.log10(value) if value > 0 else np.nan
        if _PLAIN_RANGE[0] <= low and high <= _PLAIN_RANGE[1] or not np.isfinite(exponent):
            return f"{value:g}"
        if abs(exponent - round(exponent)) < 1e-9:
            return "10" + str(int(round(exponent))).translate(_SUPERSCRIPTS)
        mantissa, power = f"{value:.1e}".split("e")
        return f"{float(mantissa):g}×10" + str(int(power)).translate(_SUPERSCRIPTS)

    return label


def fast_log_axes(ax: Axes, *, x: bool = True, y: bool = True, base: float = 10) -> None:
    """Log scales (ticks at the powers of ``base``) with plain tick labels and no minor ticks.

    Matplotlib's default log labels are typeset as mathtext (10⁻²), which costs most of a
    widget redraw; plain labels keep a panel well under a quarter of a second, and a notebook
    whose figures all use them never builds the mathtext parser (about 0.15 s). The labels of one
    axis share a style: decimals when they all read well as decimals, powers of ten otherwise
    (never "0.001" beside "1e-05").
    """
    for on, axis, set_scale in ((x, ax.xaxis, ax.set_xscale), (y, ax.yaxis, ax.set_yscale)):
        if on:
            set_scale("log", base=base)
            axis.set_major_formatter(FuncFormatter(_log_labels(axis) if base == 10 else lambda v, _p: f"{v:g}"))
            axis.set_minor_locator(NullLocator())


def few_ticks(ax: Axes, n: int = 5) -> None:
    """At most ``n`` major ticks on each linear axis: fewer labels to typeset on each redraw."""
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() == "linear":
            axis.set_major_locator(MaxNLocator(n))
