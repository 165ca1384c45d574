"""Old name of :mod:`dpcourse.classroom.worker`, kept for one release."""

import warnings

from .classroom.worker import *  # noqa: F403
from .classroom.worker import __all__ as __all__  # noqa: F401

warnings.warn(
    "dpcourse._grade_worker moved to dpcourse.classroom.worker; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
