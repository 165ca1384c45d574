"""Grading submissions (being rebuilt for issue 11)."""

from __future__ import annotations

import argparse
import csv
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .student_copy import BEGIN, PROJECT, exercises

__all__ = ["GradeRow", "add_grade_command", "grade", "summary_table", "write_report"]

SANITIZE = PROJECT / "nbval_sanitize.cfg"
_ANSI = re.compile(r"(?:\x1b|#x1B)\[[0-9;]*m")


@dataclass(frozen=True)
class GradeRow:
    """One line of the grade report."""

    student: str
    notebook: str
    exercise: str
    status: str  # passed | failed | errored | invalid
    message: str = ""


def _student_and_notebook(path: Path) -> tuple[str, str]:
    # submissions/alice/01_laplace_utility.ipynb → ("alice", "01_laplace_utility"); a bare file → its stem
    return (path.parent.name if path.parent.name else path.stem), path.stem


def _message(text: str) -> str:
    text = _ANSI.sub("", text or "")
    match = re.search(r"CheckFailed: (\[[^\]]+\][^\n]*(?:\nHint:[^\n]*)?)", text)
    if match:
        return match.group(1).replace("\n", " ")
    errors = re.findall(r"^(\w*(?:Error|Exception)\w*: .*)$", text, flags=re.MULTILINE)
    if errors:
        return errors[-1].strip()
    return text.strip().splitlines()[-1][:300] if text.strip() else "the cell failed"


def _run_nbval(paths: list[Path], workdir: Path, cell_timeout: int) -> dict[tuple[str, int], str | None]:
    """nbval over ``paths``; (file name, cell index) → None if the cell passed, else the failure text."""
    report = workdir / "junit.xml"
    config = workdir / "pytest.ini"
    config.write_text("[pytest]\naddopts =\n")
    command = [sys.executable, "-m", "pytest", "-c", str(config), "--rootdir", str(workdir), "-p", "no:cacheprovider",
               "--nbval-lax", "--nbval-current-env", f"--nbval-cell-timeout={cell_timeout}",
               "--nbval-sanitize-with", str(SANITIZE), f"--junitxml={report}", "-q", *map(str, paths)]
    completed = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    if not report.exists():
        raise RuntimeError(f"grading could not run nbval:\n{completed.stdout}\n{completed.stderr}")
    results: dict[tuple[str, int], str | None] = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        match = re.search(r"Cell (\d+)", case.get("name", ""))
        file = Path(case.get("classname", "")).name  # nbval puts the notebook's file name here
        if not match:
            continue
        failure = case.find("failure") if case.find("failure") is not None else case.find("error")
        text = None if failure is None else (failure.get("message", "") + "\n" + (failure.text or ""))
        results[(file, int(match.group(1)))] = text
    return results


def grade(submissions, *, cell_timeout: int = 300) -> list[GradeRow]:
    """Grade notebooks: one row per submission and exercise (a malformed file gets one ``invalid`` row).

    The student of ``submissions/<student>/<notebook>.ipynb`` is the folder's name. If cells
    outside the exercises fail, one more row, exercise ``(other cells)``, says which.

    nbval numbers the code cells it runs; the cell numbers in its report are matched back to the
    exercise metadata of the submitted notebook.
    """
    rows: list[GradeRow] = []
    with tempfile.TemporaryDirectory(prefix="dpcourse-grade-") as tmp:
        workdir = Path(tmp)
        runnable: list[tuple[Path, Path, object]] = []
        for number, raw in enumerate(map(Path, submissions)):
            student, name = _student_and_notebook(raw)
            try:
                nb = nbformat.read(raw, as_version=4)
                nbformat.validate(nb)
            except Exception as err:  # noqa: BLE001 - any unreadable file is reported, never fatal
                rows.append(GradeRow(student, name, "-", "invalid", f"not a readable notebook: {type(err).__name__}: {err}"[:300]))
                continue
            copy_path = workdir / f"s{number:03d}_{raw.name}"
            nbformat.write(nb, copy_path)
            runnable.append((raw, copy_path, nb))
        results = _run_nbval([c for _, c, _ in runnable], workdir, cell_timeout) if runnable else {}
        for raw, copy_path, nb in runnable:
            student, name = _student_and_notebook(raw)
            code_number = {index: k for k, index in enumerate(i for i, c in enumerate(nb.cells) if c.cell_type == "code")}
            for exercise, cells in sorted(exercises(nb).items(), key=lambda item: item[1].get("check", 0)):
                check = results.get((copy_path.name, code_number.get(cells.get("check", -1), -1)), "missing")
                solution = results.get((copy_path.name, code_number.get(cells.get("solution", -1), -1)))
                if check is None:
                    rows.append(GradeRow(student, name, exercise, "passed"))
                elif check != "missing" and "CheckFailed" in check:
                    rows.append(GradeRow(student, name, exercise, "failed", _message(check)))
                else:
                    reason = solution if solution not in (None, "missing") else check
                    rows.append(GradeRow(student, name, exercise, "errored", _message(reason or "no check cell ran")))
            exercise_cells = {index for cells in exercises(nb).values() for index in cells.values()}
            broken = [index for index, k in code_number.items()
                      if index not in exercise_cells and results.get((copy_path.name, k)) is not None]
            if broken:
                rows.append(GradeRow(student, name, "(other cells)", "errored",
                                     "cells " + ", ".join(map(str, broken)) + " failed outside the exercises"))
    return rows


def write_report(rows: list[GradeRow], path) -> None:
    """The grade report as CSV: student, notebook, exercise, status, message."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "notebook", "exercise", "status", "message"])
        for row in rows:
            writer.writerow([row.student, row.notebook, row.exercise, row.status, row.message])


def summary_table(rows: list[GradeRow]) -> str:
    """A plain-text table for the terminal."""
    widths = [max(len(h), *(len(getattr(r, f)) for r in rows)) if rows else len(h)
              for h, f in (("student", "student"), ("notebook", "notebook"), ("exercise", "exercise"), ("status", "status"))]
    header = "  ".join(h.ljust(w) for h, w in zip(("student", "notebook", "exercise", "status"), widths)) + "  message"
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append("  ".join(v.ljust(w) for v, w in zip((r.student, r.notebook, r.exercise, r.status), widths))
                     + "  " + r.message[:100])
    counts = {s: sum(r.status == s for r in rows) for s in ("passed", "failed", "errored", "invalid")}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(lines)


def add_grade_command(commands) -> None:
    parser = commands.add_parser("grade", help="grade submitted notebooks")
    parser.add_argument("submissions", nargs="+", type=Path)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--cell-timeout", type=int, default=300)
    parser.set_defaults(run=_run_grade)


def _run_grade(args) -> int:
    try:
        rows = grade(args.submissions, cell_timeout=args.cell_timeout)
    except RuntimeError as err:
        print(f"grading could not run: {err}", file=sys.stderr)
        return 2
    print(summary_table(rows))
    if args.report:
        write_report(rows, args.report)
    return 0
