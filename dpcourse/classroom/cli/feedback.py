"""``python -m dpcourse feedback``: every student's feedback in one zip for Canvas's *Re-Upload Submissions*."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..io import printable
from ..lms.canvas.feedback_zip import (
    canvas_feedback_zip,
)

__all__ = ["add_feedback_command"]


def add_feedback_command(commands: Any) -> None:
    """Register ``feedback`` on an argparse sub-command set.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        What :meth:`argparse.ArgumentParser.add_subparsers` returned; ``feedback`` is added to it, its ``run``
        default set to the function that runs the command.
    """
    parser = commands.add_parser(
        "feedback",
        help="the feedback grade wrote, as a zip for Canvas's Re-Upload Submissions",
        description="Write the Markdown feedback of grade --feedback as one HTML file per student, in a zip "
        "named as Canvas's download named each student's file, for Canvas's Re-Upload Submissions (each "
        "becomes a comment on the student's submission).",
    )
    parser.add_argument("kind", choices=("canvas",), help="the LMS (Canvas: Re-Upload Submissions)")
    parser.add_argument("collected", type=Path, help="the collected.csv that collect canvas wrote from the download")
    parser.add_argument("--feedback", type=Path, required=True, metavar="DIR", help="the folder grade --feedback wrote")
    parser.add_argument("--out", type=Path, required=True, metavar="ZIP", help="the zip to write")
    parser.add_argument(
        "--notebook",
        action="append",
        default=[],
        metavar="NB",
        help="a notebook of the assignment (repeat, in the order shown); default: those collected.csv names",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing --out")
    parser.set_defaults(run=_run_feedback)


def _run_feedback(args: argparse.Namespace) -> int:
    try:
        result = canvas_feedback_zip(args.collected, args.feedback, args.out, notebooks=args.notebook, force=args.force)
    except (OSError, ValueError) as err:
        print(f"feedback: {printable(str(err))}", file=sys.stderr)
        return 2
    print(result.summary())
    return 0
