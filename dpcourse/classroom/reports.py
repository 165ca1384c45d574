"""Grade rows and the report CSV: writing it safely, reading it back, totals and merging shards.

A report is one row per (student, notebook, exercise). Every cell a spreadsheet could run as a
formula gets a leading quote (OWASP's advice), and every file is written atomically (a temporary
file in the same folder, then :func:`os.replace`), so an interrupted run never leaves half a report.
"""

from __future__ import annotations

import csv
import os
import re
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "COLUMNS",
    "STATUSES",
    "GradeRow",
    "atomic_csv",
    "merge_reports",
    "points_text",
    "read_report",
    "safe_cell",
    "summary_table",
    "totals",
    "write_report",
]

#: ``duplicate``: another file of the same student for the same notebook was graded instead.
STATUSES = ("passed", "failed", "not attempted", "errored", "invalid", "duplicate")
COLUMNS = (
    "student",
    "notebook",
    "exercise",
    "status",
    "points",
    "max_points",
    "message",
    "hint",
    "mistake",
    "integrity",
)
_REQUIRED = ("student", "notebook", "exercise", "status")


@dataclass(frozen=True)
class GradeRow:
    """One line of the grade report.

    ``mistake`` names the check's diagnosed mistake for a ``failed`` row (the same text for every
    student who made it, so the class summary can count it); empty when the check named none.
    """

    student: str
    notebook: str
    exercise: str
    status: str
    points: float = 0.0
    max_points: float = 0.0
    message: str = ""
    hint: str = ""
    mistake: str = ""
    integrity: str = ""


_FORMULA = re.compile(r"^[=+\-@\t\r]")


def safe_cell(value: object) -> str:
    """A report cell a spreadsheet will not run as a formula (a leading quote)."""
    text = str(value)
    return "'" + text if _FORMULA.match(text) else text


def _unquoted(text: str) -> str:
    return text[1:] if text.startswith("'") and _FORMULA.match(text[1:]) else text


def points_text(value: float) -> str:
    """Points as the report writes them: ``1``, ``0.5``."""
    return f"{value:g}"


def atomic_csv(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> None:
    """Write a CSV to ``path`` atomically (every cell through :func:`safe_cell`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(
        "w", newline="", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
    )
    try:
        with handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows([safe_cell(cell) for cell in row] for row in rows)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def _row_cells(row: GradeRow) -> list[object]:
    return [
        row.student,
        row.notebook,
        row.exercise,
        row.status,
        points_text(row.points),
        points_text(row.max_points),
        row.message,
        row.hint,
        row.mistake,
        row.integrity,
    ]


def write_report(rows: Sequence[GradeRow], path: Path | str) -> Path:
    """Write the report CSV atomically; returns its path."""
    path = Path(path)
    atomic_csv(path, COLUMNS, (_row_cells(r) for r in rows))
    return path


def totals(rows: Iterable[GradeRow]) -> dict[str, dict[str, float]]:
    """Per student, over the rows given: points, max points, passed exercises, exercises."""
    result: dict[str, dict[str, float]] = defaultdict(
        lambda: {"points": 0.0, "max_points": 0.0, "passed": 0, "exercises": 0}
    )
    for r in rows:
        entry = result[r.student]
        entry["points"] += r.points
        entry["max_points"] += r.max_points
        entry["passed"] += r.status == "passed"
        entry["exercises"] += r.exercise != "-"
    return dict(sorted(result.items()))


def _number(text: str, column: str, path: Path | str) -> float:
    try:
        value = float(text or 0)
    except ValueError:
        raise ValueError(f"{path}: column {column} holds {text[:20]!r}, not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{path}: column {column} holds {text[:20]!r}, not a finite number")
    return value


def read_report(path: Path | str) -> list[GradeRow]:
    """Rows of a report written by :func:`write_report` (the neutralising quote is removed again).

    Reports written before the ``hint`` and ``mistake`` columns existed are read too.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a grade report (no column {', '.join(missing)})")
        rows = []
        for line in reader:
            cell = {k: _unquoted(v) if isinstance(v, str) else "" for k, v in line.items() if k is not None}
            if cell["status"] not in STATUSES:
                raise ValueError(f"{path}: unknown status {cell['status']!r}")
            rows.append(
                GradeRow(
                    cell["student"],
                    cell["notebook"],
                    cell["exercise"],
                    cell["status"],
                    _number(cell.get("points", ""), "points", path),
                    _number(cell.get("max_points", ""), "max_points", path),
                    cell.get("message", ""),
                    cell.get("hint", ""),
                    cell.get("mistake", ""),
                    cell.get("integrity", ""),
                )
            )
    return rows


def merge_reports(paths: Iterable[Path | str]) -> list[GradeRow]:
    """The rows of several reports (e.g. one per shard of a batch job); a row graded twice is an error."""
    rows: list[GradeRow] = []
    seen: dict[tuple[str, str, str], Path | str] = {}
    for path in paths:
        for row in read_report(path):
            key = (row.student, row.notebook, row.exercise)
            if key in seen:
                raise ValueError(f"{row.student}/{row.notebook}/{row.exercise} is in both {seen[key]} and {path}")
            seen[key] = path
            rows.append(row)
    return rows


def summary_table(rows: Sequence[GradeRow]) -> str:
    """A plain-text table for the terminal, one line per row."""
    heads = ("student", "notebook", "exercise", "status", "points")
    values = [
        (r.student, r.notebook, r.exercise, r.status, f"{points_text(r.points)}/{points_text(r.max_points)}")
        for r in rows
    ]
    widths = [max([len(h)] + [len(v[i]) for v in values]) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)) + "  message"]
    lines.append("-" * len(lines[0]))
    for r, v in zip(rows, values, strict=True):
        lines.append("  ".join(x.ljust(w) for x, w in zip(v, widths, strict=True)) + "  " + r.message[:100])
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items() if n or s in STATUSES[:5]))
    return "\n".join(lines)
