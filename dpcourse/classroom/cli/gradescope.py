"""``python -m dpcourse gradescope build|run``: Gradescope's autograder zip, and what its ``run_autograder`` calls."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..lms.gradescope.autograder import (
    ROOT_ENV,
    build_autograder,
    run_autograder,
)
from ..lms.gradescope.results import VISIBILITIES
from ..release import REQUIREMENTS, SOURCE, missing_checkout_default
from ..sandbox.limits import Limits
from .arguments import positive

__all__ = ["add_gradescope_command", "main"]


def add_gradescope_command(commands: Any) -> None:
    """Register ``gradescope`` (sub-commands ``build`` and ``run``) on an argparse sub-command set.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        What :meth:`argparse.ArgumentParser.add_subparsers` returned; ``gradescope`` is added to it, each
        sub-command's ``run`` default set to the function that runs it.
    """
    parser = commands.add_parser(
        "gradescope",
        help="build Gradescope's autograder zip, or run it on one submission",
        description="Grade on Gradescope with the same grader as `grade` (README: Grading on Gradescope).",
    )
    actions = parser.add_subparsers(dest="gradescope_command", required=True)
    build = actions.add_parser("build", help="write autograder.zip for one assignment")
    build.add_argument("--out", type=Path, required=True, help="the zip to write (upload it to Gradescope)")
    build.add_argument("--source", type=Path, default=SOURCE, help="the instructor's notebooks (default: notebooks/)")
    build.add_argument("--course", type=Path, default=None, metavar="TOML", help="the course file (README)")
    build.add_argument(
        "--assignment", default=None, help="the course file's assignment to grade (needed when it has several)"
    )
    build.add_argument(
        "--visibility",
        choices=VISIBILITIES,
        default="visible",
        help="when students see their result (Gradescope's setting; e.g. after_due_date)",
    )
    build.add_argument(
        "--stdout-visibility", choices=VISIBILITIES, default="hidden", help="the autograder's log (default hidden)"
    )
    build.add_argument("--cell-timeout", type=positive(float), default=Limits.cell_timeout, help="seconds per cell")
    build.add_argument(
        "--notebook-timeout",
        type=positive(float),
        default=Limits.notebook_timeout,
        help="seconds per notebook (keep their sum under Gradescope's autograder timeout)",
    )
    build.add_argument("--requirements", type=Path, default=REQUIREMENTS, help="the pins setup.sh installs")
    build.set_defaults(run=_run_build)
    run = actions.add_parser("run", help="grade <root>/submission as Gradescope's run_autograder does")
    run.add_argument(
        "--root", type=Path, default=None, help=f"the layout's root (default ${ROOT_ENV}, else /autograder)"
    )
    run.set_defaults(run=_run_run)


def _run_build(args: argparse.Namespace) -> int:
    try:
        limits = Limits(cell_timeout=args.cell_timeout, notebook_timeout=args.notebook_timeout)
        out = build_autograder(
            args.out,
            source=args.source,
            course=args.course,
            assignment=args.assignment,
            visibility=args.visibility,
            stdout_visibility=args.stdout_visibility,
            limits=limits,
            requirements=args.requirements,
        )
    except (OSError, ValueError) as err:
        print(f"gradescope build: {err}", file=sys.stderr)
        return 2
    print(f"autograder written to {out}: upload it in the assignment's Configure Autograder page")
    return 0


def _run_run(args: argparse.Namespace) -> int:
    result = run_autograder(args.root)
    print(f"autograder: score {result.get('score')}; results.json written")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m dpcourse.classroom.lms.gradescope build|run``: what ``run_autograder`` calls.

    Parameters
    ----------
    argv : list of str or None, optional
        The arguments after the program's name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The sub-command's exit status: 0, or 2 when ``build`` fails (or would read a default ``--source`` or
        ``--requirements`` that only a checkout of the workbook has).
    """
    parser = argparse.ArgumentParser(prog="python -m dpcourse.classroom.lms.gradescope")
    commands = parser.add_subparsers(dest="command", required=True)
    add_gradescope_command(commands)
    args = parser.parse_args(["gradescope", *(argv if argv is not None else sys.argv[1:])])
    missing = missing_checkout_default(args)
    if missing:
        print(missing, file=sys.stderr)
        return 2
    return int(args.run(args))
