"""From grade rows to a gradebook: course totals, LMS imports, what the class got wrong, feedback.

Everything here is bookkeeping over the report's rows, the course (:class:`~.course.Course`: the
assignments of ``course.toml``, or one assignment per notebook without it) and when each student
handed in (:class:`SubmissionTime`, from the collector's ``collected.csv`` or file times).
:func:`write_gradebook` writes every file of a run and returns the terminal summary.

Two kinds of file, on purpose. ``<report>_totals.csv`` is over the whole course: an assignment a
student did not hand in counts 0, and a student on the roster with nothing at all is a line. The
LMS imports (Canvas, Gradescope) and the feedback files hold only what this run graded: a column
(or file) per assignment with a row in this run, a score only for a student who handed some of it
in, because an LMS import overwrites what is there and last week's grades must survive this week's
run.

Every string that came from a submission (a student's folder name, a file name, a check's message
quoting the student's answer) is hostile: CSV cells go through :func:`~.reports.safe_cell`, HTML
through :func:`html.escape`, Markdown through :func:`markdown_text` (backslash escapes, never HTML
entities), the terminal through :func:`printable`, and feedback file names are made from the
student id without ever leaving the feedback folder. Every file is written atomically with the
umask's mode (:func:`~.reports.atomic_write`).

The roster (``--roster FILE``) is either one student id per line (the submission folder's name), or
a CSV whose header has a ``student`` column and any of ``name``, ``canvas_id``, ``sis_user_id``,
``sis_login_id``, ``section``, ``sid`` and ``email``: the fields the LMS files need (see :func:`read_roster`).

Longer than 400 lines because the five outputs of a run (totals, two LMS files, the summary page,
the feedback) share one model of who handed what in, when, and what it scored; split across modules
they would each re-derive it.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import html
import io
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .course import Assignment, Course, Lateness, duration_text
from .reports import GradeRow, _unquoted, atomic_csv, atomic_text, points_text, printable

__all__ = [
    "GRADEBOOKS",
    "HAND_IN_KINDS",
    "ROSTER_FIELDS",
    "CourseTotals",
    "ExerciseSummary",
    "HandInNote",
    "RosterEntry",
    "Score",
    "SubmissionTime",
    "class_summary",
    "course_totals",
    "feedback_name",
    "hand_in_notes",
    "markdown_text",
    "printable",
    "read_collected",
    "read_roster",
    "row_points",
    "summary_html",
    "terminal_summary",
    "write_canvas",
    "write_feedback",
    "write_gradebook",
    "write_gradescope",
    "write_summary_html",
    "write_totals",
]

GRADEBOOKS = ("canvas", "gradescope")
ROSTER_FIELDS = ("student", "name", "canvas_id", "sis_user_id", "section", "sid", "email", "sis_login_id")
OTHER_WRONG = "other wrong answers"
NOT_HANDED_IN = "not handed in"
_NOT_GRADED = ("duplicate", "invalid")


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
    sis_login_id: str = ""


@dataclass(frozen=True)
class SubmissionTime:
    """When a student's notebook was handed in.

    ``submitted_at`` is None when unknown; ``late`` is the collector's own verdict (None when it gave
    none), used only when the course has no due time or the time is unknown; ``ignored`` lists the
    files the collector did not keep, as ``(file name, note)``.
    """

    submitted_at: datetime | None
    late: bool | None
    source_file: str = ""
    ignored: tuple[tuple[str, str], ...] = ()


# --------------------------------------------------------------------------- text that came from students

# What Markdown would read as markup: raw HTML and autolinks (<), links ([ ]), code (`), emphasis (*, _ at a
# word's edge, ~), an entity (&name;), the escape itself; and, at a line's start, headings, quotes, list markers,
# and the lines of = or - that underline a heading (a number like -1 is left alone).
_MD_INLINE = re.compile(r"[\\`*\[\]<~]|&(?=#?\w+;)|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
_MD_LINE_START = re.compile(r"^([ \t]*)([#>]|[+-](?=[ \t]|$)|[=-]+(?=[ \t]*$)|\d+(?=[.)]))", re.MULTILINE)


def markdown_text(text: str, *, inline: bool = False) -> str:
    """``text`` as Markdown shows it literally: backslash escapes where Markdown needs them, never HTML entities.

    ``inline=True`` also escapes newlines (for a heading or a list item).
    """
    text = printable(text.replace("\r\n", "\n"), keep_newlines=not inline)
    text = _MD_INLINE.sub(lambda m: "\\" + m.group(), text)

    def line_start(match: re.Match[str]) -> str:
        marker = match.group(2)
        return match.group(1) + (marker + "\\" if marker[0].isdigit() else "\\" + marker)

    return _MD_LINE_START.sub(line_start, text)


# --------------------------------------------------------------------------- the roster and the collector


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


_COLLECTED = ("student", "notebook", "source_file", "submitted_at", "late", "kept")
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


def _flag(text: str, column: str, where: str, *, empty: bool) -> bool | None:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if empty and not value:
        return None
    raise ValueError(f"{where}: column {column} holds {text[:20]!r} (allowed: true, false)")


def read_collected(path: Path | str) -> dict[tuple[str, str], SubmissionTime]:
    """Per (student, notebook), when it was handed in, from the collector's ``collected.csv``.

    The columns are ``student, notebook, source_file, submitted_at, late, kept[, note]``, one row per
    file. Kept rows give the time (the latest when a notebook has several) and the late flag; rows
    with ``kept`` false are the files the collector set aside, named in the feedback (rows of no student
    are left out). ``submitted_at`` is ISO 8601; a time without a timezone offset, like an empty cell,
    counts as unknown, and the ``late`` flag decides. ``ValueError`` names the line of anything else.
    """
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _COLLECTED if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a collector's list (no column {', '.join(missing)})")
        kept: dict[tuple[str, str], list[tuple[datetime | None, bool | None, str]]] = defaultdict(list)
        ignored: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for number, line in enumerate(reader, start=2):
            cell = {k: _unquoted(v) if isinstance(v, str) else "" for k, v in line.items() if k is not None}
            where = f"{path}, line {number}"
            key = (cell["student"], cell["notebook"])
            if not key[0]:
                continue  # a file the collector matched to no student: its own summary lists it
            if not _flag(cell["kept"], "kept", where, empty=False):
                ignored[key].append((cell["source_file"], cell.get("note", "")))
                continue
            kept[key].append(
                (
                    _moment(cell["submitted_at"], where),
                    _flag(cell["late"], "late", where, empty=True),
                    cell["source_file"],
                )
            )
    found: dict[tuple[str, str], SubmissionTime] = {}
    for key in sorted(set(kept) | set(ignored)):
        files = kept.get(key, [])
        times = [t for t, _, _ in files if t is not None]
        flags = [flag for _, flag, _ in files if flag is not None]
        found[key] = SubmissionTime(
            max(times) if times else None,
            any(flags) if flags else None,
            ", ".join(name for _, _, name in files),
            tuple(ignored.get(key, [])),
        )
    return found


def _moment(text: str, where: str) -> datetime | None:
    """An ISO 8601 time; None when empty or without a timezone offset (it cannot be compared with a due time)."""
    if not text.strip():
        return None
    try:
        value = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"{where}: submitted_at {text[:40]!r} is not an ISO 8601 time") from None
    return value if value.utcoffset() is not None else None


# --------------------------------------------------------------------------- totals


@dataclass(frozen=True)
class Score:
    """One student's result on one assignment: ``earned`` (extra and partial credit included), the late
    ``penalty`` actually deducted, and whether anything of it was handed in."""

    earned: float = 0.0
    penalty: float = 0.0
    handed_in: bool = False
    lateness: Lateness | None = None

    @property
    def points(self) -> float:
        return max(0.0, self.earned - self.penalty)


@dataclass(frozen=True)
class CourseTotals:
    """Per student and assignment, the score over the whole course (0 for an assignment not handed in).

    ``graded`` lists the assignments with a row in this run (in course order); ``handed_in`` the
    (student, notebook) pairs with a row; ``late`` the lateness of each late (student, notebook).
    """

    course: Course
    scores: dict[str, dict[str, Score]]
    graded: tuple[str, ...] = ()
    handed_in: frozenset[tuple[str, str]] = frozenset()
    late: dict[tuple[str, str], Lateness] = field(default_factory=dict)

    @property
    def students(self) -> list[str]:
        return list(self.scores)

    @property
    def course_maximum(self) -> float:
        return sum(a.maximum for a in self.course.assignments)

    def points(self, student: str, assignment: str) -> float:
        return self.scores[student][assignment].points

    def total(self, student: str) -> float:
        return sum(score.points for score in self.scores[student].values())


def _latest(rows: Iterable[GradeRow]) -> dict[tuple[str, str, str], GradeRow]:
    """The row of each (student, notebook, exercise); a later row replaces an earlier one."""
    return {(r.student, r.notebook, r.exercise): r for r in rows if r.status not in _NOT_GRADED}


def row_points(row: GradeRow, assignment: Assignment) -> float:
    """A row's points on the course's scale: the row's share of its maximum times the course's points."""
    key = (row.notebook, row.exercise)
    counted = row.status == "passed" or (row.status == "failed" and key in assignment.partial_credit)
    if key not in assignment.points or not counted:
        return 0.0
    share = 1.0 if row.max_points <= 0 else min(1.0, max(0.0, row.points / row.max_points))
    return share * assignment.points[key]


def course_totals(
    rows: Iterable[GradeRow],
    outline: Mapping[str, Mapping[str, float]],
    roster: Sequence[RosterEntry] = (),
    *,
    course: Course | None = None,
    submissions: Mapping[tuple[str, str], SubmissionTime] | None = None,
) -> CourseTotals:
    """Scores per student and assignment over the whole course, late penalties applied.

    Students are everyone in the rows and on the roster, sorted. Without ``course`` each notebook of
    ``outline`` is an assignment. An assignment is late when its latest notebook is
    (:meth:`~.course.Course.lateness`); its penalty is a fraction of the assignment's maximum, never
    more than was earned. Rows of notebooks outside the course carry no points.
    """
    rows = list(rows)
    course = course if course is not None else Course.from_outline(outline)
    submissions = submissions or {}
    notebooks = {nb for a in course.assignments for nb in a.notebooks}
    handed = frozenset((r.student, r.notebook) for r in rows if r.notebook in notebooks)
    latest = _latest(rows)
    students = sorted({r.student for r in rows} | {e.student for e in roster})
    scores: dict[str, dict[str, Score]] = {}
    late: dict[tuple[str, str], Lateness] = {}
    for student in students:
        scores[student] = {}
        for assignment in course.assignments:
            earned = sum(
                row_points(row, assignment)
                for nb, ex in assignment.points
                if (row := latest.get((student, nb, ex))) is not None
            )
            mine = [nb for nb in assignment.notebooks if (student, nb) in handed]
            times = {nb: submissions[(student, nb)] for nb in mine if (student, nb) in submissions}
            for nb, time in times.items():
                own = course.lateness(student, assignment, time.submitted_at, time.late)
                if own is not None and own.late:
                    late[(student, nb)] = own
            moments = [t.submitted_at for t in times.values() if t.submitted_at is not None]
            flagged = any(t.late for t in times.values())
            lateness = course.lateness(student, assignment, max(moments) if moments else None, flagged)
            penalty = 0.0
            if lateness is not None and lateness.late:
                penalty = earned if not lateness.accepted else min(earned, lateness.fraction * assignment.maximum)
            scores[student][assignment.key] = Score(earned, penalty, bool(mine), lateness)
    handed_notebooks = {nb for _, nb in handed}
    graded = tuple(a.key for a in course.assignments if handed_notebooks & set(a.notebooks))
    return CourseTotals(course, scores, graded, handed, late)


def _beside(report: Path, suffix: str) -> Path:
    return report.with_name(f"{report.stem}_{suffix}")


def write_totals(totals: CourseTotals, path: Path | str) -> Path:
    """``student, <assignment>…, total, max``: one row per student, every assignment of the course (0 when not
    handed in), late penalties applied, the course's maximum in every row."""
    assignments = totals.course.assignments
    header = ["student", *(a.name for a in assignments), "total", "max"]
    return atomic_csv(
        Path(path),
        header,
        (
            [
                s,
                *(points_text(totals.points(s, a.key)) for a in assignments),
                points_text(totals.total(s)),
                points_text(totals.course_maximum),
            ]
            for s in totals.students
        ),
    )


