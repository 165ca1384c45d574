"""Old name of the instructors' tools, kept for one release: they live in :mod:`dpcourse.classroom`."""

from .classroom.release import BEGIN, END, PROJECT, _stub_solution, exercises, release, release_notebook  # noqa: F401
from .grading import *  # noqa: F403
from .grading import __all__ as _grading_all

__all__ = ["BEGIN", "END", "PROJECT", "exercises", "release", "release_notebook", *_grading_all]
