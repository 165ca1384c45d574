"""``python -m dpcourse grade``: grade submissions, each in its own sandbox, and write the report and gradebook.

Exit status: 0 when grading worked (whatever the students scored, and whatever their kernels did), 2 for bad
arguments, an unreadable source or course file, or no working sandbox (then nothing ran and nothing was written), 1
when the grader itself failed on some submission (those rows say so), 130 when stopped by SIGINT or SIGTERM (the
runs in flight are ended; ``<report>.journal`` keeps every submission graded, and the same command again grades
only the rest).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from ..course import Course, CourseError, load_course
from ..gradebook.roster import RosterEntry, collected_times, left_out_notebooks, read_roster, submission_times
from ..grading.plan import read_outline, read_written
from ..grading.reports import GradeRow, journal_path, merge, summary_table, write_report
from ..grading.run import AS_ROOT, UNCONFINED, grade
from ..grading.similarity import read_answers
from ..grading.verdicts import INFRASTRUCTURE
from ..io import printable
from ..marking import import_answers
from ..marking.merge import fold_marks, report_stores
from ..marking.store import store_path
from ..outputs import GRADEBOOKS, write_gradebook
from ..release import PROJECT
from ..sandbox.limits import Limits
from ..sandbox.runner import SandboxUnavailable
from .arguments import memory, positive, shard

__all__ = ["add_grade_command"]


def add_grade_command(commands: Any) -> None:
    """Register ``grade`` on an argparse sub-command set.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        What :meth:`argparse.ArgumentParser.add_subparsers` returned; ``grade`` is added to it, its ``run``
        default set to the function that runs the command.
    """
    parser = commands.add_parser(
        "grade",
        help="grade submitted notebooks, each in its own sandbox",
        description="Grade submissions/<student>/<notebook>.ipynb against the instructor's notebooks.",
    )
    parser.add_argument(
        "submissions", nargs="*", type=Path, help="submitted notebooks (the student is the folder name)"
    )
    parser.add_argument(
        "--report",
        type=Path,
        required=True,
        help="the CSV report to write; <name>_totals.csv and <name>_summary.html go beside it. While grading, "
        "each submission's rows go to <report>.journal as soon as they are known: run the same command again "
        "after an interruption and only the submissions missing from it are graded",
    )
    parser.add_argument(
        "--source",
        type=Path,
        default=PROJECT / "notebooks",
        help="the instructor's notebooks: the whole course (default: notebooks/)",
    )
    parser.add_argument(
        "--jobs", type=positive(int), default=None, help="submissions graded in parallel (default: the cores)"
    )
    parser.add_argument("--cell-timeout", type=positive(float), default=Limits.cell_timeout, help="seconds per cell")
    parser.add_argument(
        "--notebook-timeout", type=positive(float), default=Limits.notebook_timeout, help="seconds per notebook"
    )
    parser.add_argument(
        "--memory",
        type=memory,
        default=Limits.memory_bytes,
        help="memory per submission, its files in the sandbox included (default 2G)",
    )
    parser.add_argument(
        "--sandbox",
        choices=("bwrap", "none", "auto"),
        default="bwrap",
        help="bwrap (default; refuses to run without a working bubblewrap) or none (unconfined: only "
        "where each submission already runs in its own container or VM); auto is bwrap",
    )
    parser.add_argument(
        "--run-submissions-as-root",
        action="store_true",
        help="with --sandbox none as root: when no unprivileged user (nobody, or $DPCOURSE_UNCONFINED_USER) can "
        "run this Python, run students' code as root instead of refusing (only on a machine you can throw away)",
    )
    parser.add_argument(
        "--shard",
        type=shard,
        default=None,
        metavar="I/N",
        help="grade only the students of shard I of N (0 <= I < N), for batch jobs; join with --merge",
    )
    parser.add_argument(
        "--merge",
        nargs="+",
        type=Path,
        metavar="CSV",
        help="merge these reports into --report (every row checked against --source); with submissions, this run's "
        "rows are merged after them (a regrade: with --replace they replace the earlier rows of each student and "
        "notebook they hold), so the LMS files and feedback cover every notebook of an assignment. Every run folds "
        "the marks of written answers (<report>.marks.sqlite of these reports and of --report) into the rows",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="with --merge: a later report's rows of a (student, notebook) replace the earlier ones (a regrade)",
    )
    parser.add_argument(
        "--shards",
        type=positive(int),
        default=None,
        metavar="N",
        help="with --merge: the reports are the N shard reports of one batch (…-0.csv … …-N-1.csv); "
        "each must hold only its own shard's students",
    )
    parser.add_argument(
        "--collected",
        type=Path,
        action="append",
        default=[],
        metavar="CSV",
        help="when each notebook was handed in: the collected.csv of `collect` (repeatable; default: the one in "
        "the submissions' folder, else file times; with --merge give the weeks' files for their late penalties)",
    )
    parser.add_argument(
        "--course",
        type=Path,
        default=None,
        metavar="TOML",
        help="the course file: assignments, due times, points, late policy, extensions "
        "(the instructors' guide: book/instructors/course-file.md)",
    )
    parser.add_argument(
        "--roster",
        type=Path,
        default=None,
        help="the course's students: one id (submission folder name) per line, or a CSV with a "
        "'student' column and LMS fields (name, canvas_id, sis_user_id, section, sid, email)",
    )
    parser.add_argument(
        "--gradebook",
        choices=GRADEBOOKS,
        action="append",
        default=[],
        help="also write an LMS import beside the report: canvas or gradescope (repeatable)",
    )
    parser.add_argument(
        "--feedback",
        type=Path,
        default=None,
        metavar="DIR",
        help="write one Markdown file per student and notebook into DIR",
    )
    parser.add_argument(
        "--write-with-unmarked",
        action="store_true",
        help="write the LMS files and feedback of an assignment even while some of its written answers are not "
        "marked (they count 0); without it such an assignment is held back, and the output says which",
    )
    parser.set_defaults(run=_run_grade)


def _limits(args: argparse.Namespace) -> Limits:
    disk = min(Limits.disk_bytes, args.memory // 4)
    return Limits(
        cell_timeout=args.cell_timeout,
        notebook_timeout=args.notebook_timeout,
        memory_bytes=args.memory,
        disk_bytes=disk,
        file_bytes=min(Limits.file_bytes, disk),
    )


def _write_gradebook(
    args: argparse.Namespace,
    rows: list[GradeRow],
    roster: list[RosterEntry],
    course: Course | None,
    times: Any,
    left_out: dict[str, frozenset[str]] | None = None,
    rubric: Any = (),
) -> None:
    """Totals over the whole course, the class summary, the LMS imports and feedback asked for."""
    written, text = write_gradebook(
        rows,
        read_outline(args.source),
        report=args.report,
        roster=roster,
        lms=args.gradebook,
        feedback=args.feedback,
        course=course,
        submissions=times,
        left_out=left_out,
        answers=None if args.merge else read_answers(args.submissions, source=args.source),
        rubric=rubric,
        write_with_unmarked=args.write_with_unmarked,
        marked_in=[r for r in dict.fromkeys([*(args.merge or ()), args.report]) if store_path(r).is_file()],
    )
    print(text)
    print("also written: " + ", ".join(str(p) for p in written))


def _import_written(args: argparse.Namespace) -> None:
    """This run's written answers into the marks database beside the report, and a line saying how to mark them."""
    imported = import_answers(args.report, args.submissions, source=args.source)
    if imported:
        answers = sum(len(s.added) + len(s.changed) + len(s.unchanged) for s in imported.values())
        print(
            f"written answers: {answers} to {len(imported)} exercises in {store_path(args.report)}; mark them with "
            f"dpcourse mark {args.report}"
        )


