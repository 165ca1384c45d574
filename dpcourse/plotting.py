"""One look for every figure: a colour per method, theory as lines, measurements as points.

The same method has the same colour in every notebook, so a student can tell Laplace from
randomized response at a glance anywhere in the workbook. The colours are Paul Tol's *muted*
scheme, designed to stay distinguishable under the common forms of colour blindness, plus
black and grey for exact values and bounds.

Importing this module applies :data:`STYLE` to matplotlib's ``rcParams`` once (every notebook
imports it through ``dpcourse.plotting`` or ``dpcourse.widgets``): text of at least 9 pt,
shown at 100 px per inch, and in a notebook PNGs rendered at twice that resolution
("retina"), so figures stay sharp on high-density screens. :func:`apply_style` does it again,
e.g. after ``plt.rcdefaults()``. In a kernel it also shows each figure after a single draw (IPython's
printer draws it twice) and, after the importing cell, keeps the imported libraries out of the garbage
collector's walks (:func:`gc.freeze`).
"""

from __future__ import annotations

import base64
import gc
import io
import struct
import zlib
from collections.abc import Callable
from typing import Any, BinaryIO, cast

import matplotlib as mpl
import numpy as np
from cycler import cycler
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.text import Text
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullLocator
from matplotlib.transforms import Bbox
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


#: Inches of canvas drawn around an inline figure, for what sticks out of it (a legend or an axis label
#: placed outside the figure), before the picture is cropped to what is drawn (:func:`_inline_png`).
INLINE_MARGIN = 0.75


def render_rgba(fig: Figure, *, dpi: float, margin: float = 0.0) -> np.ndarray:
    """``fig`` drawn once at ``dpi`` pixels per inch, with ``margin`` inches of canvas added on every side.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure, drawn in its own face and edge colours; its size and layout are left as they are.
    dpi : float
        Pixels per inch, > 0.
    margin : float, optional
        Inches of canvas added on each side, ≥ 0; 0 by default (the figure's own area).

    Returns
    -------
    numpy.ndarray
        Shape (rows, columns, 4), uint8: the RGBA pixels, top row first, drawn on a canvas of their own (drawing
        the figure again leaves them as they are).

    Raises
    ------
    ValueError
        If ``dpi`` is not a finite number > 0, or ``margin`` is negative or not finite.
    TypeError
        If ``fig`` is not a matplotlib Figure, or ``dpi`` or ``margin`` is not a real number.
    """
    from ._validation import check_nonnegative, check_positive

    if not isinstance(fig, Figure):
        raise TypeError(f"fig must be a matplotlib Figure; got {type(fig).__name__}")
    return _drawn_rgba(fig, check_positive(dpi, "dpi"), check_nonnegative(margin, "margin"))[0]


