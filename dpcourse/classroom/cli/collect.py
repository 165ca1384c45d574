"""``python -m dpcourse collect canvas|gradescope|folders``: an LMS's download as one folder per student."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..gradebook.roster import read_roster
from ..lms.archive import (
    CollectError,
)
from ..lms.collect import collect
from ..lms.collected import KINDS
from ..release import SOURCE
from .arguments import due

__all__ = ["add_collect_command"]


def add_collect_command(commands: Any) -> None:
    """Register ``collect`` on an argparse sub-command set.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        What :meth:`argparse.ArgumentParser.add_subparsers` returned; ``collect`` is added to it, its
        ``run`` default set to the function that runs the command.
    """
    parser = commands.add_parser(
        "collect",
        help="turn an LMS download into submissions/<student>/<notebook>.ipynb",
        description="Collect Canvas's Download Submissions zip, Gradescope's Export Submissions zip, or a "
        "folder of student folders into DIR/<student>/<notebook>.ipynb, listing every file in "
        "DIR/collected.csv.",
    )
    parser.add_argument("kind", choices=KINDS, help="where the input comes from")
    parser.add_argument("input", type=Path, help="the LMS's zip (canvas, gradescope) or the folder (folders)")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="the folder to write (empty)")
    parser.add_argument(
        "--roster",
        type=Path,
        default=None,
        help="the course's students (as for grade): Canvas matched by canvas_id, Gradescope by sid then email, "
        "folders by student; files of anyone else are listed, not collected",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=SOURCE,
        help="the instructor's notebooks, whose names the collected files get (default: notebooks/)",
    )
    parser.add_argument(
        "--due", type=due, default=None, help="gradescope only: the due time (ISO 8601); later submissions are late"
    )
    parser.add_argument(
        "--canvas-submissions",
        type=Path,
        action="append",
        default=[],
        metavar="JSON",
        help="canvas only: the JSON of Canvas's submissions API for this assignment (GET /api/v1/courses/<course>/"
        "assignments/<assignment>/submissions; repeat for each page): its submitted_at times become the files' "
        "times, so that grade charges lateness by the minute (the zip only says LATE)",
    )
    parser.add_argument("--force", action="store_true", help="collect into a non-empty --out")
    parser.set_defaults(run=_run_collect)


def _run_collect(args: argparse.Namespace) -> int:
    try:
        roster = read_roster(args.roster) if args.roster is not None else None
        if roster is not None and not roster:
            raise ValueError(f"--roster {args.roster} lists no students")
        result = collect(
            args.kind,
            args.input,
            args.out,
            roster=roster,
            notebooks=args.source,
            due=args.due,
            force=args.force,
            canvas_submissions=args.canvas_submissions,
        )
    except (CollectError, OSError, ValueError) as err:
        print(f"collect: {err}", file=sys.stderr)
        return 2
    print(result.summary())
    return 0
