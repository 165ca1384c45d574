"""From an LMS's download to the grader's layout ``DIR/<student>/<notebook>.ipynb``, without renaming by hand.

``python -m dpcourse collect canvas|gradescope|folders INPUT --out DIR [--roster F] [--source notebooks/]``
writes one file per student and course notebook (the stem of one of ``--source``'s notebooks) and
``DIR/collected.csv``: one row for every file of the input, with :data:`COLUMNS`. This module holds that
pipeline, its public functions and the command. The three inputs, read by :mod:`.exports` (which describes
them in full): **canvas**, the zip of *Download Submissions*, members named by Canvas's ``ContentZipper``
(canvas-lms ``lib/content_zipper.rb``) and ``Quizzes::QuizSubmissionZipper``; **gradescope**, the zip of
*Export Submissions*, with ``submission_metadata.yml`` and one folder per submission; **folders**, today's
``DIR/<student>/*.ipynb`` with the browser's duplicates and Jupyter's copies.

The student is the roster's id (:func:`~.gradebook.read_roster`; Canvas by ``canvas_id``, Gradescope by ``sid``
then ``email``, folders by ``student``; any by a ``student`` equal to the LMS name), else, without a roster,
the LMS's name made a safe folder name (NFC-normalised: a Mac's unzip gives NFD names). Of several files of
one student for one notebook the latest is kept: the LMS's resubmission number or time, then a file named
like the notebook over one matched by its cells, then the duplicate number ``(N)``/``-CopyN``, then the
file id or modification time. The others are rows with ``kept`` false, never dropped silently.

**The input is hostile.** Nothing is written outside ``DIR`` whatever a member is called (output paths are
made from the roster's or a sanitised id and the course's own notebook names), and a file is written
atomically, never through a link. What :mod:`.exports` will not read (links, ``..`` or absolute paths, names
that are not UTF-8, non-regular or encrypted members, files over :class:`~.exports.CollectLimits`, counted in
bytes actually read, and members beyond the file-count cap) are rows with a note, and the rest is collected.
An archive that cannot be read as a whole raises :class:`~.exports.CollectError`.

Longer than 400 lines because the three formats share one pipeline that must see every file, and the public
functions and the command carry their documentation; the formats' reading is in :mod:`.exports`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import nbformat

from .exports import (
    REPORT,
    UNSAFE,
    CollectError,
    CollectLimits,
    _as_datetime,
    _Budget,
    _Candidate,
    _canvas,
    _folder_members,
    _folder_name,
    _folders,
    _gradescope,
    _Identity,
    _Match,
    _match_name,
    _Member,
    _open_zip,
    _read_metadata,
    _Skip,
    _zip_members,
    safe_student,
)
from .gradebook import RosterEntry, read_roster
from .plan import SubmissionError, parse_notebook, source_for
from .release import SOURCE
from .reports import atomic_csv, atomic_write

__all__ = [
    "COLUMNS",
    "KINDS",
    "CollectError",
    "CollectLimits",
    "CollectResult",
    "CollectedFile",
    "add_collect_command",
    "collect",
    "collect_canvas",
    "collect_folders",
    "collect_gradescope",
    "course_notebooks",
    "safe_student",
]

COLUMNS = ("student", "notebook", "source_file", "submitted_at", "late", "kept", "note")
KINDS = ("canvas", "gradescope", "folders")

NOT_COURSE = "not a notebook of this course"
NOT_ROSTER = "not on the roster"


@dataclass(frozen=True)
class CollectedFile:
    """One row of ``collected.csv``: a file of the input, and what became of it.

    Attributes
    ----------
    student : str
        The student id the file was collected for; empty where it was matched to no student on the roster
        (or could not be written).
    notebook : str
        The course notebook's stem it was matched to; empty where it was matched to none.
    source_file : str
        The file's name in the input (a zip member's path, or ``<student>/<file>`` of a folder).
    submitted_at : str
        ISO 8601 (with the timezone where the LMS gave one); empty where unknown.
    late : bool or None
        The LMS's late mark (for Gradescope: after ``due``); None where unknown.
    kept : bool
        Whether this file was written to ``out/<student>/<notebook>.ipynb``.
    note : str
        Why the file was not kept, or how a kept one was matched (by its cells, a group submission).
    """

    student: str
    notebook: str
    source_file: str
    submitted_at: str = ""
    late: bool | None = None
    kept: bool = False
    note: str = ""

    def cells(self) -> list[str]:
        """The row as ``collected.csv`` holds it.

        Returns
        -------
        list of str
            One text per column of :data:`COLUMNS`, in order; ``late`` and ``kept`` as ``true``/``false``
            (``late`` empty where unknown).
        """
        late = "" if self.late is None else str(self.late).lower()
        return [
            self.student,
            self.notebook,
            self.source_file,
            self.submitted_at,
            late,
            str(self.kept).lower(),
            self.note,
        ]


@dataclass(frozen=True)
class CollectResult:
    """What a collection did: every row, and where it wrote.

    Attributes
    ----------
    kind : str
        The input's kind, one of :data:`KINDS`.
    out : pathlib.Path
        The folder written: ``out/<student>/<notebook>.ipynb`` and ``out/collected.csv``.
    rows : tuple of CollectedFile
        One row per file of the input, as in ``collected.csv``.
    """

    kind: str
    out: Path
    rows: tuple[CollectedFile, ...]

    @property
    def kept(self) -> list[CollectedFile]:
        """The files collected (one per student and notebook)."""
        return [r for r in self.rows if r.kept]

    @property
    def older(self) -> list[CollectedFile]:
        """Files of a student's notebook that a later one replaced."""
        return [r for r in self.rows if not r.kept and r.student and r.notebook]

    @property
    def ignored(self) -> list[CollectedFile]:
        """Files not collected for any other reason (the note says which)."""
        return [r for r in self.rows if not r.kept and not (r.student and r.notebook)]

    @property
    def students(self) -> list[str]:
        """The students with at least one notebook collected, sorted."""
        return sorted({r.student for r in self.kept})

    def summary(self, *, shown: int = 20) -> str:
        """The printed summary: students, files kept, older files, ignored files with reasons, late files.

        Parameters
        ----------
        shown : int, optional
            The most files listed under each heading; the rest are counted and left to ``collected.csv``.

        Returns
        -------
        str
            Several lines: the counts, then the late files kept, the older files and the ignored ones.
        """
        lines = [
            f"collect {self.kind}: {len(self.students)} students, {len(self.kept)} notebooks kept in {self.out}",
        ]
        late = [r for r in self.kept if r.late]
        sections = (
            ("late (kept)", late, lambda r: f"{r.student}/{r.notebook}: {r.source_file}"),
            ("older files, not kept", self.older, lambda r: f"{r.student}/{r.notebook}: {r.source_file}: {r.note}"),
            ("ignored", self.ignored, lambda r: f"{r.source_file}: {r.note}"),
        )
        for title, rows, line in sections:
            lines.append(f"{title}: {len(rows)}")
            lines += [f"  {line(r)}" for r in rows[:shown]]
            if len(rows) > shown:
                lines.append(f"  … and {len(rows) - shown} more (see {REPORT})")
        lines.append(f"every file is listed in {self.out / REPORT}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- the course's notebooks


def course_notebooks(source: Path | str) -> tuple[str, ...]:
    """The stems of the course's notebooks in ``source``.

    Parameters
    ----------
    source : str or pathlib.Path
        The folder of the instructor's notebooks (``*.ipynb`` directly in it).

    Returns
    -------
    tuple of str
        The notebooks' file names without ``.ipynb``, sorted.

    Raises
    ------
    ValueError
        If ``source`` is not a folder or holds no notebook (the message names ``--source``).
    """
    folder = Path(source)
    stems = tuple(sorted(p.stem for p in folder.glob("*.ipynb"))) if folder.is_dir() else ()
    if not stems:
        raise ValueError(f"--source {folder}: no notebooks there")
    return stems


class _Course:
    """The course's notebooks: their stems for names, their cells (read once, when first needed) for content."""

    def __init__(self, source: Path | str) -> None:
        self.source = Path(source)
        stems = course_notebooks(source)
        self.stems = {s.lower(): s for s in stems}
        self._cells: dict[str, Any] | None = None

    def by_content(self, member: _Member, budget: _Budget) -> str | None:
        if self._cells is None:
            self._cells = {s: nbformat.read(self.source / f"{s}.ipynb", as_version=4) for s in self.stems.values()}
        chunks: list[bytes] = []
        budget.read(member, chunks.append)
        try:
            return source_for(Path(member.name), parse_notebook(b"".join(chunks)), self._cells)
        except SubmissionError:
            return None


# --------------------------------------------------------------------------- the common pipeline


def _roster_lookup(kind: str, roster: Sequence[RosterEntry]) -> Callable[[_Identity], str | None]:
    normal = {unicodedata.normalize("NFC", e.student): e.student for e in roster}
    canvas = {e.canvas_id: e.student for e in roster if e.canvas_id}
    sid = {e.sid: e.student for e in roster if e.sid}
    email = {e.email.lower(): e.student for e in roster if e.email}

    def lookup(who: _Identity) -> str | None:
        if kind == "canvas" and who.canvas_id in canvas:
            return canvas[who.canvas_id]
        if kind == "gradescope" and who.sid in sid:
            return sid[who.sid]
        if kind == "gradescope" and who.email.lower() in email:
            return email[who.email.lower()]
        return normal.get(unicodedata.normalize("NFC", who.name))

    return lookup


def _students(kind: str, people: list[_Identity], roster: Sequence[RosterEntry] | None) -> dict[str, str | None]:
    """LMS identity key → student id (None: not on the roster). Without a roster, two people whose LMS names
    make the same folder name get their LMS id appended, so that neither's work is taken for the other's."""
    if roster is not None:
        lookup = _roster_lookup(kind, roster)
        return {who.key: (safe_student(found) if (found := lookup(who)) else None) for who in people}
    keys_by_name: dict[str, set[str]] = defaultdict(set)
    for who in people:
        keys_by_name[who.name].add(who.key)
    return {
        who.key: who.name if len(keys_by_name[who.name]) == 1 else _folder_name(f"{who.name}_{who.key}", who.name)
        for who in people
    }


def _deliver(out: str, student: str, notebook: str, member: _Member, budget: _Budget) -> None:
    """Write ``member`` to ``out/student/notebook.ipynb`` atomically; never through a link."""
    folder = os.path.join(out, student)
    made = not os.path.lexists(folder)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as err:
        raise _Skip(f"{student}/ could not be made in --out ({err.strerror})") from None
    if os.path.islink(folder) or os.path.realpath(folder) != folder:
        raise _Skip(f"{UNSAFE}: {student}/ in --out is a link")
    try:
        atomic_write(
            os.path.join(folder, f"{notebook}.ipynb"), lambda handle: budget.read(member, handle.write), binary=True
        )
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                os.rmdir(folder)  # only if empty: a student with nothing collected gets no folder
        raise


def _pipeline(
    kind: str,
    members: list[_Member],
    interpret: Callable[[_Member], _Candidate | str],
    out: Path,
    roster: Sequence[RosterEntry] | None,
    course: _Course,
    budget: _Budget,
) -> CollectResult:
    rows: list[CollectedFile] = []
    matched: list[tuple[_Candidate, _Match, bool]] = []
    for member in members:
        if member.problem:
            rows.append(CollectedFile("", "", member.name, note=member.problem))
            continue
        found = interpret(member)
        if isinstance(found, str):
            rows.append(CollectedFile("", "", member.name, note=found))
            continue
        match, by_name = _match_name(found.uploaded, course.stems, resubmissions=kind == "canvas"), True
        if match is None and found.uploaded.lower().endswith(".ipynb"):
            try:
                stem = course.by_content(member, budget)
            except _Skip as err:
                rows.append(CollectedFile("", "", member.name, note=str(err)))
                continue
            match, by_name = (_Match(stem) if stem else None), False
        if match is None:
            rows.append(CollectedFile("", "", member.name, note=NOT_COURSE))
            continue
        matched.append((found, match, by_name))

    students = _students(kind, [who for c, _, _ in matched for who in c.people], roster)
    groups: dict[tuple[str, str], list[tuple[tuple[Any, ...], _Candidate]]] = defaultdict(list)
    for candidate, match, by_name in matched:
        for who in candidate.people:
            student = students[who.key]
            if student is None:
                rows.append(CollectedFile("", match.notebook, candidate.member.name, note=f"{NOT_ROSTER}: {who.label}"))
                continue
            rank = (
                candidate.order,
                match.resubmission,
                by_name,
                match.duplicate,
                candidate.member.tiebreak,
                candidate.member.position,
            )
            groups[(student, match.notebook)].append((rank, candidate))

    real_out = os.path.realpath(out)
    for (student, notebook), ranked in sorted(groups.items()):
        kept: _Candidate | None = None
        for rank, candidate in sorted(ranked, key=lambda pair: pair[0], reverse=True):
            by_name = rank[2]
            when = candidate.submitted_at.isoformat() if candidate.submitted_at else ""
            row = CollectedFile(student, notebook, candidate.member.name, when, candidate.late)
            if kept is not None:
                rows.append(_with(row, note=f"older submission (kept {kept.member.name})"))
                continue
            try:
                _deliver(real_out, student, notebook, candidate.member, budget)
            except _Skip as err:
                rows.append(_with(row, student="", note=str(err)))
                continue
            kept = candidate
            notes = [] if by_name else [f"named {candidate.uploaded!r}; {notebook} by its cells"]
            notes += [] if len(candidate.people) == 1 else ["group submission"]
            rows.append(_with(row, kept=True, note="; ".join(notes)))
    rows.sort(key=lambda r: (not r.student, r.student, r.notebook, not r.kept, r.source_file))
    atomic_csv(out / REPORT, COLUMNS, [r.cells() for r in rows])
    return CollectResult(kind, out, tuple(rows))


def _with(row: CollectedFile, **changes: Any) -> CollectedFile:
    return CollectedFile(**{**row.__dict__, **changes})


def _prepare_out(out: Path | str, force: bool, *, inside: Path | None = None) -> Path:
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise CollectError(f"--out {path}: not a folder")
    if inside is not None:
        real, inner = os.path.realpath(path), os.path.realpath(inside)
        if os.path.commonpath([real, inner]) == inner:
            raise CollectError(f"--out {path} is inside the input folder {inside}")
    if path.is_dir() and any(path.iterdir()) and not force:
        raise CollectError(f"--out {path} is not empty; give --force to collect into it anyway")
    path.mkdir(parents=True, exist_ok=True)
    return path


# --------------------------------------------------------------------------- entry points


def collect_canvas(
    zip_path: Path | str,
    out: Path | str,
    *,
    roster: Sequence[RosterEntry] | None = None,
    notebooks: Path | str = SOURCE,
    force: bool = False,
    limits: CollectLimits | None = None,
) -> CollectResult:
    """Collect Canvas's *Download Submissions* zip into ``out/<student>/<notebook>.ipynb``.

    Parameters
    ----------
    zip_path : path
        The zip Canvas gave (see the module for its member names).
    out : path
        The folder to write; must be empty unless ``force``.
    roster : list of RosterEntry, optional
        The course's students (matched by ``canvas_id``, else by ``student`` equal to the sortable name);
        students not on it are listed, not collected. Without one the folder is the sortable name.
    notebooks : path
        The course's notebooks (default ``notebooks/``): their stems are the notebook names.
    force : bool
        Collect into a non-empty ``out`` (files of the same student and notebook are replaced).
    limits : CollectLimits, optional
        Caps on files and bytes read.

    Returns
    -------
    CollectResult
        Every file's row; ``out/collected.csv`` holds the same.

    Raises
    ------
    CollectError
        See :func:`collect`.
    ValueError
        See :func:`collect`.
    """
    return collect("canvas", zip_path, out, roster=roster, notebooks=notebooks, force=force, limits=limits)


def collect_gradescope(
    zip_path: Path | str,
    out: Path | str,
    *,
    roster: Sequence[RosterEntry] | None = None,
    notebooks: Path | str = SOURCE,
    due: datetime | None = None,
    force: bool = False,
    limits: CollectLimits | None = None,
) -> CollectResult:
    """Collect Gradescope's *Export Submissions* zip into ``out/<student>/<notebook>.ipynb``.

    Every member of a group submission gets the group's file.

    Parameters
    ----------
    zip_path : str or pathlib.Path
        The zip Gradescope gave, with its ``submission_metadata.yml``.
    out : str or pathlib.Path
        The folder to write; must be empty unless ``force``.
    roster : list of RosterEntry, optional
        The course's students, matched by ``sid``, then ``email``, then ``student`` equal to the email's local
        part; students not on it are listed, not collected. Without one the folder is the email's local part
        (else the sid, else the name) made a safe folder name.
    notebooks : str or pathlib.Path
        The course's notebooks (default ``notebooks/``): their stems are the notebook names.
    due : datetime.datetime, optional
        With a timezone if the export's times have one: a submission made after it is marked late (the
        export has no late mark; a student's extension is not in it).
    force : bool
        Collect into a non-empty ``out`` (files of the same student and notebook are replaced).
    limits : CollectLimits, optional
        Caps on files and bytes read.

    Returns
    -------
    CollectResult
        Every file's row; ``out/collected.csv`` holds the same.

    Raises
    ------
    CollectError
        See :func:`collect`; also when the zip has no readable ``submission_metadata.yml``.
    ValueError
        See :func:`collect`.
    """
    return collect("gradescope", zip_path, out, roster=roster, notebooks=notebooks, due=due, force=force, limits=limits)


def collect_folders(
    folder: Path | str,
    out: Path | str,
    *,
    roster: Sequence[RosterEntry] | None = None,
    notebooks: Path | str = SOURCE,
    force: bool = False,
    limits: CollectLimits | None = None,
) -> CollectResult:
    """Collect ``folder/<student>/*.ipynb`` (browser duplicates and copies included) into ``out``.

    Parameters
    ----------
    folder : str or pathlib.Path
        A folder of student folders; links in it are never followed.
    out : str or pathlib.Path
        The folder to write; must be empty unless ``force``, and not inside ``folder``.
    roster : list of RosterEntry, optional
        The course's students, matched by ``student`` equal to the folder's name (both NFC-normalised);
        students not on it are listed, not collected. Without one the folder's own name is kept.
    notebooks : str or pathlib.Path
        The course's notebooks (default ``notebooks/``): their stems are the notebook names.
    force : bool
        Collect into a non-empty ``out`` (files of the same student and notebook are replaced).
    limits : CollectLimits, optional
        Caps on files and bytes read.

    Returns
    -------
    CollectResult
        Every file's row; ``out/collected.csv`` holds the same.

    Raises
    ------
    CollectError
        See :func:`collect`; also when ``folder`` is not a folder or ``out`` is inside it.
    ValueError
        See :func:`collect`.
    """
    return collect("folders", folder, out, roster=roster, notebooks=notebooks, force=force, limits=limits)


def collect(
    kind: str,
    input_path: Path | str,
    out: Path | str,
    *,
    roster: Sequence[RosterEntry] | None = None,
    notebooks: Path | str = SOURCE,
    due: datetime | None = None,
    force: bool = False,
    limits: CollectLimits | None = None,
) -> CollectResult:
    """Collect ``input_path`` of ``kind`` (one of :data:`KINDS`) into ``out``.

    What :func:`collect_canvas`, :func:`collect_gradescope` and :func:`collect_folders` call, with the
    parameters they describe.

    Parameters
    ----------
    kind : str
        ``"canvas"``, ``"gradescope"`` or ``"folders"``.
    input_path : str or pathlib.Path
        The LMS's zip (canvas, gradescope) or the folder of student folders (folders).
    out : str or pathlib.Path
        The folder to write; must be empty unless ``force`` (and, for folders, not inside ``input_path``).
    roster : list of RosterEntry, optional
        The course's students, matched as the kind's function says; without one the LMS's name made safe.
    notebooks : str or pathlib.Path
        The course's notebooks (default ``notebooks/``): their stems are the notebook names.
    due : datetime.datetime, optional
        Gradescope only: submissions made after it are marked late.
    force : bool
        Collect into a non-empty ``out`` (files of the same student and notebook are replaced).
    limits : CollectLimits, optional
        Caps on files and bytes read (default :class:`~.exports.CollectLimits`).

    Returns
    -------
    CollectResult
        Every file's row; ``out/collected.csv`` holds the same.

    Raises
    ------
    CollectError
        The input cannot be read as a whole or is not the LMS's format; ``out`` is a file, is inside the
        input folder, or is not empty without ``force``.
    ValueError
        ``kind`` is unknown, ``due`` is given for another kind than gradescope, a roster's student id is not
        safe as a folder name (:func:`safe_student`), or ``notebooks`` holds no notebook (naming ``--source``).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if due is not None and kind != "gradescope":
        raise ValueError("due applies to gradescope only (Canvas marks late files itself)")
    limits = limits or CollectLimits()
    unsafe = [e.student for e in roster or [] if safe_student(e.student) is None]
    if unsafe:
        raise ValueError(f"--roster: student id {unsafe[0]!r} cannot be a folder name (see safe_student)")
    course = _Course(notebooks)
    budget = _Budget(limits)
    if kind == "folders":
        root = Path(input_path)
        if not root.is_dir():
            raise CollectError(f"{root}: not a folder")
        target = _prepare_out(out, force, inside=root)
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        try:
            members = _folder_members(root, root_fd, limits)
            return _pipeline(kind, members, _folders, target, roster, course, budget)
        finally:
            os.close(root_fd)
    with _open_zip(input_path, limits) as archive:
        members = _zip_members(archive, limits)
        if kind == "gradescope":
            top, metadata = _read_metadata(members, budget)
            target = _prepare_out(out, force)
            return _pipeline(
                kind, members, lambda m: _gradescope(m, top, metadata, due), target, roster, course, budget
            )
        target = _prepare_out(out, force)
        return _pipeline(kind, members, _canvas, target, roster, course, budget)


# --------------------------------------------------------------------------- the command


def _due(text: str) -> datetime:
    when = _as_datetime(text)
    if when is None or when.tzinfo is None:
        raise argparse.ArgumentTypeError(
            f"--due must be an ISO 8601 time with its timezone, such as 2026-11-30T23:59-08:00; got {text!r}"
        )
    return when


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
        "--due", type=_due, default=None, help="gradescope only: the due time (ISO 8601); later submissions are late"
    )
    parser.add_argument("--force", action="store_true", help="collect into a non-empty --out")
    parser.set_defaults(run=_run_collect)


def _run_collect(args: argparse.Namespace) -> int:
    try:
        roster = read_roster(args.roster) if args.roster is not None else None
        if roster is not None and not roster:
            raise ValueError(f"--roster {args.roster} lists no students")
        result = collect(
            args.kind, args.input, args.out, roster=roster, notebooks=args.source, due=args.due, force=args.force
        )
    except (CollectError, OSError, ValueError) as err:
        print(f"collect: {err}", file=sys.stderr)
        return 2
    print(result.summary())
    return 0
