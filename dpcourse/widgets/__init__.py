"""ipywidgets panels: sliders driving a matplotlib figure, one builder module per notebook topic.

:class:`Panel` is the shared machinery; each topic module adds functions that build the
panel of one notebook (``laplace_tail_panel`` for notebook 01, …).
"""

from ._panel import Panel, float_slider, format_numbers, int_slider, log_slider
from .above_threshold import above_threshold_panel
from .laplace import laplace_tail_panel
from .pmw import pmw_panel
from .release import reconstruction_panel, release_comparison_panel
from .svt_variants import variant_loss_panel
from .trees import tree_panel

__all__ = [
    "Panel",
    "above_threshold_panel",
    "float_slider",
    "format_numbers",
    "int_slider",
    "laplace_tail_panel",
    "log_slider",
    "pmw_panel",
    "reconstruction_panel",
    "release_comparison_panel",
    "tree_panel",
    "variant_loss_panel",
]
