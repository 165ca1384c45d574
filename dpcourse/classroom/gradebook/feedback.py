"""Each student's feedback files: one Markdown file per graded notebook, named from the student id.

Feedback file names are made from the student id without ever leaving the feedback folder
(:func:`feedback_name`); only what this run graded gets a file, so last week's feedback survives this week's run.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..course import Assignment
from ..grading.reports import GradeRow
from ..io import atomic_text

if TYPE_CHECKING:
    pass
from .render import _markdown
from .roster import SubmissionTime
from .totals import _NOT_GRADED, CourseTotals, _common_notes, _latest, _notebook_of, partial_assignments, row_points

__all__ = ["feedback_name", "write_feedback"]


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
                "lines": r.message.splitlines() if r.status == "marked" else [],  # a mark: items, comment
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
