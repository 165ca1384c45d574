"""Every notebook top to bottom, as a ratio of the floor measured in the same run; import time.

The floor is a one-cell notebook that imports numpy, scipy.stats, matplotlib and ipywidgets:
what any notebook of the workbook pays for its kernel and libraries before it teaches
anything. Each notebook run follows a run of the floor (``rounds`` times), and the ratio is the
median of these paired ratios, as for the panels: on a machine whose load comes and goes (other
jobs, other tests), a notebook and the floor run just before it see about the same load, while
medians taken separately can pair a busy minute's notebook with a quiet minute's floor.

``python -m benchmarks.bench_notebooks --cells NN`` prints the slowest cells of one notebook.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from ._harness import Section

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
FLOOR_SOURCE = "import numpy, scipy.stats, matplotlib.pyplot, ipywidgets"
LIMIT = 2.5  # issue 15: each notebook top to bottom within 2.5× the floor


def execute(nb) -> tuple[float, object]:
    """Run ``nb`` in a fresh kernel (started inside the timing, as for a student); seconds and the run notebook."""
    nb = nbformat.from_dict(nb)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        record_timing=True,
        resources={"metadata": {"path": str(ROOT / "notebooks")}},
    ).execute()
    return time.perf_counter() - start, nb


PEAK_SOURCE = "import resource; print('PEAK_RSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
MEMORY_LIMIT_MB = 1000  # issue 15: peak kernel memory under 1 GB


def peak_megabytes(path) -> float:
    """Peak resident memory (MB) of the kernel that ran ``path`` top to bottom (one extra cell reads it)."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PEAK_SOURCE))
    _, ran = execute(nb)
    text = "".join(o.get("text", "") for o in ran.cells[-1].get("outputs", []))
    return int(text.split("PEAK_RSS_KB")[1].split()[0]) / 1024


def floor_notebook(like):
    empty = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FLOOR_SOURCE)])
    empty.metadata = like.metadata
    return empty


def cell_seconds(nb) -> list[tuple[float, str, str]]:
    """(seconds, cell id, first line) of every code cell of an executed notebook, slowest first."""
    rows = []
    for cell in nb.cells:
        timing = cell.get("metadata", {}).get("execution", {})
        if cell.cell_type != "code" or "shell.execute_reply" not in timing:
            continue
        start = datetime.fromisoformat(timing["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.fromisoformat(timing["shell.execute_reply"].replace("Z", "+00:00"))
        rows.append(((end - start).total_seconds(), cell.get("id", "?"), cell.source.splitlines()[0][:70]))
    return sorted(rows, reverse=True)


def import_seconds(module: str = "dpcourse.widgets", rounds: int = 5) -> tuple[float, float]:
    """Median wall time of ``python -c 'import module'`` in a fresh interpreter, and of bare ``python -c pass``."""

    def one(code):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        return time.perf_counter() - start

    pairs = [(one(f"import {module}"), one("pass")) for _ in range(rounds)]
    return statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs)


def run(rounds: int = 5, notebooks=None) -> Section:
    section = Section("Notebooks top to bottom, and importing the widgets")
    notebooks = NOTEBOOKS if notebooks is None else notebooks
    nbs = {path.name: nbformat.read(path, as_version=4) for path in notebooks}
    floor = floor_notebook(next(iter(nbs.values())))
    times = {name: [] for name in nbs}
    ratios = {name: [] for name in nbs}
    floors = []
    for _ in range(rounds):
        for name, nb in nbs.items():
            floors.append(execute(floor)[0])
            times[name].append(execute(nb)[0])
            ratios[name].append(times[name][-1] / floors[-1])
    base = statistics.median(floors)
    section.notes.append(
        f"Floor: a one-cell notebook running `{FLOOR_SOURCE}` in a fresh kernel, median "
        f"{base:.2f} s over {len(floors)} runs (kernel start included), each run just before a "
        f"notebook's. Each notebook: median of {rounds} runs, and the median of its {rounds} "
        f"ratios to the floor run before it. Limit: {LIMIT}× the floor."
    )
    for name, values in times.items():
        seconds = statistics.median(values)
        ratio = statistics.median(ratios[name])
        spread = ", ".join(f"{r:.2f}" for r in sorted(ratios[name]))
        section.rows.append(
            (
                f"{name}, top to bottom (nbclient)",
                f"{seconds:.2f} s",
                f"{ratio:.2f}× the floor ({'within' if ratio <= LIMIT else 'OVER'} {LIMIT}×); paired ratios {spread}",
            )
        )
    for path in notebooks:
        peak = peak_megabytes(path)
        section.rows.append(
            (
                f"{path.name}, peak kernel memory",
                f"{peak:.0f} MB",
                f"{'within' if peak <= MEMORY_LIMIT_MB else 'OVER'} {MEMORY_LIMIT_MB} MB",
            )
        )
    widgets_import, bare = import_seconds()
    section.rows.append(
        (
            "`import dpcourse.widgets` in a fresh interpreter",
            f"{widgets_import:.2f} s",
            f"{widgets_import / bare:.2g}× starting Python alone ({bare * 1e3:.0f} ms); median of 5",
        )
    )
    return section


if __name__ == "__main__":
    if sys.argv[1:2] == ["--cells"]:
        path = next(p for p in NOTEBOOKS if p.name.startswith(sys.argv[2]))
        seconds, ran = execute(nbformat.read(path, as_version=4))
        print(f"{path.name}: {seconds:.2f} s")
        for s, cell_id, first in cell_seconds(ran)[:12]:
            print(f"  {s:6.2f} s  {cell_id}  {first}")
    else:
        print(run(rounds=int(sys.argv[1]) if sys.argv[1:] else 5).markdown())
