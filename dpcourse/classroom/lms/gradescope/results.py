"""The ``results.json`` a student sees on Gradescope: a test per exercise, the score, lateness and what was not read.

Visibility follows the course file's ``[gradescope]`` setting (:data:`VISIBILITIES`); messages quoting the
student's own answer are the student's to see, the instructor's solutions never are.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ...course import Assignment, Course, Lateness, duration_text
from ...gradebook.roster import RosterEntry, SubmissionTime
from ...gradebook.totals import course_totals, row_points
from ...grading.reports import GradeRow, points_text
from .staging import _shown

#: a written answer's statuses (issue 42): marked by hand, never by the autograder
WRITTEN = ("needs marking", "marked")

__all__ = ["VISIBILITIES", "results_json", "test_name"]


#: Gradescope's visibility settings, for the result and for the autograder's stdout.
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")

#: The folder name a submission is graded under (the gradebook's student id when no extension names the student).
STUDENT = "student"


def test_name(notebook: str, exercise: str) -> str:
    """``"01 · exact-tail-level"``: the notebook's number (its whole stem when it has none) and the exercise id.

    Parameters
    ----------
    notebook : str
        The notebook's stem, such as ``"01_laplace_utility"``.
    exercise : str
        The exercise id.

    Returns
    -------
    str
        The leading digits of ``notebook`` (else all of it), ``" · "`` and ``exercise``.

    Examples
    --------
    >>> test_name("01_laplace_utility", "max-queries")
    '01 · max-queries'
    """
    number = re.match(r"\d+", notebook)
    return f"{number.group(0) if number else notebook} · {exercise}"


def _student_notes(integrity: str, dropped: str) -> list[str]:
    return [note for note in integrity.split("; ") if note and note != dropped]


def _test_output(row: GradeRow | None, notebook: str) -> str:
    if row is None:
        return f"Not graded: no notebook {notebook}.ipynb was found in your submission (see the overall output)."
    lines = [row.message or row.status]
    if row.status == "failed" and row.mistake:
        lines.append(f"Mistake: {row.mistake}")
    if row.status == "failed" and row.hint:
        lines.append(f"Hint: {row.hint}")
    if row.status not in ("passed", "failed"):
        lines.insert(0, f"({row.status})")
    return "\n".join(lines)


def _lateness_line(lateness: Lateness | None, penalty: float, maximum: float) -> str | None:
    if lateness is None or lateness.due is None:
        return None
    due = lateness.due.isoformat(timespec="minutes")
    if lateness.late_by is None:
        return f"Marked late (due {due}): −{points_text(penalty)} points."
    span = duration_text(lateness.late_by)
    if lateness.within_grace:
        return f"Handed in {span} after the due time ({due}), within the grace period: no penalty."
    if not lateness.accepted:
        return f"Handed in {span} late (due {due}). Late work is not accepted: it scores 0."
    if lateness.fraction == 0:
        return f"Handed in {span} late (due {due}); no points are deducted for lateness."
    days = f"{lateness.days} started day{'s' if lateness.days != 1 else ''}"
    if penalty == 0:
        return f"Handed in {span} late (due {due}): {days}; no points were earned, so none are deducted."
    return (
        f"Handed in {span} late (due {due}): {days}, {100 * lateness.fraction:.4g} % of the assignment's "
        f"{points_text(maximum)} points: −{points_text(penalty)} points."
    )


def results_json(
    rows: Sequence[GradeRow],
    course: Course,
    assignment: Assignment,
    *,
    student: str = STUDENT,
    submitted_at: datetime | None = None,
    ignored: Sequence[tuple[str, str]] = (),
    skipped: Sequence[str] = (),
    visibility: str = "visible",
    stdout_visibility: str = "hidden",
    dropped_note: str = "",
) -> dict[str, Any]:
    """Gradescope's ``results.json`` for one submission's grade rows.

    One test per exercise of ``assignment`` (its points as the course gives them), ``passed`` or ``failed``
    (an errored, not attempted or missing exercise is ``failed``, its output saying which); the top-level
    ``score`` is the course's: extra and partial credit, less the late penalty. ``dropped_note`` is an
    integrity note left out of what students see (the unconfined run's, expected on Gradescope).

    Parameters
    ----------
    rows : sequence of GradeRow
        The rows :func:`~.run.grade` gave for the submission's notebooks (rows of files that were not
        graded, exercise ``"-"``, are listed in the output).
    course : Course
        The course, for its late policy and extensions.
    assignment : Assignment
        The assignment graded: its notebooks, exercises and points.
    student : str
        The course's id for the submitter (whose extension applies).
    submitted_at : datetime.datetime or None, optional
        When the submission was made; None when unknown (no late penalty then).
    ignored : sequence of tuple of str
        ``(file name, why)`` of the files not graded, listed in the output.
    skipped : sequence of str
        Sentences for what staging only counted or did not search (:attr:`Staged.skipped`), in the output.
    visibility : str
        Gradescope's visibility of the result and its tests.
    stdout_visibility : str
        Gradescope's visibility of the autograder's stdout.
    dropped_note : str
        An integrity note not shown to the student.

    Returns
    -------
    dict
        ``results.json`` as Gradescope reads it: ``score``, ``output`` (the notebooks graded and missing,
        the files ignored, what was not searched, the notes and the lateness), ``tests`` (by notebook,
        then in the order of the assignment's points) and the visibilities.
    """
    outline = {nb: [ex for n, ex in assignment.points if n == nb] for nb in assignment.notebooks}
    times = {(student, nb): SubmissionTime(submitted_at, None) for nb in assignment.notebooks}
    rows = [dataclasses.replace(r, student=student) for r in rows]
    # a written answer is marked by hand, not here: Gradescope's own manually graded question takes it
    written = [r for r in rows if r.status in WRITTEN]
    graded_rows = [r for r in rows if r.exercise != "-" and r.status not in WRITTEN]
    totals = course_totals(
        graded_rows,
        {nb: {ex: assignment.points[(nb, ex)] for ex in exercises} for nb, exercises in outline.items()},
        [RosterEntry(student)],
        course=course,
        submissions={k: v for k, v in times.items() if any(r.notebook == k[1] for r in graded_rows)},
    )
    score = totals.scores[student][assignment.key]
    by_key = {(r.notebook, r.exercise): r for r in graded_rows}
    tests = []
    for notebook, exercise in _exercises(assignment):
        row = by_key.get((notebook, exercise))
        extra = (notebook, exercise) in assignment.extra_credit
        tests.append(
            {
                "name": test_name(notebook, exercise) + (" (extra credit)" if extra else ""),
                "score": round(row_points(row, assignment), 6) if row is not None else 0.0,
                "max_score": 0.0 if extra else assignment.points[(notebook, exercise)],
                "status": "passed" if row is not None and row.status == "passed" else "failed",
                "output": _test_output(row, notebook),
                "output_format": "text",
                "visibility": visibility,
            }
        )
    lines = [f"{assignment.name}: {points_text(round(score.points, 6))} of {points_text(assignment.maximum)} points."]
    graded = [nb for nb in assignment.notebooks if any(r.notebook == nb for r in graded_rows)]
    missing = [nb for nb in assignment.notebooks if nb not in graded]
    for notebook in graded:
        lines.append(f"Graded: {notebook}.ipynb")
    for notebook in missing:
        lines.append(
            f"Missing: no gradable notebook {notebook}.ipynb was found. Upload your {notebook}.ipynb (in JupyterLab: "
            "right-click it, Download) and submit again; its exercises score 0 until then."
        )
    for row in rows:
        if row.exercise == "-":
            lines.append(f"Not graded: {_shown(row.notebook)}.ipynb: {row.message}")
    for row in written:
        lines.append(
            f"Written: {test_name(row.notebook, row.exercise)} is marked by hand by your instructor, not by the "
            "autograder; it is not in this score."
        )
    for name, why in ignored:
        lines.append(f"Ignored: {name}: {why}")
    lines += [sentence[:1].upper() + sentence[1:] + "." for sentence in skipped]
    notes = sorted({n for r in graded_rows for n in _student_notes(r.integrity, dropped_note)})
    lines += [f"Note: {note}" for note in notes]
    late = _lateness_line(score.lateness, score.penalty, assignment.maximum)
    if late:
        lines.append(late)
    return {
        "score": round(score.points, 6),
        "output": "\n".join(lines),
        "output_format": "text",
        "test_output_format": "text",
        "visibility": visibility,
        "stdout_visibility": stdout_visibility,
        "tests": tests,
    }


def _exercises(assignment: Assignment) -> list[tuple[str, str]]:
    """``(notebook, exercise)`` of ``assignment`` in the order of its tests: by notebook, then as its points list."""
    return [(nb, ex) for nb in assignment.notebooks for n, ex in assignment.points if n == nb]


def _log_lines(
    result: Mapping[str, Any], rows: Sequence[GradeRow], assignment: Assignment, skipped: Sequence[str]
) -> list[str]:
    """The autograder's log of a result: each test's course points exactly as ``result`` gives them."""
    lines = [f"autograder: {sentence}" for sentence in skipped]
    status = {(r.notebook, r.exercise): r.status for r in rows if r.exercise != "-"}
    for (notebook, exercise), test in zip(_exercises(assignment), result["tests"], strict=True):
        how = status.get((notebook, exercise), "missing")
        lines.append(f"  {test['name']}: {how} {points_text(test['score'])}/{points_text(test['max_score'])}")
    lines += [f"  not graded: {_shown(r.notebook)}.ipynb: {r.message}" for r in rows if r.exercise == "-"]
    lines.append(
        f"autograder: score {points_text(result['score'])} of {points_text(assignment.maximum)} (the course's points)"
    )
    return lines


def _failure_result(message: str, config: Mapping[str, Any] | None) -> dict[str, Any]:
    visibility = (config or {}).get("visibility", "visible")
    return {
        "score": 0.0,
        "output": f"The autograder could not grade this submission: {message} This is not a judgement of your "
        "work; please tell your instructor.",
        "output_format": "text",
        "visibility": visibility if visibility in VISIBILITIES else "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }
