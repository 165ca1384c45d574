"""From grade rows to a gradebook: course totals, LMS imports, what the class got wrong, feedback.

Everything here is pure bookkeeping over the report's rows and the course's outline (notebook →
exercise → points, from the instructor's ``--source`` notebooks), so that totals are over the whole
course: a notebook a student did not hand in counts 0 of its points, and a student on the roster
with nothing at all is still a line of the gradebook.

Every string that came from a submission (a student's folder name, a check's message quoting the
student's answer) is hostile: CSV cells go through :func:`~.reports.safe_cell`, HTML through
:func:`html.escape`, and feedback file names are made from the student id without ever leaving the
feedback folder.

The roster (``--roster FILE``) is either one student id per line (the submission folder's name), or
a CSV whose header has a ``student`` column and any of ``name``, ``canvas_id``, ``sis_user_id``,
``section``, ``sid`` and ``email``: the fields the LMS files need (see :func:`read_roster`).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import html
import io
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .reports import GradeRow, atomic_csv, points_text

__all__ = [
    "GRADEBOOKS",
    "ROSTER_FIELDS",
    "CourseTotals",
    "ExerciseSummary",
    "RosterEntry",
    "class_summary",
    "course_totals",
    "feedback_name",
    "read_roster",
    "summary_html",
    "terminal_summary",
    "write_canvas",
    "write_feedback",
    "write_gradescope",
    "write_summary_html",
    "write_totals",
]

GRADEBOOKS = ("canvas", "gradescope")
ROSTER_FIELDS = ("student", "name", "canvas_id", "sis_user_id", "section", "sid", "email")
OTHER_WRONG = "other wrong answers"


@dataclass(frozen=True)
class RosterEntry:
    """One student of the course, with the fields an LMS import needs (empty where the course has none)."""

    student: str
    name: str = ""
    canvas_id: str = ""
    sis_user_id: str = ""
    section: str = ""
    sid: str = ""
    email: str = ""


@dataclass(frozen=True)
class CourseTotals:
    """Per student, points per notebook over the whole course (0 for a notebook not handed in)."""

    notebooks: tuple[str, ...]
    maximum: dict[str, float]
    points: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def course_maximum(self) -> float:
        return sum(self.maximum.values())

    def total(self, student: str) -> float:
        return sum(self.points[student].values())


# --------------------------------------------------------------------------- the roster


def read_roster(path: Path | str) -> list[RosterEntry]:
    """The students of ``path``: one id per line, or a CSV with a ``student`` column (see the module).

    Blank lines and lines starting with ``#`` are skipped in the one-id-per-line form. A student
    listed twice, an id with a comma, or a CSV header without ``student`` raises ``ValueError``
    naming the file and line.
    """
    text = Path(path).read_text(encoding="utf-8-sig")
    lines = text.splitlines()
    first = next((line for line in lines if line.strip() and not line.startswith("#")), "")
    if "," in first and "student" in [c.strip().lower() for c in first.split(",")]:
        return _roster_csv(path, text)
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        student = line.strip()
        if not student or student.startswith("#"):
            continue
        if "," in student:
            raise ValueError(
                f"--roster {path}, line {number}: {student[:40]!r} has a comma; a CSV roster needs a "
                f"header with a 'student' column"
            )
        if student in seen:
            raise ValueError(f"--roster {path}, line {number}: {student!r} is already on line {seen[student]}")
        seen[student] = number
        entries.append(RosterEntry(student))
    return entries


def _roster_csv(path: Path | str, text: str) -> list[RosterEntry]:
    reader = csv.DictReader(io.StringIO(text))
    columns = {c.strip().lower(): c for c in reader.fieldnames or []}
    unknown = sorted(set(columns) - set(ROSTER_FIELDS))
    if unknown:
        raise ValueError(f"--roster {path}: unknown columns {', '.join(unknown)} (known: {', '.join(ROSTER_FIELDS)})")
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(reader, start=2):
        values = {key: (line.get(column) or "").strip() for key, column in columns.items()}
        student = values.get("student", "")
        if not student:
            raise ValueError(f"--roster {path}, line {number}: no student id")
        if student in seen:
            raise ValueError(f"--roster {path}, line {number}: {student!r} is already on line {seen[student]}")
        seen[student] = number
        entries.append(RosterEntry(**values))
    return entries


# --------------------------------------------------------------------------- totals


def course_totals(
    rows: Iterable[GradeRow], outline: Mapping[str, Mapping[str, float]], roster: Sequence[RosterEntry] = ()
) -> CourseTotals:
    """Points per student and notebook over the whole course (``outline``: notebook → exercise → points).

    Students are everyone in the rows and on the roster, sorted; rows of notebooks outside the
    outline are left out (they carry no points of this course).
    """
    rows = list(rows)
    students = sorted({r.student for r in rows} | {e.student for e in roster})
    totals = CourseTotals(
        tuple(outline),
        {nb: float(sum(ex.values())) for nb, ex in outline.items()},
        {s: dict.fromkeys(outline, 0.0) for s in students},
    )
    for r in rows:
        if r.notebook in outline and r.exercise in outline[r.notebook] and r.status == "passed":
            totals.points[r.student][r.notebook] += r.points
    return totals


def write_totals(totals: CourseTotals, path: Path | str) -> Path:
    """``student, <notebook>…, total, max``: one row per student, the course's maximum in every row."""
    header = ["student", *totals.notebooks, "total", "max"]
    atomic_csv(
        Path(path),
        header,
        (
            [
                s,
                *(points_text(totals.points[s][nb]) for nb in totals.notebooks),
                points_text(totals.total(s)),
                points_text(totals.course_maximum),
            ]
            for s in totals.points
        ),
    )
    return Path(path)


