"""plotting.fast_log_axes: plain tick labels, one style per axis (never "0.001" beside "1e-05")."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from dpcourse.plotting import fast_log_axes


def _labels(low: float, high: float, base: float = 10) -> list[str]:
    figure = Figure()
    FigureCanvasAgg(figure)
    ax = figure.add_subplot()
    ax.plot([1, 2], [low, high])
    fast_log_axes(ax, x=False, base=base)
    ax.set_ylim(low, high)
    figure.canvas.draw()
    return [t.get_text() for t in ax.get_yticklabels() if t.get_text() and low <= t.get_position()[1] <= high]


def test_decimals_when_every_tick_reads_well_as_one():
    assert _labels(0.01, 1000) == ["0.01", "0.1", "1", "10", "100", "1000"]


def test_powers_of_ten_for_every_tick_when_one_would_not():
    labels = _labels(1e-7, 0.1)
    assert labels == ["10⁻⁷", "10⁻⁶", "10⁻⁵", "10⁻⁴", "10⁻³", "10⁻²", "10⁻¹"]
    assert not any("e-" in label for label in labels)


def test_powers_of_two_stay_plain():
    assert _labels(16, 4096, base=2)[:3] == ["16", "32", "64"]
