"""ipywidgets panels: sliders driving a matplotlib figure, one builder module per notebook topic.

:class:`Panel` is the shared machinery; each topic module adds functions that build the
panel of one notebook (``laplace_tail_panel`` for notebook 01, …). The topic modules are
imported on first use (``from dpcourse.widgets import tree_panel`` loads only ``trees``), so
importing the package does not pay for the modules a notebook does not need (the auditor's
scipy.integrate and scipy.stats, for instance).
"""

from importlib import import_module
from typing import Any

from ._panel import (
    Panel,
    delta_slider,
    float_slider,
    format_delta,
    format_numbers,
    format_settings,
    int_slider,
    log_slider,
)

_LAZY = {
    "above_threshold_panel": "above_threshold",
    "laplace_tail_panel": "laplace",
    "pmw_panel": "pmw",
    "reconstruction_panel": "rr_vs_laplace",
    "release_comparison_panel": "rr_vs_laplace",
    "tree_panel": "trees",
    "variant_loss_panel": "svt_variants",
}

__all__ = [
    "Panel",
    "above_threshold_panel",
    "delta_slider",
    "float_slider",
    "format_delta",
    "format_numbers",
    "format_settings",
    "int_slider",
    "laplace_tail_panel",
    "log_slider",
    "pmw_panel",
    "reconstruction_panel",
    "release_comparison_panel",
    "tree_panel",
    "variant_loss_panel",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
