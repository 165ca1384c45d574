"""A row of controls driving one matplotlib figure, testable without a browser.

A :class:`Panel` is built from a *draw function* ``draw(fig, **values) -> dict`` and its
controls. The panel keeps **one** :class:`~matplotlib.figure.Figure` for its whole life and
passes it to every call: the draw function builds its axes and artists on the first call
(when ``fig.axes`` is empty) and afterwards only updates their data, limits and texts.
Building artists costs little next to rendering them, but a figure kept alive also keeps
matplotlib's text-layout caches warm. The figure is rendered to a PNG at
``RENDER_SCALE`` × the shown resolution (sharp on high-density screens) and shown in an
``ipywidgets.Image`` at its size in screen pixels, which the browser swaps in place.

When the redraw about to start is expected to take longer than :data:`BUSY_SECONDS` (the
draw function says so through ``slow(values, changed)``, or the same control was that slow
last time), a "computing…" line appears above the figure before the work begins.

Because ``slider.value = x`` runs the observers synchronously, a test can set a value and
assert on ``panel.numbers`` or on the data of ``panel.figure`` straight after.

The key numbers are shown **in** the panel, under its figure, and rewritten on every redraw
with the settings they belong to (``At ε = 1, k = 103, …:``), so that what a student reads
beside the plot is always the plot's. A notebook also prints them under the panel
(:meth:`Panel.summary`), for nbval, which does not compare images: that printout is made
once, so it names itself as the numbers at the panel's defaults.
"""

from __future__ import annotations

import base64
import html
import io
import time
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as widgets
import numpy as np
from matplotlib.figure import Figure

from .. import plotting
from .._validation import check_nonnegative, check_positive

__all__ = [
    "BUSY_SECONDS",
    "DEFAULT_MARGINS",
    "PNG_OPTIONS",
    "Panel",
    "delta_slider",
    "format_delta",
    "float_slider",
    "format_numbers",
    "format_settings",
    "int_slider",
    "log_slider",
]

DEFAULT_MARGINS = {"left": 0.07, "right": 0.98, "bottom": 0.15, "top": 0.9, "wspace": 0.25}
#: Resolution of the figure stored beside the widget (what a notebook shows before it is run): half the
#: panel's own, so the stored picture is the last rendered one averaged over 2 × 2 pixels, not drawn again.
STATIC_PNG_DPI = 100
#: A redraw expected to take longer than this shows "computing…" first.
BUSY_SECONDS = 0.25
#: zlib level 1: encoding a 2100-px-wide panel at the default level 6 costs as much as drawing it,
#: for PNGs only about 1.5× smaller (tens of kB, nothing for a local or Binder kernel).
PNG_OPTIONS: dict[str, Any] = {"pil_kwargs": {"compress_level": 1}}
_STYLE = {"description_width": "initial"}
_BUSY_HTML = "<span style='color:#882255'>⏳ computing…</span>"


def float_slider(
    description: str, *, value: float, min: float, max: float, step: float, **kwargs: Any
) -> widgets.FloatSlider:
    """A float slider that redraws on release (``continuous_update=False``)."""
    return widgets.FloatSlider(
        value=value,
        min=min,
        max=max,
        step=step,
        description=description,
        continuous_update=False,
        style=_STYLE,
        **kwargs,
    )


def int_slider(description: str, *, value: int, min: int, max: int, step: int = 1, **kwargs: Any) -> widgets.IntSlider:
    """An integer slider that redraws on release; its readout and steps are whole numbers."""
    return widgets.IntSlider(
        value=value,
        min=min,
        max=max,
        step=step,
        description=description,
        continuous_update=False,
        readout_format="d",
        style=_STYLE,
        **kwargs,
    )