def _roster_by_student(roster: Sequence[RosterEntry], totals: CourseTotals) -> list[RosterEntry]:
    known = {e.student: e for e in roster}
    return [known.get(s, RosterEntry(s)) for s in totals.points]


def write_canvas(totals: CourseTotals, roster: Sequence[RosterEntry], path: Path | str) -> Path:
    """Canvas's gradebook import: ``Student, ID, SIS User ID, Section``, one column per notebook, and the
    ``Points Possible`` row Canvas's own export has. Canvas matches a student by ``ID`` (its user id) or
    ``SIS User ID``; without either (no roster fields) the row carries the student id as the name only."""
    header = ["Student", "ID", "SIS User ID", "Section", *totals.notebooks]
    possible = ["Points Possible", "", "", "", *(points_text(totals.maximum[nb]) for nb in totals.notebooks)]
    rows = [
        [
            e.name or e.student,
            e.canvas_id,
            e.sis_user_id,
            e.section,
            *(points_text(totals.points[e.student][nb]) for nb in totals.notebooks),
        ]
        for e in _roster_by_student(roster, totals)
    ]
    atomic_csv(Path(path), header, [possible, *rows])
    return Path(path)


def write_gradescope(totals: CourseTotals, roster: Sequence[RosterEntry], path: Path | str) -> Path:
    """Gradescope's score import for one assignment worth the whole course: ``Name, SID, Email, Score``.
    Gradescope matches a student by ``Email`` (or ``SID``); the course fills them in through the roster."""
    rows = [
        [e.name or e.student, e.sid, e.email, points_text(totals.total(e.student))]
        for e in _roster_by_student(roster, totals)
    ]
    atomic_csv(Path(path), ["Name", "SID", "Email", "Score"], rows)
    return Path(path)


# --------------------------------------------------------------------------- what the class got wrong


@dataclass(frozen=True)
class ExerciseSummary:
    """One exercise over the class: counts per status and per named mistake."""

    notebook: str
    exercise: str
    students: int
    statuses: dict[str, int]
    mistakes: list[tuple[str, int]]

    @property
    def pass_rate(self) -> float:
        return self.statuses.get("passed", 0) / self.students if self.students else 0.0


