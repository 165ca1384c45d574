"""Gradescope's grade import: one file per assignment graded in this run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...grading.reports import points_text
from ...io import atomic_csv

if TYPE_CHECKING:
    pass
from ...gradebook.feedback import feedback_name
from ...gradebook.roster import RosterEntry
from ...gradebook.totals import CourseTotals, _beside, _graded_students, _roster_by_student, partial_assignments

__all__ = ["write_gradescope"]


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
