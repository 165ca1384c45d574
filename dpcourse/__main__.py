"""``python -m dpcourse release OUTDIR`` and ``python -m dpcourse grade SUBMISSIONS… [--report report.csv]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import instructor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpcourse", description="Instructors' tools for the dpcourse workbook.")
    commands = parser.add_subparsers(dest="command", required=True)
    release = commands.add_parser("release", help="write the student version of every notebook")
    release.add_argument("outdir", type=Path)
    release.add_argument("--notebooks", type=Path, default=instructor.PROJECT / "notebooks",
                         help="where the solution notebooks are (default: the workbook's notebooks/)")
    grade = commands.add_parser("grade", help="grade submitted notebooks with nbval")
    grade.add_argument("submissions", nargs="+", type=Path)
    grade.add_argument("--report", type=Path, help="write one CSV row per student and exercise")
    grade.add_argument("--cell-timeout", type=int, default=300)
    args = parser.parse_args(argv)

    if args.command == "release":
        for path in instructor.release(args.notebooks, args.outdir):
            print(f"wrote {path}")
        return 0
    try:
        rows = instructor.grade(args.submissions, cell_timeout=args.cell_timeout)
    except RuntimeError as err:
        print(f"grading could not run: {err}", file=sys.stderr)
        return 2
    print(instructor.summary_table(rows))
    if args.report:
        instructor.write_report(rows, args.report)
        print(f"report written to {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
