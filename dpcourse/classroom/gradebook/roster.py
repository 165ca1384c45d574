"""Who the students are and when each handed in: the roster (``--roster FILE``) and the collector's ``collected.csv``.

The roster is either one student id per line (the submission folder's name), or a CSV whose header has a
``student`` column and any of ``name``, ``canvas_id``, ``sis_user_id``, ``sis_login_id``, ``section``, ``sid`` and
``email``: the fields the LMS files need (see :func:`read_roster`); Canvas's own gradebook export is read as one.
When each (student, notebook) was handed in is :class:`SubmissionTime`, from ``collected.csv``
(:func:`read_collected`) or file times. Every cell read back loses the quote
:func:`~dpcourse.classroom.io.safe_cell` added.
"""

from __future__ import annotations

import csv
import io
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..grading.plan import without_copy_number
from ..grading.run import submissions_root
from ..io import unquoted
from ..validation import TimeError, parse_time, student_id

if TYPE_CHECKING:
    pass

__all__ = [
    "ROSTER_FIELDS",
    "CANVAS_COLUMNS",
    "RosterEntry",
    "SubmissionTime",
    "read_collected",
    "read_roster",
]


ROSTER_FIELDS = ("student", "name", "canvas_id", "sis_user_id", "section", "sid", "email", "sis_login_id")

CANVAS_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Root Account", "Section")

_HEADER_NAMES = frozenset({*ROSTER_FIELDS, *(c.lower() for c in CANVAS_COLUMNS), "id"})

_CANVAS_NOT_STUDENTS = ("Points Possible", "Student, Test", "Test Student")


@dataclass(frozen=True)
class RosterEntry:
    """One student of the course, with the fields an LMS import needs (empty where the course has none).

    Attributes
    ----------
    student : str
        The id the grader knows the student by (the submission folder's name).
    name : str
        The name an LMS file shows (Canvas's ``Student``, Gradescope's ``Name``); the id when empty.
    canvas_id : str
        Canvas's user id (its ``ID`` column, what its importer matches first).
    sis_user_id : str
        The student information system's user id (Canvas's ``SIS User ID``).
    section : str
        The section (Canvas's ``Section``).
    sid : str
        Gradescope's student id (``SID``).
    email : str
        The e-mail address Gradescope matches a student by.
    sis_login_id : str
        The student information system's login (Canvas's ``SIS Login ID``).
    """

    student: str
    name: str = ""
    canvas_id: str = ""
    sis_user_id: str = ""
    section: str = ""
    sid: str = ""
    email: str = ""
    sis_login_id: str = ""


@dataclass(frozen=True)
class SubmissionTime:
    """When a student's notebook was handed in.

    Attributes
    ----------
    submitted_at : datetime.datetime or None
        When it was handed in, with a timezone; None when unknown.
    late : bool or None
        The collector's own verdict (None when it gave none), used only when the course has no due time
        or the time is unknown.
    source_file : str
        The file (or files, comma-separated) that was kept for grading.
    ignored : tuple of tuple of str
        The files the collector did not keep, as ``(file name, note)``.
    """

    submitted_at: datetime | None
    late: bool | None
    source_file: str = ""
    ignored: tuple[tuple[str, str], ...] = ()


