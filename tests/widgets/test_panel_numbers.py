"""The key numbers a student reads beside a panel follow the panel (issue 39, item 3).

Each panel shows its key numbers inside itself (``panel.readout``, under the figure), headed by the settings they
are at and rewritten on every redraw; what a notebook prints under the panel (``panel.summary()``) names itself as
the numbers at the panel's defaults. Moving a slider programmatically (as the browser does, through the same
observers) must change the numbers shown, and the new numbers must be the library's at the new setting.
"""

import html
import re

import numpy as np
import pytest
from ipywidgets import FloatSlider, IntSlider

from dpcourse import mechanisms, pmw
from dpcourse.widgets import (
    Panel,
    above_threshold_panel,
    format_numbers,
    format_settings,
    int_slider,
    laplace_tail_panel,
    pmw_panel,
    reconstruction_panel,
    release_comparison_panel,
    tree_panel,
    variant_loss_panel,
)
from dpcourse.widgets.above_threshold import sparse_delta_panel

BUILDERS = {
    "01 laplace_tail_panel": lambda: laplace_tail_panel(trials=500, max_k=200, rng=1, render=False),
    "02 release_comparison_panel": lambda: release_comparison_panel(render=False),
    "02 reconstruction_panel": lambda: reconstruction_panel(render=False),
    "03 tree_panel": lambda: tree_panel(render=False),
    "04 above_threshold_panel": lambda: above_threshold_panel(render=False),
    "04 sparse_delta_panel": lambda: sparse_delta_panel(render=False),
    "05 variant_loss_panel": lambda: variant_loss_panel(render=False),
    "06 pmw_panel": lambda: pmw_panel(render=False),
}


def shown(panel: Panel) -> str:
    """The text the panel shows beside its figure, as the browser renders it."""
    return html.unescape(re.sub(r"<[^>]+>", "", panel.readout.value))


def first_slider(panel: Panel) -> tuple[str, object]:
    """The first slider's name and a value one step away from its default (what the browser suite presses)."""
    name, slider = next((n, c) for n, c in panel.controls.items() if hasattr(c, "min") and hasattr(c, "max"))
    if hasattr(slider, "options"):  # a selection slider: the next option
        values = [value for _, value in slider.options] if isinstance(slider.options[0], tuple) else slider.options
        index = values.index(slider.value)
        return name, values[index + 1 if index + 1 < len(values) else index - 1]
    step = slider.step
    if hasattr(slider, "base"):  # a log slider: its steps are in the exponent
        exponent = np.log10(slider.value) + step
        return name, float(slider.base ** (exponent if exponent <= slider.max else exponent - 2 * step))
    return name, slider.value + step if slider.value + step <= slider.max else slider.value - step


@pytest.mark.parametrize("which", sorted(BUILDERS))
def test_the_numbers_shown_in_the_panel_follow_its_first_slider(which):
    panel = BUILDERS[which]()
    at_defaults = shown(panel)
    assert at_defaults.startswith(f"At the panel's defaults ({format_settings(panel.controls)}):")
    assert at_defaults.endswith(format_numbers(panel.numbers)) and panel.summary() == at_defaults
    before = dict(panel.numbers)
    name, value = first_slider(panel)
    panel.controls[name].value = value
    moved = shown(panel)
    assert moved != at_defaults and panel.numbers != before
    assert moved == f"At {format_settings(panel.controls)}:\n{format_numbers(panel.numbers)}"
    assert "defaults" not in moved
    # back at the defaults, the panel says so again
    panel.set(**panel.defaults)
    assert shown(panel) == at_defaults


def test_01_the_level_shown_is_theorem_3_8s_at_the_sliders():
    # the case: the notebook printed level 7.601 beside a panel at k = 103, Δf = 2
    panel = BUILDERS["01 laplace_tail_panel"]()
    assert "theorem 3.8 level: 7.601" in shown(panel)
    panel.set(k=103, sensitivity=2.0)
    level = mechanisms.laplace_max_error_bound(k=103, beta=0.05, sensitivity=2.0, epsilon=1.0)
    assert shown(panel).startswith("At ε = 1, k = 103, β = 0.05, Δf = 2:")
    assert f"theorem 3.8 level: {level:.4g}" in shown(panel) and "7.601" not in shown(panel)


def test_04_the_crossover_shown_is_8_ln_one_over_delta():
    panel = BUILDERS["04 sparse_delta_panel"]()
    panel.set(delta=1e-3)
    assert shown(panel).startswith("At δ = 0.001, β = 0.05:")
    assert f"crossover 8 ln(1/δ): {8 * np.log(1e3):.4g}" in shown(panel)


def test_06_the_least_alpha_and_level_shown_are_theorem_4_3s():
    panel = BUILDERS["06 pmw_panel"]()
    panel.set(epsilon=2.0, alpha=0.2)
    values = panel.values()
    least = pmw.pmw_notes_alpha(n=values["n"], epsilon=2.0, domain_size=2 ** values["bits"], num_queries=200, beta=0.05)
    text = shown(panel)
    assert text.startswith("At ε = 2, n = 100,000,000, α = 0.20, log₂|X| = 10:")
    assert f"Theorem 4.3's least alpha: {least:.4g}" in text
    assert f"guaranteed error (11 alpha/8): {11 * 0.2 / 8:.4g}" in text


def test_settings_read_as_the_controls_show_them():
    panel = Panel(
        lambda fig, *, a, m: {"a times m": a * m},
        {
            "a": FloatSlider(value=0.5, min=0, max=1, step=0.25, description="a"),
            "m": int_slider("m", value=3, min=1, max=9),
        },
        render=False,
    )
    assert panel.summary() == "At the panel's defaults (a = 0.50, m = 3):\na times m: 1.5"
    panel.set(m=4)
    assert panel.summary() == "At a = 0.50, m = 4:\na times m: 2" and shown(panel) == panel.summary()
    # a control without a description is named by its keyword; text is escaped in the panel's HTML
    other = Panel(lambda fig, *, k: {"<b>k</b>": k}, {"k": IntSlider(value=2, min=1, max=3)}, render=False)
    assert other.summary() == "At the panel's defaults (k = 2):\n<b>k</b>: 2" and "&lt;b&gt;" in other.readout.value
