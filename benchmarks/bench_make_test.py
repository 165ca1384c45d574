"""``make test`` warm, on a bare machine and with every tool, each paired against a baseline commit in the same run.

The issue's limits are wall times on this 2-core machine (6 minutes warm with bubblewrap and Chromium, 4 minutes on a
bare machine), but a wall time alone says as much about the machine's other load as about the suite. So each of this
checkout's runs is paired with a run of the same command on a clone of a baseline commit (``DPCOURSE_BENCH_BASELINE``,
by default ``ad6b52e``, main before issue 37), timed back to back, and the table gives both times and their ratio.

Both checkouts are clones of a commit in folders made by ``mktemp -d`` (0700, as CI has them), warmed by one untimed
``make test`` each (their virtual environments, the test and browser stamps, the book's environment) before the
timed rounds. The bare run is ``bash .ci/bare make test`` (bubblewrap, Chromium, Node.js/npm and the image tools
hidden; root only); without root only the full run is timed. A clone's run that fails is recorded as failed, not
dropped. About an hour on this machine: run it alone (``python -m benchmarks bench_make_test``).
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from ._harness import Section

ROOT = Path(__file__).resolve().parent.parent
BASELINE = os.environ.get("DPCOURSE_BENCH_BASELINE", "ad6b52e")
ROUNDS = int(os.environ.get("DPCOURSE_BENCH_ROUNDS", "1"))
LIMITS_S = {"bare": 240, "full": 360}


def _clone(ref: str, into: Path) -> Path:
    """A clone of ``ref`` of this repository under ``into`` (no hard links: its own files)."""
    target = into / ref
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "checkout", "--quiet", ref], check=True)
    return target


def _make_test(checkout: Path, bare: bool) -> tuple[float, str]:
    """Seconds of one ``make test`` in ``checkout`` and pytest's closing line (or the exit status)."""
    command = ["make", "-C", str(checkout), "test"]
    if bare:
        command = ["bash", str(ROOT / ".ci" / "bare"), *command]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    closing = [line.strip("= ") for line in done.stdout.splitlines() if re.match(r"=+ .*(passed|failed)", line)]
    outcome = closing[-1] if closing else f"exit {done.returncode}"
    return seconds, outcome + ("" if done.returncode == 0 else " (FAILED)")


def run() -> Section:
    section = Section("make test, warm, against a baseline commit")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    kinds = ["bare", "full"] if os.geteuid() == 0 else ["full"]
    with tempfile.TemporaryDirectory(prefix="dpcourse-bench-") as folder:
        checkouts = {"this": _clone(head.stdout.strip(), Path(folder)), "baseline": _clone(BASELINE, Path(folder))}
        for checkout in checkouts.values():
            _make_test(checkout, bare=False)  # warm: the environments, stamps and the book's environment
        for kind in kinds:
            for _ in range(ROUNDS):
                base, base_line = _make_test(checkouts["baseline"], kind == "bare")
                this, this_line = _make_test(checkouts["this"], kind == "bare")
                section.rows.append(
                    (
                        f"`make test` {'on a bare machine (.ci/bare)' if kind == 'bare' else 'with every tool'}",
                        f"{this:.0f} s",
                        f"{this / base:.2f}× the baseline {BASELINE} ({base:.0f} s: {base_line}); "
                        f"{'within' if this <= LIMITS_S[kind] else 'OVER'} {LIMITS_S[kind] // 60} min; {this_line}",
                    )
                )
    return section
