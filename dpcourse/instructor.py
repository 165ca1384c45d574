"""Old name of the instructors' tools, kept for one release: they live in :mod:`dpcourse.classroom`."""

import warnings

from .classroom.cli import add_grade_command
from .classroom.grade import grade
from .classroom.plan import match_answers, source_exercises
from .classroom.release import BEGIN, END, PROJECT, _stub_solution, exercises, release, release_notebook  # noqa: F401
from .classroom.reports import (
    COLUMNS,
    STATUSES,
    GradeRow,
    merge_reports,
    read_report,
    summary_table,
    totals,
    write_report,
)
from .classroom.sandbox import Limits, sandbox_command

__all__ = [
    "BEGIN",
    "COLUMNS",
    "END",
    "PROJECT",
    "STATUSES",
    "GradeRow",
    "Limits",
    "add_grade_command",
    "exercises",
    "grade",
    "match_answers",
    "merge_reports",
    "read_report",
    "release",
    "release_notebook",
    "sandbox_command",
    "source_exercises",
    "summary_table",
    "totals",
    "write_report",
]

warnings.warn(
    "dpcourse.instructor moved to dpcourse.classroom; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