def class_summary(
    rows: Iterable[GradeRow], outline: Mapping[str, Mapping[str, float]], totals: CourseTotals
) -> list[ExerciseSummary]:
    """Per exercise of the course: how many students passed, failed (by named mistake), did not attempt
    (a notebook not handed in counts here) or errored."""
    latest = {(r.student, r.notebook, r.exercise): r for r in rows}
    summaries = []
    for notebook, exercises in outline.items():
        for exercise in exercises:
            statuses: Counter[str] = Counter()
            mistakes: Counter[str] = Counter()
            for student in totals.points:
                row = latest.get((student, notebook, exercise))
                status = row.status if row is not None else "not attempted"
                statuses[status] += 1
                if row is not None and status == "failed":
                    mistakes[row.mistake or OTHER_WRONG] += 1
            summaries.append(
                ExerciseSummary(notebook, exercise, len(totals.points), dict(statuses), mistakes.most_common())
            )
    return summaries


def terminal_summary(summaries: Sequence[ExerciseSummary], totals: CourseTotals, top: int = 3) -> str:
    """A few lines for the terminal: the class, its mean, the most common named mistakes."""
    students = len(totals.points)
    if not students:
        return "class: no students"
    mean = sum(totals.total(s) for s in totals.points) / students
    lines = [f"class: {students} students, mean {mean:.3g} of {points_text(totals.course_maximum)} points"]
    named = sorted(
        ((count, s.exercise, mistake) for s in summaries for mistake, count in s.mistakes if mistake != OTHER_WRONG),
        reverse=True,
    )[:top]
    for count, exercise, mistake in named:
        lines.append(f"  {count} of {students} on {exercise}: {mistake}")
    hardest = min(summaries, key=lambda s: s.pass_rate, default=None)
    if hardest is not None:
        lines.append(f"  hardest exercise: {hardest.exercise} ({hardest.pass_rate:.0%} passed)")
    return "\n".join(lines)


def _figure_png(totals: CourseTotals) -> str:
    """A histogram of course totals as a base64 PNG (matplotlib's Agg canvas, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(6.4, 3.0), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    values = [totals.total(s) for s in totals.points]
    top = max(totals.course_maximum, 1.0)
    step = max(1, math.ceil(top / 20))  # bars centred on whole points, at most about 20 of them
    edges = [step * k - step / 2 for k in range(math.ceil(top / step) + 2)]
    axes.hist(values, bins=edges, color="#4c72b0", edgecolor="white")
    axes.set_xlabel(f"course total (of {points_text(totals.course_maximum)} points)")
    axes.set_ylabel("students")
    axes.set_xlim(edges[0], edges[-1])
    locator = axes.yaxis.get_major_locator()
    if isinstance(locator, MaxNLocator):  # the default AutoLocator is one
        locator.set_params(integer=True)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode()


_STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:60em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}
th{background:#f3f3f3}.track{background:#e5e5e5;width:4em;height:.8em;display:inline-block;vertical-align:middle}
.bar{background:#1b7837;height:.8em;display:block}.num{text-align:right}.rate,.id{white-space:nowrap}
h2{margin-top:1.6em}small{color:#666}"""


