"""A panel is drawn once when made: the PNG stored beside the widget is that picture at half the resolution."""

import base64
import io

import numpy as np
from PIL import Image

from dpcourse.widgets import Panel, float_slider


def _draw(fig, slope):
    ax = fig.axes[0] if fig.axes else fig.add_subplot()
    ax.clear()
    ax.plot([0, 1], [0, slope], color="black", linewidth=4)
    ax.set_ylim(0, 2)
    ax.set_title(f"slope {slope:g}")
    return {"slope": slope}


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")).astype(int)


def _counted_panel():
    panel = Panel(_draw, {"slope": float_slider("s", value=1.0, min=0.0, max=2.0, step=0.5)}, figsize=(4.1, 3.0))
    draws = []
    panel.figure.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    return panel, draws


def test_the_stored_png_is_the_widgets_picture_halved_without_a_second_draw():
    panel, draws = _counted_panel()
    shown = _pixels(panel.image.value)
    assert shown.shape == (600, 820, 4)
    stored = _pixels(base64.b64decode(panel._repr_mimebundle_()["image/png"]))
    assert draws == []
    blocks = shown.reshape(300, 2, 410, 2, 4).sum(axis=(1, 3))
    assert np.array_equal(stored, (blocks + 2) // 4)


def test_a_later_display_draws_the_figure_as_it_is():
    panel, draws = _counted_panel()
    panel._repr_mimebundle_()
    again = _pixels(base64.b64decode(panel._repr_mimebundle_()["image/png"]))
    assert len(draws) == 1 and again.shape == (300, 410, 4)
    panel.set(slope=2.0)  # a redraw keeps its picture for the next display
    assert len(draws) == 2
    panel._repr_mimebundle_()
    assert len(draws) == 2


def test_a_panel_that_does_not_render_draws_its_stored_png():
    panel = Panel(_draw, {"slope": float_slider("s", value=1.0, min=0.0, max=2.0, step=0.5)}, render=False)
    assert panel.image.value == b""
    stored = _pixels(base64.b64decode(panel._repr_mimebundle_()["image/png"]))
    assert stored.shape == (390, 1050, 4) and stored.std() > 10