def read_roster(path: Path | str) -> list[RosterEntry]:
    """The students of ``path``: one id per line, a CSV with a ``student`` column, or Canvas's gradebook export.

    The form is told by the first line that is neither blank nor a ``#`` comment:

    - Canvas's gradebook export (*Grades* → *Export*), or the ``--gradebook canvas`` file this module writes,
      when its first two cells are ``Student`` and ``ID``: the student columns up to ``Section`` are read
      (:data:`CANVAS_COLUMNS`), the assignment columns after it ignored. The ``Points Possible`` row (Canvas
      indents it with spaces), a row without any id (Canvas's posting-policy row) and Canvas's test student
      (``Student, Test`` without SIS ids, the *Student View* user) are not students. A student's id is the
      ``SIS Login ID``, else the ``SIS User ID``, else the Canvas ``ID``, else the ``Student`` cell (which is
      where this module's file puts a student the roster did not name); ``Student`` is the name.
    - A CSV with a header holding a ``student`` column and any of :data:`ROSTER_FIELDS`.
    - Otherwise one student id per line. When that first line is, in any case, a column name
      (:data:`ROSTER_FIELDS`, Canvas's column names, or ``id``) it is the column's header, not a student.

    Blank lines and lines starting with ``#`` are skipped in the one-id-per-line form. The file is
    read as UTF-8 (a byte-order mark is dropped).

    Parameters
    ----------
    path : pathlib.Path or str
        The roster file.

    Returns
    -------
    list of RosterEntry
        The students, in the file's order.

    Raises
    ------
    ValueError
        Naming the file and line, for a student listed twice, an id with a comma in the one-id-per-line
        form, a CSV row without a student id, a CSV column not in :data:`ROSTER_FIELDS`, or a Canvas
        export whose student columns are not in :data:`CANVAS_COLUMNS` or do not end with ``Section``.
    OSError
        If the file cannot be read.
    """
    text = Path(path).read_text(encoding="utf-8-sig")
    lines = text.splitlines()
    first = next((line for line in lines if line.strip() and not line.startswith("#")), "")
    cells = [c.strip().lower() for c in next(csv.reader([first]), [])]
    if cells[:2] == ["student", "id"]:
        return _roster_canvas(path, text)
    if "," in first and "student" in cells:
        return _roster_csv(path, text)
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    header = True  # only the first line may be a header
    for number, line in enumerate(lines, start=1):
        student = line.strip()
        if not student or student.startswith("#"):
            continue
        if header and student.lower() in _HEADER_NAMES:
            header = False
            continue
        header = False
        if "," in student:
            raise ValueError(
                f"--roster {path}, line {number}: {student[:40]!r} has a comma; a CSV roster needs a "
                f"header with a 'student' column"
            )
        if student in seen:
            raise ValueError(f"--roster {path}, line {number}: {student!r} is already on line {seen[student]}")
        seen[student] = number
        entries.append(RosterEntry(student))
    return entries


def _roster_csv(path: Path | str, text: str) -> list[RosterEntry]:
    reader = csv.DictReader(io.StringIO(text))
    columns = {c.strip().lower(): c for c in reader.fieldnames or []}
    unknown = sorted(set(columns) - set(ROSTER_FIELDS))
    if unknown:
        raise ValueError(f"--roster {path}: unknown columns {', '.join(unknown)} (known: {', '.join(ROSTER_FIELDS)})")
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(reader, start=2):
        values = {key: (line.get(column) or "").strip() for key, column in columns.items()}
        student = values.get("student", "")
        if not student:
            raise ValueError(f"--roster {path}, line {number}: no student id")
        if student in seen:
            raise ValueError(f"--roster {path}, line {number}: {student!r} is already on line {seen[student]}")
        seen[student] = number
        entries.append(RosterEntry(**values))
    return entries


