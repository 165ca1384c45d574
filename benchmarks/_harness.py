"""A small harness: time callables, express them as ratios, write one Markdown file per topic.

Every benchmark module ``bench_<topic>.py`` defines ``run() -> Section``. Absolute seconds
depend on the machine; the ratio against a baseline timed in the same run (numpy's raw
sampler, a plain Python loop, a generic solver) is what the README quotes.
"""

from __future__ import annotations

import platform
import timeit
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

RESULTS_DIR = Path(__file__).parent / "results"


def best_time(fn, *, repeat: int = 5, number: int = 1) -> float:
    """The best of ``repeat`` timings of ``number`` calls, in seconds per call."""
    fn()  # warm-up: imports, caches, first allocation
    return min(timeit.repeat(fn, repeat=repeat, number=number)) / number


@dataclass
class Section:
    """One topic's measurements, rendered as a Markdown table."""

    title: str
    notes: list[str] = field(default_factory=list)
    rows: list[tuple[str, str, str]] = field(default_factory=list)

    def timing(self, name: str, fn, *, repeat: int = 5, number: int = 1, note: str = "") -> float:
        seconds = best_time(fn, repeat=repeat, number=number)
        self.rows.append((name, f"{seconds * 1e3:.3g} ms", note))
        return seconds

    def ratio(
        self, name: str, fn, baseline_name: str, baseline, *, repeat: int = 5, number: int = 1, note: str = ""
    ) -> float:
        """Time ``fn`` and ``baseline`` back to back; record seconds and fn/baseline."""
        seconds = best_time(fn, repeat=repeat, number=number)
        base = best_time(baseline, repeat=repeat, number=number)
        ratio = seconds / base
        text = f"{ratio:.3g}× {baseline_name} ({base * 1e3:.3g} ms)"
        self.rows.append((name, f"{seconds * 1e3:.3g} ms", text + (f"; {note}" if note else "")))
        return ratio

    def panel_redraw(self, name: str, panel, control: str, values, *, repeat: int = 15) -> float:
        """One redraw of a widget panel (set ``control`` to the next of ``values``: draw and PNG) against
        rendering *empty axes of the same size and resolution*: the same figure size, margins, number
        of axes, dpi and PNG options, the floor any redraw pays. Timed in alternation; the median of
        the per-pair ratios is recorded (a busy machine slows both alike)."""
        import io
        import statistics
        import time

        from matplotlib.figure import Figure

        from dpcourse.widgets._panel import PNG_OPTIONS

        cycle = iter(list(values) * 1000)
        n_axes = max(1, len(panel.figure.axes))
        panel.render = True

        def blank_png():
            fig = Figure(figsize=panel.figsize, dpi=panel.figure.dpi)
            fig.subplots_adjust(**panel.margins)
            fig.subplots(1, n_axes)
            fig.savefig(io.BytesIO(), format="png", dpi=panel.dpi, **PNG_OPTIONS)

        for _ in range(len(values)):  # warm every cache the values touch, as a student moving back and forth
            panel.controls[control].value = next(cycle)
        blank_png()
        pairs = []
        for _ in range(repeat):
            panel.controls[control].value = next(cycle)
            redraw = panel.last_redraw_seconds
            start = time.perf_counter()
            blank_png()
            pairs.append((redraw, time.perf_counter() - start))
        ratio = statistics.median(r / b for r, b in pairs)
        seconds = statistics.median(r for r, _ in pairs)
        base = statistics.median(b for _, b in pairs)
        width = round(panel.figsize[0] * panel.dpi)
        self.rows.append(
            (
                name,
                f"{seconds * 1e3:.3g} ms",
                f"{ratio:.2f}× rendering {n_axes} empty axes of the same size and resolution "
                f"({width} px wide, {base * 1e3:.3g} ms); limit 1.6×",
            )
        )
        return ratio

    def markdown(self) -> str:
        lines = [f"## {self.title}", ""]
        lines += [f"{n}" for n in self.notes] + ([""] if self.notes else [])
        lines += ["| what | time | against the baseline / note |", "| --- | --- | --- |"]
        lines += [f"| {a} | {b} | {c} |" for a, b, c in self.rows]
        return "\n".join(lines) + "\n"


def machine_line() -> str:
    import os

    return f"Python {platform.python_version()}, NumPy {np.__version__}, {os.cpu_count()} cores, {platform.machine()}"
