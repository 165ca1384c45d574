"""Grading a batch: read every submission, run each in its own sandbox, judge outside, one row per exercise.

How one submission is graded:

1. **Read as hostile input and built from the source** (:mod:`.plan`): links leaving the student's
   folder, non-regular files, oversized or malformed notebooks become ``invalid`` rows; of several
   files of one student for the same notebook one is graded and the others are ``duplicate``.
2. **Run in a sandbox** (:mod:`.sandbox`, :mod:`.worker`): each check cell is wrapped so that it
   only *collects evidence* under a nonce and a seed fresh for that cell and run; the notebook goes
   to the worker on a pipe and its result comes back signed on another. nbclient runs it, not
   nbval: nbval turns a timeout or a dead kernel into skipped cells, which must never read as a pass.
3. **Judged outside** (:mod:`.verdicts`): ``passed`` needs the instructor's check to have run to
   completion in this run and evidence its judge accepts.

Any failure while reading, running or judging one submission becomes that submission's rows,
never the batch's. :func:`grade` refuses to start (:class:`~.runner.SandboxUnavailable`) when there
is no working sandbox and ``sandbox="none"`` was not asked for.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ... import __version__
from ..._validation import check_integer
from ..release import SOURCE
from ..sandbox.limits import Limits
from ..sandbox.runner import (
    SandboxUnavailable,
    check_sandbox_name,
    choose_sandbox,
    max_parallel_runs,
    run_job,
    unconfined_user,
    why_no_unconfined_user,
)
from ..validation import student_id
from .judge_pool import JudgePool
from .plan import (
    Plan,
    SubmissionError,
    load_sources,
    pick_graded,
    plan_submission,
    read_submission,
    source_for,
    student_of,
)
from .reports import GradeRow, ReportJournal, in_shard
from .verdicts import INFRASTRUCTURE, judge_run, rows_for_failure, with_written_rows

__all__ = ["AS_ROOT", "UNCONFINED", "grade", "in_shard", "parse_shard", "submissions_root"]

#: The integrity note on every row of a run without a sandbox.
UNCONFINED = "graded without a sandbox (--sandbox none)"
#: Added to it when the grader is root, no unprivileged user can run its Python, and the instructor said
#: ``run_as_root=True`` (``--run-submissions-as-root``): without that, such a run is refused.
AS_ROOT = "run as root by request (--run-submissions-as-root): no unprivileged user could run this Python"


@dataclass
class _Item:
    """One submitted file: whose it is, the notebook it was read as, and its rows once known."""

    path: Path
    student: str
    own_folder: Path
    notes: list[str] = field(default_factory=list)
    stem: str | None = None
    rows: list[GradeRow] | None = None
    digest: str = ""  # of the notebook as read (its cells): a changed file is graded again


def submissions_root(paths: Sequence[Path]) -> Path:
    """The folder whose sub-folders are the students: the common folder of the submissions' grandparents.

    For ``submissions/*/*.ipynb`` it is ``submissions``; a notebook nested deeper
    (``submissions/aaron/alice/x.ipynb``) still belongs to the top folder, ``aaron``.

    Parameters
    ----------
    paths : sequence of pathlib.Path
        The submitted files (relative paths are taken from the working folder; links are not resolved).

    Returns
    -------
    pathlib.Path
        The common folder, absolute; ``Path(".")`` when ``paths`` is empty.
    """
    grandparents = [os.path.abspath(p.parent.parent) for p in paths]
    return Path(os.path.commonpath(grandparents)) if grandparents else Path(".")


def _locate(path: Path, root: Path) -> _Item:
    """The student (the top folder under ``root``), their folder, and a note when the file is nested deeper."""
    relative = Path(os.path.abspath(path)).relative_to(root).parts
    if len(relative) < 2:  # a file directly in the root: its own name is all we have
        return _Item(path, student_of(path), path.parent)
    notes = []
    if len(relative) > 2:
        notes.append(f"handed in inside a nested folder ({'/'.join(relative[1:-1])[:100]}): graded as {relative[0]}'s")
    return _Item(path, student_id(relative[0]), root / relative[0], notes)


def _checked_shard(shard: tuple[int, int]) -> tuple[int, int]:
    if not isinstance(shard, tuple) or len(shard) != 2:
        raise ValueError(f"shard must be a pair (I, N) with 0 <= I < N, got {shard!r}")
    count = check_integer(shard[1], "shard count N", minimum=1)
    index = check_integer(shard[0], "shard index I", minimum=0, maximum=count - 1)
    return index, count


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` (0 ≤ I < N) as ``(I, N)``.

    Parameters
    ----------
    text : str
        The ``--shard`` argument, such as ``"0/4"``.

    Returns
    -------
    tuple of int
        ``(I, N)``: grade shard I of N.

    Raises
    ------
    ValueError
        If ``text`` is not two integers separated by ``/``, or not 0 ≤ I < N (the message names ``--shard``).

    Examples
    --------
    >>> parse_shard("1/4")
    (1, 4)
    """
    try:
        index, count = (int(part) for part in str(text).split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like I/N (e.g. 0/4); got {text!r}") from None
    try:
        return _checked_shard((index, count))
    except ValueError as error:  # one range check for the command line and the API, named as typed
        raise ValueError(f"--shard I/N needs 0 <= I < N and N >= 1; got {text!r} ({error})") from None


def _invalid(item: _Item, message: str, integrity: str) -> GradeRow:
    return GradeRow(
        item.student, item.path.stem, "-", "invalid", message=message[:300], integrity=_joined(item.notes, integrity)
    )


def _joined(notes: Sequence[str], integrity: str) -> str:
    return "; ".join([*notes, integrity] if integrity else notes)


def _modified(path: Path) -> float:
    try:
        return os.stat(path, follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


def _read(item: _Item) -> Any:
    return read_submission(item.path, item.own_folder)


def _prepare(
    paths: Sequence[Path], sources: dict[str, Any], integrity: str, shard: tuple[int, int] | None = None
) -> list[_Item]:
    """Read every submission once to know which notebook it is; invalid files and duplicates get their rows here.

    The parsed notebooks are not kept: each is read again, planned and run by its grading thread, so
    that at most ``jobs`` submissions are in memory at once.
    """
    root = submissions_root(paths)
    items = [_locate(p, root) for p in paths]
    if shard is not None:
        items = [item for item in items if in_shard(item.student, shard)]
    for item in items:
        try:
            notebook = _read(item)
            stem = source_for(item.path, notebook, sources)
            if stem is None:
                raise SubmissionError("not one of this workbook's notebooks")
            item.stem = stem
            item.digest = _digest(notebook)
        except SubmissionError as err:
            item.rows = [_invalid(item, f"not a gradable notebook: {err}", integrity)]
        except Exception as err:  # noqa: BLE001 - whatever the file does, it is this submission's row
            item.rows = [_invalid(item, f"not a gradable notebook ({type(err).__name__})", integrity)]
    groups: dict[tuple[str, str], list[_Item]] = defaultdict(list)
    for item in items:
        if item.stem is not None:
            groups[(item.student, item.stem)].append(item)
    for (_, stem), group in groups.items():
        if len(group) == 1:
            continue
        graded = pick_graded([i.path for i in group], stem, {i.path: _modified(i.path) for i in group})
        for item in group:
            if item.path != graded:
                item.rows = [
                    GradeRow(
                        item.student,
                        item.path.stem,
                        "-",
                        "duplicate",
                        message=f"another file of yours for {stem}, {graded.name}, was graded instead (the latest)",
                        integrity=_joined(item.notes, integrity),
                    )
                ]
    return items


def _digest(data: Any) -> str:
    """SHA-256 of ``data`` as canonical JSON (sorted keys): the same for the same content, whatever its layout."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _grading_context(
    sources: dict[str, Any], limits: Limits, mode: str, note: str, partial_credit: Mapping[str, frozenset[str]]
) -> str:
    """What a submission's rows depend on besides the submission itself: the journal keeps rows only under it."""
    return _digest(
        {
            "version": __version__,
            "sources": sources,
            "limits": asdict(limits),
            "sandbox": mode,
            "note": note,
            "partial_credit": {stem: sorted(ids) for stem, ids in partial_credit.items()},
        }
    )


def _file_key(item: _Item) -> str:
    """The submission as the journal knows it: the file (absolute path) and the student it was graded as."""
    return f"{item.student}:{os.path.abspath(item.path)}"


def _job(plan: Plan, limits: Limits) -> dict[str, Any]:
    return {
        "notebook": plan.built,
        "cell_timeout": limits.cell_timeout,
        "notebook_timeout": limits.notebook_timeout,
        "output_limit": limits.output_bytes,
        "cells": {ex.exercise: {"solution": ex.solution, "check": ex.check} for ex in plan.exercises},
    }


def _run_and_judge(
    item: _Item,
    sources: dict[str, Any],
    released: dict[str, Any],
    limits: Limits,
    sandbox: str,
    note: str,
    judges: JudgePool,
    partial_credit: frozenset[str],
    stop: threading.Event | None = None,
) -> list[GradeRow]:
    assert item.stem is not None
    try:
        plan = plan_submission(item.path, _read(item), item.stem, sources, released, item.student)
    except SubmissionError as err:
        return [_invalid(item, f"not a gradable notebook: {err}", note)]
    except Exception as err:  # noqa: BLE001
        return [_invalid(item, f"not a gradable notebook ({type(err).__name__})", note)]
    integrity = _joined([*item.notes, *plan.integrity], note)
    rows = _run_exercises(plan, limits, sandbox, judges, partial_credit, integrity, stop)
    return with_written_rows(plan, rows, integrity)


def _run_exercises(
    plan: Plan,
    limits: Limits,
    sandbox: str,
    judges: JudgePool,
    partial_credit: frozenset[str],
    integrity: str,
    stop: threading.Event | None,
) -> list[GradeRow]:
    """The rows of the plan's code exercises: run in the sandbox and judged; no kernel for a notebook without
    any (written answers are never run)."""
    if not plan.exercises:
        return []
    try:
        outcome = run_job(_job(plan, limits), sandbox=sandbox, limits=limits, stop=stop)
        if outcome.result is None:
            return rows_for_failure(plan, outcome.failure, integrity)
        return judge_run(plan, outcome.result, integrity, judges, partial_credit)
    except Exception as err:  # noqa: BLE001 - one submission's failure is its rows, never the batch's
        return rows_for_failure(plan, f"{INFRASTRUCTURE}: {type(err).__name__}: {str(err)[:200]}", integrity)


class _Batch:
    """What the grading threads share: the journal (or None), the signal to stop, and journal failures."""

    def __init__(self, journal: ReportJournal | None):
        self.journal = journal
        self.stop = threading.Event()
        self.unrecorded: list[str] = []

    def graded(self, item: _Item, rows: list[GradeRow]) -> list[GradeRow]:
        """Record ``item``'s rows in the journal, unless the batch was stopped (its run was cut short) or the
        grader itself failed on it (a rerun tries it again)."""
        failed = any(r.message.startswith(INFRASTRUCTURE) for r in rows)
        if self.journal is not None and not self.stop.is_set() and not failed:
            try:
                self.journal.record(_file_key(item), item.digest, rows)
            except OSError as err:
                self.unrecorded.append(f"{item.path}: {err}")
        return rows


def _refused_as_root(why: str) -> str:
    """One line: why ``--sandbox none`` as root will not run students' code, and the ways out."""
    return (
        f"--sandbox none as root must drop each submission to an unprivileged user, and cannot: {why}; nothing was "
        f"graded. Make this Python and the dpcourse package readable by that user (a virtual environment and "
        f"checkout outside a 0700 folder such as /root or one made by mktemp -d, e.g. under /opt or /srv), or name "
        f"another user in $DPCOURSE_UNCONFINED_USER, or grade as an ordinary user; --run-submissions-as-root runs "
        f"them as root anyway (only on a machine you can throw away)"
    )


def grade(
    submissions: Sequence[Path | str],
    *,
    source: Path | str = SOURCE,
    jobs: int | None = None,
    limits: Limits | None = None,
    sandbox: str = "bwrap",
    shard: tuple[int, int] | None = None,
    progress: bool = False,
    partial_credit: Mapping[str, frozenset[str]] | None = None,
    run_as_root: bool = False,
    journal: Path | str | None = None,
) -> list[GradeRow]:
    """Grade every submission; rows in the order of ``submissions``, exercises in notebook order.

    Parameters
    ----------
    submissions : sequence of str or pathlib.Path
        The submitted notebooks, ``<root>/<student>/<file>.ipynb``: the student is the top folder under the
        submissions' common folder (:func:`submissions_root`).
    source : str or pathlib.Path
        The instructor's notebooks, with their solutions (default: the workbook's ``notebooks/``).
    jobs : int or None, optional
        Submissions graded at once; by default the cores, within what
        :func:`~.limits.max_parallel_runs` allows.
    limits : Limits or None, optional
        Each run's limits (default :class:`~.limits.Limits`).
    sandbox : str
        ``"bwrap"`` (the default; ``"auto"`` means the same) refuses to run anything without a working
        bubblewrap; ``"none"`` runs each submission unconfined, in its own session, and notes it on every row.
    shard : tuple of int or None, optional
        ``(I, N)``: grade only the students in shard I of N (:func:`in_shard`); None grades everyone.
    progress : bool
        Show a progress bar on standard error.
    partial_credit : Mapping or None, optional
        Per notebook stem, the exercise ids whose failed rows earn the share of grading inputs passed (see
        :func:`~.verdicts.judge_run`).
    run_as_root : bool
        With ``sandbox="none"`` as root, run the submissions as root when no unprivileged user can run this
        Python (every row then says so). Off by default: such a run is refused, since a submission run as
        root can do anything on the machine.
    journal : str or pathlib.Path or None, optional
        Where to keep a :class:`~.reports.ReportJournal` (the CLI's is :func:`~.reports.journal_path` of the
        report): a submission whose file (absolute path, as the same student) and notebook content (a SHA-256
        of its cells as read) it holds, graded under the same sources, limits and options, is not run again and
        gets its recorded rows; every other one's rows are appended to it, whole and synced, as soon as they are
        known (not those of a submission the grader itself failed on, which a rerun tries again). A batch
        stopped by a signal or killed therefore loses only the submissions in flight, and the same call again
        grades only the rest. None keeps nothing.

    Returns
    -------
    list of GradeRow
        One row per exercise of each graded submission (a written exercise's is ``needs marking``, or ``not
        attempted`` without an answer: it is never run, and a notebook with written exercises only starts no
        kernel); one ``invalid`` or ``duplicate`` row for a file
        that could not be read as a notebook of the workbook or that another file of the student replaced.
        Whatever one submission does becomes its own rows.

    Raises
    ------
    SandboxUnavailable
        If ``sandbox`` is ``"bwrap"`` or ``"auto"`` and bubblewrap does not work here, or ``sandbox`` is
        ``"none"``, the grader is root, no unprivileged user can run this Python and ``run_as_root`` is
        False: nothing ran. Checked after the arguments and the source, so those are reported first.
    ValueError
        If ``sandbox`` is none of those values, ``jobs`` is below 1 or above what
        :func:`~.limits.max_parallel_runs` allows (the message says why), or the notebooks of ``source``
        hold no exercise or a malformed one (:func:`~.plan.load_sources`), or ``shard`` is not ``(I, N)`` with
        0 ≤ I < N.
    TypeError
        If ``jobs`` or a part of ``shard`` is not an integer.
    FileNotFoundError
        If ``source`` holds no notebook.
    OSError
        If ``journal`` cannot be opened or another batch holds it (``BlockingIOError``).
    KeyboardInterrupt
        On SIGINT (or what the caller turns into it): the runs in flight are ended, nothing more starts, and
        the journal keeps what was graded.
    """
    check_sandbox_name(sandbox)
    if jobs is not None:
        jobs = check_integer(jobs, "jobs", minimum=1)
    if shard is not None:
        shard = _checked_shard(shard)
    limits = limits or Limits()
    # Everything that does not depend on the sandbox is refused first, so an instructor hears of it on any machine.
    sources, released = load_sources(source)
    mode = choose_sandbox(sandbox)
    note = UNCONFINED if mode == "none" else ""
    if mode == "none" and os.geteuid() == 0 and unconfined_user() is None:
        if not run_as_root:
            raise SandboxUnavailable(_refused_as_root(why_no_unconfined_user()))
        note = f"{UNCONFINED}, as root: {AS_ROOT}"
    paths = [Path(p) for p in submissions]
    items = _prepare(paths, sources, note, shard)
    runs, why = max_parallel_runs(mode, limits)
    if jobs is not None and jobs > runs:
        raise ValueError(f"--jobs {jobs}: {why}")
    workers = max(1, min(jobs or os.cpu_count() or 1, runs))
    context = _grading_context(sources, limits, mode, note, partial_credit or {})
    opened = ReportJournal(journal, context) if journal is not None else contextlib.nullcontext()
    with opened as book:
        batch = _Batch(book)
        resumed = _resume(items, book) if book is not None else 0
        if progress and book is not None and (resumed or book.discarded):
            print(_resumed_line(book, resumed), file=sys.stderr)
        _grade_items(items, batch, workers, progress, sources, released, limits, mode, note, partial_credit or {})
    if progress and batch.unrecorded:
        print(
            f"grade: {len(batch.unrecorded)} submissions' rows could not be kept in the journal "
            f"(first: {batch.unrecorded[0]}); the report has them",
            file=sys.stderr,
        )
    return [row for item in items for row in item.rows or []]


def _resume(items: Sequence[_Item], journal: ReportJournal) -> int:
    """Give each item the journal holds (same file, same content) its recorded rows; how many."""
    resumed = 0
    for item in items:
        if item.rows is None and (rows := journal.rows_of(_file_key(item), item.digest)) is not None:
            item.rows = rows
            resumed += 1
    return resumed


def _resumed_line(journal: ReportJournal, resumed: int) -> str:
    if journal.discarded:
        return f"grade: {journal.path} was written under other sources or options: every submission is graded again"
    return f"grade: {resumed} submissions already graded are taken from {journal.path}; grading the rest"


def _grade_items(
    items: Sequence[_Item],
    batch: _Batch,
    workers: int,
    progress: bool,
    sources: dict[str, Any],
    released: dict[str, Any],
    limits: Limits,
    mode: str,
    note: str,
    partial_credit: Mapping[str, frozenset[str]],
) -> None:
    """Run and judge every item without rows, ``workers`` at once; on any exception (SIGINT's included) the
    runs in flight are ended, nothing more starts, and the exception propagates."""
    with JudgePool(workers) as judges, ThreadPoolExecutor(max_workers=workers) as pool:

        def graded(item: _Item) -> list[GradeRow]:
            credit = partial_credit.get(item.stem or "", frozenset())
            rows = _run_and_judge(item, sources, released, limits, mode, note, judges, credit, batch.stop)
            return batch.graded(item, rows)

        futures = {i: pool.submit(graded, item) for i, item in enumerate(items) if item.rows is None}
        try:
            if progress and futures:
                from concurrent.futures import as_completed

                from tqdm.auto import tqdm

                for _ in tqdm(
                    as_completed(futures.values()),
                    total=len(futures),
                    unit="submission",
                    desc="grading",
                    file=sys.stderr,
                ):
                    pass
            for i, future in futures.items():
                items[i].rows = future.result()
        except BaseException:
            batch.stop.set()
            for future in futures.values():
                future.cancel()
            raise