def _refusal(args: argparse.Namespace) -> str | None:
    if args.merge and args.submissions and (args.shards or args.shard is not None):
        return "--shard and --shards do not go with submissions and --merge together"
    if args.run_submissions_as_root and args.sandbox != "none":
        return "--run-submissions-as-root goes with --sandbox none"
    if not args.merge and (args.replace or args.shards):
        return "--replace and --shards go with --merge"
    if not args.merge and not args.submissions:
        return "no submissions given"
    if args.shard is not None and (args.gradebook or args.feedback or args.course):
        return "--shard writes only its report; give --gradebook, --feedback and --course to the --merge"
    return None


def _interrupted(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _run_grade(args: argparse.Namespace) -> int:
    refusal = _refusal(args)
    if refusal:
        print(f"grade: {refusal}", file=sys.stderr)
        return 2
    # SIGTERM (a batch system's stop, kill) ends the runs in flight as Ctrl-C does, instead of leaving them behind
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupted) if main_thread else None
    try:
        return _grade_command(args)
    except KeyboardInterrupt:
        print(
            f"grade: interrupted; the submissions graded so far are kept in {journal_path(args.report)}: run the "
            "same command again to grade only the rest",
            file=sys.stderr,
        )
        return 130
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _grade_command(args: argparse.Namespace) -> int:
    try:
        roster = read_roster(args.roster) if args.roster is not None else []
        outline = read_outline(args.source)
        written = {(stem, w.exercise) for stem, found in read_written(args.source).items() for w in found}
        students = [e.student for e in roster] if roster else None
        course = (
            load_course(args.course, outline, students=students, written=written) if args.course is not None else None
        )
        times = None
        left_out: dict[str, frozenset[str]] = {}
        if args.merge:  # read and checked before anything is graded
            merged = merge(args.merge, outline=outline, replace=args.replace, shards=args.shards)
        if args.merge and not args.submissions:
            rows = merged.rows
            times = collected_times(args.collected) if args.collected else None
            for student, notebook, winner in merged.replaced:
                print(f"replaced: {student}/{notebook} by the rows of {winner}")
        else:
            absent = [str(p) for p in args.submissions if not p.is_symlink() and not p.exists()]
            if absent:
                print(f"grade: no such file: {', '.join(absent[:5])}", file=sys.stderr)
                return 2
            partial = {nb: course.partial_credit(nb) for nb in outline} if course is not None else {}
            rows = grade(
                args.submissions,
                source=args.source,
                jobs=args.jobs,
                limits=_limits(args),
                sandbox=args.sandbox,
                shard=args.shard,
                progress=True,
                partial_credit=partial,
                run_as_root=args.run_submissions_as_root,
                journal=journal_path(args.report),
            )
            times = (
                collected_times(args.collected) if args.collected else submission_times(list(args.submissions), outline)
            )
            left_out = left_out_notebooks(args.submissions, outline)
            if args.merge:  # this run's rows after the earlier reports' (a regrade)
                merged = merge(args.merge, outline=outline, replace=args.replace, last=("this run", rows))
                for student, notebook, _ in merged.replaced:
                    print(f"replaced: {printable(student)}/{printable(notebook)} by this run's rows")
                rows = merged.rows
        if args.submissions:  # this run's written answers first, so that a changed answer never keeps an old mark
            _import_written(args)
        folded = fold_marks(rows, report_stores([*(args.merge or ()), args.report]))
        rows = folded.rows
        if folded.marked or folded.unmarked:
            print(f"written answers: {folded.marked} marked, {folded.unmarked} not marked yet")
        print(summary_table(rows))
        if any(UNCONFINED in r.integrity for r in rows):
            print("UNCONFINED: these submissions ran without a sandbox (--sandbox none); every row says so.")
        if any(AS_ROOT in r.integrity for r in rows):
            print(f"AS ROOT: the submissions ran as root, able to do anything on this machine: {AS_ROOT}.")
        write_report(rows, args.report)
        if args.submissions:
            journal_path(args.report).unlink(missing_ok=True)  # the report holds every row now
        if args.shard is None:
            _write_gradebook(args, rows, roster, course, times, left_out, folded.frequencies)
    except SandboxUnavailable as err:
        print(f"grade: {err}", file=sys.stderr)
        return 2
    except CourseError as err:
        print(f"grade: {err}", file=sys.stderr)
        return 2
    except (OSError, ValueError, RuntimeError) as err:
        print(f"grade: {err}", file=sys.stderr)
        return 2
    print(f"report written to {args.report}")
    broken = sum(r.message.startswith(INFRASTRUCTURE) for r in rows)
    if broken:
        print(
            f"grade: {broken} rows could not be graded because of the grader itself (see their messages)",
            file=sys.stderr,
        )
        return 1
    return 0
