"""Run one notebook top to bottom with nbclient; the grader starts this inside the sandbox.

``python -m dpcourse._grade_worker IN.ipynb OUT.ipynb --cell-timeout S --notebook-timeout S``

Every cell runs, errors included (``allow_errors``). A cell that times out or kills the kernel is
recorded in ``metadata["dpcourse_grading"]["skipped"]`` (cell index → reason) and the notebook is
run again from the top in a fresh kernel without it, at most :data:`MAX_RESTARTS` times; cells
not reached in the notebook's time are recorded the same way. Outputs larger than
``--output-limit`` bytes per cell are replaced by a note. Nothing here judges anything: the
grader reads OUT.ipynb and judges the evidence of the check cells in its own process.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

MAX_RESTARTS = 3


def _cap_outputs(cell, limit: int) -> None:
    if cell.cell_type != "code":
        return
    size = len(json.dumps(cell.get("outputs", []), default=str))
    if size > limit:
        cell.outputs = [nbformat.v4.new_output("stream", name="stderr",
                                               text=f"[grader: {size:,} bytes of output removed; the limit is {limit:,}]\n")]


def run(nb, *, cell_timeout: float, notebook_timeout: float, output_limit: int):
    """Execute ``nb`` (a copy is returned) with restarts after timeouts and kernel deaths."""
    skipped: dict[int, str] = {}
    stopped_at = -1
    started = time.monotonic()
    for _ in range(MAX_RESTARTS + 1):
        work = copy.deepcopy(nb)
        for index in skipped:
            if work.cells[index].cell_type == "code":
                work.cells[index].source = "pass  # not run by the grader"
        client = NotebookClient(work, timeout=cell_timeout, allow_errors=True, kernel_name="python3",
                                record_timing=False)
        interrupted = False
        with client.setup_kernel():
            for index, cell in enumerate(work.cells):
                if cell.cell_type != "code" or index in skipped:
                    continue
                remaining = notebook_timeout - (time.monotonic() - started)
                if remaining <= 0:
                    for later, other in enumerate(work.cells):
                        if later >= index and other.cell_type == "code" and later not in skipped:
                            skipped[later] = f"not run: the notebook's time limit of {notebook_timeout:g} s ran out"
                    break
                client.timeout = min(cell_timeout, remaining)
                try:
                    client.execute_cell(cell, index)
                except CellTimeoutError:
                    skipped[index] = f"timed out after {client.timeout:g} s"
                    interrupted = True
                except DeadKernelError:
                    skipped[index] = "stopped the Python kernel (it exited, crashed or ran out of memory)"
                    interrupted = True
                _cap_outputs(cell, output_limit)
                if interrupted:
                    stopped_at = index
                    break
        if not interrupted:
            break
    else:
        for index, cell in enumerate(nb.cells):
            if cell.cell_type == "code" and index > stopped_at and index not in skipped:
                skipped[index] = "not run: too many timeouts or kernel deaths in this notebook"
    work.metadata["dpcourse_grading"] = {"skipped": {str(k): v for k, v in sorted(skipped.items())}}
    return work


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpcourse._grade_worker")
    parser.add_argument("notebook")
    parser.add_argument("output")
    parser.add_argument("--cell-timeout", type=float, default=120)
    parser.add_argument("--notebook-timeout", type=float, default=900)
    parser.add_argument("--output-limit", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    nb = nbformat.read(args.notebook, as_version=4)
    done = run(nb, cell_timeout=args.cell_timeout, notebook_timeout=args.notebook_timeout, output_limit=args.output_limit)
    nbformat.write(done, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