def _roster_by_student(roster: Sequence[RosterEntry], students: Iterable[str]) -> list[RosterEntry]:
    known = {e.student: e for e in roster}
    return [known.get(s, RosterEntry(s)) for s in students]


def _graded_students(totals: CourseTotals, keys: Sequence[str]) -> list[str]:
    return [s for s in totals.students if any(totals.scores[s][k].handed_in for k in keys)]


def write_canvas(totals: CourseTotals, roster: Sequence[RosterEntry], path: Path | str) -> Path:
    """Canvas's gradebook import, one column per assignment graded in this run, and the ``Points Possible`` row.

    The student columns are ``Student, ID, SIS User ID, SIS Login ID, Section``: Canvas's importer
    (canvas-lms ``GradebookImporter``) refuses a header whose student columns do not end with
    ``Section``, and reads ``SIS User ID`` only followed by ``SIS Login ID``. It matches a student by
    ``ID`` (the Canvas user id), then the SIS ids, then the name. Only students who handed something in
    are rows, and a cell is empty for an assignment they did not hand in: Canvas replaces what it holds
    with what the file says.
    """
    assignments = [totals.course.assignment(k) for k in totals.graded]
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *(a.name for a in assignments)]
    possible = ["Points Possible", "", "", "", "", *(points_text(a.maximum) for a in assignments)]
    rows = [
        [
            e.name or e.student,
            e.canvas_id,
            e.sis_user_id,
            e.sis_login_id,
            e.section,
            *(
                points_text(score.points) if (score := totals.scores[e.student][a.key]).handed_in else ""
                for a in assignments
            ),
        ]
        for e in _roster_by_student(roster, _graded_students(totals, totals.graded))
    ]
    return atomic_csv(Path(path), header, [possible, *rows])


