"""Old name of :mod:`dpcourse.classroom.release` (the students' copy), kept for one release."""

import warnings

from .classroom.release import *  # noqa: F403
from .classroom.release import __all__, _stub_solution  # noqa: F401

warnings.warn(
    "dpcourse.student_copy moved to dpcourse.classroom.release; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
