"""Every notebook top to bottom, as a ratio of the floor measured in the same run; import time.

The floor is a one-cell notebook that imports numpy, scipy.stats, matplotlib and ipywidgets:
what any notebook of the workbook pays for its kernel and libraries before it teaches
anything. Each notebook run follows a run of the floor (``rounds`` times), and the ratio is the
median of these paired ratios, as for the panels: on a machine whose load comes and goes (other
jobs, other tests), a notebook and the floor run just before it see about the same load, while
medians taken separately can pair a busy minute's notebook with a quiet minute's floor.

Both are timed twice: on one core (Binder gives a student about one shared core; the client, the
kernel and everything they start are pinned to CPU 0 with ``os.sched_setaffinity``, as
``taskset -c 0`` does) and on two. A run ends when its kernel has exited (as "Restart and run all" waits for the
old kernel); how long that exit took after the last cell is listed for the floor and for each notebook.

``python -m benchmarks.bench_notebooks --cells NN`` prints the slowest cells of one notebook
(``--cells NN --cores 1``: on one core); ``python -m benchmarks.bench_notebooks [ROUNDS] --only NN [NN ...]``
measures only the notebooks whose names start with those numbers (each still paired with a floor run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from ._harness import Section

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
FLOOR_SOURCE = "import numpy, scipy.stats, matplotlib.pyplot, ipywidgets"
LIMIT = 2.0  # issue 27: each notebook top to bottom within 2× the floor, on one core as on two
CORES = (1, 2)


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


@contextmanager
def on_cores(cores: int) -> Iterator[None]:
    """Pin this process, and so every kernel it starts, to the first ``cores`` CPUs (as ``taskset``)."""
    before = os.sched_getaffinity(0)
    available = sorted(before)
    if cores > len(available):
        raise ValueError(f"cores must be at most {len(available)} (the CPUs this process may use); got {cores}")
    os.sched_setaffinity(0, available[:cores])
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def seconds_after_last_cell(nb, finished: float) -> float:
    """Seconds from the kernel's reply to the last code cell of an executed notebook to ``finished`` (a
    ``time.time()``): mostly the kernel's exit, which a run's time includes (and "Restart and run all" waits for)."""
    replies = [
        cell.metadata["execution"]["shell.execute_reply"]
        for cell in nb.cells
        if cell.cell_type == "code" and "shell.execute_reply" in cell.get("metadata", {}).get("execution", {})
    ]
    return finished - datetime.fromisoformat(replies[-1].replace("Z", "+00:00")).timestamp()


def paired_ratios(
    nbs: dict, rounds: int
) -> tuple[list[float], dict[str, list[float]], dict[str, list[float]], dict[str, list[float]]]:
    """Floor times, each notebook's times and ratios to the floor run just before it, ``rounds`` times, and the
    seconds after the last cell of every run (the floor's under ``"floor"``)."""
    floor = floor_notebook(next(iter(nbs.values())))
    times: dict[str, list[float]] = {name: [] for name in nbs}
    ratios: dict[str, list[float]] = {name: [] for name in nbs}
    exits: dict[str, list[float]] = {name: [] for name in ["floor", *nbs]}
    floors = []
    for _ in range(rounds):
        for name, nb in nbs.items():
            seconds, ran = execute(floor)
            floors.append(seconds)
            exits["floor"].append(seconds_after_last_cell(ran, time.time()))
            seconds, ran = execute(nb)
            exits[name].append(seconds_after_last_cell(ran, time.time()))
            times[name].append(seconds)
            ratios[name].append(times[name][-1] / floors[-1])
    return floors, times, ratios, exits


def run(rounds: int = 5, notebooks=None, cores=CORES) -> Section:
    section = Section("Notebooks top to bottom, and importing the widgets")
    notebooks = NOTEBOOKS if notebooks is None else notebooks
    nbs = {path.name: nbformat.read(path, as_version=4) for path in notebooks}
    for n_cores in cores:
        with on_cores(n_cores):
            floors, times, ratios, exits = paired_ratios(nbs, rounds)
        where = "1 core" if n_cores == 1 else f"{n_cores} cores"
        base = statistics.median(floors)
        section.notes.append(
            f"On {where}: floor (a one-cell notebook running `{FLOOR_SOURCE}` in a fresh kernel) median "
            f"{base:.2f} s over {len(floors)} runs (kernel start included), each run just before a "
            f"notebook's. Each notebook: median of {rounds} runs, and the median of its {rounds} "
            f"ratios to the floor run before it (all ratios listed, smallest first). Limit: {LIMIT}× the floor. "
            f"Both include the kernel's exit after the last cell: the floor's median "
            f"{statistics.median(exits['floor']):.2f} s."
        )
        for name, values in times.items():
            seconds = statistics.median(values)
            ratio = statistics.median(ratios[name])
            spread = ", ".join(f"{r:.2f}" for r in sorted(ratios[name]))
            section.rows.append(
                (
                    f"{name}, top to bottom (nbclient), {where}",
                    f"{seconds:.2f} s",
                    f"{ratio:.2f}× the floor ({'within' if ratio <= LIMIT else 'OVER'} {LIMIT}×); "
                    f"paired ratios {spread}; kernel exit after the last cell {statistics.median(exits[name]):.2f} s",
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


def _notebook(prefix: str) -> Path:
    """The one notebook whose name starts with ``prefix`` (argparse's ``type``: a bad one is a usage error)."""
    found = [path for path in NOTEBOOKS if path.name.startswith(prefix)]
    if len(found) != 1:
        raise argparse.ArgumentTypeError(f"{prefix!r} names {len(found)} notebooks, not one")
    return found[0]


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_notebooks", description=__doc__.split("\n\n")[0])
    parser.add_argument("rounds", nargs="?", type=int, default=5, help="paired runs per notebook (default 5)")
    parser.add_argument("--only", nargs="+", type=_notebook, metavar="NN", help="time only these notebooks")
    parser.add_argument("--cells", type=_notebook, metavar="NN", help="print the slowest cells of one notebook")
    parser.add_argument("--cores", type=int, help="with --cells: the cores to run on (default: all of this process's)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = _arguments(sys.argv[1:])
    if args.cells is not None:
        with on_cores(args.cores or len(os.sched_getaffinity(0))):
            seconds, ran = execute(nbformat.read(args.cells, as_version=4))
        print(f"{args.cells.name}: {seconds:.2f} s")
        for s, cell_id, first in cell_seconds(ran)[:12]:
            print(f"  {s:6.2f} s  {cell_id}  {first}")
    else:
        print(run(rounds=args.rounds, notebooks=args.only).markdown())