def write_gradescope(totals: CourseTotals, roster: Sequence[RosterEntry], report: Path | str) -> list[Path]:
    """Gradescope's score import, ``Name, SID, Email, Score``, for each assignment graded in this run: beside
    ``report`` as ``<report>_gradescope.csv`` when there is one, ``<report>_gradescope_<assignment>.csv`` each
    when there are several. Only students who handed the assignment in are rows. Gradescope matches a student
    by ``Email`` (or ``SID``); the course fills them in through the roster."""
    report = Path(report)
    written = []
    for key in totals.graded:
        suffix = "gradescope.csv" if len(totals.graded) == 1 else f"gradescope_{feedback_name(key)}.csv"
        rows = [
            [e.name or e.student, e.sid, e.email, points_text(totals.points(e.student, key))]
            for e in _roster_by_student(roster, _graded_students(totals, [key]))
        ]
        written.append(atomic_csv(_beside(report, suffix), ["Name", "SID", "Email", "Score"], rows))
    return written


# --------------------------------------------------------------------------- who handed in what


@dataclass(frozen=True)
class HandInNote:
    """One thing the instructor should know about a student's notebook: ``kind`` is one of :data:`HAND_IN_KINDS`."""

    student: str
    notebook: str
    kind: str
    detail: str = ""


