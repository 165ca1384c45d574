"""``make test`` warm, on a bare machine and with every tool, each paired against a baseline commit in the same run.

The issue's limits are wall times on this 2-core machine (6 minutes warm with bubblewrap and Chromium, 4 minutes on a
bare machine), but a wall time alone says as much about the machine's other load as about the suite. So each of this
checkout's runs is paired with a run of the same command on a clone of a baseline commit (``DPCOURSE_BENCH_BASELINE``,
by default ``ad6b52e``, main before issue 37), timed back to back, and the table gives both times and their ratio.

Each checkout is a clone of a commit in a folder made by ``mktemp -d`` (0700, as CI has them): one pair for the bare
runs, one for the full ones. Each is warmed by one untimed ``make test`` of its kind that runs only the clean-install
test (``PYTEST_ADDOPTS=-k …``): the virtual environments and stamps are installed (with every tool, the browser's
and the book's too; bare, as on a newcomer's machine without npm, not the book's), every test module is imported
once, and the one environment a test keeps between runs (test_packaging's, beside ``.venv``, 40 s or more to make)
is made, as a second ``make test`` finds it. The bare run is ``bash .ci/bare make test`` (bubblewrap, Chromium,
Node.js/npm and the image tools hidden; root only); without root only the full run is timed. A clone's run that
fails is recorded as failed, not dropped. About 45 minutes on this machine: run it alone
(``python -m benchmarks bench_make_test``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from ._harness import Section

ROOT = Path(__file__).resolve().parent.parent
BASELINE = os.environ.get("DPCOURSE_BENCH_BASELINE", "ad6b52e")
ROUNDS = int(os.environ.get("DPCOURSE_BENCH_ROUNDS", "1"))
LIMITS_S = {"bare": 240, "full": 360}
# The test that makes and keeps an environment of its own (tests/test_packaging.py): the warm-up runs it alone.
WARM_TEST = "test_a_clean_install_has_the_command_and_what_the_package_imports"


def _clone(ref: str, into: Path) -> Path:
    """A clone of ``ref`` of this repository under ``into`` (no hard links: its own files)."""
    target = into / ref
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(target)], check=True)
    subprocess.run(["git", "-C", str(target), "checkout", "--quiet", ref], check=True)
    return target


def _warm(checkout: Path, bare: bool) -> None:
    """Everything ``make test`` installs on first use, in ``checkout``; of the tests only ``WARM_TEST`` runs."""
    env = {**os.environ, "PYTEST_ADDOPTS": f"-q -k {WARM_TEST}"}
    command = ["make", "-C", str(checkout), "test"]
    if bare:
        command = ["bash", str(ROOT / ".ci" / "bare"), *command]
    subprocess.run(command, capture_output=True, env=env, check=False)


def _make_test(checkout: Path, bare: bool) -> tuple[float, str]:
    """Seconds of one ``make test`` in ``checkout`` and pytest's closing line (or the exit status)."""
    command = ["make", "-C", str(checkout), "test"]
    if bare:
        command = ["bash", str(ROOT / ".ci" / "bare"), *command]
    env = {key: value for key, value in os.environ.items() if key != "PYTEST_ADDOPTS"}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    closing = [line.strip("= ") for line in done.stdout.splitlines() if re.match(r"=+ .*(passed|failed)", line)]
    outcome = closing[-1] if closing else f"exit {done.returncode}"
    return seconds, outcome + ("" if done.returncode == 0 else " (FAILED)")


def run() -> Section:
    section = Section("make test, warm, against a baseline commit")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    kinds = ["bare", "full"] if os.geteuid() == 0 else ["full"]
    with tempfile.TemporaryDirectory(prefix="dpcourse-bench-") as folder:
        for kind in kinds:
            # A bare machine's clones are warmed bare too: without npm, make test installs no book environment,
            # so its website tests skip there as on a newcomer's machine.
            checkouts = {
                "this": _clone(head.stdout.strip(), Path(folder) / kind),
                "baseline": _clone(BASELINE, Path(folder) / kind),
            }
            for checkout in checkouts.values():
                _warm(checkout, kind == "bare")
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
            for checkout in checkouts.values():
                shutil.rmtree(checkout, ignore_errors=True)  # a clone with its environments is about 2 GB
    return section
