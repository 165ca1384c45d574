"""A row of controls driving one matplotlib figure, testable without a browser.

A :class:`Panel` is built from a *draw function* ``draw(fig, **values) -> dict`` that
fills a fresh :class:`~matplotlib.figure.Figure` for the current control values and
returns the key numbers behind the plot. Changing any control calls it again; the figure
is rendered to PNG inside an ``ipywidgets.Output``.

Because ``slider.value = x`` runs the observers synchronously, a test can set a value and
assert on ``panel.numbers`` or on the data of ``panel.figure`` straight after. The key
numbers are also what a notebook prints under a panel, so that nbval, which does not
compare images, checks what the plot shows.
"""

from __future__ import annotations

import base64
import io
import time
from collections.abc import Callable, Mapping

import ipywidgets as widgets
import numpy as np
from IPython.display import Image, clear_output, display
from matplotlib.figure import Figure

__all__ = ["DEFAULT_MARGINS", "Panel", "float_slider", "int_slider", "log_slider", "format_numbers"]

DEFAULT_MARGINS = {"left": 0.07, "right": 0.98, "bottom": 0.15, "top": 0.9, "wspace": 0.25}
#: Resolution of the figure stored beside the widget (what a notebook shows before it is run).
STATIC_PNG_DPI = 100


def float_slider(description: str, *, value: float, min: float, max: float, step: float, **kwargs) -> widgets.FloatSlider:
    """A float slider that redraws on release (``continuous_update=False``)."""
    return widgets.FloatSlider(value=value, min=min, max=max, step=step, description=description,
                               continuous_update=False, style={"description_width": "initial"}, **kwargs)


def int_slider(description: str, *, value: int, min: int, max: int, step: int = 1, **kwargs) -> widgets.IntSlider:
    """An integer slider that redraws on release."""
    return widgets.IntSlider(value=value, min=min, max=max, step=step, description=description,
                             continuous_update=False, style={"description_width": "initial"}, **kwargs)


def log_slider(description: str, *, value: float, min_exp: float, max_exp: float, step: float = 0.1,
               **kwargs) -> widgets.FloatLogSlider:
    """A base-10 logarithmic slider from 10**min_exp to 10**max_exp."""
    return widgets.FloatLogSlider(value=value, base=10, min=min_exp, max=max_exp, step=step,
                                  description=description, continuous_update=False,
                                  readout_format=".3g", style={"description_width": "initial"}, **kwargs)


def format_numbers(numbers: Mapping[str, object]) -> str:
    """One ``name: value`` line per key number, floats to 4 significant digits."""
    def fmt(v):
        if isinstance(v, (float, np.floating)):
            return f"{float(v):.4g}"
        if isinstance(v, (list, tuple, np.ndarray)):
            return "[" + ", ".join(fmt(x) for x in np.asarray(v).ravel().tolist()) + "]"
        return str(v)
    return "\n".join(f"{key}: {fmt(value)}" for key, value in numbers.items())


class Panel:
    """Controls plus one figure, redrawn by ``draw(fig, **values)`` whenever a control changes.

    Parameters
    ----------
    draw : callable
        ``draw(fig, **values) -> dict`` fills ``fig`` and returns the key numbers shown.
    controls : mapping of str to ipywidgets.ValueWidget
        Keyword name of each control's value in ``draw``.
    figsize : (float, float)
        Size of the figure in inches.
    render : bool
        Render the PNG into the output widget (turn off to time the computation alone).
    margins : dict, optional
        Keyword arguments of ``Figure.subplots_adjust``. A fixed layout is used instead of
        matplotlib's constrained layout, which alone costs about 0.1 s a redraw.
    dpi : int
        Resolution of the rendered PNG.

    Attributes
    ----------
    figure : matplotlib.figure.Figure
        The last figure drawn.
    numbers : dict
        The key numbers of the last draw.
    redraws : int
        How many times the figure was drawn.
    last_redraw_seconds : float
        Wall time of the last redraw, rendering included.
    """

    def __init__(self, draw: Callable[..., Mapping], controls: Mapping[str, widgets.ValueWidget], *,
                 figsize: tuple[float, float] = (10.0, 3.8), render: bool = True,
                 margins: Mapping[str, float] | None = None, dpi: int = 72):
        self.draw = draw
        self.controls = dict(controls)
        self.figsize = figsize
        self.render = render
        self.dpi = dpi
        self.margins = dict(DEFAULT_MARGINS if margins is None else margins)
        self.output = widgets.Output()
        self.figure: Figure | None = None
        self.numbers: dict = {}
        self.redraws = 0
        self.last_redraw_seconds = float("nan")
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        box = widgets.HBox(list(self.controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        self.widget = widgets.VBox([box, self.output])
        self.redraw()

    def values(self) -> dict:
        """The current value of every control, by keyword."""
        return {name: control.value for name, control in self.controls.items()}

    def redraw(self) -> None:
        """Draw a fresh figure for the current values and show it."""
        start = time.perf_counter()
        fig = Figure(figsize=self.figsize)
        fig.subplots_adjust(**self.margins)
        self.numbers = dict(self.draw(fig, **self.values()))
        self.figure = fig
        if self.render:
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=self.dpi)
            with self.output:
                clear_output(wait=True)
                display(Image(data=buffer.getvalue(), format="png"))
        self.redraws += 1
        self.last_redraw_seconds = time.perf_counter() - start

    def set(self, **values) -> None:
        """Set several controls at once (one redraw per changed control)."""
        for name, value in values.items():
            if name not in self.controls:
                raise ValueError(f"unknown control {name!r}; this panel has {sorted(self.controls)}")
            self.controls[name].value = value

    def summary(self) -> str:
        """The key numbers of the current figure, one per line (what a notebook prints under it)."""
        return format_numbers(self.numbers)

    def _on_change(self, _change) -> None:
        self.redraw()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        """What a notebook shows and stores for the panel: the widget, a PNG of its figure, one line of text.

        JupyterLab draws the widget when the notebook is trusted (its own outputs, or signed). A
        notebook opened before it is run (a fresh clone, a release, Binder) is not, so JupyterLab
        picks the PNG, as GitHub's viewer does; without it both would show ``VBox(children=…)``.
        """
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", dpi=STATIC_PNG_DPI)
        titles = [self.figure.get_suptitle(), *(ax.get_title() for ax in self.figure.axes)]
        title = next((t for t in titles if t), "")
        return {**self.widget._repr_mimebundle_(), "image/png": base64.b64encode(buffer.getvalue()).decode("ascii"),
                "text/plain": f"[panel: {title}]" if title else "[panel]"}
