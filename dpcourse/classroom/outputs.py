"""Every file of a grading run beside its report: totals, the summary page, the LMS imports and the feedback.

:func:`write_gradebook` writes them and returns the terminal summary. The LMS imports (Canvas, Gradescope) and
the feedback hold only what this run graded: a column (or file) per assignment with a row in this run, a score
only for a student who handed some of it in, because an LMS import overwrites what is there and last week's
grades must survive this week's run. Every file is written atomically (:func:`~dpcourse.classroom.io.atomic_write`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from .course import Course
from .grading.reports import GradeRow
from .grading.similarity import ClassAnswers, similarity_report
from .io import printable

if TYPE_CHECKING:
    pass
from .gradebook.feedback import write_feedback
from .gradebook.render import class_summary, terminal_summary, write_summary_html
from .gradebook.roster import RosterEntry, SubmissionTime
from .gradebook.totals import (
    _beside,
    _common_notes,
    course_totals,
    hand_in_notes,
    held_back_line,
    partial_assignments,
    partial_line,
    unmarked_assignments,
    write_totals,
)
from .lms.canvas.grades import write_canvas
from .lms.gradescope.grades import write_gradescope
from .marking.export import ItemFrequency

__all__ = ["GRADEBOOKS", "write_gradebook"]


GRADEBOOKS = ("canvas", "gradescope")


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
    rubric: Sequence[ItemFrequency] = (),
    write_with_unmarked: bool = False,
    marked_in: Sequence[Path] = (),
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
    rubric : sequence of ItemFrequency, optional
        How often each rubric item of the written exercises was applied (:func:`~.marking.merge.fold_marks`):
        the summary page lists them.
    write_with_unmarked : bool, optional
        Write the LMS files and feedback of an assignment whose written answers are not all marked (they count 0).
        By default such an assignment gets no Canvas column, no Gradescope file and no feedback, and the summary
        says so in one line per assignment (:func:`~.gradebook.totals.held_back_line`).
    marked_in : sequence of pathlib.Path, optional
        The reports whose marks databases this run read (default: ``report``), named in that line.

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
        write_summary_html(summaries, totals, _beside(report, "summary.html"), notes, common, similar, rubric),
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
    held = [] if write_with_unmarked else list(unmarked_assignments(totals))
    if held and (lms or feedback is not None):
        what = " and ".join(filter(None, (_lms_names(lms), "feedback" if feedback is not None else "")))
        text += "".join("\n  " + held_back_line(totals, key, what, marked_in or [report]) for key in held)
        partial = {**partial, **{(student, key): () for student in totals.students for key in held}}
        totals = replace(totals, graded=tuple(key for key in totals.graded if key not in held))
    if lms and not totals.graded:
        if not held:  # when every assignment graded is held back, its lines said so
            text += "\n  no assignment was graded in this run: no LMS file written"
    elif "canvas" in lms:
        written.append(write_canvas(totals, roster, _beside(report, "canvas.csv"), partial=partial))
    if "gradescope" in lms and totals.graded:
        written += write_gradescope(totals, roster, report, partial=partial)
    if feedback is not None:
        written += write_feedback(rows, totals, feedback, submissions, partial=partial)
    return written, text


def _lms_names(lms: Sequence[str]) -> str:
    return " or ".join({"canvas": "Canvas column", "gradescope": "Gradescope file"}[name] for name in lms)