def _roster_canvas(path: Path | str, text: str) -> list[RosterEntry]:
    """Canvas's gradebook export (or our own Canvas file) read as it is: see :func:`read_roster`."""
    rows = csv.reader(io.StringIO(text))
    known = {c.lower(): c for c in CANVAS_COLUMNS}
    header = [known.get(c.strip().lower(), c.strip()) for c in next(rows)]
    if "Section" not in header:
        raise ValueError(
            f"--roster {path}: a Canvas gradebook export needs its student columns to end with 'Section' "
            f"(known: {', '.join(CANVAS_COLUMNS)})"
        )
    student_columns = header[: header.index("Section") + 1]
    unknown = [c for c in student_columns if c not in CANVAS_COLUMNS]
    if unknown:
        raise ValueError(
            f"--roster {path}: unknown Canvas student column {unknown[0]!r} (known: {', '.join(CANVAS_COLUMNS)})"
        )
    entries: list[RosterEntry] = []
    seen: dict[str, int] = {}
    for row in rows:
        number = rows.line_num
        cell = dict(zip(student_columns, (unquoted(c.strip()) for c in row), strict=False))  # as safe_cell wrote
        name, ids = cell.get("Student", ""), [cell.get(c, "") for c in ("SIS Login ID", "SIS User ID", "ID")]
        if name in _CANVAS_NOT_STUDENTS and not any(ids[:2]):
            continue  # the Points Possible row, Canvas's test student
        student = next((i for i in (*ids, name) if i), "")
        if not student:
            continue  # a blank line, or Canvas's posting-policy row: no one to match
        if student in seen:
            raise ValueError(f"--roster {path}, line {number}: {student!r} is already on line {seen[student]}")
        seen[student] = number
        entries.append(
            RosterEntry(
                student,
                name=name,
                canvas_id=ids[2],
                sis_user_id=ids[1],
                section=cell.get("Section", ""),
                sis_login_id=ids[0],
            )
        )
    return entries


_COLLECTED = ("student", "notebook", "source_file", "submitted_at", "late", "kept")

_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


def _flag(text: str, column: str, where: str, *, empty: bool) -> bool | None:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if empty and not value:
        return None
    raise ValueError(f"{where}: column {column} holds {text[:20]!r} (allowed: true, false)")


def read_collected(path: Path | str) -> dict[tuple[str, str], SubmissionTime]:
    """Per (student, notebook), when it was handed in, from the collector's ``collected.csv``.

    The columns are ``student, notebook, source_file, submitted_at, late, kept[, note]``, one row per
    file. Kept rows give the time (the latest when a notebook has several) and the late flag; rows
    with ``kept`` false are the files the collector set aside, named in the feedback (rows of no student
    are left out). ``submitted_at`` is ISO 8601; a time without a timezone offset, like an empty cell,
    counts as unknown, and the ``late`` flag decides.

    Parameters
    ----------
    path : pathlib.Path or str
        The collector's CSV.

    Returns
    -------
    dict
        ``(student, notebook)`` → :class:`SubmissionTime`, sorted.

    Raises
    ------
    ValueError
        If a column is missing, or naming the line, for a ``kept`` or ``late`` cell that is not true or false
        or a ``submitted_at`` that is not an ISO 8601 time.
    OSError
        If the file cannot be read.
    """
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in _COLLECTED if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a collector's list (no column {', '.join(missing)})")
        kept: dict[tuple[str, str], list[tuple[datetime | None, bool | None, str]]] = defaultdict(list)
        ignored: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
        for number, line in enumerate(reader, start=2):
            cell = {k: unquoted(v) if isinstance(v, str) else "" for k, v in line.items() if k is not None}
            where = f"{path}, line {number}"
            key = (cell["student"], cell["notebook"])
            if not key[0]:
                continue  # a file the collector matched to no student: its own summary lists it
            if not _flag(cell["kept"], "kept", where, empty=False):
                ignored[key].append((cell["source_file"], cell.get("note", "")))
                continue
            kept[key].append(
                (
                    _moment(cell["submitted_at"], where),
                    _flag(cell["late"], "late", where, empty=True),
                    cell["source_file"],
                )
            )
    found: dict[tuple[str, str], SubmissionTime] = {}
    for key in sorted(set(kept) | set(ignored)):
        files = kept.get(key, [])
        times = [t for t, _, _ in files if t is not None]
        flags = [flag for _, flag, _ in files if flag is not None]
        found[key] = SubmissionTime(
            max(times) if times else None,
            any(flags) if flags else None,
            ", ".join(name for _, _, name in files),
            tuple(ignored.get(key, [])),
        )
    return found


