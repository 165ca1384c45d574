"""Grading throughput: 20 submissions of notebook 01 at ``--jobs 1`` and ``--jobs 2``, and the sandbox's cost.

Each submission is a full run of notebook 01 in its own kernel, so the times are whole seconds;
one timing each (best of one) is what an instructor sees. The sandbox's overhead is bubblewrap
against the same worker run without it, per notebook.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import nbformat

from dpcourse.classroom.grade import grade
from dpcourse.classroom.release import release_notebook
from dpcourse.classroom.sandbox import SandboxUnavailable, choose_sandbox

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
    return section
