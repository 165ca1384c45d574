"""Canvas's gradebook import: a column per assignment graded in this run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...grading.reports import points_text
from ...io import atomic_csv

if TYPE_CHECKING:
    pass
from ...gradebook.roster import RosterEntry
from ...gradebook.totals import CourseTotals, _counted, _graded_students, _roster_by_student, partial_assignments

__all__ = ["write_canvas"]


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
        The CSV to write (atomically; every cell through :func:`~.io.safe_cell`).
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
