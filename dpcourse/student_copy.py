"""Old name of :mod:`dpcourse.classroom.release` (the students' copy), kept for one release."""

from .classroom.release import *  # noqa: F403
from .classroom.release import __all__, _stub_solution  # noqa: F401
