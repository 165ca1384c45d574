"""Grading a batch: read every submission, run each in its own sandbox, judge outside, one row per exercise.

How one submission is graded:

1. **Read as hostile input and built from the source** (:mod:`.plan`): links leaving the student's
   folder, non-regular files, oversized or malformed notebooks become ``invalid`` rows; of several
   files of one student for the same notebook one is graded and the others are ``duplicate``.
2. **Run in a sandbox** (:mod:`.sandbox`, :mod:`.worker`): each check cell is wrapped so that it
   only *collects evidence* under a nonce and a seed fresh for that cell and run; the notebook goes
   to the worker on a pipe and its result comes back signed on another. nbclient runs it, not
   nbval: nbval turns a timeout or a dead kernel into skipped cells, which must never read as a pass.
3. **Judged outside** (:mod:`.judging`): ``passed`` needs the instructor's check to have run to
   completion in this run and evidence its judge accepts.

Any failure while reading, running or judging one submission becomes that submission's rows,
never the batch's. :func:`grade` refuses to start (:class:`~.sandbox.SandboxUnavailable`) when there
is no working sandbox and ``sandbox="none"`` was not asked for.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .judging import INFRASTRUCTURE, judge_run, rows_for_failure
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
from .release import PROJECT
from .reports import GradeRow
from .sandbox import Limits, choose_sandbox, run_job

__all__ = ["UNCONFINED", "grade", "in_shard", "parse_shard"]

#: The integrity note on every row of a run without a sandbox.
UNCONFINED = "graded without a sandbox (--sandbox none)"


@dataclass
class _Item:
    """One submitted file: its plan, or the rows already known for it (invalid, duplicate)."""

    path: Path
    plan: Plan | None = None
    rows: list[GradeRow] | None = None


def parse_shard(text: str) -> tuple[int, int]:
    """``"I/N"`` (0 ≤ I < N) as ``(I, N)``; ``ValueError`` naming ``--shard`` otherwise."""
    try:
        index, count = (int(part) for part in str(text).split("/"))
    except ValueError:
        raise ValueError(f"--shard must look like I/N (e.g. 0/4); got {text!r}") from None
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"--shard I/N needs 0 <= I < N and N >= 1; got {text!r}")
    return index, count


def in_shard(student: str, shard: tuple[int, int]) -> bool:
    """Whether ``student`` belongs to ``shard`` (by a hash of the name: the same on every machine)."""
    index, count = shard
    return int(hashlib.sha256(student.encode()).hexdigest(), 16) % count == index


def _invalid(path: Path, message: str, integrity: str) -> GradeRow:
    return GradeRow(student_of(path), path.stem, "-", "invalid", message=message[:300], integrity=integrity)


def _prepare(paths: Sequence[Path], sources: dict[str, Any], released: dict[str, Any], integrity: str) -> list[_Item]:
    """Read and plan every submission; invalid files and duplicates get their rows here."""
    items = [_Item(p) for p in paths]
    read: dict[int, tuple[Any, str]] = {}
    for position, item in enumerate(items):
        try:
            submission = read_submission(item.path)
            stem = source_for(item.path, submission, sources)
            if stem is None:
                raise SubmissionError("not one of this workbook's notebooks")
            read[position] = (submission, stem)
        except SubmissionError as err:
            item.rows = [_invalid(item.path, f"not a gradable notebook: {err}", integrity)]
        except Exception as err:  # noqa: BLE001 - whatever the file does, it is this submission's row
            item.rows = [_invalid(item.path, f"not a gradable notebook ({type(err).__name__})", integrity)]
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for position, (_, stem) in read.items():
        groups[(student_of(items[position].path), stem)].append(position)
    for (_, stem), positions in groups.items():
        graded = pick_graded([items[p].path for p in positions], stem)
        for position in positions:
            item = items[position]
            if item.path != graded:
                item.rows = [
                    GradeRow(
                        student_of(item.path),
                        item.path.stem,
                        "-",
                        "duplicate",
                        message=f"another file of yours for {stem}, {graded.name}, was graded instead",
                        integrity=integrity,
                    )
                ]
                continue
            try:
                item.plan = plan_submission(item.path, read[position][0], stem, sources, released)
            except SubmissionError as err:
                item.rows = [_invalid(item.path, f"not a gradable notebook: {err}", integrity)]
            except Exception as err:  # noqa: BLE001
                item.rows = [_invalid(item.path, f"not a gradable notebook ({type(err).__name__})", integrity)]
    return items


def _job(plan: Plan, limits: Limits) -> dict[str, Any]:
    return {
        "notebook": plan.built,
        "cell_timeout": limits.cell_timeout,
        "notebook_timeout": limits.notebook_timeout,
        "output_limit": limits.output_bytes,
        "cells": {ex.exercise: {"solution": ex.solution, "check": ex.check} for ex in plan.exercises},
    }


def _run_and_judge(plan: Plan, limits: Limits, sandbox: str, note: str) -> list[GradeRow]:
    integrity = "; ".join([*plan.integrity, note] if note else plan.integrity)
    try:
        outcome = run_job(_job(plan, limits), sandbox=sandbox, limits=limits)
        if outcome.result is None:
            return rows_for_failure(plan, outcome.failure, integrity)
        return judge_run(plan, outcome.result, integrity)
    except Exception as err:  # noqa: BLE001 - one submission's failure is its rows, never the batch's
        return rows_for_failure(plan, f"{INFRASTRUCTURE}: {type(err).__name__}: {str(err)[:200]}", integrity)


def grade(
    submissions: Sequence[Path | str],
    *,
    source: Path | str = PROJECT / "notebooks",
    jobs: int | None = None,
    limits: Limits | None = None,
    sandbox: str = "bwrap",
    shard: tuple[int, int] | None = None,
    progress: bool = False,
) -> list[GradeRow]:
    """Grade every submission; rows in the order of ``submissions``, exercises in notebook order.

    ``sandbox``: ``"bwrap"`` (the default; ``"auto"`` means the same) refuses to run anything
    without a working bubblewrap (:class:`~.sandbox.SandboxUnavailable`); ``"none"`` runs each
    submission unconfined, in its own session, and notes it on every row. ``shard=(I, N)`` grades
    only the students in shard I of N (:func:`in_shard`).
    """
    mode = choose_sandbox(sandbox)
    limits = limits or Limits()
    sources, released = load_sources(source)
    note = UNCONFINED if mode == "none" else ""
    paths = [Path(p) for p in submissions]
    if shard is not None:
        paths = [p for p in paths if in_shard(student_of(p), shard)]
    items = _prepare(paths, sources, released, note)
    workers = max(1, jobs or os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {
            i: pool.submit(_run_and_judge, item.plan, limits, mode, note)
            for i, item in enumerate(items)
            if item.plan is not None
        }
        if progress and futures:
            from concurrent.futures import as_completed

            from tqdm.auto import tqdm

            for _ in tqdm(
                as_completed(futures.values()), total=len(futures), unit="submission", desc="grading", file=sys.stderr
            ):
                pass
        for i, future in futures.items():
            items[i].rows = future.result()
    return [row for item in items for row in item.rows or []]
