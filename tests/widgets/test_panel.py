"""How a panel is displayed and stored: the widget, a PNG of its figure and one line of text (issue 12).

A notebook opened before it is run is untrusted, so JupyterLab shows the richest *safe* output
(the PNG), and GitHub's viewer shows the PNG as well; the widget view is used once the notebook
is trusted or run.
"""

import base64
import io
import re

import numpy as np
from IPython.core.formatters import DisplayFormatter
from PIL import Image

from dpcourse.widgets import Panel, float_slider

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _draw(fig, slope):
    ax = fig.axes[0] if fig.axes else fig.add_subplot()
    ax.clear()
    ax.plot([0, 1], [0, slope], color="black", linewidth=4)
    ax.set_ylim(0, 2)
    ax.set_title(f"slope {slope:g}")
    return {"slope": slope}


def _panel():
    return Panel(_draw, {"slope": float_slider("s", value=1.0, min=0.0, max=2.0, step=0.5)}, figsize=(4.0, 3.0))


def _png(bundle):
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(bundle["image/png"]))).convert("L"), dtype=float)


def test_display_stores_the_widget_a_png_of_the_figure_and_a_short_text():
    panel = _panel()
    data, _ = DisplayFormatter().format(panel)  # what IPython sends to the notebook
    assert data[WIDGET_VIEW]["model_id"] == panel.widget.model_id
    assert data["text/plain"] == "[panel: slope 1]"
    pixels = _png(data)
    assert pixels.shape == (300, 400)  # 4 × 3 inches at 100 dpi
    assert pixels.std() > 10  # not blank


def test_the_png_is_the_current_figure():
    panel = _panel()
    before = _png(panel._repr_mimebundle_())
    panel.set(slope=2.0)
    after = panel._repr_mimebundle_()
    assert after["text/plain"] == "[panel: slope 2]"
    assert np.abs(_png(after) - before).mean() > 0.1


def test_every_stored_panel_carries_its_figure():
    # a notebook stored from older code, or a cell ending with `panel.widget`, would show only text
    from pathlib import Path

    import nbformat

    stored = 0
    for path in sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                progress_bar = re.search(r"\d+%\|.*\| \d+/\d+", str(data.get("text/plain", "")))  # tqdm.auto
                if WIDGET_VIEW in data and not progress_bar:
                    assert "image/png" in data and data["text/plain"].startswith("[panel"), (path.name, cell.id)
                    stored += 1
    assert stored >= 6
