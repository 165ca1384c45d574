"""Every panel of the workbook: one redraw against rendering empty axes of its size and resolution.

The limit (issue 15) is 1.6×: what a redraw adds to the rendering any figure of that size pays
(its lines, legends and titles, and the computation that depends on the moved control) must
stay below 60 % of it.
"""

from __future__ import annotations

from dpcourse import widgets

from ._harness import Section

# (name, builder, control moved, values it takes in turn)
PANELS = [
    ("01 tail panel (k)", lambda: widgets.laplace_tail_panel(trials=10_000, max_k=1000), "k", [10, 500, 1000, 3, 100]),
    ("02 release comparison (ε)", lambda: widgets.release_comparison_panel(), "epsilon", [0.5, 1.0, 2.0]),
    ("02 reconstruction attack (E/√n)", lambda: widgets.reconstruction_panel(), "noise", [0.05, 0.1, 0.5]),
    ("03 trees (ε)", lambda: widgets.tree_panel(), "epsilon", [0.5, 1.0, 2.0]),
    ("03 trees (interval)", lambda: widgets.tree_panel(), "interval", [(10, 100), (37, 200), (0, 255)]),
    ("04 AboveThreshold (m)", lambda: widgets.above_threshold_panel(), "m", [4, 8, 12, 20]),
    ("05 SVT variants (ε)", lambda: widgets.variant_loss_panel(), "epsilon", [0.5, 1.0, 2.0]),
    ("06 Private MW (α)", lambda: widgets.pmw_panel(), "alpha", [0.05, 0.1, 0.2]),
]


def run() -> Section:
    section = Section("Panels: one redraw against empty axes of the same size and resolution")
    section.notes.append(
        "Each panel is built once; its control is moved through the values listed in "
        "`benchmarks/bench_panels.py` (caches warm, as for a student moving a slider back and "
        "forth). Median of 15 redraws, each paired with an empty-axes render of the same figure "
        "size, margins, number of axes, dpi (200: twice the 100 px per inch it is shown at) and "
        "PNG options."
    )
    for name, build, control, values in PANELS:
        section.panel_redraw(name, build(), control, values)
    return section
