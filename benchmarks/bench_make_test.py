"""Wall time of ``make test`` (warm: the venv exists), against the limit of 4 minutes.

Runs ``make test`` once in a subprocess: the unit tests, the notebooks and the browser suite in one
pytest-xdist run, three workers on the two cores. A wall time, not a ratio: the issue's limit is in
minutes on this machine, and the machine line above says which.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from ._harness import Section

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 240


def run() -> Section:
    section = Section("make test, warm")
    start = time.perf_counter()
    done = subprocess.run(["make", "test"], cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    tail = [
        line for line in done.stdout.splitlines() if line.startswith("=") and ("passed" in line or "failed" in line)
    ]
    section.rows.append(
        (
            "`make test` (unit + nbval + browser suite, one run on 3 workers)",
            f"{seconds:.0f} s",
            f"{'within' if seconds <= LIMIT_S else 'OVER'} {LIMIT_S // 60} min; exit {done.returncode}; "
            + " / ".join(t.strip("= ") for t in tail),
        )
    )
    return section