def _moment(text: str, where: str) -> datetime | None:
    """An ISO 8601 time; None when empty or without a timezone offset (it cannot be compared with a due time)."""
    if not text.strip():
        return None
    try:
        return parse_time(text.strip())
    except TimeError as err:
        if err.kind == "no offset":
            return None
        raise ValueError(f"{where}: submitted_at {text[:40]!r} is not an ISO 8601 time") from None


def collected_times(files: Sequence[Path]) -> dict[tuple[str, str], SubmissionTime]:
    """The hand-in times of several ``collected.csv`` files; a later file's entry for a (student, notebook) wins.

    Parameters
    ----------
    files : sequence of pathlib.Path
        ``collected.csv`` files of ``collect`` (:func:`read_collected`), oldest first.

    Returns
    -------
    dict
        ``(student, notebook)`` → :class:`SubmissionTime`.
    """
    times: dict[tuple[str, str], SubmissionTime] = {}
    for path in files:
        times.update(read_collected(path))
    return times


def submission_times(
    paths: Sequence[Path], outline: Mapping[str, Mapping[str, float]]
) -> dict[tuple[str, str], SubmissionTime]:
    """When each (student, notebook) was handed in: the collector's ``collected.csv`` in the submissions' folder,
    else the newest modification time of the student's files for that notebook (never through a link).

    Parameters
    ----------
    paths : sequence of pathlib.Path
        The submissions graded (``<root>/<student>/<notebook>.ipynb``).
    outline : mapping
        Notebook → exercise → points: a file of no course notebook has no time.

    Returns
    -------
    dict
        ``(student, notebook)`` → :class:`SubmissionTime`.
    """
    root = submissions_root(paths)
    collected = root / "collected.csv"
    if collected.is_file():
        return collected_times([collected])
    times: dict[tuple[str, str], float] = {}
    for path in paths:
        relative = Path(os.path.abspath(path)).relative_to(root).parts
        student = student_id(relative[0]) if len(relative) > 1 else student_id(path.parent.name)
        stem = without_copy_number(path.stem)
        if stem not in outline:
            continue
        try:
            modified = os.stat(path, follow_symlinks=False).st_mtime
        except OSError:
            continue
        times[(student, stem)] = max(modified, times.get((student, stem), modified))
    return {key: SubmissionTime(datetime.fromtimestamp(t, tz=UTC), None) for key, t in times.items()}


#: The most entries of one student's folder :func:`left_out_notebooks` looks at (the folder is hostile input).
_MAX_FOLDER_ENTRIES = 10_000


def left_out_notebooks(paths: Sequence[Path], outline: Mapping[str, Mapping[str, float]]) -> dict[str, frozenset[str]]:
    """Per student, the course notebooks in their folder that this run was not given (a regrade of one file).

    Parameters
    ----------
    paths : sequence of pathlib.Path
        The submissions graded.
    outline : mapping
        Notebook → exercise → points.

    Returns
    -------
    dict
        Student → the course notebooks among the ``.ipynb`` names at the top of their folder (copy numbers
        dropped, links not followed, at most :data:`_MAX_FOLDER_ENTRIES` entries read) that ``paths`` left out.
    """
    root = submissions_root(paths)
    given = {os.path.abspath(p) for p in paths}
    folders: dict[str, Path] = {}
    for path in paths:
        relative = Path(os.path.abspath(path)).relative_to(root).parts
        if len(relative) > 1:
            folders[student_id(relative[0])] = root / relative[0]
    found: dict[str, frozenset[str]] = {}
    for student, folder in folders.items():
        try:
            with os.scandir(folder) as entries:
                names = [e.path for e, _ in zip(entries, range(_MAX_FOLDER_ENTRIES), strict=False)]
        except OSError:
            continue
        stems = {without_copy_number(Path(n).stem) for n in names if n.endswith(".ipynb") and n not in given}
        if stems & outline.keys():
            found[student] = frozenset(stems & outline.keys())
    return found
