"""Grade rows and the report CSV: writing it safely, reading it back, totals and merging shards.

A report is one row per (student, notebook, exercise). It is written atomically, every cell a spreadsheet
could run as a formula quoted (:mod:`dpcourse.classroom.io`).
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import json
import os
import re
import threading
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

from ..io import atomic_csv, printable, unquoted

__all__ = [
    "COLUMNS",
    "STATUSES",
    "GradeRow",
    "Merged",
    "ReportJournal",
    "in_shard",
    "journal_path",
    "merge",
    "merge_reports",
    "points_text",
    "read_report",
    "summary_table",
    "totals",
    "write_report",
]

#: ``duplicate``: another file of the same student for the same notebook was graded instead.
#: ``needs marking``: a written answer, marked by hand, not yet marked (points 0 of its maximum).
#: ``marked``: a written answer whose points come from the marks database.
STATUSES = ("passed", "failed", "not attempted", "errored", "invalid", "duplicate", "needs marking", "marked")
COLUMNS = (
    "student",
    "notebook",
    "exercise",
    "status",
    "points",
    "max_points",
    "message",
    "hint",
    "mistake",
    "integrity",
)
_REQUIRED = ("student", "notebook", "exercise", "status")


@dataclass(frozen=True)
class GradeRow:
    """One line of the grade report.

    ``mistake`` names the check's diagnosed mistake for a ``failed`` row (the same text for every
    student who made it, so the class summary can count it); empty when the check named none.

    Attributes
    ----------
    student : str
        The student id (the submission folder's name, or the LMS's); hostile text.
    notebook : str
        The course notebook, or the file's name for a row about a file that was not graded.
    exercise : str
        The exercise id; ``-`` for a row about a whole file (``invalid``, ``duplicate``).
    status : str
        One of :data:`STATUSES`.
    points : float
        The points earned, between 0 and ``max_points`` in a report the grader wrote.
    max_points : float
        What the exercise is worth.
    message : str
        The check's message, which may quote the student's answer; hostile text.
    hint : str
        The check's hint for a wrong answer.
    mistake : str
        The diagnosed mistake of a ``failed`` row, or empty.
    integrity : str
        The grader's notes on the submission, separated by ``;`` and a space (extra cells that were not run, …).
    """

    student: str
    notebook: str
    exercise: str
    status: str
    points: float = 0.0
    max_points: float = 0.0
    message: str = ""
    hint: str = ""
    mistake: str = ""
    integrity: str = ""


def points_text(value: float) -> str:
    """Points as the report writes them: ``1``, ``0.5``.

    Parameters
    ----------
    value : float
        A number of points.

    Returns
    -------
    str
        ``value`` in the ``g`` format (six significant digits, no trailing zeros).
    """
    return f"{value:g}"


def _row_cells(row: GradeRow) -> list[object]:
    return [
        row.student,
        row.notebook,
        row.exercise,
        row.status,
        points_text(row.points),
        points_text(row.max_points),
        row.message,
        row.hint,
        row.mistake,
        row.integrity,
    ]


def write_report(rows: Sequence[GradeRow], path: Path | str) -> Path:
    """Write the report CSV atomically, the columns of :data:`COLUMNS`.

    Parameters
    ----------
    rows : sequence of GradeRow
        The report's rows, in order.
    path : pathlib.Path or str
        The CSV to write (its folder is made when missing).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    atomic_csv(path, COLUMNS, (_row_cells(r) for r in rows))
    return path


def journal_path(report: Path | str) -> Path:
    """Where a batch writing ``report`` keeps each graded submission's rows until the report is written.

    Parameters
    ----------
    report : pathlib.Path or str
        The report's path.

    Returns
    -------
    pathlib.Path
        ``<report>.journal`` beside it (``grades.csv.journal``: no ``*.csv`` glob picks it up).
    """
    report = Path(report)
    return report.with_name(report.name + ".journal")