def log_slider(
    description: str, *, value: float, min_exp: float, max_exp: float, step: float = 0.1, **kwargs: Any
) -> widgets.FloatLogSlider:
    """A base-10 logarithmic slider from 10**min_exp to 10**max_exp."""
    kwargs.setdefault("readout_format", ".3g")
    return widgets.FloatLogSlider(
        value=value,
        base=10,
        min=min_exp,
        max=max_exp,
        step=step,
        description=description,
        continuous_update=False,
        style=_STYLE,
        **kwargs,
    )


def format_delta(delta: float) -> str:
    """The one way δ is written in every panel and notebook: Python's ``g`` format (``1e-06``, ``0.001``)."""
    value = check_nonnegative(delta, "delta")
    if value >= 1:
        raise ValueError(f"delta must be a number in [0, 1); got {delta!r}")
    return f"{value:g}"


def delta_slider(
    description: str = "δ", *, value: float = 1e-6, min_exp: int = -10, max_exp: int = -2
) -> widgets.SelectionSlider:
    """A δ slider over the powers of ten 10**min_exp … 10**max_exp, read out by :func:`format_delta`
    (``1e-06``), as the notebooks print δ (``f"{delta:g}"``)."""
    options = [(format_delta(float(f"1e{e}")), float(f"1e{e}")) for e in range(int(min_exp), int(max_exp) + 1)]
    return widgets.SelectionSlider(
        options=options, value=float(value), description=description, continuous_update=False, style=_STYLE
    )


def format_numbers(numbers: Mapping[str, object]) -> str:
    """One ``name: value`` line per key number, floats to 4 significant digits."""

    def fmt(v: object) -> str:
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.4g}"
        if isinstance(v, (list, tuple, np.ndarray)):
            return "[" + ", ".join(fmt(x) for x in np.asarray(v).ravel().tolist()) + "]"
        return str(v)

    return "\n".join(f"{key}: {fmt(value)}" for key, value in numbers.items())


def _control_value(control: widgets.ValueWidget) -> str:
    """A control's value as a student reads it: a menu's or selection slider's label, a check box's on/off, a
    range's ends, a group of boxes' labels, a number in the slider's own readout format."""
    value = control.value
    label = getattr(control, "label", None)
    if isinstance(label, str):
        return label
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        names = getattr(control, "options", None)
        if isinstance(names, Mapping):
            return ", ".join(str(names[key]) for key in value) or "none"
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if number.is_integer() and abs(number) >= 1000:  # n = 10,000 (not 1e+04)
            return f"{number:,.0f}"
        form = getattr(control, "readout_format", ".4g")
        try:
            return format(number, form)
        except ValueError:  # a d3 format Python does not know
            return f"{number:.4g}"
    return str(value)


def format_settings(controls: Mapping[str, widgets.ValueWidget]) -> str:
    """The controls' current settings, ``description = value`` each, comma-separated (``ε = 1, k = 100``)."""
    return ", ".join(
        f"{getattr(control, 'description', '') or name} = {_control_value(control)}"
        for name, control in controls.items()
    )