class _Kept(io.RawIOBase):
    """A write-only binary file that keeps what is written to it: the canvas's pixels, read without a copy."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[Any] = []

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.parts.append(data)
        return memoryview(data).nbytes


def _drawn_rgba(fig: Figure, dpi: float, margin: float, *, measure: bool = False) -> tuple[np.ndarray, Bbox | None]:
    """:func:`render_rgba` without its checks (the pixels are a view of a canvas made for this draw alone); with
    ``measure``, also the union of the window extents of what can be placed anywhere (:func:`_placed_freely`),
    in pixels from the canvas's lower left corner, taken with the draw's own renderer and layout."""
    width, height = fig.get_size_inches()
    area = Bbox([[-margin, -margin], [width + margin, height + margin]])
    kept, placed = _Kept(), []
    listening = measure and fig.canvas.mpl_connect(
        "draw_event", lambda event: placed.append(_placed_freely(fig, event.renderer))
    )
    try:
        fig.savefig(  # on a canvas of its own (backend="agg"): the pixels are not kept alive by the figure's canvas
            cast(BinaryIO, kept),
            format="rgba",
            backend="agg",
            dpi=dpi,
            bbox_inches=area if margin else None,
            facecolor=fig.get_facecolor(),
            edgecolor=fig.get_edgecolor(),
        )
    finally:
        if listening:
            fig.canvas.mpl_disconnect(listening)
    data = kept.parts[0] if len(kept.parts) == 1 else b"".join(bytes(part) for part in kept.parts)
    # the canvas's size in pixels, as matplotlib rounds it (down, unless within 1e-8 of the integer above)
    rows, columns = (int(inches * dpi + 1e-8) for inches in (area.height, area.width))
    return np.frombuffer(data, dtype=np.uint8).reshape(rows, columns, 4), (placed[0] if placed else None)


def _placed_freely(fig: Figure, renderer: Any) -> Bbox | None:
    """The union of the window extents of every axes, legend and text the code placed (``fig.legends``,
    ``fig.texts``, each axes' box, legend and ``texts``): what may lie anywhere, even wholly off the canvas.
    Tick labels, axis labels and titles sit beside their axes and are found in the pixels."""
    artists: list[Any] = [*fig.legends, *fig.texts]
    for ax in fig.axes:
        artists += [ax.patch, *ax.texts]
        if ax.get_legend() is not None:
            artists.append(ax.get_legend())
    boxes = [
        artist.get_window_extent(renderer)
        for artist in artists
        if artist.get_visible() and not (isinstance(artist, Text) and not artist.get_text())
    ]
    return Bbox.union(boxes) if boxes else None


def _ink_rows_and_columns(pixels: np.ndarray) -> tuple[int, int, int, int] | None:
    """``(top, bottom, left, right)``, ends exclusive, of the pixels that differ from the top left one (the
    background, as the canvas's margin is); None when every pixel is the background."""
    colours = pixels.view(np.uint32)[..., 0]  # one comparison per RGBA pixel
    ink = colours != colours[0, 0]
    rows = np.flatnonzero(ink.any(axis=1))
    if rows.size == 0:
        return None
    columns = np.flatnonzero(ink[rows[0] : rows[-1] + 1].any(axis=0))
    return int(rows[0]), int(rows[-1]) + 1, int(columns[0]), int(columns[-1]) + 1


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def encode_png(pixels: np.ndarray, *, level: int = 1) -> bytes:
    """RGBA pixels as a PNG: rows unfiltered, deflated at zlib ``level``.

    A plot is mostly runs of one colour, which deflate compresses well without PNG's row filters; skipping
    them (Pillow's adaptive filtering tries five on every row) encodes the figures of notebooks 04 and 06
    4× faster than Pillow at the same zlib level, in files 5% larger in all (40% for one of mostly shading).

    Parameters
    ----------
    pixels : numpy.ndarray
        Shape (rows, columns, 4), uint8, at least one pixel: RGBA, top row first (as :func:`render_rgba`).
    level : int, optional
        zlib's compression level, 0 (none) to 9 (smallest); 1 (fastest) by default.

    Returns
    -------
    bytes
        The PNG file: 8-bit RGBA, not interlaced.

    Raises
    ------
    ValueError
        If ``pixels`` does not have shape (rows, columns, 4) with rows, columns ≥ 1, or ``level`` is not in [0, 9].
    TypeError
        If ``pixels`` is not a uint8 numpy array, or ``level`` is not an integer.
    """
    from ._validation import check_integer

    if not isinstance(pixels, np.ndarray) or pixels.dtype != np.uint8:
        raise TypeError(f"pixels must be a uint8 numpy array; got {getattr(pixels, 'dtype', type(pixels).__name__)}")
    if pixels.ndim != 3 or pixels.shape[2] != 4 or 0 in pixels.shape:
        raise ValueError(f"pixels must have shape (rows, columns, 4) with rows, columns >= 1; got {pixels.shape}")
    level = check_integer(level, "level", minimum=0, maximum=9)
    rows, columns, _ = pixels.shape
    deflate = zlib.compressobj(level)
    compressed = []
    block = np.zeros((min(rows, 64), 1 + 4 * columns), dtype=np.uint8)  # 64 scanlines: filter type 0, then pixels
    for start in range(0, rows, len(block)):
        part = pixels[start : start + len(block)]
        block[: len(part), 1:] = part.reshape(len(part), 4 * columns)
        compressed.append(deflate.compress(block[: len(part)].data))
    compressed.append(deflate.flush())
    header = struct.pack(">IIBBBBB", columns, rows, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, no filter set, no interlace
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", b"".join(compressed)),
            _png_chunk(b"IEND", b""),
        )
    )


def _inline_png(fig: Figure) -> tuple[str, dict[str, int]] | None:
    """What a notebook shows for ``fig``: a PNG at ``RENDER_SCALE`` × the shown resolution, cropped to what is
    drawn and padded by ``savefig.pad_inches``, as IPython's printer (``bbox_inches="tight"``) crops it, after
    one draw instead of two.

    IPython's printer draws the figure once to measure what sticks out of it (every artist's extent, the
    axes' ticks laid out again), then again on a canvas of that size. Here it is drawn once, on a canvas
    :data:`INLINE_MARGIN` inches larger on every side, and cropped to the pixels that differ from the
    background, together with the boxes of what code can place anywhere (:func:`_placed_freely`), padded
    as IPython pads. The picture keeps every pixel IPython's shows; it is smaller by the blank part of text
    boxes (a few pixels below an x label). When something reaches the canvas's edge, or a placed artist
    lies beyond it, IPython's printer draws the figure.
    """
    if not fig.axes and not fig.lines:  # an empty figure shows nothing, as with IPython's printer
        return None
    dpi = fig.dpi * RENDER_SCALE
    pixels, placed = _drawn_rgba(fig, dpi, INLINE_MARGIN, measure=True)
    rows, columns = pixels.shape[:2]
    ink = _ink_rows_and_columns(pixels)
    if ink is not None:
        top, bottom, left, right = ink
        if placed is not None:  # window extents run from the canvas's lower left corner, pixel rows from its top
            top, bottom = min(top, int(np.floor(rows - placed.y1))), max(bottom, int(np.ceil(rows - placed.y0)))
            left, right = min(left, int(np.floor(placed.x0))), max(right, int(np.ceil(placed.x1)))
        pad = int(round(mpl.rcParams["savefig.pad_inches"] * dpi))
        top, left, bottom, right = top - pad, left - pad, bottom + pad, right + pad
        if top >= 0 and left >= 0 and bottom <= rows and right <= columns:
            crop = pixels[top:bottom, left:right]
            size = {"width": (right - left) // RENDER_SCALE, "height": (bottom - top) // RENDER_SCALE}
            return base64.b64encode(encode_png(crop)).decode("ascii"), size
    from IPython.core.pylabtools import retina_figure

    return retina_figure(fig, base64=True, pil_kwargs={"compress_level": 1})


def _kernel_shell() -> Any:
    """The IPython shell when running in a Jupyter kernel, else None."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency of ipywidgets
        return None
    shell = get_ipython()
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


def apply_style() -> None:
    """Set :data:`STYLE` in matplotlib's ``rcParams`` and, inside IPython, render inline figures at 2×.

    In a kernel, figures are shown as PNGs at ``RENDER_SCALE`` × the shown resolution, each drawn once
    and cropped to what was drawn (IPython's own printer draws each figure twice).
    """
    mpl.rcParams.update(STYLE)
    shell = _kernel_shell()
    if shell is not None:
        from matplotlib_inline.backend_inline import set_matplotlib_formats

        set_matplotlib_formats("retina")  # PNG only, as IPython's "retina" setting; then our printer for it
        shell.display_formatter.formatters["image/png"].for_type(Figure, _inline_png)


def _freeze_imports_after_this_cell() -> None:
    """In a kernel, once the cell importing this module has run, hide every object then alive from the garbage
    collector (:func:`gc.freeze`).

    Those are the libraries a notebook imports (numpy, matplotlib, scipy, IPython: 130,000-150,000 objects) and
    they live as long as the kernel; without this, every full collection walks all of them again, and so does
    the kernel's exit, which "Restart and run all" waits for. Measured on notebook 06: the collector's time
    over the cells falls from 0.3 to 0.2 s, and the kernel exits in 0.2 s instead of 0.6 s. Cycles among
    objects alive at that moment are never collected; after imports they are a few dozen objects.
    """
    shell = _kernel_shell()
    if shell is None:
        return

    def freeze(result: object) -> None:
        shell.events.unregister("post_run_cell", freeze)
        gc.freeze()

    shell.events.register("post_run_cell", freeze)


def _on_import() -> None:
    """Everything importing this module does, in one place: :func:`apply_style` (``rcParams`` from :data:`STYLE`;
    in a kernel, the inline PNG printer at 2×) and, in a kernel only, :func:`_freeze_imports_after_this_cell`.
    Outside a kernel (a script, the grader, a test) it changes ``rcParams`` and nothing else."""
    apply_style()
    _freeze_imports_after_this_cell()


_on_import()


def color_for(method: str) -> str:
    """The colour of ``method`` (a key of :data:`METHOD_COLORS`); grey for anything else.

    Parameters
    ----------
    method : str
        A method's name, e.g. ``"laplace"`` or ``"bound"``.

    Returns
    -------
    str
        The colour as ``"#RRGGBB"``; ``"#7f7f7f"`` for a name not in :data:`METHOD_COLORS`.

    Raises
    ------
    TypeError
        If ``method`` is not a string.
    """
    if not isinstance(method, str):
        raise TypeError(f"method must be a string; got {type(method).__name__} {method!r}")
    return METHOD_COLORS.get(method, "#7f7f7f")


def new_figure(ncols: int = 1, *, width: float = 5.2, height: float = 3.6) -> tuple[Figure, list]:
    """A figure with ``ncols`` axes side by side, not registered with pyplot.

    Figures made this way are never left open in pyplot's registry, so widgets can redraw
    thousands of times without the "more than 20 figures" warning.

    Parameters
    ----------
    ncols : int, optional
        The number of axes, side by side, from 1 to 8; 1 by default.
    width : float, optional
        The width of each axes' share of the figure, in inches, > 0.
    height : float, optional
        The figure's height in inches, > 0.

    Returns
    -------
    fig : matplotlib.figure.Figure
        The figure, ``width × ncols`` by ``height`` inches, with constrained layout.
    axes : list of matplotlib.axes.Axes
        Its ``ncols`` axes, left to right.

    Raises
    ------
    ValueError
        If ``ncols`` is not in [1, 8], or ``width`` or ``height`` is not a finite number > 0.
    TypeError
        If ``ncols`` is not an integer, or ``width`` or ``height`` is not a real number.
    """
    from ._validation import check_integer, check_positive

    ncols = check_integer(ncols, "ncols", minimum=1, maximum=8)
    width = check_positive(width, "width")
    height = check_positive(height, "height")
    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def plot_theory(ax: Axes, x: ArrayLike, y: ArrayLike, *, method: str = "bound", label: str, style: str = "-") -> Line2D:
    """A theory line in the method's colour.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw on.
    x : array_like
        The line's x values.
    y : array_like
        The line's y values, one per x.
    method : str, optional
        The method whose colour the line takes (:func:`color_for`); ``"bound"`` (grey) by default.
    label : str
        The legend entry.
    style : str, optional
        A matplotlib format string for the line, ``"-"`` (solid) by default, e.g. ``"--"``.

    Returns
    -------
    matplotlib.lines.Line2D
        The line.

    Raises
    ------
    TypeError
        If ``method`` is not a string.
    """
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

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to draw on.
    x : array_like
        The points' x values, one per measurement.
    mean : array_like, shape (m,)
        The measured values (the points).
    low : array_like, shape (m,)
        The lower ends of their confidence intervals.
    high : array_like, shape (m,)
        The upper ends of their confidence intervals.
    method : str
        The method whose colour the points take (:func:`color_for`).
    label : str
        The legend entry.
    capsize : float, optional
        The length of the error bars' caps in points; 2.5 by default.

    Returns
    -------
    matplotlib.container.ErrorbarContainer
        The points and their error bars. Where an interval does not contain its point, the bar on the
        side it misses has length 0.

    Raises
    ------
    ValueError
        If ``mean`` is empty or not one-dimensional, or ``low`` or ``high`` does not have its shape.
    TypeError
        If ``mean``, ``low`` or ``high`` is not numeric, or ``method`` is not a string.
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

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to change.
    x : bool, optional
        Whether to make the x axis logarithmic; True by default.
    y : bool, optional
        Whether to make the y axis logarithmic; True by default.
    base : float, optional
        The logarithm's base, 10 by default; with another base the tick labels are the values, printed
        with ``:g``.
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