HAND_IN_KINDS = (NOT_HANDED_IN, "not attempted", "late", "duplicate or set aside", "invalid", "integrity")


def _notebook_of(row: GradeRow, notebooks: Sequence[str]) -> str | None:
    """The course notebook a duplicate or invalid file was meant for (its name is the file's, not the notebook's)."""
    if row.notebook in notebooks:
        return row.notebook
    named = re.search(r" for (\S+), ", row.message)
    if named and named.group(1) in notebooks:
        return named.group(1)
    prefixed = [nb for nb in notebooks if row.notebook.startswith(nb)]
    return max(prefixed, key=len) if prefixed else None


def _graded_notebooks(totals: CourseTotals) -> list[str]:
    return [nb for key in totals.graded for nb in totals.course.assignment(key).notebooks]


def _common_notes(rows: Sequence[GradeRow]) -> set[str]:
    """Integrity notes on every row of the run (such as an unconfined run's): said once, not per student."""
    per_row = [set(filter(None, r.integrity.split("; "))) for r in rows]
    return set.intersection(*per_row) if per_row else set()


def hand_in_notes(
    rows: Sequence[GradeRow],
    totals: CourseTotals,
    submissions: Mapping[tuple[str, str], SubmissionTime] | None = None,
) -> list[HandInNote]:
    """Per notebook graded in this run: who did not hand it in, left exercises not attempted, was late, had
    files not graded (duplicates, files the collector set aside, invalid files) or integrity notes."""
    submissions = submissions or {}
    notebooks = _graded_notebooks(totals)
    common = _common_notes(rows)
    notes: list[HandInNote] = []
    by_key: dict[tuple[str, str], list[GradeRow]] = defaultdict(list)
    for r in rows:
        if r.status in _NOT_GRADED:
            notebook = _notebook_of(r, notebooks) or r.notebook
            kind = "invalid" if r.status == "invalid" else "duplicate or set aside"
            notes.append(HandInNote(r.student, notebook, kind, f"{r.notebook}: {r.message}"))
        else:
            by_key[(r.student, r.notebook)].append(r)
    for (student, notebook), time in submissions.items():
        for name, why in time.ignored:
            detail = f"{name}: set aside by the collector" + (f" ({why})" if why else "")
            notes.append(HandInNote(student, notebook or "(no notebook)", "duplicate or set aside", detail))
    for notebook in notebooks:
        for student in totals.students:
            own = by_key.get((student, notebook), [])
            if (student, notebook) not in totals.handed_in:
                notes.append(HandInNote(student, notebook, NOT_HANDED_IN))
                continue
            skipped = [r.exercise for r in own if r.status == "not attempted"]
            if skipped:
                notes.append(HandInNote(student, notebook, "not attempted", ", ".join(skipped)))
            lateness = totals.late.get((student, notebook))
            if lateness is not None:
                notes.append(HandInNote(student, notebook, "late", _late_brief(lateness)))
            remarks = sorted({n for r in own for n in r.integrity.split("; ") if n and n not in common})
            if remarks:
                notes.append(HandInNote(student, notebook, "integrity", "; ".join(remarks)))
    order = {kind: i for i, kind in enumerate(HAND_IN_KINDS)}
    return sorted(notes, key=lambda n: (n.notebook, order[n.kind], n.student))