class ReportJournal:
    """An append-only file of graded submissions: each one's rows, written as soon as they are known.

    Each record is one line of JSON (``{"file", "digest", "rows"}``), written with a single ``write`` on a
    descriptor opened with ``O_APPEND`` and then synced to the disk, so a record is either whole or is the
    file's unterminated last line, which :meth:`rows_of` ignores and opening for the next run cuts off. JSON
    escapes a newline inside a cell, so one line is one record (a CSV row may span lines). The first line names
    what the rows were graded under (``context``: the sources, limits and options); a journal written under
    another context is started afresh. One batch at a time may hold a journal (an exclusive ``flock``).

    Appending a line costs one write and one sync whatever the batch's size; rewriting the report by rename
    after each submission would rewrite every earlier row each time.

    Parameters
    ----------
    path : pathlib.Path or str
        The journal (:func:`journal_path` of the report).
    context : str
        What the rows depend on besides the submission (a digest of the sources and options).

    Raises
    ------
    OSError
        If the journal cannot be opened, or another process holds it (``BlockingIOError``: another batch is
        writing the same report).
    """

    def __init__(self, path: Path | str, context: str):
        self.path = Path(path)
        self.context = context
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
        self._fd = os.open(self.path, flags, 0o666)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._records, self.discarded = self._load()
        except BlockingIOError:
            os.close(self._fd)
            raise OSError(f"{self.path}: another grade run is writing this report now") from None
        except BaseException:
            os.close(self._fd)
            raise
        self._lock = threading.Lock()

    def _load(self) -> tuple[dict[tuple[str, str], list[GradeRow]], bool]:
        """The whole records under this context (the torn last line cut off); whether older ones were dropped."""
        size = os.fstat(self._fd).st_size
        data = os.pread(self._fd, size, 0) if size else b""
        whole = data[: data.rfind(b"\n") + 1]
        lines = whole.splitlines()
        header = _json_line(lines[0]) if lines else None
        if not isinstance(header, dict) or header.get("context") != self.context:
            os.ftruncate(self._fd, 0)
            self._append({"journal": "dpcourse grade", "context": self.context})
            return {}, bool(lines)
        if len(whole) != len(data):
            os.ftruncate(self._fd, len(whole))
        records: dict[tuple[str, str], list[GradeRow]] = {}
        for line in lines[1:]:
            record = _json_line(line)
            try:
                rows = [GradeRow(*cells) for cells in record["rows"]]
                records[(str(record["file"]), str(record["digest"]))] = rows
            except (TypeError, KeyError, ValueError):
                continue
        return records, False

    def _append(self, record: dict[str, Any]) -> None:
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode()
        written = os.write(self._fd, line)
        if written != len(line):  # a full disk: cut the partial record off again so no later one joins it
            os.ftruncate(self._fd, os.fstat(self._fd).st_size - written)
            raise OSError(f"{self.path}: could not write a whole record (disk full?)")
        os.fsync(self._fd)

    def __len__(self) -> int:
        return len(self._records)

    def rows_of(self, file: str, digest: str) -> list[GradeRow] | None:
        """The rows recorded for ``file`` with this content ``digest``, or None when it was not graded yet.

        Parameters
        ----------
        file : str
            The submission as the journal knows it (the student and the file's absolute path).
        digest : str
            SHA-256 of the notebook's content as read: a changed file has no rows here.

        Returns
        -------
        list of GradeRow or None
            The rows recorded for exactly this file and content; None when there are none.
        """
        return self._records.get((file, digest))

    def record(self, file: str, digest: str, rows: Sequence[GradeRow]) -> None:
        """Append one submission's rows (whole, synced) before returning.

        Parameters
        ----------
        file : str
            The submission as the journal knows it (the student and the file's absolute path).
        digest : str
            SHA-256 of the notebook's content as read.
        rows : sequence of GradeRow
            Every row of that submission, written in one append and synced to disk.
        """
        entry = {"file": file, "digest": digest, "rows": [list(astuple(r)) for r in rows]}
        with self._lock:
            self._append(entry)
            self._records[(file, digest)] = list(rows)

    def close(self) -> None:
        """Release the journal (it stays on disk)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> ReportJournal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _json_line(line: bytes) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


def totals(rows: Iterable[GradeRow]) -> dict[str, dict[str, float]]:
    """Per student, over the rows given: points, max points, passed exercises, exercises.

    Parameters
    ----------
    rows : iterable of GradeRow
        The rows to add up (every row counts, a regraded exercise twice: see :func:`merge`).

    Returns
    -------
    dict
        Student → ``{"points", "max_points", "passed", "exercises"}``, sorted by student; ``exercises``
        counts the rows with an exercise (not ``-``).
    """
    result: dict[str, dict[str, float]] = defaultdict(
        lambda: {"points": 0.0, "max_points": 0.0, "passed": 0, "exercises": 0}
    )
    for r in rows:
        entry = result[r.student]
        entry["points"] += r.points
        entry["max_points"] += r.max_points
        entry["passed"] += r.status == "passed"
        entry["exercises"] += r.exercise != "-"
    return dict(sorted(result.items()))


def _number(text: str, column: str, path: str) -> float:
    try:
        value = float(text or 0)
    except ValueError:
        raise ValueError(f"{path}: column {column} holds {text[:20]!r}, not a number") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{path}: column {column} holds {text[:20]!r}, not a finite number")
    return value


#: the largest cell :func:`read_report` reads: far above anything :func:`write_report` writes
MAX_CELL_CHARS = 1_000_000


def read_report(path: Path | str) -> list[GradeRow]:
    """Rows of a report written by :func:`write_report` (the neutralising quote is removed again).

    Reports written before the ``hint`` and ``mistake`` columns existed are read too. Cells up to
    :data:`MAX_CELL_CHARS` characters are read.

    Parameters
    ----------
    path : pathlib.Path or str
        The report CSV.

    Returns
    -------
    list of GradeRow
        Its rows, in the file's order.

    Raises
    ------
    ValueError
        Naming the file (and the line) when it is not UTF-8, not CSV, lacks a required column, or has a
        row with more cells than columns, an unknown status, or points that are not a finite number.
    OSError
        If the file cannot be opened.
    """
    csv.field_size_limit(max(csv.field_size_limit(), MAX_CELL_CHARS))
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle, strict=True)
            missing = [c for c in _REQUIRED if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: not a grade report (no column {', '.join(missing)})")
            return [_read_row(line, path, reader.line_num) for line in reader]
    except csv.Error as err:
        raise ValueError(f"{path}: not a readable report ({err})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a readable report (not UTF-8 text)") from None


def _read_row(line: dict[str | None, object], path: Path | str, number: int) -> GradeRow:
    if None in line:
        raise ValueError(f"{path}, line {number}: more cells than columns")
    cell = {k: unquoted(v) if isinstance(v, str) else "" for k, v in line.items() if k is not None}
    if cell["status"] not in STATUSES:
        raise ValueError(f"{path}, line {number}: unknown status {cell['status'][:40]!r}")
    where = f"{path}, line {number}"
    return GradeRow(
        cell["student"],
        cell["notebook"],
        cell["exercise"],
        cell["status"],
        _number(cell.get("points", ""), "points", where),
        _number(cell.get("max_points", ""), "max_points", where),
        cell.get("message", ""),
        cell.get("hint", ""),
        cell.get("mistake", ""),
        cell.get("integrity", ""),
    )


@dataclass(frozen=True)
class Merged:
    """The rows of a merge, and the (student, notebook) pairs a later report replaced (with ``replace``).

    Attributes
    ----------
    rows : list of GradeRow
        The merged rows.
    replaced : list of tuple of str
        ``(student, notebook, report)`` for each pair whose rows a later report replaced, naming the report
        whose rows won.
    """

    rows: list[GradeRow]
    replaced: list[tuple[str, str, str]]  # student, notebook, the report whose rows won


_SHARD_FILE = re.compile(r"-(\d+)\.csv$")


def merge_reports(
    paths: Iterable[Path | str],
    *,
    outline: Mapping[str, Mapping[str, float]] | None = None,
    replace: bool = False,
    shards: int | None = None,
) -> list[GradeRow]:
    """The rows of several reports (e.g. one per shard of a batch job); see :func:`merge` for the checks.

    Parameters
    ----------
    paths : iterable of pathlib.Path or str
        The reports, in order (a later one wins with ``replace``).
    outline : mapping or None, optional
        Notebook → exercise → points: the course every row is checked against; None checks nothing.
    replace : bool, optional
        Whether a later report's rows replace an earlier report's for the same (student, notebook).
    shards : int or None, optional
        The number of shards when the files are the shard reports of one batch.

    Returns
    -------
    list of GradeRow
        The merged rows (:attr:`Merged.rows`).

    Raises
    ------
    ValueError
        As :func:`merge` does.
    """
    return merge(paths, outline=outline, replace=replace, shards=shards).rows


def merge(
    paths: Iterable[Path | str],
    *,
    outline: Mapping[str, Mapping[str, float]] | None = None,
    replace: bool = False,
    shards: int | None = None,
    last: tuple[str, Sequence[GradeRow]] | None = None,
) -> Merged:
    """Merge reports, checking every row; ``ValueError`` with one line naming the file for anything wrong.

    Without ``replace`` a row graded twice is refused. With ``replace`` a later report wins: every row of
    a (student, notebook) it holds replaces that pair's rows from the earlier ones (a regrade, a late
    resubmission). ``outline`` (notebook → exercise → points, the course) is checked row by row: the
    notebook and exercise exist, ``max_points`` is the course's, the points fit the status. ``shards=N``:
    the files are the N shard reports of one batch, named ``…-I.csv`` for I = 0 … N−1; each holds only
    students of its shard, and no student is in two files.

    Parameters
    ----------
    paths : iterable of pathlib.Path or str
        The reports, in order (a later one wins with ``replace``).
    outline : mapping or None, optional
        Notebook → exercise → points: the course every row is checked against; None checks nothing.
    replace : bool, optional
        Whether a later report's rows replace an earlier report's for the same (student, notebook).
    shards : int or None, optional
        The number of shards (≥ 1) when the files are the shard reports of one batch.
    last : tuple of (str, sequence of GradeRow) or None, optional
        A name and rows merged after the files as one more report (``grade``'s own run, when it is given
        ``--merge``), checked the same way; not with ``shards``.

    Returns
    -------
    Merged
        The rows, and the pairs a later report replaced.

    Raises
    ------
    ValueError
        Naming the file (and line) for a report :func:`read_report` refuses, an exercise graded twice in one
        report or (without ``replace``) in two, a row that does not fit ``outline``, or shard files that are
        misnamed, missing, duplicated or hold students of another shard.
    """
    files = [Path(p) for p in paths]
    per_file = [read_report(p) for p in files]
    if last is not None:
        if shards is not None:
            raise ValueError("shards merges shard reports only; it does not go with the rows of a run")
        files.append(Path(last[0]))
        per_file.append(list(last[1]))
    if outline is not None:
        for path, rows in zip(files, per_file, strict=True):
            for number, row in enumerate(rows, start=2):
                _check_against_outline(row, outline, f"{path}, line {number}")
    if shards is not None:
        _check_shards(files, per_file, shards)
    merged: dict[tuple[str, str], list[GradeRow]] = {}
    origin: dict[tuple[str, str], Path] = {}
    replaced: list[tuple[str, str, str]] = []
    for path, rows in zip(files, per_file, strict=True):
        pairs: dict[tuple[str, str], list[GradeRow]] = defaultdict(list)
        for row in rows:
            pairs[(row.student, row.notebook)].append(row)
        for pair, group in pairs.items():
            exercises = [r.exercise for r in group if r.exercise != "-"]
            if len(set(exercises)) != len(exercises):
                twice = next(e for e in exercises if exercises.count(e) > 1)
                raise ValueError(f"{path}: {pair[0]}/{pair[1]}/{twice} is graded twice in this one report")
            if pair in merged:
                if not replace:
                    shared = {r.exercise for r in merged[pair]} & {r.exercise for r in group}
                    if shared:
                        raise ValueError(
                            f"{pair[0]}/{pair[1]}/{sorted(shared)[0]} is in both {origin[pair]} and {path} "
                            "(--replace lets the later report win)"
                        )
                    merged[pair] = merged[pair] + group
                    continue
                replaced.append((pair[0], pair[1], str(path)))
            merged[pair] = group
            origin[pair] = path
    return Merged([row for group in merged.values() for row in group], replaced)


def _check_against_outline(row: GradeRow, outline: Mapping[str, Mapping[str, float]], where: str) -> None:
    if not 0 <= row.points <= max(row.max_points, 0):
        raise ValueError(f"{where}: {row.points:g} points of {row.max_points:g} for {row.student}/{row.notebook}")
    if row.exercise == "-":
        if row.status not in ("invalid", "duplicate") or row.points or row.max_points:
            raise ValueError(f"{where}: a row without an exercise must be invalid or duplicate, with no points")
        return
    exercises = outline.get(row.notebook)
    if exercises is None:
        raise ValueError(f"{where}: notebook {row.notebook[:60]!r} is not one of the course's")
    if row.exercise not in exercises:
        raise ValueError(f"{where}: {row.notebook} has no exercise {row.exercise[:60]!r}")
    if row.max_points != exercises[row.exercise]:
        raise ValueError(
            f"{where}: {row.notebook}/{row.exercise} is worth {exercises[row.exercise]:g} points, "
            f"not {row.max_points:g}"
        )
    full = {"passed": row.max_points, "not attempted": 0.0, "errored": 0.0, "invalid": 0.0, "duplicate": 0.0}
    if row.status in full and row.points != full[row.status]:
        raise ValueError(f"{where}: a {row.status} row with {row.points:g} of {row.max_points:g} points")
    if row.status == "failed" and row.points >= row.max_points > 0:
        raise ValueError(f"{where}: a failed row with all {row.points:g} points")


def in_shard(student: str, shard: tuple[int, int]) -> bool:
    """Whether ``student`` belongs to ``shard`` (by a hash of the name: the same on every machine).

    Parameters
    ----------
    student : str
        The student id.
    shard : tuple of int
        ``(index, count)``, with 0 ≤ index < count.

    Returns
    -------
    bool
        Whether SHA-256 of the id, as a number, is ``index`` modulo ``count``.
    """
    index, count = shard
    return int(hashlib.sha256(student.encode()).hexdigest(), 16) % count == index


def _check_shards(files: Sequence[Path], per_file: Sequence[Sequence[GradeRow]], count: int) -> None:
    if count < 1:
        raise ValueError(f"--shards must be at least 1; got {count}")
    indices: dict[int, Path] = {}
    for path in files:
        match = _SHARD_FILE.search(path.name)
        if match is None or int(match.group(1)) >= count:
            raise ValueError(f"{path}: a shard report is named …-I.csv with 0 <= I < {count}")
        index = int(match.group(1))
        if index in indices:
            raise ValueError(f"{path} and {indices[index]} are both shard {index}")
        indices[index] = path
    missing = sorted(set(range(count)) - set(indices))
    if missing:
        raise ValueError(f"shard {missing[0]} of {count} has no report (its students would be missing)")
    owner: dict[str, Path] = {}
    shard_of = {path: index for index, path in indices.items()}
    for path, rows in zip(files, per_file, strict=True):
        index = shard_of[path]
        for row in rows:
            if not in_shard(row.student, (index, count)):
                raise ValueError(f"{path}: student {row.student[:60]!r} does not belong to shard {index} of {count}")
            if owner.setdefault(row.student, path) != path:
                raise ValueError(f"student {row.student[:60]!r} is in both {owner[row.student]} and {path}")


def summary_table(rows: Sequence[GradeRow]) -> str:
    """A plain-text table for the terminal, one line per row.

    Parameters
    ----------
    rows : sequence of GradeRow
        The rows to show.

    Returns
    -------
    str
        A header, one line per row (student, notebook, exercise, status, points, the message's first 100
        characters; every string through :func:`printable`) and a line counting the statuses.
    """
    heads = ("student", "notebook", "exercise", "status", "points")
    values = [
        (r.student, r.notebook, r.exercise, r.status, f"{points_text(r.points)}/{points_text(r.max_points)}")
        for r in rows
    ]
    shown = [[printable(x) for x in v] for v in values]
    widths = [max([len(h)] + [len(v[i]) for v in shown]) for i, h in enumerate(heads)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)) + "  message"]
    lines.append("-" * len(lines[0]))
    for r, v in zip(rows, shown, strict=True):
        lines.append("  ".join(x.ljust(w) for x, w in zip(v, widths, strict=True)) + "  " + printable(r.message[:100]))
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    lines.append(", ".join(f"{n} {s}" for s, n in counts.items() if n or s in STATUSES[:5]))
    return "\n".join(lines)