class Panel:
    """Controls plus one figure, updated by ``draw(fig, **values)`` whenever a control changes.

    Parameters
    ----------
    draw : callable
        ``draw(fig, **values) -> dict``: on the first call (``fig.axes`` empty) builds the axes
        and artists, on later calls updates them; returns the key numbers shown.
    controls : mapping of str to ipywidgets.ValueWidget
        Keyword name of each control's value in ``draw``.
    figsize : (float, float)
        Size of the figure in inches; it is shown at ``plotting.SCREEN_DPI`` pixels per inch.
    render : bool
        Render the PNG into the image widget (turn off to time the computation alone).
    margins : dict, optional
        Keyword arguments of ``Figure.subplots_adjust``. A fixed layout is used instead of
        matplotlib's constrained layout, which alone costs about 0.1 s a redraw.
    dpi : int, optional
        Resolution of the rendered PNG; ``SCREEN_DPI × RENDER_SCALE`` (200) by default.
    slow : callable, optional
        ``slow(values, changed) -> bool``: True when the redraw for these values, after the
        control named ``changed`` moved, will take longer than :data:`BUSY_SECONDS`
        (e.g. a cache miss). The panel then shows "computing…" before drawing.
    clear : bool
        Clear the figure before every draw, for draw functions that build their artists
        every time (simple, but slower).

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        The panel's figure (the same object for the panel's life).
    numbers : dict
        The key numbers of the last draw.
    readout : ipywidgets.HTML
        The key numbers of the last draw and the settings they are at, shown under the figure
        and rewritten on every redraw (CSS class ``dpcourse-panel-numbers``).
    defaults : dict
        The controls' values when the panel was made.
    redraws : int
        How many times the figure was drawn.
    last_redraw_seconds : float
        Wall time of the last redraw, rendering included.
    busy_shown : int
        How many redraws showed the "computing…" state first.
    """

    def __init__(
        self,
        draw: Callable[..., Mapping],
        controls: Mapping[str, widgets.ValueWidget],
        *,
        figsize: tuple[float, float] = (10.5, 3.9),
        render: bool = True,
        margins: Mapping[str, float] | None = None,
        dpi: int | None = None,
        slow: Callable[[dict, str | None], bool] | None = None,
        clear: bool = False,
    ):
        if not callable(draw):
            raise TypeError(f"draw must be a callable draw(fig, **values); got {type(draw).__name__}")
        if not isinstance(controls, Mapping) or not all(isinstance(c, widgets.ValueWidget) for c in controls.values()):
            raise TypeError("controls must be a mapping of keyword names to ipywidgets value widgets")
        width, height = (check_positive(v, "figsize") for v in figsize)
        self.draw = draw
        self.controls = dict(controls)
        self.figsize = (width, height)
        self.render = bool(render)
        self.dpi = int(plotting.SCREEN_DPI * plotting.RENDER_SCALE if dpi is None else check_positive(dpi, "dpi"))
        self.margins = dict(DEFAULT_MARGINS if margins is None else margins)
        self.slow = slow
        self.clear = clear
        self.figure = Figure(figsize=self.figsize, dpi=plotting.SCREEN_DPI)
        self.figure.subplots_adjust(**self.margins)
        self.numbers: dict = {}
        self.redraws = 0
        self.busy_shown = 0
        self.last_redraw_seconds = float("nan")
        self._seconds_by_control: dict[str | None, float] = {}
        self._png = b""
        self._pixels: np.ndarray | None = None  # the last PNG's pixels until displayed; None once the figure changed
        shown_width = int(round(width * plotting.SCREEN_DPI))
        self.image = widgets.Image(
            format="png", layout=widgets.Layout(width=f"{shown_width}px", max_width="100%", height="auto")
        )
        self.image.add_class("dpcourse-panel-image")
        self.status = widgets.HTML(value="", layout=widgets.Layout(height="1.5em", margin="0 0 0 8px"))
        self.status.add_class("dpcourse-panel-status")
        self.readout = widgets.HTML(value="")
        self.readout.add_class("dpcourse-panel-numbers")
        self.defaults = self.values()
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        box = widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        self.widget = widgets.VBox([box, self.status, self.image, self.readout])
        self.widget.add_class("dpcourse-panel")
        self.redraw()

    def values(self) -> dict:
        """The current value of every control, by keyword."""
        return {name: control.value for name, control in self.controls.items()}

    def will_be_slow(self, changed: str | None = None) -> bool:
        """Whether the redraw after ``changed`` moved is expected to take longer than :data:`BUSY_SECONDS`."""
        if self.slow is not None and self.slow(self.values(), changed):
            return True
        return self._seconds_by_control.get(changed, 0.0) > BUSY_SECONDS

    def redraw(self, changed: str | None = None) -> None:
        """Update the figure for the current values and show it."""
        start = time.perf_counter()
        busy = self.render and self.will_be_slow(changed)
        if busy:
            self.busy_shown += 1
            self.status.value = _BUSY_HTML
        fig = self.figure
        self._pixels = None
        if self.clear:
            fig.clear()
            fig.subplots_adjust(**self.margins)
        self.numbers = dict(self.draw(fig, **self.values()))
        self.readout.value = (
            "<pre style='margin: 4px 0 0 8px; font-size: 12px; line-height: 1.35'>"
            f"{html.escape(self.settings_line())}\n{html.escape(format_numbers(self.numbers))}</pre>"
        )
        if self.render:
            self._png = self.png()
            self.image.value = self._png
        if busy:
            self.status.value = ""
        self.redraws += 1
        self.last_redraw_seconds = time.perf_counter() - start
        self._seconds_by_control[changed] = self.last_redraw_seconds

    def png(self) -> bytes:
        """The figure as it is now, as PNG bytes at the panel's resolution (its pixels are kept for the
        PNG stored beside the widget)."""
        self._pixels = plotting.render_rgba(self.figure, dpi=self.dpi)
        return plotting.encode_png(self._pixels)  # the inline figures' writer: unfiltered rows, zlib level 1

    def set(self, **values: Any) -> None:
        """Set several controls at once (one redraw per changed control)."""
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; this panel has {sorted(self.controls)}")
            self.controls[name].value = value

    def settings_line(self) -> str:
        """The line that heads the key numbers: the settings they are at, and whether these are the defaults
        (``At the panel's defaults (ε = 1, k = 100):`` or ``At ε = 1, k = 103:``)."""
        settings = format_settings(self.controls)
        return f"At the panel's defaults ({settings}):" if self.values() == self.defaults else f"At {settings}:"

    def summary(self) -> str:
        """The key numbers of the current figure under the line that names their settings (what a notebook
        prints under the panel, where it stays as the defaults' while the panel follows its controls)."""
        return f"{self.settings_line()}\n{format_numbers(self.numbers)}"

    def _on_change(self, change: Mapping[str, Any]) -> None:
        changed = next((name for name, control in self.controls.items() if control is change["owner"]), None)
        self.redraw(changed)

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict:
        """What a notebook shows and stores for the panel: the widget, a PNG of its figure, one line of text.

        JupyterLab draws the widget when the notebook is trusted (its own outputs, or signed). A
        notebook opened before it is run (a fresh clone, a release, Binder) is not, so JupyterLab
        picks the PNG, as GitHub's viewer does; without it both would show ``VBox(children=…)``.
        """
        buffer = io.BytesIO()
        if self._pixels is not None and self.dpi == 2 * STATIC_PNG_DPI:
            buffer.write(plotting.encode_png(_halve(self._pixels)))  # the widget's picture: no second draw
            self._pixels = None  # shown once, when the panel is made; a later display draws again
        else:
            self.figure.savefig(buffer, format="png", dpi=STATIC_PNG_DPI)
        titles = [self.figure.get_suptitle(), *(ax.get_title() for ax in self.figure.axes)]
        title = next((t for t in titles if t), "")
        return {
            **self.widget._repr_mimebundle_(),
            "image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
            "text/plain": f"[panel: {title}]" if title else "[panel]",
        }


def _halve(pixels: np.ndarray) -> np.ndarray:
    """RGBA pixels at half the resolution, each the rounded mean of a 2 × 2 block (an odd last row or column
    is dropped)."""
    rows, columns = pixels.shape[0] // 2 * 2, pixels.shape[1] // 2 * 2
    total = pixels[0:rows:2, 0:columns:2].astype(np.uint16)  # sums of four bytes fit 16 bits
    for quarter in (pixels[1:rows:2, 0:columns:2], pixels[0:rows:2, 1:columns:2], pixels[1:rows:2, 1:columns:2]):
        total += quarter
    total += 2
    total //= 4
    return total.astype(np.uint8)