def _late_brief(lateness: Lateness) -> str:
    if lateness.late_by is None:
        if lateness.due is None:
            return "marked late, no due time"
        return (
            "marked late, time unknown ("
            + ("not accepted" if not lateness.accepted else f"one day: −{_percent(lateness.fraction)}")
            + ")"
        )
    cost = "not accepted" if not lateness.accepted else f"−{_percent(lateness.fraction)}"
    return f"{duration_text(lateness.late_by)} late ({cost})"


def _percent(fraction: float) -> str:
    return f"{100 * fraction:.4g} %"


# --------------------------------------------------------------------------- what the class got wrong


@dataclass(frozen=True)
class ExerciseSummary:
    """One exercise over the class: counts per status (``not handed in`` included) and per named mistake."""

    notebook: str
    exercise: str
    students: int
    statuses: dict[str, int]
    mistakes: list[tuple[str, int]]

    @property
    def pass_rate(self) -> float:
        return self.statuses.get("passed", 0) / self.students if self.students else 0.0


def class_summary(rows: Iterable[GradeRow], totals: CourseTotals) -> list[ExerciseSummary]:
    """Per exercise of the assignments graded in this run: how many students passed, failed (by named
    mistake), did not attempt it, did not hand its notebook in, or errored."""
    latest = _latest(rows)
    summaries = []
    for key in totals.graded:
        assignment = totals.course.assignment(key)
        for notebook, exercise in assignment.points:
            statuses: Counter[str] = Counter()
            mistakes: Counter[str] = Counter()
            for student in totals.students:
                row = latest.get((student, notebook, exercise))
                if row is None:
                    status = NOT_HANDED_IN if (student, notebook) not in totals.handed_in else "not attempted"
                else:
                    status = row.status
                statuses[status] += 1
                if row is not None and status == "failed":
                    mistakes[row.mistake or OTHER_WRONG] += 1
            summaries.append(
                ExerciseSummary(notebook, exercise, len(totals.students), dict(statuses), mistakes.most_common())
            )
    return summaries


def terminal_summary(
    summaries: Sequence[ExerciseSummary], totals: CourseTotals, notes: Sequence[HandInNote] = (), top: int = 3
) -> str:
    """A few lines for the terminal: the class, its mean, hand-in counts, the most common named mistakes.
    Every string from a submission has its control characters escaped (:func:`printable`)."""
    students = len(totals.students)
    if not students:
        return "class: no students"
    mean = sum(totals.total(s) for s in totals.students) / students
    lines = [f"class: {students} students, mean {mean:.3g} of {points_text(totals.course_maximum)} points"]
    graded = ", ".join(printable(totals.course.assignment(k).name) for k in totals.graded) or "nothing"
    lines.append(f"  graded in this run: {graded}")
    counts = Counter(n.kind for n in notes)
    if notes:
        lines.append("  " + ", ".join(f"{kind}: {counts[kind]}" for kind in HAND_IN_KINDS if counts[kind]))
    named = sorted(
        ((count, s.exercise, mistake) for s in summaries for mistake, count in s.mistakes if mistake != OTHER_WRONG),
        reverse=True,
    )[:top]
    for count, exercise, mistake in named:
        lines.append(f"  {count} of {students} on {printable(exercise)}: {printable(mistake)}")
    hardest = min(summaries, key=lambda s: s.pass_rate, default=None)
    if hardest is not None:
        lines.append(f"  hardest exercise: {printable(hardest.exercise)} ({hardest.pass_rate:.0%} passed)")
    return "\n".join(lines)


