"""``python -m dpcourse release``: the students' copy of the workbook, every solution region a stub."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..release import (
    SOURCE,
    ReleaseError,
    _release,
)

__all__ = ["add_release_command"]


def add_release_command(commands: Any) -> None:
    """Register ``release OUTDIR [--notebooks DIR] [--keep-changed | --force]`` on an argparse sub-command set.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        What :meth:`argparse.ArgumentParser.add_subparsers` returned; ``release`` is added to it, its
        ``run`` default set to the function that runs the command.
    """
    parser = commands.add_parser("release", help="write the student version of every notebook")
    parser.add_argument("outdir", type=Path)
    parser.add_argument(
        "--notebooks",
        type=Path,
        default=SOURCE,
        help="where the solution notebooks are (default: the workbook's notebooks/)",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--keep-changed",
        action="store_true",
        help="leave notebooks in OUTDIR that differ from the release (a student's work) as they are",
    )
    mode.add_argument(
        "--force",
        action="store_true",
        help="overwrite notebooks in OUTDIR that differ from the release (their changes are lost)",
    )
    parser.set_defaults(run=_run_release)


def _run_release(args: argparse.Namespace) -> int:
    try:
        outcome = _release(args.notebooks, args.outdir, force=args.force, keep_changed=args.keep_changed)
    except ReleaseError as error:
        print(f"release: {error}", file=sys.stderr)
        return 1
    for path, what in outcome.items():
        if what == "kept":
            print(f"kept {path}: it differs from the release (your changes stay)")
        elif what == "written":
            print(f"wrote {path}")
    up_to_date = sum(what == "up to date" for what in outcome.values())
    if up_to_date:
        print(f"{up_to_date} notebook(s) in {args.outdir} already up to date")
    return 0
