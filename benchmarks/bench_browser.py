"""Slider to new image in a real browser, per panel: the browser suite's measurements.

``tests/e2e/test_workbook_in_browser.py`` opens every notebook in JupyterLab (Debian's Chromium,
Playwright), runs it, and for every panel presses its first slider's handle five times, timing
in the page's own clock from the key press to the new image being swapped in. This module runs
that suite (unless ``DPCOURSE_BROWSER_RESULTS`` names a file of an earlier run) and tabulates the
medians against the limit of 0.25 s. Needs Chromium; without it the section says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ._harness import Section

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "test-artifacts" / "browser_latency.json"
LIMIT = 0.25


def run() -> Section:
    section = Section("Browser: slider to new image in JupyterLab (Chromium), per panel")
    given = os.environ.get("DPCOURSE_BROWSER_RESULTS")
    if given:
        path = Path(given)
    elif shutil.which("chromium"):
        RESULTS.unlink(missing_ok=True)
        start = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:nbval",
                "-m",
                "e2e",
                "-q",
                "tests/e2e/test_workbook_in_browser.py",
            ],
            cwd=ROOT,
            check=False,
        )
        section.notes.append(f"The browser suite took {time.perf_counter() - start:.0f} s.")
        path = RESULTS
    else:
        section.notes.append("Chromium is not installed: not measured.")
        return section
    data = json.loads(path.read_text())
    section.notes.append(
        "Median of 5 key presses on the panel's first slider, from the press to the new image "
        "(page clock; the kernel's redraw, both messages and the image swap). "
        "'computing…' tells whether the panel showed its busy line during the presses."
    )
    for name, entry in sorted(data.items()):
        median = entry["median_s"]
        samples = ", ".join(f"{s * 1e3:.0f}" for s in entry["samples_s"])
        section.rows.append(
            (
                name,
                f"{median * 1e3:.0f} ms",
                f"{'within' if median <= LIMIT else 'OVER'} {LIMIT} s; samples {samples} ms"
                + ("; 'computing…' shown" if entry.get("computing_shown") else ""),
            )
        )
    return section