def _figure_png(totals: CourseTotals) -> str:
    """A histogram of course totals as a base64 PNG (matplotlib's Agg canvas, no pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    figure = Figure(figsize=(6.4, 3.0), dpi=110, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    values = [totals.total(s) for s in totals.students]
    top = max([totals.course_maximum, 1.0, *values])
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


def _hand_in_html(notes: Sequence[HandInNote], totals: CourseTotals, common: set[str]) -> list[str]:
    e = html.escape
    counts = Counter((n.notebook, n.kind) for n in notes)
    notebooks = _graded_notebooks(totals)
    parts = [
        "<h2>Handed in</h2><table id='hand-in'><tr><th>notebook</th>",
        *(f"<th>{e(kind)}</th>" for kind in HAND_IN_KINDS),
        "</tr>",
    ]
    for notebook in notebooks + sorted({n.notebook for n in notes} - set(notebooks)):
        cells = "".join(f"<td class='num'>{counts[(notebook, kind)]}</td>" for kind in HAND_IN_KINDS)
        parts.append(f"<tr><td>{e(notebook)}</td>{cells}</tr>")
    parts.append("</table>")
    if common:
        parts.append(f"<p>On every submission of this run: {e('; '.join(sorted(common)))}.</p>")
    if notes:
        parts.append("<table id='hand-in-list'><tr><th>notebook</th><th>student</th><th>what</th><th>detail</th></tr>")
        parts += [
            f"<tr><td>{e(n.notebook)}</td><td>{e(n.student)}</td><td>{e(n.kind)}</td><td>{e(n.detail)}</td></tr>"
            for n in notes
        ]
        parts.append("</table>")
    return parts


def summary_html(
    summaries: Sequence[ExerciseSummary],
    totals: CourseTotals,
    notes: Sequence[HandInNote] = (),
    common: Iterable[str] = (),
) -> str:
    """The class summary page: self-contained (inline CSS, the figure as a data URI), every string escaped."""
    e = html.escape
    students = len(totals.students)
    assignments = totals.course.assignments
    means = {
        a.key: (sum(totals.points(s, a.key) for s in totals.students) / students if students else 0.0)
        for a in assignments
    }
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Class summary</title>",
        f"<style>{_STYLE}</style></head><body><h1>Class summary</h1>",
        f"<p>{students} students; course maximum {e(points_text(totals.course_maximum))} points. Graded in this run: "
        f"{e(', '.join(totals.course.assignment(k).name for k in totals.graded) or 'nothing')}.</p>",
        "<h2>Course totals</h2>",
        f"<img alt='histogram of course totals' src='data:image/png;base64,{_figure_png(totals)}'>",
        "<h2>Mean score per assignment</h2><table><tr><th>assignment</th><th>mean</th><th>of</th></tr>",
    ]
    parts += [
        f"<tr><td>{e(a.name)}</td><td class='num'>{means[a.key]:.3g}</td>"
        f"<td class='num'>{e(points_text(a.maximum))}</td></tr>"
        for a in assignments
    ]
    parts.append("</table>")
    parts += _hand_in_html(notes, totals, set(common))
    parts.append(
        "<h2>Exercises</h2><table><tr><th>notebook</th><th>exercise</th><th>passed</th>"
        "<th>failed: the mistakes the checks named</th><th>not attempted</th><th>not handed in</th>"
        "<th>errored</th></tr>"
    )
    for s in summaries:
        mistakes = "<br>".join(f"{count} × {e(mistake)}" for mistake, count in s.mistakes) or "–"
        parts.append(
            f"<tr><td>{e(s.notebook)}</td><td class='id'>{e(s.exercise)}</td>"
            f"<td class='rate'><span class='track'><span class='bar' style='width:{100 * s.pass_rate:.0f}%'>"
            f"</span></span> {s.pass_rate:.0%} "
            f"<small>({s.statuses.get('passed', 0)}/{s.students})</small></td><td>{mistakes}</td>"
            f"<td class='num'>{s.statuses.get('not attempted', 0)}</td>"
            f"<td class='num'>{s.statuses.get(NOT_HANDED_IN, 0)}</td>"
            f"<td class='num'>{s.statuses.get('errored', 0)}</td></tr>"
        )
    parts.append("</table></body></html>")
    return "\n".join(parts)


def write_summary_html(
    summaries: Sequence[ExerciseSummary],
    totals: CourseTotals,
    path: Path | str,
    notes: Sequence[HandInNote] = (),
    common: Iterable[str] = (),
) -> Path:
    """Write :func:`summary_html` atomically, with the umask's mode."""
    return atomic_text(path, summary_html(summaries, totals, notes, common))


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


def _when(moment: datetime, zone: datetime | None = None) -> str:
    shown = moment.astimezone(zone.tzinfo) if zone is not None else moment
    return shown.isoformat(timespec="minutes")


