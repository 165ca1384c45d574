"""plotting's one-draw rendering: render_rgba, encode_png, and the PNG a notebook shows for a figure (issue 27)."""

from __future__ import annotations

import base64
import gc
import io

import numpy as np
import pytest
from IPython.core.pylabtools import retina_figure
from matplotlib.figure import Figure
from PIL import Image

from dpcourse import plotting
from dpcourse.plotting import encode_png, render_rgba


def _decoded(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA"))


@pytest.mark.parametrize("shape", [(1, 1), (63, 5), (64, 3), (65, 7), (200, 130)])
def test_encode_png_round_trips_every_pixel(shape):
    pixels = np.random.default_rng(0).integers(0, 256, size=(*shape, 4), dtype=np.uint8)
    for layout in (pixels, np.asfortranarray(pixels), pixels[:, ::-1]):  # any memory layout
        assert np.array_equal(_decoded(encode_png(layout)), layout)
    assert np.array_equal(_decoded(encode_png(pixels, level=9)), pixels)


def test_encode_png_refuses_what_is_not_rgba_bytes():
    with pytest.raises(TypeError, match="pixels"):
        encode_png(np.zeros((2, 2, 4)))
    with pytest.raises(ValueError, match="pixels"):
        encode_png(np.zeros((2, 2, 3), dtype=np.uint8))
    with pytest.raises(ValueError, match="pixels"):
        encode_png(np.zeros((0, 2, 4), dtype=np.uint8))
    with pytest.raises(ValueError, match="level"):
        encode_png(np.zeros((2, 2, 4), dtype=np.uint8), level=10)


def _figure(width: float = 4.0, height: float = 3.0) -> Figure:
    fig = Figure(figsize=(width, height), dpi=plotting.SCREEN_DPI)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="black")
    ax.set(xlabel="a label below the axes", ylabel="a label", title="a title")
    return fig


def test_render_rgba_has_the_figure_size_plus_the_margin_and_is_a_copy():
    fig = _figure(3.3, 2.9)
    pixels = render_rgba(fig, dpi=200)
    assert pixels.shape == (580, 660, 4) and pixels.dtype == np.uint8
    kept = pixels.copy()
    assert render_rgba(fig, dpi=200, margin=0.5).shape == (780, 860, 4)
    assert np.array_equal(pixels, kept)  # drawing again leaves an earlier picture alone
    with pytest.raises(ValueError, match="dpi"):
        render_rgba(fig, dpi=0)
    with pytest.raises(ValueError, match="margin"):
        render_rgba(fig, dpi=100, margin=-1)
    with pytest.raises(TypeError, match="fig"):
        render_rgba("a figure", dpi=100)


def _shown(fig: Figure) -> tuple[np.ndarray, dict]:
    data, size = plotting._inline_png(fig)
    return _decoded(base64.b64decode(data)), size


def _dark_box(pixels: np.ndarray) -> tuple[int, int, int, int]:
    """(top, bottom, left, right) margins, in pixels, around what is darker than light grey."""
    dark = (pixels[:, :, :3] < 200).any(axis=2)
    rows, columns = np.flatnonzero(dark.any(axis=1)), np.flatnonzero(dark.any(axis=0))
    return rows[0], len(dark) - 1 - rows[-1], columns[0], dark.shape[1] - 1 - columns[-1]


def test_a_figure_is_shown_as_ipython_shows_it_after_one_draw():
    # the default layout cuts the x label off a 3-inch figure; IPython's "tight" picture keeps it, and so must ours
    fig = _figure()
    draws = []
    fig.canvas.mpl_connect("draw_event", lambda event: draws.append(event))
    pixels, size = _shown(fig)
    assert len(draws) == 1
    tight_data, tight_size = retina_figure(fig, base64=True)
    tight = _decoded(base64.b64decode(tight_data))
    # the same drawing: what is dark spans as many rows and columns, give or take one (a shift below a pixel)
    ours, theirs = _dark_box(pixels), _dark_box(tight)
    assert abs((pixels.shape[0] - ours[0] - ours[1]) - (tight.shape[0] - theirs[0] - theirs[1])) <= 1
    assert abs((pixels.shape[1] - ours[2] - ours[3]) - (tight.shape[1] - theirs[2] - theirs[3])) <= 1
    # padded by savefig.pad_inches on every side (IPython pads text boxes, whose blank part it keeps): the
    # shown size differs from IPython's by at most 0.05 inch each way
    pad = round(plotting.mpl.rcParams["savefig.pad_inches"] * plotting.SCREEN_DPI * plotting.RENDER_SCALE)
    assert all(abs(margin - pad) <= 1 for margin in ours)
    assert abs(size["width"] - tight_size["width"]) <= 5 and abs(size["height"] - tight_size["height"]) <= 5
    assert size == {"width": pixels.shape[1] // 2, "height": pixels.shape[0] // 2}


def test_what_lies_beyond_the_margin_is_drawn_by_ipythons_printer():
    fig = _figure()
    fig.text(1.5, 0.5, "far to the right of the figure")  # 2 inches past its right edge, wholly off the canvas
    pixels, size = _shown(fig)
    tight_data, tight_size = retina_figure(fig, base64=True)
    assert size == tight_size and size["width"] > 4 * plotting.SCREEN_DPI + 100
    assert (pixels[:, -60:, :3] < 128).any()  # the far text is in the picture


@pytest.mark.parametrize("where", ["legend", "axes text", "figure legend"])
def test_a_placed_artist_wholly_off_the_canvas_is_in_the_picture(where):
    fig = _figure()
    ax = fig.axes[0]
    if where == "legend":
        ax.legend(["the line"], loc="center left", bbox_to_anchor=(1.6, 0.5))
    elif where == "axes text":
        ax.text(-1.2, 0.5, "far left", transform=ax.transAxes)
    else:
        fig.legend(["the line"], loc="lower center", bbox_to_anchor=(0.5, 1.4))
    _, size = _shown(fig)
    _, tight_size = retina_figure(fig, base64=True)
    assert size == tight_size


def test_a_drawing_that_reaches_the_canvas_edge_is_drawn_by_ipythons_printer():
    fig = _figure()
    fig.axes[0].set_ylabel("a label\n" * 40)  # 40 lines turned on their side: across the canvas's left edge
    _, size = _shown(fig)
    _, tight_size = retina_figure(fig, base64=True)
    assert size == tight_size and size["width"] > (4 + 2 * plotting.INLINE_MARGIN) * plotting.SCREEN_DPI


def test_an_empty_figure_shows_nothing():
    assert plotting._inline_png(Figure()) is None


def test_the_kernel_freezes_the_imported_objects_once_after_the_importing_cell(monkeypatch):
    class Events:
        def __init__(self):
            self.callbacks = []

        def register(self, event, function):
            assert event == "post_run_cell"
            self.callbacks.append(function)

        def unregister(self, event, function):
            self.callbacks.remove(function)

    class Shell:
        events = Events()

    monkeypatch.setattr(plotting, "_kernel_shell", lambda: Shell)
    plotting._freeze_imports_after_this_cell()
    assert len(Shell.events.callbacks) == 1 and gc.get_freeze_count() == 0
    try:
        Shell.events.callbacks[0](None)  # the importing cell has run
        assert gc.get_freeze_count() > 0 and Shell.events.callbacks == []
    finally:
        gc.unfreeze()


def test_outside_a_kernel_nothing_is_frozen():
    plotting._freeze_imports_after_this_cell()
    assert gc.get_freeze_count() == 0
