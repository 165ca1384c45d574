"""Old name of the grader, kept for one release: it now lives in :mod:`dpcourse.classroom`."""

import warnings

from .classroom.cli import add_grade_command
from .classroom.grade import grade
from .classroom.plan import match_answers, source_exercises
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
    "COLUMNS",
    "STATUSES",
    "GradeRow",
    "Limits",
    "add_grade_command",
    "grade",
    "match_answers",
    "merge_reports",
    "read_report",
    "sandbox_command",
    "source_exercises",
    "summary_table",
    "totals",
    "write_report",
]

warnings.warn(
    "dpcourse.grading moved to dpcourse.classroom (grade, plan, sandbox, reports, cli); the old name goes in "
    "the next release",
    DeprecationWarning,
    stacklevel=2,
)