def _lateness_lines(score: Score, assignment: Assignment, totals: CourseTotals) -> list[str]:
    """What lateness cost, in words: how late, the rule, the points."""
    late = score.lateness
    if late is None:
        return []
    what = "This notebook" if len(assignment.notebooks) == 1 else f"The assignment {markdown_text(assignment.name)}"
    policy = totals.course.late
    if late.due is None:
        return [f"{what} was marked late when it was collected; no due time is set for it, so no points were deducted."]
    if late.late_by is None or late.submitted_at is None:
        cost = (
            f"late work is not accepted: it scores 0 (−{points_text(score.penalty)} points)"
            if not late.accepted
            else f"it is charged as one started day late, {_percent(late.fraction)} of its "
            f"{points_text(assignment.maximum)} points: −{points_text(score.penalty)} points"
        )
        due = _when(late.due)
        return [f"{what} was marked late by the LMS, which does not say when it was handed in (due {due}): {cost}."]
    when = f"due {_when(late.due)}, handed in {_when(late.submitted_at, late.due)}"
    span = duration_text(late.late_by)
    if late.within_grace:
        return [f"{what} was handed in {span} after the due time ({when}), within the grace period: no penalty."]
    if not late.accepted:
        return [
            f"{what} was handed in {span} late ({when}). Late work is not accepted: it scores 0 "
            f"(−{points_text(score.penalty)} points)."
        ]
    days = f"{late.days} day{'s' if late.days != 1 else ''}"
    capped = " (the cap)" if late.fraction < policy.penalty_per_day * late.days else ""
    return [
        f"{what} was handed in {span} late ({when}): {days} at {_percent(policy.penalty_per_day)} a day, "
        f"{_percent(late.fraction)}{capped} of its {points_text(assignment.maximum)} points: "
        f"−{points_text(score.penalty)} points."
    ]


def _feedback_markdown(
    student: str,
    notebook: str,
    rows: Sequence[GradeRow],
    assignment: Assignment,
    totals: CourseTotals,
    not_graded: Sequence[str],
    common: set[str],
) -> str:
    """The feedback text: strings from a submission go through :func:`markdown_text` (no HTML entities)."""
    md = markdown_text
    score = totals.scores[student][assignment.key]
    own = {(nb, ex): p for (nb, ex), p in assignment.points.items() if nb == notebook}
    earned = sum(row_points(r, assignment) for r in rows if (r.notebook, r.exercise) in own)
    maximum = sum(p for key, p in own.items() if key not in assignment.extra_credit)
    lines = [f"# {md(notebook, inline=True)}: feedback for {md(student, inline=True)}", ""]
    extra = " (extra credit included)" if earned > maximum else ""
    lines += [f"**{points_text(earned)} of {points_text(maximum)} points** for this notebook{extra}.", ""]
    if len(assignment.notebooks) > 1 or score.penalty:
        lines += [
            f"{md(assignment.name, inline=True)}: **{points_text(score.points)} of "
            f"{points_text(assignment.maximum)} points**" + (", after the late penalty." if score.penalty else "."),
            "",
        ]
    lateness = _lateness_lines(score, assignment, totals)
    if lateness:
        lines += [*lateness, ""]
    if (student, notebook) not in totals.handed_in:
        lines += ["Nothing was handed in for this notebook.", ""]
    by_exercise = {r.exercise: r for r in rows}
    for nb, exercise in own:
        r = by_exercise.get(exercise)
        if r is None:
            continue
        points = row_points(r, assignment)
        possible = assignment.points[(nb, exercise)]
        kind = " extra credit" if (nb, exercise) in assignment.extra_credit else ""
        partial = ", partial credit" if r.status == "failed" and points > 0 else ""
        lines.append(
            f"## {md(exercise, inline=True)}: {r.status} ({points_text(points)}/{points_text(possible)}{kind}{partial})"
        )
        if r.message:
            lines += ["", md(r.message)]
        if r.hint:
            lines += ["", f"Hint: {md(r.hint)}"]
        lines.append("")
    if not_graded:
        lines += [
            "## Files of yours that were not graded",
            "",
            *(f"- {md(text, inline=True)}" for text in not_graded),
            "",
        ]
    notes = sorted({n for r in rows for n in r.integrity.split("; ") if n} | common)
    if notes and rows:
        lines += ["## Notes from the grader", "", *(f"- {md(note, inline=True)}" for note in notes), ""]
    return "\n".join(lines)


def _not_graded_files(
    rows: Sequence[GradeRow],
    submissions: Mapping[tuple[str, str], SubmissionTime],
    notebooks: Sequence[str],
) -> dict[tuple[str, str | None], list[str]]:
    """Per (student, notebook or None when it cannot be told), the files not graded and why."""
    found: dict[tuple[str, str | None], list[str]] = defaultdict(list)
    for r in rows:
        if r.status in _NOT_GRADED:
            found[(r.student, _notebook_of(r, notebooks))].append(f"{r.notebook}: {r.status}, {r.message}")
    for (student, notebook), time in submissions.items():
        for name, why in time.ignored:
            found[(student, notebook if notebook in notebooks else None)].append(
                f"{name}: set aside by the collector" + (f" ({why})" if why else "")
            )
    return found


