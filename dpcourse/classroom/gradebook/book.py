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
quoting the student's answer) is hostile: CSV cells go through :func:`~.reports.safe_cell`, the terminal
through :func:`printable`, and feedback file names are made from the student id without ever leaving the
feedback folder. The class summary and the feedback are jinja2 templates (``dpcourse/classroom/templates/``)
to which student text is passed as data, never as template source: the HTML page is autoescaped, and the
Markdown templates escape every value with :func:`markdown_text` (backslash escapes, never HTML entities)
unless a filter made it Markdown already. Every file is written atomically with the umask's mode
(:func:`~.reports.atomic_write`).

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
import functools
import hashlib
import io
import math
import re
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..course import Assignment, Course, Lateness, duration_text
from ..grading.reports import GradeRow, points_text
from ..grading.similarity import MAX_PAIRS_SHOWN, ClassAnswers, SimilarityReport, shown_answer, similarity_report
from ..io import atomic_csv, atomic_text, printable, unquoted
from ..validation import TimeError, parse_time

if TYPE_CHECKING:
    from jinja2 import Environment

__all__ = [
    "GRADEBOOKS",
    "HAND_IN_KINDS",
    "ROSTER_FIELDS",
    "CANVAS_COLUMNS",
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
    "partial_assignments",
    "partial_line",
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
CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Root Account", "Section")
_HEADER_NAMES = frozenset({*ROSTER_FIELDS, *(c.lower() for c in CANVAS_COLUMNS), "id"})
_CANVAS_NOT_STUDENTS = ("Points Possible", "Student, Test", "Test Student")
OTHER_WRONG = "other wrong answers"
NOT_HANDED_IN = "not handed in"
_NOT_GRADED = ("duplicate", "invalid")


@dataclass(frozen=True)
class RosterEntry:
    """One student of the course, with the fields an LMS import needs (empty where the course has none).

    Attributes
    ----------
    student : str
        The id the grader knows the student by (the submission folder's name).
    name : str
        The name an LMS file shows (Canvas's ``Student``, Gradescope's ``Name``); the id when empty.
    canvas_id : str
        Canvas's user id (its ``ID`` column, what its importer matches first).
    sis_user_id : str
        The student information system's user id (Canvas's ``SIS User ID``).
    section : str
        The section (Canvas's ``Section``).
    sid : str
        Gradescope's student id (``SID``).
    email : str
        The e-mail address Gradescope matches a student by.
    sis_login_id : str
        The student information system's login (Canvas's ``SIS Login ID``).
    """

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

    Attributes
    ----------
    submitted_at : datetime.datetime or None
        When it was handed in, with a timezone; None when unknown.
    late : bool or None
        The collector's own verdict (None when it gave none), used only when the course has no due time
        or the time is unknown.
    source_file : str
        The file (or files, comma-separated) that was kept for grading.
    ignored : tuple of tuple of str
        The files the collector did not keep, as ``(file name, note)``.
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

    Control and format characters are shown as their escapes first (:func:`printable`), so a student's
    text can neither run markup nor hide or reorder what the reader sees.

    Parameters
    ----------
    text : str
        Any text, typically from a submission.
    inline : bool, optional
        Whether newlines are escaped too (for a heading or a list item, where a newline would start a new
        block); otherwise line breaks stay and the start of every line is escaped.

    Returns
    -------
    str
        The escaped text: ``\\`` before each character Markdown would read as markup, no HTML entities.
    """
    text = printable(text.replace("\r\n", "\n"), keep_newlines=not inline)
    text = _MD_INLINE.sub(lambda m: "\\" + m.group(), text)

    def line_start(match: re.Match[str]) -> str:
        marker = match.group(2)
        return match.group(1) + (marker + "\\" if marker[0].isdigit() else "\\" + marker)

    return _MD_LINE_START.sub(line_start, text)


# --------------------------------------------------------------------------- the templates


class _Markdown(str):
    """Text already written as Markdown (a number, a time, escaped text): a Markdown template prints it as it is."""


def _markdown_value(value: object) -> str:
    """What ``{{ value }}`` prints in a Markdown template: :func:`markdown_text` of it, inline, unless it is
    Markdown already or a number. The Markdown counterpart of HTML autoescaping."""
    if isinstance(value, _Markdown):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return markdown_text(str(value), inline=True)


def _page_value(value: object) -> object:
    """What ``{{ value }}`` prints in the HTML page before autoescaping: text with its control and format
    characters shown (:func:`printable`: an escape sequence or a bidi override in a student id cannot reorder
    the page), everything else as it is. Markup (what the template itself made safe) is left alone."""
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return printable(value, keep_newlines=True)
    return value


@dataclass(frozen=True)
class _Templates:
    page: Environment  # HTML, autoescaped
    text: Environment  # Markdown, every value through markdown_text


@functools.cache
def _templates() -> _Templates:
    """The two jinja2 environments over ``templates/`` (imported on first use: a grading run needs neither)."""
    from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

    settings: dict[str, Any] = {
        "loader": PackageLoader("dpcourse.classroom", "templates"),
        "undefined": StrictUndefined,  # a misspelt name fails, instead of printing nothing
        "trim_blocks": True,
        "lstrip_blocks": True,
    }
    page = Environment(
        autoescape=select_autoescape(["html.j2"], default_for_string=True, default=True),
        finalize=_page_value,
        **settings,
    )
    page.filters["points"] = points_text
    text = Environment(autoescape=False, finalize=_markdown_value, **settings)
    text.filters.update(
        points=lambda value: _Markdown(points_text(value)),
        percent=lambda fraction: _Markdown(_percent(fraction)),
        when=lambda moment, zone=None: _Markdown(_when(moment, zone)),
        duration=lambda span: _Markdown(duration_text(span)),
        block=lambda message: _Markdown(markdown_text(message)),  # line breaks kept, each line's start escaped
    )
    return _Templates(page, text)


def _markdown(template: str, **context: object) -> str:
    """A Markdown template rendered, ending in exactly one newline."""
    return _templates().text.get_template(template).render(**context).rstrip("\n") + "\n"


# --------------------------------------------------------------------------- the roster and the collector


def read_roster(path: Path | str) -> list[RosterEntry]:
    """The students of ``path``: one id per line, a CSV with a ``student`` column, or Canvas's gradebook export.

    The form is told by the first line that is neither blank nor a ``#`` comment:

    - Canvas's gradebook export (*Grades* → *Export*), or the ``--gradebook canvas`` file this module writes,
      when its first two cells are ``Student`` and ``ID``: the student columns up to ``Section`` are read
      (:data:`CANVAS_COLUMNS`), the assignment columns after it ignored. The ``Points Possible`` row (Canvas
      indents it with spaces), a row without any id (Canvas's posting-policy row) and Canvas's test student
      (``Student, Test`` without SIS ids, the *Student View* user) are not students. A student's id is the
      ``SIS Login ID``, else the ``SIS User ID``, else the Canvas ``ID``, else the ``Student`` cell (which is
      where this module's file puts a student the roster did not name); ``Student`` is the name.
    - A CSV with a header holding a ``student`` column and any of :data:`ROSTER_FIELDS`.
    - Otherwise one student id per line. When that first line is, in any case, a column name
      (:data:`ROSTER_FIELDS`, Canvas's column names, or ``id``) it is the column's header, not a student.

    Blank lines and lines starting with ``#`` are skipped in the one-id-per-line form. The file is
    read as UTF-8 (a byte-order mark is dropped).

    Parameters
    ----------
    path : pathlib.Path or str
        The roster file.

    Returns
    -------
    list of RosterEntry
        The students, in the file's order.

    Raises
    ------
    ValueError
        Naming the file and line, for a student listed twice, an id with a comma in the one-id-per-line
        form, a CSV row without a student id, a CSV column not in :data:`ROSTER_FIELDS`, or a Canvas
        export whose student columns are not in :data:`CANVAS_COLUMNS` or do not end with ``Section``.
    OSError
        If the file cannot be read.
    """
    text = Path(path).read_text(encoding="utf-8-sig")
    lines = text.splitlines()
    first = next((line for line in lines if line.strip() and not line.startswith("#")), "")
    cells = [c.strip().lower() for c in next(csv.reader([first]), [])]
    if cells[:2] == ["student", "id"]:
        return _roster_canvas(path, text)
    if "," in first and "student" in cells:
        return _roster_csv(path, text)
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    header = True  # only the first line may be a header
    for number, line in enumerate(lines, start=1):
        student = line.strip()
        if not student or student.startswith("#"):
            continue
        if header and student.lower() in _HEADER_NAMES:
            header = False
            continue
        header = False
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


def _roster_canvas(path: Path | str, text: str) -> list[RosterEntry]:
    """Canvas's gradebook export (or our own Canvas file) read as it is: see :func:`read_roster`."""
    rows = csv.reader(io.StringIO(text))
    known = {c.lower(): c for c in CANVAS_COLUMNS}
    header = [known.get(c.strip().lower(), c.strip()) for c in next(rows)]
    if "Section" not in header:
        raise ValueError(
            f"--roster {path}: a Canvas gradebook export needs its student columns to end with 'Section' "
            f"(known: {', '.join(CANVAS_COLUMNS)})"
        )
    student_columns = header[: header.index("Section") + 1]
    unknown = [c for c in student_columns if c not in CANVAS_COLUMNS]
    if unknown:
        raise ValueError(
            f"--roster {path}: unknown Canvas student column {unknown[0]!r} (known: {', '.join(CANVAS_COLUMNS)})"
        )
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    for row in rows:
        number = rows.line_num
        cell = dict(zip(student_columns, (unquoted(c.strip()) for c in row), strict=False))  # as safe_cell wrote
        name, ids = cell.get("Student", ""), [cell.get(c, "") for c in ("SIS Login ID", "SIS User ID", "ID")]
        if name in _CANVAS_NOT_STUDENTS and not any(ids[:2]):
            continue  # the Points Possible row, Canvas's test student
        student = next((i for i in (*ids, name) if i), "")
        if not student:
            continue  # a blank line, or Canvas's posting-policy row: no one to match
        if student in seen:
            raise ValueError(f"--roster {path}, line {number}: {student!r} is already on line {seen[student]}")
        seen[student] = number
        entries.append(
            RosterEntry(
                student,
                name=name,
                canvas_id=ids[2],
                sis_user_id=ids[1],
                section=cell.get("Section", ""),
                sis_login_id=ids[0],
            )
        )
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
    counts as unknown, and the ``late`` flag decides.

    Parameters
    ----------
    path : pathlib.Path or str
        The collector's CSV.

    Returns
    -------
    dict
        ``(student, notebook)`` → :class:`SubmissionTime`, sorted.

    Raises
    ------
    ValueError
        If a column is missing, or naming the line, for a ``kept`` or ``late`` cell that is not true or false
        or a ``submitted_at`` that is not an ISO 8601 time.
    OSError
        If the file cannot be read.
    """
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _COLLECTED if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a collector's list (no column {', '.join(missing)})")
        kept: dict[tuple[str, str], list[tuple[datetime | None, bool | None, str]]] = defaultdict(list)
        ignored: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for number, line in enumerate(reader, start=2):
            cell = {k: unquoted(v) if isinstance(v, str) else "" for k, v in line.items() if k is not None}
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
        return parse_time(text.strip())
    except TimeError as err:
        if err.kind == "no offset":
            return None
        raise ValueError(f"{where}: submitted_at {text[:40]!r} is not an ISO 8601 time") from None


# --------------------------------------------------------------------------- totals


@dataclass(frozen=True)
class Score:
    """One student's result on one assignment.

    Attributes
    ----------
    earned : float
        The points earned on the course's scale, extra and partial credit included.
    penalty : float
        The late penalty actually deducted (never more than ``earned``).
    handed_in : bool
        Whether any notebook of the assignment was handed in.
    lateness : Lateness or None
        How late it was (:meth:`~.course.Course.lateness`; within the grace period it says so), None when
        it was on time or nothing says it was late.
    """

    earned: float = 0.0
    penalty: float = 0.0
    handed_in: bool = False
    lateness: Lateness | None = None

    @property
    def points(self) -> float:
        """The score: ``earned`` less ``penalty``, at least 0."""
        return max(0.0, self.earned - self.penalty)


@dataclass(frozen=True)
class CourseTotals:
    """Per student and assignment, the score over the whole course (0 for an assignment not handed in).

    Made by :func:`course_totals`.

    Attributes
    ----------
    course : Course
        The course the scores are over.
    scores : dict
        Student → assignment key → :class:`Score`, for every student and every assignment of the course.
    graded : tuple of str
        The keys of the assignments with a row in this run, in course order.
    handed_in : frozenset of tuple of str
        The (student, notebook) pairs with a row in this run.
    late : dict
        ``(student, notebook)`` → :class:`~.course.Lateness`, for each notebook handed in late.
    """

    course: Course
    scores: dict[str, dict[str, Score]]
    graded: tuple[str, ...] = ()
    handed_in: frozenset[tuple[str, str]] = frozenset()
    late: dict[tuple[str, str], Lateness] = field(default_factory=dict)

    @property
    def students(self) -> list[str]:
        """Every student, sorted."""
        return list(self.scores)

    @property
    def course_maximum(self) -> float:
        """The course's maximum: the sum of its assignments' maxima (extra credit not counted)."""
        return sum(a.maximum for a in self.course.assignments)

    def points(self, student: str, assignment: str) -> float:
        """One student's score on one assignment, late penalty deducted.

        Parameters
        ----------
        student : str
            One of :attr:`students`.
        assignment : str
            An assignment's key.

        Returns
        -------
        float
            :attr:`Score.points` of that assignment.
        """
        return self.scores[student][assignment].points

    def total(self, student: str) -> float:
        """One student's course total: their scores on every assignment, late penalties deducted.

        Parameters
        ----------
        student : str
            One of :attr:`students`.

        Returns
        -------
        float
            The sum of the student's assignment scores (it may exceed :attr:`course_maximum` with extra credit).
        """
        return sum(score.points for score in self.scores[student].values())


def _latest(rows: Iterable[GradeRow]) -> dict[tuple[str, str, str], GradeRow]:
    """The row of each (student, notebook, exercise); a later row replaces an earlier one."""
    return {(r.student, r.notebook, r.exercise): r for r in rows if r.status not in _NOT_GRADED}


def row_points(row: GradeRow, assignment: Assignment) -> float:
    """A row's points on the course's scale: the row's share of its maximum times the course's points.

    A ``passed`` row counts in full; a ``failed`` row counts its share only where the assignment gives
    partial credit for the exercise; any other row, or an exercise the assignment does not hold, is 0.

    Parameters
    ----------
    row : GradeRow
        One row of the report.
    assignment : Assignment
        The assignment the row's notebook belongs to.

    Returns
    -------
    float
        ``min(1, max(0, points / max_points))`` (1 when ``max_points`` ≤ 0) times the exercise's points in
        ``assignment``, or 0.
    """
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
    more than was earned. Rows of notebooks outside the course carry no points; of two rows for the same
    exercise the later counts, and ``duplicate`` and ``invalid`` rows count nothing.

    Parameters
    ----------
    rows : iterable of GradeRow
        The report's rows.
    outline : mapping
        Notebook → exercise → points: the course without ``course``.
    roster : sequence of RosterEntry, optional
        The students of the course; those with no row get 0 everywhere.
    course : Course or None, optional
        The course (:func:`~.course.load_course`); None makes one assignment per notebook of ``outline``,
        without due times.
    submissions : mapping or None, optional
        ``(student, notebook)`` → :class:`SubmissionTime` (:func:`read_collected`); None when unknown.

    Returns
    -------
    CourseTotals
        The scores of every student on every assignment.
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
    handed in), late penalties applied, the course's maximum in every row.

    Parameters
    ----------
    totals : CourseTotals
        The course's scores.
    path : pathlib.Path or str
        The CSV to write (atomically; every cell through :func:`~.reports.safe_cell`).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
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


def partial_assignments(
    totals: CourseTotals, left_out: Mapping[str, Collection[str]] | None = None
) -> dict[tuple[str, str], tuple[str, ...]]:
    """The students whose rows hold only part of an assignment: ``(student, assignment key)`` → its notebooks
    this run did not grade for them, for a student with rows of its other notebooks.

    A notebook nobody's row is about was not graded in this run (a regrade of one notebook, a week graded
    alone), nor was one of the student's own that the run was not given (``left_out``): it is unknown what
    she scored on it, so her score on the assignment cannot be told, and no LMS cell or feedback is written
    for it (:func:`write_canvas`, :func:`write_gradescope`, :func:`write_feedback`). A notebook some
    classmate's row is about, of which she handed in nothing, counts 0, as it should.

    Parameters
    ----------
    totals : CourseTotals
        The course's scores (:func:`course_totals`): which (student, notebook) pairs this run holds.
    left_out : mapping or None, optional
        Student → the course notebooks among their files that this run was not given.

    Returns
    -------
    dict
        ``(student, assignment key)`` → the assignment's notebooks not graded for the student here, in course
        order.
    """
    in_run = {notebook for _, notebook in totals.handed_in}
    left_out = left_out or {}
    found: dict[tuple[str, str], tuple[str, ...]] = {}
    for student, notebook in totals.handed_in:
        assignment = totals.course.assignment_of(notebook)
        if assignment is None:
            continue
        absent = tuple(
            nb
            for nb in assignment.notebooks
            if nb not in in_run or (nb in left_out.get(student, ()) and (student, nb) not in totals.handed_in)
        )
        if absent:
            found[(student, assignment.key)] = absent
    return found


def partial_line(partial: Mapping[tuple[str, str], tuple[str, ...]], report: Path | str) -> str:
    """One line: which LMS cells and feedback were not written for part of an assignment, and the merge that
    writes them (:func:`partial_assignments`).

    Parameters
    ----------
    partial : mapping
        What :func:`partial_assignments` returned (not empty).
    report : pathlib.Path or str
        This run's report, named in the command to run.

    Returns
    -------
    str
        The line, without a line break; student ids through :func:`~.reports.printable`.
    """
    students = sorted({student for student, _ in partial})
    absent = sorted({nb for notebooks in partial.values() for nb in notebooks})
    more = f" and {len(students) - 5} more" if len(students) > 5 else ""
    named = ", ".join(printable(s) for s in students[:5]) + more
    return (
        f"not written for part of an assignment: no LMS cell or feedback for {named}, whose assignment also has "
        f"{', '.join(absent)}, which this run did not grade for them (it would count as not handed in); merge with the "
        f"report that holds it: python -m dpcourse grade --merge EARLIER.csv {report} --replace --report FINAL.csv "
        "with every week's --collected and this run's --course, --roster, --gradebook and --feedback"
    )


def _roster_by_student(roster: Sequence[RosterEntry], students: Iterable[str]) -> list[RosterEntry]:
    known = {e.student: e for e in roster}
    return [known.get(s, RosterEntry(s)) for s in students]


def _counted(totals: CourseTotals, partial: Mapping[tuple[str, str], object], student: str, key: str) -> bool:
    """Whether an LMS file holds ``student``'s score on assignment ``key``: handed in, and not only in part here."""
    return totals.scores[student][key].handed_in and (student, key) not in partial


def _graded_students(totals: CourseTotals, keys: Sequence[str], partial: Mapping[tuple[str, str], object]) -> list[str]:
    return [s for s in totals.students if any(_counted(totals, partial, s, k) for k in keys)]


def write_canvas(
    totals: CourseTotals,
    roster: Sequence[RosterEntry],
    path: Path | str,
    *,
    partial: Mapping[tuple[str, str], object] | None = None,
) -> Path:
    """Canvas's gradebook import, one column per assignment graded in this run, and the ``Points Possible`` row.

    The student columns are ``Student, ID, SIS User ID, SIS Login ID, Section``: Canvas's importer
    (canvas-lms ``GradebookImporter``) refuses a header whose student columns do not end with
    ``Section``, and reads ``SIS User ID`` only followed by ``SIS Login ID``. It matches a student by
    ``ID`` (the Canvas user id), then the SIS ids, then the name. Only students who handed something in
    are rows, and a cell is empty for an assignment they did not hand in, or of which this run holds only
    part (:func:`partial_assignments`): Canvas replaces what it holds with what the file says.

    Parameters
    ----------
    totals : CourseTotals
        The course's scores.
    roster : sequence of RosterEntry
        Where the Canvas ids, SIS ids, sections and names come from (empty for a student not on it).
    path : pathlib.Path or str
        The CSV to write (atomically; every cell through :func:`~.reports.safe_cell`).
    partial : mapping or None, optional
        The (student, assignment key) pairs held only in part (default: :func:`partial_assignments` of
        ``totals``).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    assignments = [totals.course.assignment(k) for k in totals.graded]
    partial = partial_assignments(totals) if partial is None else partial
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
                points_text(totals.points(e.student, a.key)) if _counted(totals, partial, e.student, a.key) else ""
                for a in assignments
            ),
        ]
        for e in _roster_by_student(roster, _graded_students(totals, totals.graded, partial))
    ]
    return atomic_csv(Path(path), header, [possible, *rows])


def write_gradescope(
    totals: CourseTotals,
    roster: Sequence[RosterEntry],
    report: Path | str,
    *,
    partial: Mapping[tuple[str, str], object] | None = None,
) -> list[Path]:
    """Gradescope's score import, ``Name, SID, Email, Score``, for each assignment graded in this run: beside
    ``report`` as ``<report>_gradescope.csv`` when there is one, ``<report>_gradescope_<assignment>.csv`` each
    when there are several. Only students who handed the assignment in are rows, and not those of whose
    assignment this run holds only part (:func:`partial_assignments`). Gradescope matches a student
    by ``Email`` (or ``SID``); the course fills them in through the roster.

    Parameters
    ----------
    totals : CourseTotals
        The course's scores.
    roster : sequence of RosterEntry
        Where the names, SIDs and e-mail addresses come from.
    report : pathlib.Path or str
        The grade report the files are written beside.
    partial : mapping or None, optional
        The (student, assignment key) pairs held only in part (default: :func:`partial_assignments` of
        ``totals``).

    Returns
    -------
    list of pathlib.Path
        The files written, one per assignment graded in this run.
    """
    report = Path(report)
    partial = partial_assignments(totals) if partial is None else partial
    written = []
    for key in totals.graded:
        suffix = "gradescope.csv" if len(totals.graded) == 1 else f"gradescope_{feedback_name(key)}.csv"
        rows = [
            [e.name or e.student, e.sid, e.email, points_text(totals.points(e.student, key))]
            for e in _roster_by_student(roster, _graded_students(totals, [key], partial))
        ]
        written.append(atomic_csv(_beside(report, suffix), ["Name", "SID", "Email", "Score"], rows))
    return written


# --------------------------------------------------------------------------- who handed in what


@dataclass(frozen=True)
class HandInNote:
    """One thing the instructor should know about a student's notebook: ``kind`` is one of :data:`HAND_IN_KINDS`.

    Attributes
    ----------
    student : str
        The student id.
    notebook : str
        The course notebook it is about (``(no notebook)`` for a file set aside that belongs to none).
    kind : str
        One of :data:`HAND_IN_KINDS`.
    detail : str
        What exactly: the exercises not attempted, how late, the file and why it was not graded, the notes.
    """

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
    files not graded (duplicates, files the collector set aside, invalid files) or integrity notes.

    An integrity note on every row of the run (such as an unconfined run's) is left out: the summary says
    it once.

    Parameters
    ----------
    rows : sequence of GradeRow
        The report's rows.
    totals : CourseTotals
        The course's scores (:func:`course_totals` of the same rows).
    submissions : mapping or None, optional
        ``(student, notebook)`` → :class:`SubmissionTime`, for the files the collector set aside.

    Returns
    -------
    list of HandInNote
        Sorted by notebook, then kind (in the order of :data:`HAND_IN_KINDS`), then student.
    """
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
        if lateness.needs_check:
            return f"late mark, time unknown, extension until {_when(lateness.due)}: check"
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
    """One exercise over the class: counts per status (``not handed in`` included) and per named mistake.

    Attributes
    ----------
    notebook : str
        The course notebook.
    exercise : str
        The exercise id.
    students : int
        The number of students of the class (the counts add up to it).
    statuses : dict
        Status (a report status, or ``not handed in``) → number of students.
    mistakes : list of tuple
        ``(mistake, count)`` for the failed rows, most common first; ``other wrong answers`` for those whose
        check named no mistake.
    """

    notebook: str
    exercise: str
    students: int
    statuses: dict[str, int]
    mistakes: list[tuple[str, int]]

    @property
    def pass_rate(self) -> float:
        """The share of the class that passed, 0 to 1 (0 for an empty class)."""
        return self.statuses.get("passed", 0) / self.students if self.students else 0.0


def class_summary(rows: Iterable[GradeRow], totals: CourseTotals) -> list[ExerciseSummary]:
    """Per exercise of the assignments graded in this run: how many students passed, failed (by named
    mistake), did not attempt it, did not hand its notebook in, or errored.

    Parameters
    ----------
    rows : iterable of GradeRow
        The report's rows (of two rows for the same exercise, the later counts).
    totals : CourseTotals
        The course's scores: which assignments were graded, who is in the class, who handed in what.

    Returns
    -------
    list of ExerciseSummary
        One per exercise, in course order.
    """
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

    Every string from a submission has its control characters escaped (:func:`printable`).

    Parameters
    ----------
    summaries : sequence of ExerciseSummary
        :func:`class_summary`'s.
    totals : CourseTotals
        The course's scores.
    notes : sequence of HandInNote, optional
        :func:`hand_in_notes`'s; counted per kind.
    top : int, optional
        How many of the most common named mistakes to list.

    Returns
    -------
    str
        The lines, joined by newlines (``class: no students`` for an empty class).
    """
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
    # Only finite totals can be drawn: a course file's points are bounded (course.MAX_POINTS), but a notebook's
    # own points without a course file are not, and an infinite total would make the bins' arithmetic overflow.
    values = [v for v in (totals.total(s) for s in totals.students) if math.isfinite(v)]
    top = max(v for v in (totals.course_maximum, 1.0, *values) if math.isfinite(v))
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


def summary_html(
    summaries: Sequence[ExerciseSummary],
    totals: CourseTotals,
    notes: Sequence[HandInNote] = (),
    common: Iterable[str] = (),
    similarity: SimilarityReport | None = None,
) -> str:
    """The class summary page: self-contained (inline CSS, the figure as a data URI), every string escaped.

    The page is the template ``templates/summary.html.j2``, rendered with autoescaping: every value is
    HTML-escaped, after its control and format characters are shown as escapes (:func:`printable`), and the
    student text it shows (ids, file names, the checks' named mistakes) is data, never template source.
    It has the class size and course maximum, a histogram of course totals, the mean per assignment, a
    table of who handed what in (and a line per note), and per exercise the pass rate, the named mistakes
    with their counts, and how many did not attempt it, did not hand it in, or errored; then the similar
    answers (:mod:`.similarity`): per exercise how many answers were compared, and the pairs at or above the
    threshold, highest first, each with both answers side by side and why they are alike.

    Parameters
    ----------
    summaries : sequence of ExerciseSummary
        :func:`class_summary`'s.
    totals : CourseTotals
        The course's scores.
    notes : sequence of HandInNote, optional
        :func:`hand_in_notes`'s: counted per notebook and kind, and listed.
    common : iterable of str, optional
        Integrity notes on every submission of the run, said once.
    similarity : SimilarityReport or None, optional
        :func:`~.similarity.similarity_report`'s; None when this run read no answers (``--merge``), and the page
        says so.

    Returns
    -------
    str
        The HTML page.
    """
    students = len(totals.students)
    means = [
        (a, sum(totals.points(s, a.key) for s in totals.students) / students if students else 0.0)
        for a in totals.course.assignments
    ]
    counts = Counter((n.notebook, n.kind) for n in notes)
    notebooks = _graded_notebooks(totals)
    shown = notebooks + sorted({n.notebook for n in notes} - set(notebooks))
    return (
        _templates()
        .page.get_template("summary.html.j2")
        .render(
            students=students,
            maximum=totals.course_maximum,
            graded=[totals.course.assignment(k).name for k in totals.graded],
            figure=_figure_png(totals),
            means=means,
            kinds=HAND_IN_KINDS,
            hand_in=[(notebook, [counts[(notebook, kind)] for kind in HAND_IN_KINDS]) for notebook in shown],
            common=sorted(set(common)),
            notes=notes,
            exercises=summaries,
            not_handed_in=NOT_HANDED_IN,
            similarity=similarity,
            pairs=[(p, shown_answer(p.first_answer), shown_answer(p.second_answer)) for p in similarity.shown()]
            if similarity is not None
            else [],
            more_pairs=max(0, len(similarity.pairs) - MAX_PAIRS_SHOWN) if similarity is not None else 0,
        )
    )


def write_summary_html(
    summaries: Sequence[ExerciseSummary],
    totals: CourseTotals,
    path: Path | str,
    notes: Sequence[HandInNote] = (),
    common: Iterable[str] = (),
    similarity: SimilarityReport | None = None,
) -> Path:
    """Write :func:`summary_html` atomically, with the umask's mode.

    Parameters
    ----------
    summaries : sequence of ExerciseSummary
        :func:`class_summary`'s.
    totals : CourseTotals
        The course's scores.
    path : pathlib.Path or str
        The HTML file to write.
    notes : sequence of HandInNote, optional
        :func:`hand_in_notes`'s.
    common : iterable of str, optional
        Integrity notes on every submission of the run.
    similarity : SimilarityReport or None, optional
        The similar answers (:func:`~.similarity.similarity_report`).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    return atomic_text(path, summary_html(summaries, totals, notes, common, similarity))


# --------------------------------------------------------------------------- feedback for students

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def feedback_name(student: str) -> str:
    """A file or folder name for ``student`` that stays inside the feedback folder, whatever the id is.

    Characters other than letters, digits, ``.``, ``_`` and ``-`` become ``_``; leading dots go; an id
    that had to change gets a short hash of the original, so two ids never share a name.

    Parameters
    ----------
    student : str
        Any id (or a notebook or assignment name), hostile text.

    Returns
    -------
    str
        A name of at most 89 characters, never empty, without ``/`` and not starting with a dot.
    """
    cleaned = _UNSAFE.sub("_", student).lstrip(".")[:80] or "student"
    if cleaned != student:
        cleaned += "-" + hashlib.sha256(student.encode()).hexdigest()[:8]
    return cleaned


def _when(moment: datetime, zone: datetime | None = None) -> str:
    shown = moment.astimezone(zone.tzinfo) if zone is not None else moment
    return shown.isoformat(timespec="minutes")


def _feedback_markdown(
    student: str,
    notebook: str,
    rows: Sequence[GradeRow],
    assignment: Assignment,
    totals: CourseTotals,
    not_graded: Sequence[str],
    common: set[str],
) -> str:
    """The feedback text (``feedback.md.j2``): what is counted here, how it reads there."""
    own = {(nb, ex): p for (nb, ex), p in assignment.points.items() if nb == notebook}
    by_exercise = {r.exercise: r for r in rows}
    exercises = []
    for nb, exercise in own:
        r = by_exercise.get(exercise)
        if r is None:
            continue
        points = row_points(r, assignment)
        exercises.append(
            {
                "exercise": exercise,
                "status": r.status,
                "points": points,
                "possible": assignment.points[(nb, exercise)],
                "extra": (nb, exercise) in assignment.extra_credit,
                "partial": r.status == "failed" and points > 0,
                "message": r.message,
                "hint": r.hint,
            }
        )
    notes = sorted({n for r in rows for n in r.integrity.split("; ") if n} | common) if rows else []
    return _markdown(
        "feedback.md.j2",
        student=student,
        notebook=notebook,
        earned=sum(row_points(r, assignment) for r in rows if (r.notebook, r.exercise) in own),
        maximum=sum(p for key, p in own.items() if key not in assignment.extra_credit),
        assignment=assignment,
        score=totals.scores[student][assignment.key],
        policy=totals.course.late,
        handed_in=(student, notebook) in totals.handed_in,
        exercises=exercises,
        not_graded=not_graded,
        notes=notes,
    )


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
    *,
    partial: Mapping[tuple[str, str], object] | None = None,
) -> list[Path]:
    """Markdown feedback, ``<folder>/<student>/<notebook>.md``, for what this run graded.

    A student gets a file for each notebook they handed in, for the other notebooks of the same
    assignment (saying nothing was handed in), and for a notebook whose files were all set aside; files
    not graded that belong to no notebook are named in every file of the student, or in
    ``<student>/not-graded.md`` when there is none. Nothing else is written, so feedback already sent
    for other assignments stays as it was; nor for an assignment of which this run holds only part
    (:func:`partial_assignments`), whose score it cannot tell.

    Each file is the template ``templates/feedback.md.j2`` (``not-graded.md.j2``), written atomically: the
    points for the notebook and the assignment, what lateness cost, each exercise's status, message and hint,
    the files not graded and the grader's notes. Student text is passed to the template as data and printed
    through :func:`markdown_text`: Markdown shows it literally, with no HTML entities.

    Parameters
    ----------
    rows : iterable of GradeRow
        The report's rows.
    totals : CourseTotals
        The course's scores (:func:`course_totals` of the same rows).
    folder : pathlib.Path or str
        Where the students' folders go (named by :func:`feedback_name`).
    submissions : mapping or None, optional
        ``(student, notebook)`` → :class:`SubmissionTime`, for the files the collector set aside.
    partial : mapping or None, optional
        The (student, assignment key) pairs held only in part (default: :func:`partial_assignments` of
        ``totals``).

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    rows = list(rows)
    submissions = submissions or {}
    course = totals.course
    notebooks = [nb for a in course.assignments for nb in a.notebooks]
    common = _common_notes(rows)
    by_key: dict[tuple[str, str], list[GradeRow]] = defaultdict(list)
    for r in _latest(rows).values():  # as the totals count: of two rows for one exercise, the later
        if r.status not in _NOT_GRADED:
            by_key[(r.student, r.notebook)].append(r)
    not_graded = _not_graded_files(rows, submissions, notebooks)
    partial = partial_assignments(totals) if partial is None else partial
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
            if assignment is None or (student, assignment.key) in partial:
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
            text = _markdown("not-graded.md.j2", student=student, files=unplaced)
            written.append(atomic_text(own / "not-graded.md", text))
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
    left_out: Mapping[str, Collection[str]] | None = None,
    answers: ClassAnswers | None = None,
) -> tuple[list[Path], str]:
    """Every gradebook file of a run, beside ``report``; returns the paths written and the terminal summary.

    Writes ``<report>_totals.csv`` and ``<report>_summary.html`` always; ``<report>_canvas.csv`` and the
    Gradescope file(s) for each of ``lms`` (``canvas``, ``gradescope``) when some assignment was graded;
    the feedback into ``feedback`` when given. ``course`` is :func:`~.course.load_course`'s (None: one
    assignment per notebook of ``outline``, no due time); ``submissions`` says when each (student,
    notebook) was handed in (:func:`read_collected`); ``answers`` are the answer cells the summary page compares
    for similar answers (:func:`~.similarity.read_answers`), at the course's ``[similarity] threshold``.

    Parameters
    ----------
    rows : sequence of GradeRow
        The report's rows.
    outline : mapping
        Notebook → exercise → points (the course without ``course``).
    report : pathlib.Path
        The grade report; every file is named after it (``<report>_totals.csv``, …).
    roster : sequence of RosterEntry, optional
        The students of the course and their LMS fields.
    lms : sequence of str, optional
        The LMS files to write, any of :data:`GRADEBOOKS`.
    feedback : pathlib.Path or None, optional
        The feedback folder (:func:`write_feedback`); None writes no feedback.
    course : Course or None, optional
        The course (:func:`~.course.load_course`); None: one assignment per notebook, no due time.
    submissions : mapping or None, optional
        ``(student, notebook)`` → :class:`SubmissionTime`.
    left_out : mapping or None, optional
        Student → the course notebooks among their files that this run was not given
        (:func:`partial_assignments`).
    answers : ClassAnswers or None, optional
        The answer cells of this run's submissions; None: the page says similarity was not compared.

    Returns
    -------
    tuple of (list of pathlib.Path, str)
        The files written, and the terminal summary (:func:`terminal_summary`, with a line for extensions
        of students nobody knows and one when no LMS file could be written).

    Raises
    ------
    ValueError
        If ``lms`` names a gradebook not in :data:`GRADEBOOKS`.
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
    similar = None
    if answers is not None:
        order = [key for k in totals.graded for key in totals.course.assignment(k).points]
        similar = similarity_report(answers, threshold=totals.course.similarity_threshold, order=order)
    written = [
        write_totals(totals, _beside(report, "totals.csv")),
        write_summary_html(summaries, totals, _beside(report, "summary.html"), notes, common, similar),
    ]
    text = terminal_summary(summaries, totals, notes)
    if similar is not None and similar.pairs:
        text += (
            f"\n  similar answers: {len(similar.pairs)} pairs at or above {similar.threshold:.0%} (listed in the "
            "summary page: a reason to look at two answers, not a penalty)"
        )
    strangers = sorted(set(totals.course.extensions) - set(totals.students))
    if strangers:  # load_course cannot know the students: a misspelt name would otherwise go unnoticed
        names = ", ".join(printable(s) for s in strangers)
        text += f"\n  extensions for students with no row here and not on the roster (misspelt?): {names}"
    partial = partial_assignments(totals, left_out)
    if partial and (lms or feedback is not None):
        text += "\n  " + partial_line(partial, report)
    if lms and not totals.graded:
        text += "\n  no assignment was graded in this run: no LMS file written"
    elif "canvas" in lms:
        written.append(write_canvas(totals, roster, _beside(report, "canvas.csv"), partial=partial))
    if "gradescope" in lms and totals.graded:
        written += write_gradescope(totals, roster, report, partial=partial)
    if feedback is not None:
        written += write_feedback(rows, totals, feedback, submissions, partial=partial)
    return written, text