def summary_html(summaries: Sequence[ExerciseSummary], totals: CourseTotals) -> str:
    """The class summary page: self-contained (inline CSS, the figure as a data URI), every string escaped."""
    e = html.escape
    students = len(totals.points)
    means = {
        nb: (sum(totals.points[s][nb] for s in totals.points) / students if students else 0.0)
        for nb in totals.notebooks
    }
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Class summary</title>",
        f"<style>{_STYLE}</style></head><body><h1>Class summary</h1>",
        f"<p>{students} students; course maximum {e(points_text(totals.course_maximum))} points.</p>",
        "<h2>Course totals</h2>",
        f"<img alt='histogram of course totals' src='data:image/png;base64,{_figure_png(totals)}'>",
        "<h2>Mean score per notebook</h2><table><tr><th>notebook</th><th>mean</th><th>of</th></tr>",
    ]
    parts += [
        f"<tr><td>{e(nb)}</td><td class='num'>{means[nb]:.3g}</td>"
        f"<td class='num'>{e(points_text(totals.maximum[nb]))}</td></tr>"
        for nb in totals.notebooks
    ]
    parts.append(
        "</table><h2>Exercises</h2><table><tr><th>notebook</th><th>exercise</th><th>passed</th>"
        "<th>failed: the mistakes the checks named</th><th>not attempted</th><th>errored</th></tr>"
    )
    for s in summaries:
        mistakes = "<br>".join(f"{count} × {e(mistake)}" for mistake, count in s.mistakes) or "–"
        rate = f"{s.pass_rate:.0%}"
        parts.append(
            f"<tr><td>{e(s.notebook)}</td><td class='id'>{e(s.exercise)}</td>"
            f"<td class='rate'><span class='track'><span class='bar' style='width:{100 * s.pass_rate:.0f}%'>"
            f"</span></span> {rate} "
            f"<small>({s.statuses.get('passed', 0)}/{s.students})</small></td><td>{mistakes}</td>"
            f"<td class='num'>{s.statuses.get('not attempted', 0)}</td>"
            f"<td class='num'>{s.statuses.get('errored', 0)}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "\n".join(parts)


def write_summary_html(summaries: Sequence[ExerciseSummary], totals: CourseTotals, path: Path | str) -> Path:
    """Write :func:`summary_html` atomically."""
    import os
    import tempfile

    path = Path(path)
    handle = tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False)
    with handle:
        handle.write(summary_html(summaries, totals))
    os.replace(handle.name, path)
    return path


# --------------------------------------------------------------------------- feedback for students

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def feedback_name(student: str) -> str:
    """A file or folder name for ``student`` that stays inside the feedback folder, whatever the id is.

    Characters other than letters, digits, ``.``, ``_`` and ``-`` become ``_``; leading dots go; an id
    that had to change gets a short hash of the original, so two ids never share a name.
    """
    cleaned = _UNSAFE.sub("_", student).lstrip(".")[:80] or "student"
    if cleaned != student:
        cleaned += "-" + hashlib.sha256(student.encode()).hexdigest()[:8]
    return cleaned


def _feedback_markdown(student: str, notebook: str, rows: Sequence[GradeRow], maximum: float) -> str:
    """The feedback text; every string from a submission is HTML-escaped (Markdown viewers render HTML)."""
    e = html.escape
    points = sum(r.points for r in rows)
    lines = [
        f"# {e(notebook)}: feedback for {e(student)}",
        "",
        f"**{points_text(points)} of {points_text(maximum)} points.**",
        "",
    ]
    if not rows:
        lines.append("Nothing was handed in for this notebook.")
    for r in rows:
        lines.append(f"## {e(r.exercise)}: {r.status} ({points_text(r.points)}/{points_text(r.max_points)})")
        if r.message:
            lines += ["", e(r.message)]
        if r.hint:
            lines += ["", f"Hint: {e(r.hint)}"]
        lines.append("")
    notes = sorted({r.integrity for r in rows if r.integrity})
    if notes:
        lines += ["## Notes from the grader", "", *(f"- {e(note)}" for note in notes), ""]
    return "\n".join(lines)


def write_feedback(
    rows: Iterable[GradeRow], outline: Mapping[str, Mapping[str, float]], totals: CourseTotals, folder: Path | str
) -> list[Path]:
    """One Markdown file per student and notebook of the course: ``<folder>/<student>/<notebook>.md``."""
    folder = Path(folder)
    by_key: dict[tuple[str, str], list[GradeRow]] = {}
    for r in rows:
        by_key.setdefault((r.student, r.notebook), []).append(r)
    written = []
    for student in totals.points:
        own = folder / feedback_name(student)
        own.mkdir(parents=True, exist_ok=True)
        for notebook in outline:
            path = own / f"{feedback_name(notebook)}.md"
            path.write_text(
                _feedback_markdown(student, notebook, by_key.get((student, notebook), []), totals.maximum[notebook]),
                encoding="utf-8",
            )
            written.append(path)
    return written
