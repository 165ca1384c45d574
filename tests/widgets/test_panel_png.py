"""A panel's PNGs come from the same writer as the inline figures (:func:`dpcourse.plotting.encode_png`, issue 41)."""

import base64

from dpcourse import plotting
from dpcourse.widgets import Panel, float_slider


def _draw(fig, slope):
    ax = fig.axes[0] if fig.axes else fig.add_subplot()
    ax.clear()
    ax.plot([0, 1], [0, slope], color="black", linewidth=4)
    return {"slope": slope}


def test_the_redraw_and_the_stored_picture_are_written_by_the_inline_figures_png_writer():
    panel = Panel(_draw, {"slope": float_slider("s", value=1.0, min=0.0, max=2.0, step=0.5)}, figsize=(4.1, 3.0))
    pixels = panel._pixels
    assert panel.image.value == plotting.encode_png(pixels)
    stored = base64.b64decode(panel._repr_mimebundle_()["image/png"])
    halved = plotting.encode_png(
        (
            (pixels[0::2, 0::2].astype(int) + pixels[1::2, 0::2] + pixels[0::2, 1::2] + pixels[1::2, 1::2] + 2) // 4
        ).astype("uint8")
    )
    assert stored == halved
    panel.controls["slope"].value = 2.0  # a redraw
    assert panel.image.value == plotting.encode_png(plotting.render_rgba(panel.figure, dpi=panel.dpi))
