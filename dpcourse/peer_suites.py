"""Old name of :mod:`dpcourse.audit.peer_suites` (the peers' SVT suites), kept for one release."""

import warnings

from .audit.peer_suites import *  # noqa: F403
from .audit.peer_suites import __all__  # noqa: F401

warnings.warn(
    "dpcourse.peer_suites moved to dpcourse.audit.peer_suites; the old name goes in the next release",
    DeprecationWarning,
    stacklevel=2,
)
