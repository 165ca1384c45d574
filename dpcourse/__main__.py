"""``python -m dpcourse release OUTDIR``, ``python -m dpcourse collect KIND INPUT --out DIR``,
``python -m dpcourse grade SUBMISSIONS… --report grades.csv`` and ``python -m dpcourse gradescope build|run``.

The commands live in :mod:`dpcourse.classroom.cli`.
"""

from __future__ import annotations

import sys

from .classroom.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