def write_feedback(
    rows: Iterable[GradeRow],
    totals: CourseTotals,
    folder: Path | str,
    submissions: Mapping[tuple[str, str], SubmissionTime] | None = None,
) -> list[Path]:
    """Markdown feedback, ``<folder>/<student>/<notebook>.md``, for what this run graded.

    A student gets a file for each notebook they handed in, for the other notebooks of the same
    assignment (saying nothing was handed in), and for a notebook whose files were all set aside; files
    not graded that belong to no notebook are named in every file of the student, or in
    ``<student>/not-graded.md`` when there is none. Nothing else is written, so feedback already sent
    for other assignments stays as it was.
    """
    rows = list(rows)
    submissions = submissions or {}
    course = totals.course
    notebooks = [nb for a in course.assignments for nb in a.notebooks]
    common = _common_notes(rows)
    by_key: dict[tuple[str, str], list[GradeRow]] = defaultdict(list)
    for r in rows:
        if r.status not in _NOT_GRADED:
            by_key[(r.student, r.notebook)].append(r)
    not_graded = _not_graded_files(rows, submissions, notebooks)
    targets: dict[str, set[str]] = defaultdict(set)
    for student, notebook in totals.handed_in:
        assignment = course.assignment_of(notebook)
        targets[student].update(assignment.notebooks if assignment else ())
    for student, meant_for in not_graded:
        if meant_for is not None:
            targets[student].add(meant_for)
    written = []
    folder = Path(folder)
    for student in sorted(targets.keys() | {s for s, nb in not_graded if nb is None}):
        own = folder / feedback_name(student)
        unplaced = not_graded.get((student, None), [])
        for notebook in sorted(targets.get(student, ()), key=notebooks.index):
            assignment = course.assignment_of(notebook)
            if assignment is None:
                continue
            text = _feedback_markdown(
                student,
                notebook,
                by_key.get((student, notebook), []),
                assignment,
                totals,
                [*not_graded.get((student, notebook), []), *unplaced],
                common,
            )
            written.append(atomic_text(own / f"{feedback_name(notebook)}.md", text))
        if unplaced and not targets.get(student):
            lines = [f"# Files of {markdown_text(student, inline=True)} that were not graded", ""]
            lines += [f"- {markdown_text(text, inline=True)}" for text in unplaced]
            written.append(atomic_text(own / "not-graded.md", "\n".join(lines) + "\n"))
    return written


# --------------------------------------------------------------------------- one run


def write_gradebook(
    rows: Sequence[GradeRow],
    outline: Mapping[str, Mapping[str, float]],
    *,
    report: Path,
    roster: Sequence[RosterEntry] = (),
    lms: Sequence[str] = (),
    feedback: Path | None = None,
    course: Course | None = None,
    submissions: Mapping[tuple[str, str], SubmissionTime] | None = None,
) -> tuple[list[Path], str]:
    """Every gradebook file of a run, beside ``report``; returns the paths written and the terminal summary.

    Writes ``<report>_totals.csv`` and ``<report>_summary.html`` always; ``<report>_canvas.csv`` and the
    Gradescope file(s) for each of ``lms`` (``canvas``, ``gradescope``) when some assignment was graded;
    the feedback into ``feedback`` when given. ``course`` is :func:`~.course.load_course`'s (None: one
    assignment per notebook of ``outline``, no due time); ``submissions`` says when each (student,
    notebook) was handed in (:func:`read_collected`).
    """
    unknown = sorted(set(lms) - set(GRADEBOOKS))
    if unknown:
        raise ValueError(f"lms: unknown {', '.join(unknown)} (allowed: {', '.join(GRADEBOOKS)})")
    rows = list(rows)
    report = Path(report)
    totals = course_totals(rows, outline, roster, course=course, submissions=submissions)
    summaries = class_summary(rows, totals)
    notes = hand_in_notes(rows, totals, submissions)
    common = _common_notes(rows)
    written = [
        write_totals(totals, _beside(report, "totals.csv")),
        write_summary_html(summaries, totals, _beside(report, "summary.html"), notes, common),
    ]
    text = terminal_summary(summaries, totals, notes)
    strangers = sorted(set(totals.course.extensions) - set(totals.students))
    if strangers:  # load_course cannot know the students: a misspelt name would otherwise go unnoticed
        names = ", ".join(printable(s) for s in strangers)
        text += f"\n  extensions for students with no row here and not on the roster (misspelt?): {names}"
    if lms and not totals.graded:
        text += "\n  no assignment was graded in this run: no LMS file written"
    elif "canvas" in lms:
        written.append(write_canvas(totals, roster, _beside(report, "canvas.csv")))
    if "gradescope" in lms and totals.graded:
        written += write_gradescope(totals, roster, report)
    if feedback is not None:
        written += write_feedback(rows, totals, feedback, submissions)
    return written, text
