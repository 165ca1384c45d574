"""``python -m dpcourse canvas pull|push``: the roster and submissions from Canvas's API, grades and feedback back."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..course import Assignment, Course, CourseError, load_course
from ..gradebook.roster import read_roster
from ..grading.plan import read_outline, read_written
from ..lms.archive import CollectError
from ..lms.canvas.api import (
    EXTRA,
    ROSTER_FILE,
    TOKEN_VARIABLE,
    CanvasError,
    _canvas_errors,
    _error_line,
    _where,
    connect,
    pull,
    read_token,
)
from ..lms.canvas.push import push, read_canvas_grades
from ..release import SOURCE

__all__ = ["add_canvas_command"]


def add_canvas_command(commands: Any) -> None:
    """Register ``canvas pull`` and ``canvas push`` on an argparse sub-command set.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        What :meth:`argparse.ArgumentParser.add_subparsers` returned.
    """
    parser = commands.add_parser(
        "canvas",
        help="pull submissions and the roster from Canvas, push grades and feedback to it (its API)",
        description=f"Canvas's API through canvasapi (pip install '{EXTRA}'). The token comes from "
        f"${TOKEN_VARIABLE} or --token-file; the address and course from the course file's [canvas].",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    for name, helped in (
        ("pull", "the roster and an assignment's submissions into DIR/<student>/<notebook>.ipynb, as collect"),
        ("push", "an assignment's grades (from grade --gradebook canvas) and feedback comments"),
    ):
        sub = actions.add_parser(name, help=helped, description=helped, allow_abbrev=False)  # --token is no flag
        sub.add_argument("assignment", help="the assignment's key in the course file")
        sub.add_argument("--course", type=Path, required=True, metavar="TOML", help="the course file, with [canvas]")
        sub.add_argument("--source", type=Path, default=SOURCE, help="the instructor's notebooks (default notebooks/)")
        sub.add_argument(
            "--token-file", type=Path, default=None, help=f"a file holding the token (else ${TOKEN_VARIABLE})"
        )
        if name == "pull":
            sub.add_argument("--out", type=Path, required=True, metavar="DIR", help="the folder to write (empty)")
            sub.add_argument(
                "--roster-out", type=Path, default=None, help=f"where the roster goes (default DIR/{ROSTER_FILE})"
            )
            sub.add_argument("--force", action="store_true", help="pull into a non-empty --out")
            sub.set_defaults(run=_run_pull)
        else:
            sub.add_argument("--roster", type=Path, required=True, help="the roster (pull's), for the Canvas ids")
            sub.add_argument("--grades", type=Path, default=None, metavar="CSV", help="<report>_canvas.csv of grade")
            sub.add_argument("--feedback", type=Path, default=None, metavar="DIR", help="grade --feedback's folder")
            sub.add_argument("--dry-run", action="store_true", help="say what would be sent; send nothing")
            sub.set_defaults(run=_run_push)


def _course(args: argparse.Namespace, students: Sequence[str] | None = None) -> tuple[Course, Assignment]:
    written = {(stem, w.exercise) for stem, found in read_written(args.source).items() for w in found}
    course = load_course(args.course, read_outline(args.source), students=students, written=written)
    try:
        return course, course.assignment(args.assignment)
    except KeyError:
        keys = ", ".join(a.key for a in course.assignments)
        raise CanvasError(f"no assignment {args.assignment!r} in {args.course} (allowed: {keys})") from None


def _run(name: str, work: Any) -> int:
    """Run a command's work: 0, or 2 with one line on stderr for any error of Canvas, the files or the course."""
    site: list[str] = []
    try:
        return int(work(site.append))
    except CanvasError as err:
        print(f"canvas {name}: {err}", file=sys.stderr)
        return 2
    except Exception as err:
        if isinstance(err, _canvas_errors()):
            print(f"canvas {name}: {_error_line(err, site[0] if site else 'its address')}", file=sys.stderr)
        elif isinstance(err, CourseError | CollectError | OSError | ValueError):
            print(f"canvas {name}: {err}", file=sys.stderr)
        elif isinstance(err, KeyError | TypeError):  # a Canvas object without a field this module reads
            print(f"canvas {name}: {_error_line(err, '')}", file=sys.stderr)
        else:
            raise
        return 2


def _run_pull(args: argparse.Namespace) -> int:
    def work(at: Any) -> int:
        course, assignment = _course(args)
        site, _ = _where(course, assignment)
        at(site.url)
        canvas = connect(site.url, read_token(args.token_file))
        result, roster = pull(
            canvas, course, assignment, args.out, notebooks=args.source, force=args.force, roster_path=args.roster_out
        )
        print(result.summary())
        print(f"roster of {len(roster)} students written to {args.roster_out or args.out / ROSTER_FILE}")
        return 0

    return _run("pull", work)


def _run_push(args: argparse.Namespace) -> int:
    def work(at: Any) -> int:
        roster = read_roster(args.roster)
        course, assignment = _course(args, [e.student for e in roster])
        if args.grades is None and args.feedback is None:
            raise CanvasError("nothing to push: give --grades CSV and/or --feedback DIR")
        grades = read_canvas_grades(args.grades, assignment) if args.grades is not None else {}
        site, _ = _where(course, assignment)
        at(site.url)
        canvas = connect(site.url, read_token(args.token_file))
        push(canvas, course, assignment, grades=grades, roster=roster, feedback=args.feedback, dry_run=args.dry_run)
        return 0

    return _run("push", work)
