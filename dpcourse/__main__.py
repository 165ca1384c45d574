"""``python -m dpcourse release OUTDIR`` and ``python -m dpcourse grade SUBMISSIONS… --report grades.csv``.

Each sub-command is registered by the module that implements it (:mod:`dpcourse.student_copy`,
:mod:`dpcourse.grading`).
"""

from __future__ import annotations

import argparse
import sys

from . import grading, student_copy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpcourse", description="Instructors' tools for the dpcourse workbook.")
    commands = parser.add_subparsers(dest="command", required=True)
    student_copy.add_release_command(commands)
    grading.add_grade_command(commands)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
