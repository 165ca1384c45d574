"""Old name of :mod:`dpcourse.classroom.worker`, kept for one release."""

from .classroom.worker import *  # noqa: F403
from .classroom.worker import __all__ as __all__  # noqa: F401
