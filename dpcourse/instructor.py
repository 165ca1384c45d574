"""Instructors' tools, kept under their old name: :mod:`dpcourse.student_copy` and :mod:`dpcourse.grading`."""

from .grading import *  # noqa: F401,F403
from .grading import __all__ as _grading_all
from .student_copy import BEGIN, END, PROJECT, _stub_solution, exercises, release, release_notebook  # noqa: F401

__all__ = ["BEGIN", "END", "PROJECT", "exercises", "release", "release_notebook", *_grading_all]
