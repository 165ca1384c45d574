"""The course totals: what each student scored on each assignment, late penalties, who handed what in.

``<report>_totals.csv`` is over the whole course (:func:`write_totals`): an assignment a student did not hand in
counts 0, and a student on the roster with nothing at all is a line. :func:`course_totals` builds the one model
(:class:`CourseTotals`) that the LMS files, the summary page and the feedback all read, so none re-derives it;
:func:`hand_in_notes` says, per student, what was handed in late, partly or not at all.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..course import Assignment, Course, Lateness, duration_text
from ..grading.reports import GradeRow, points_text
from ..io import atomic_csv, printable

if TYPE_CHECKING:
    pass
from .roster import RosterEntry, SubmissionTime

__all__ = [
    "HAND_IN_KINDS",
    "CourseTotals",
    "HandInNote",
    "Score",
    "course_totals",
    "hand_in_notes",
    "held_back_line",
    "unmarked_assignments",
    "partial_assignments",
    "partial_line",
    "row_points",
    "write_totals",
]


NOT_HANDED_IN = "not handed in"
#: a written answer not marked yet (its points are unknown: it counts 0 until marked)
NEEDS_MARKING = "needs marking"

_NOT_GRADED = ("duplicate", "invalid")


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
    unmarked : float
        The points (on the course's scale) of the student's written answers not marked yet, counted 0 in
        ``earned`` until they are.
    unmarked_answers : int
        How many written answers those are.
    """

    earned: float = 0.0
    penalty: float = 0.0
    handed_in: bool = False
    lateness: Lateness | None = None
    unmarked: float = 0.0
    unmarked_answers: int = 0

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

    A ``passed`` row counts in full; a ``marked`` row (a written answer marked by hand) its share; a ``failed``
    row its share only where the assignment gives partial credit for the exercise; any other row (``needs
    marking`` included), or an exercise the assignment does not hold, is 0.

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
    counted = row.status in ("passed", "marked") or (row.status == "failed" and key in assignment.partial_credit)
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
            held = [row for nb, ex in assignment.points if (row := latest.get((student, nb, ex))) is not None]
            earned = sum(row_points(row, assignment) for row in held)
            unmarked = [assignment.points[(r.notebook, r.exercise)] for r in held if r.status == NEEDS_MARKING]
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
            scores[student][assignment.key] = Score(earned, penalty, bool(mine), lateness, sum(unmarked), len(unmarked))
    handed_notebooks = {nb for _, nb in handed}
    graded = tuple(a.key for a in course.assignments if handed_notebooks & set(a.notebooks))
    return CourseTotals(course, scores, graded, handed, late)


def _beside(report: Path, suffix: str) -> Path:
    return report.with_name(f"{report.stem}_{suffix}")


def write_totals(totals: CourseTotals, path: Path | str) -> Path:
    """``student, <assignment>…, total, max``: one row per student, every assignment of the course (0 when not
    handed in), late penalties applied, the course's maximum in every row; and, while some written answer is
    not marked yet, a last column ``unmarked``: the points of each student's answers still to mark (counted 0
    in the total until they are).

    Parameters
    ----------
    totals : CourseTotals
        The course's scores.
    path : pathlib.Path or str
        The CSV to write (atomically; every cell through :func:`~.io.safe_cell`).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    assignments = totals.course.assignments
    unmarked = any(score.unmarked_answers for scores in totals.scores.values() for score in scores.values())
    header = ["student", *(a.name for a in assignments), "total", "max", *(["unmarked"] if unmarked else [])]
    return atomic_csv(
        Path(path),
        header,
        (
            [
                s,
                *(points_text(totals.points(s, a.key)) for a in assignments),
                points_text(totals.total(s)),
                points_text(totals.course_maximum),
                *([points_text(sum(c.unmarked for c in totals.scores[s].values()))] if unmarked else []),
            ]
            for s in totals.students
        ),
    )


def unmarked_assignments(totals: CourseTotals) -> dict[str, tuple[int, float]]:
    """The assignments graded in this run that hold written answers not marked yet.

    Parameters
    ----------
    totals : CourseTotals
        The course's scores (:func:`course_totals`).

    Returns
    -------
    dict
        Assignment key → (answers unmarked, their points on the course's scale) over the class, in course order;
        only assignments with some.
    """
    found = {}
    for key in totals.graded:
        scores = [totals.scores[s][key] for s in totals.students]
        answers = sum(score.unmarked_answers for score in scores)
        if answers:
            found[key] = (answers, sum(score.unmarked for score in scores))
    return found


def held_back_line(totals: CourseTotals, key: str, what: str, marked_in: Sequence[Path | str]) -> str:
    """One line: an assignment's LMS files (and feedback) held back while written answers are unmarked, how many
    they are, and the commands that write them.

    Parameters
    ----------
    totals : CourseTotals
        The course's scores.
    key : str
        The assignment's key (one of :func:`unmarked_assignments`).
    what : str
        What was not written (``"Canvas column or Gradescope file and feedback"``).
    marked_in : sequence of pathlib.Path or str
        The reports whose marks databases hold the answers (``dpcourse mark`` serves each); not empty.

    Returns
    -------
    str
        The line, without a line break; the assignment's name through :func:`~.io.printable`.
    """
    answers, points = unmarked_assignments(totals)[key]
    name = printable(totals.course.assignment(key).name)
    serve = " and ".join(f"python -m dpcourse mark {printable(str(report))}" for report in marked_in)
    return (
        f"held back: {name} has {answers} written answer{'s' * (answers != 1)} not marked yet "
        f"({points_text(points)} points): no {what} written for it; mark them ({serve}), then run this same grade "
        "command again; or add --write-with-unmarked to write them now, the unmarked answers counting 0"
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
        The line, without a line break; student ids through :func:`~.io.printable`.
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


def _when(moment: datetime, zone: datetime | None = None) -> str:
    shown = moment.astimezone(zone.tzinfo) if zone is not None else moment
    return shown.isoformat(timespec="minutes")
