"""Grading throughput: 20 submissions of notebook 01 at ``--jobs 1`` and ``--jobs 2``, and the sandbox's cost.

Each submission is a full run of notebook 01 in its own kernel, so the times are whole seconds;
one timing each (best of one) is what an instructor sees. The sandbox's overhead is bubblewrap
against the same worker run without it, per notebook. Gradescope's ``run_autograder`` (as written in the
zip of ``gradescope build``, run with bash) is timed against ``grade`` on the same submission.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import nbformat

from dpcourse.classroom.grading.run import grade
from dpcourse.classroom.lms.gradescope.autograder import build_autograder
from dpcourse.classroom.release import release_notebook
from dpcourse.classroom.sandbox.runner import SandboxUnavailable, choose_sandbox

from ._harness import Section

SOURCE = Path(__file__).resolve().parent.parent / "notebooks" / "01_laplace_utility.ipynb"
SUBMISSIONS = 20


def _class(folder: Path, count: int) -> list[Path]:
    solutions = nbformat.read(SOURCE, as_version=4)
    untouched = release_notebook(solutions)
    paths = []
    for k in range(count):
        student = folder / f"student{k:02d}"
        student.mkdir()
        nbformat.write(solutions if k % 2 == 0 else untouched, student / SOURCE.name)
        paths.append(student / SOURCE.name)
    return paths


def _seconds(paths, **kwargs) -> float:
    start = time.perf_counter()
    rows = grade(paths, **kwargs)
    assert all(r.status in ("passed", "not attempted") for r in rows), rows
    return time.perf_counter() - start


def _through_autograder(folder: Path, submission: Path) -> float:
    """Seconds of one ``run_autograder`` (the zip's script, with bash) on ``submission``, in a Gradescope layout."""
    root = folder / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(build_autograder(folder / "autograder.zip", source=SOURCE.parent)) as archive:
        archive.extractall(root / "source")
    (root / "submission").mkdir()
    shutil.copy(submission, root / "submission" / submission.name)
    env = {**os.environ, "DPCOURSE_AUTOGRADER_ROOT": str(root), "DPCOURSE_AUTOGRADER_PYTHON": sys.executable}
    start = time.perf_counter()
    subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, cwd=root, capture_output=True,
                   timeout=1800, check=True)  # fmt: skip
    seconds = time.perf_counter() - start
    tests = json.loads((root / "results" / "results.json").read_text())["tests"]
    assert all(t["status"] == "passed" for t in tests if t["name"].startswith("01 ")), tests
    return seconds


def run() -> Section:
    section = Section("Grading (notebook 01 submissions, each in its own kernel)")
    with tempfile.TemporaryDirectory() as tmp:
        paths = _class(Path(tmp), SUBMISSIONS)
        try:
            choose_sandbox("bwrap")
        except SandboxUnavailable as err:
            section.notes.append(f"no working bubblewrap here, so nothing was timed: {err}")
            return section
        one = _seconds(paths, jobs=1)
        two = _seconds(paths, jobs=2)
        section.rows.append(
            (f"{SUBMISSIONS} submissions, --jobs 1", f"{one:.1f} s", f"{one / SUBMISSIONS:.1f} s per submission")
        )
        section.rows.append(
            (
                f"{SUBMISSIONS} submissions, --jobs 2",
                f"{two:.1f} s",
                f"{two / one:.2f}× --jobs 1 ({one / two:.2f}× the throughput) on 2 cores",
            )
        )
        few = paths[:4]
        sandboxed = _seconds(few, jobs=1, sandbox="bwrap") / len(few)
        bare = _seconds(few, jobs=1, sandbox="none") / len(few)
        section.rows.append(
            (
                "one notebook in bubblewrap",
                f"{sandboxed:.2f} s",
                f"{sandboxed / bare:.3g}× the same run unconfined, --sandbox none ({bare:.2f} s)",
            )
        )
        gradescope = _through_autograder(Path(tmp) / "gradescope", paths[0])
        direct = _seconds(paths[:1], jobs=1)
        section.rows.append(
            (
                "one notebook through Gradescope's run_autograder",
                f"{gradescope:.2f} s",
                f"{gradescope / direct:.3g}× the same submission through grade ({direct:.2f} s)",
            )
        )
    return section
