"""From an LMS's download to the grader's layout ``DIR/<student>/<notebook>.ipynb``, without renaming by hand.

``python -m dpcourse collect canvas|gradescope|folders INPUT --out DIR [--roster F] [--source notebooks/]
[--canvas-submissions JSON]``
writes one file per student and course notebook (the stem of one of ``--source``'s notebooks) and
``DIR/collected.csv``: one row for every file of the input, with :data:`COLUMNS`. This module holds that
pipeline, its public functions and the command. The three inputs, read by :mod:`.exports` (which describes
them in full): **canvas**, the zip of *Download Submissions*, members named by Canvas's ``ContentZipper``
(canvas-lms ``lib/content_zipper.rb``) or ``Quizzes::QuizSubmissionZipper``; **gradescope**, the zip of
*Export Submissions*, with ``submission_metadata.yml`` and one folder per submission; **folders**, today's
``DIR/<student>/*.ipynb`` with the browser's duplicates and Jupyter's copies.

**When.** Canvas's zip marks a file ``LATE`` but never says when it came; ``--canvas-submissions`` gives the JSON
of Canvas's submissions API for the assignment, and each student's ``submitted_at`` (matched by the user id in
the member's name) becomes the ``submitted_at`` of her files' rows, so that ``grade`` charges lateness by the
minute from her own due time. Gradescope's metadata has the times; a folder's are its files' modification times.

**Who.** A person is only what the LMS writes and the student cannot choose: Canvas's user id in its fixed
place in the member's name, Gradescope's ``sid`` and e-mail, a folder's own name; never the name of the file
a student uploaded. With a roster (:func:`~.gradebook.read_roster`) the student is the roster's id, matched
exactly after NFC: Canvas by ``canvas_id``, Gradescope by ``sid`` and ``email`` (which must not point at two
students), folders by ``student``; a roster entry without the LMS's ids is matched by ``student`` equal to the
LMS's folder name. Two LMS accounts that match one roster student equally get neither's file (the row says
why). Without a roster the student is the LMS's name made a safe folder name (NFC-normalised: a Mac's unzip
gives NFD names); two people whose names make the same folder name, even only in case, both get their LMS id
appended (``leeann_111``), so that two identities never share a folder.

**Which.** Of several files of one student for one notebook the latest is kept, by one rule on every path:
the order in which the LMS received them (Canvas's file id, Gradescope's submission time then submission id, a
folder file's modification time), then as :func:`.plan.pick_graded` breaks ties (the copy number, a file
named like the notebook, the name), so that ``grade`` on the same files would pick the same one. A number a
student can type (Canvas's ``-2``, the browser's ``(2)``) never outranks the LMS's order. The others are rows
with ``kept`` false, never dropped silently; so are files that are no course notebook, which keep their student
(a PDF on the roster is the student's, and her feedback names it), and the summary names the roster's students
of whom no notebook was collected, with what they handed in instead.

**The input is hostile.** Nothing is written outside ``DIR`` whatever a member is called (output paths are
made from the roster's or a sanitised id and the course's own notebook names), and a file is written
atomically, never through a link. What :mod:`.exports` will not read (links, ``..`` or absolute paths, names
that are not UTF-8, non-regular or encrypted members, files over :class:`~.exports.CollectLimits`, counted in
bytes actually read) are rows with a note, and the rest is collected. The caps on files and bytes are each
student's (a student's oldest notebooks beyond them are listed, not read), so nobody's files crowd out a
classmate's; an input over the whole-input ceilings (entries really listed, notebooks' bytes) or an unreadable
one raises :class:`~.exports.CollectError` before anything is written.

Longer than 400 lines because the three formats share one pipeline that must see every file, and the public
functions and the command carry their documentation; the formats' reading is in :mod:`.exports`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Any

import nbformat

from ..gradebook.book import RosterEntry, read_roster
from ..grading.plan import SubmissionError, copy_number, parse_notebook, source_for
from ..io import atomic_csv, atomic_write
from ..release import SOURCE
from ..validation import TimeError, parse_time
from .archive import (
    _MB,
    METADATA_NOTE,
    NOT_UTF8,
    REPORT,
    UNSAFE,
    CollectError,
    CollectLimits,
    _Budget,
    _Candidate,
    _canvas,
    _canvas_layout,
    _folder_members,
    _folder_name,
    _folders,
    _gradescope,
    _Identity,
    _Match,
    _match_name,
    _Member,
    _nfc,
    _open_zip,
    _projected_bytes,
    _read_canvas_submissions,
    _read_metadata,
    _Skip,
    _zip_members,
    safe_student,
)

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
OLDER = "older submission"
_NAMES_ONLY = (UNSAFE, NOT_UTF8, METADATA_NOTE)  # members whose name says nothing the LMS wrote about who


@dataclass(frozen=True)
class CollectedFile:
    """One row of ``collected.csv``: a file of the input, and what became of it.

    Attributes
    ----------
    student : str
        The student the file is from (the roster's id, or the folder name made from the LMS), whether it was
        kept or not; empty where the file is from no student on the roster or is not named as the LMS names
        files.
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
        Why the file was not kept (``older submission (kept …)`` for one a later file replaced), or how a kept
        one was matched (by its cells, a group submission).
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
        One row per file of the input (per person, for a group's file), as in ``collected.csv``.
    absent : tuple of str
        The roster's students of whom no notebook was collected, in the roster's order (empty without a roster).
    """

    kind: str
    out: Path
    rows: tuple[CollectedFile, ...]
    absent: tuple[str, ...] = ()

    @property
    def kept(self) -> list[CollectedFile]:
        """The files collected (one per student and notebook)."""
        return [r for r in self.rows if r.kept]

    @property
    def older(self) -> list[CollectedFile]:
        """Files of a student's notebook that a later one replaced."""
        return [r for r in self.rows if not r.kept and r.note.startswith(OLDER)]

    @property
    def ignored(self) -> list[CollectedFile]:
        """Files not collected for any other reason (the note says which; ``student`` says whose, when known)."""
        return [r for r in self.rows if not r.kept and not r.note.startswith(OLDER)]

    @property
    def students(self) -> list[str]:
        """The students with at least one notebook collected, sorted."""
        return sorted({r.student for r in self.kept})

    def summary(self, *, shown: int = 20) -> str:
        """The printed summary: students, files kept, older and ignored files, late files, students without any.

        Parameters
        ----------
        shown : int, optional
            The most files listed under each heading; the rest are counted and left to ``collected.csv``.

        Returns
        -------
        str
            Several lines: the counts, then the late files kept, the older files, the ignored ones (with their
            student where known) and the roster's students of whom no notebook was collected, with what they
            handed in instead.
        """
        lines = [
            f"collect {self.kind}: {len(self.students)} students, {len(self.kept)} notebooks kept in {self.out}",
        ]
        late = [r for r in self.kept if r.late]
        handed: dict[str, list[CollectedFile]] = defaultdict(list)
        for r in self.rows:
            handed[r.student].append(r)
        sections: tuple[tuple[str, Sequence[Any], Callable[[Any], str]], ...] = (
            ("late (kept)", late, lambda r: f"{r.student}/{r.notebook}: {r.source_file}"),
            ("older files, not kept", self.older, lambda r: f"{r.student}/{r.notebook}: {r.source_file}: {r.note}"),
            ("ignored", self.ignored, lambda r: (f"{r.student}: " if r.student else "") + f"{r.source_file}: {r.note}"),
            ("on the roster, no notebook collected", self.absent, lambda s: f"{s}: {_instead(handed.get(s, []))}"),
        )
        for title, rows, line in sections:
            lines.append(f"{title}: {len(rows)}")
            lines += [f"  {line(r)}" for r in rows[:shown]]
            if len(rows) > shown:
                lines.append(f"  … and {len(rows) - shown} more (see {REPORT})")
        lines.append(f"every file is listed in {self.out / REPORT}")
        return "\n".join(lines)


def _instead(rows: list[CollectedFile]) -> str:
    """What a student without a collected notebook handed in, for the summary."""
    if not rows:
        return "nothing in the input"
    named = "; ".join(f"{r.source_file} ({r.note})" for r in rows[:3])
    return f"handed in {named}" + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")


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

    def by_content(self, candidate: _Candidate, budget: _Budget) -> str | None:
        """The notebook whose cells the candidate holds, else None; :class:`_Skip` when it cannot be read."""
        if self._cells is None:  # the instructor's: an error here is hers, not the student's
            self._cells = {s: nbformat.read(self.source / f"{s}.ipynb", as_version=4) for s in self.stems.values()}
        chunks: list[bytes] = []
        budget.read(candidate.member, chunks.append, candidate.owner)
        try:
            return source_for(Path(candidate.member.name), parse_notebook(b"".join(chunks)), self._cells)
        except SubmissionError:
            return None
        except Exception as err:  # noqa: BLE001 - whatever the file holds, it is this file's row
            raise _Skip(f"not readable as a notebook ({type(err).__name__})") from None


# --------------------------------------------------------------------------- who is who


def _check_roster(roster: Sequence[RosterEntry] | None) -> None:
    """:class:`ValueError` for a roster that would put two students in one folder or one id on two students."""
    entries = list(roster or [])
    unsafe = [e.student for e in entries if safe_student(e.student) is None]
    if unsafe:
        raise ValueError(f"--roster: student id {unsafe[0]!r} cannot be a folder name (see safe_student)")
    seen: dict[str, str] = {}
    for e in entries:
        folded = _nfc(e.student).casefold()
        if folded in seen and seen[folded] != e.student:
            raise ValueError(
                f"--roster: student ids {seen[folded]!r} and {e.student!r} differ only in case or form "
                "(they would share a folder on a case-insensitive disk)"
            )
        seen[folded] = e.student
    for column in ("canvas_id", "sid", "email"):
        owners: dict[str, str] = {}
        for e in entries:
            value = _nfc(getattr(e, column))
            value = value.casefold() if column == "email" else value
            if value and owners.setdefault(value, e.student) != e.student:
                raise ValueError(f"--roster: {column} {value!r} is given to both {owners[value]!r} and {e.student!r}")


@dataclass(frozen=True)
class _Claim:
    """The roster student an LMS identity points at, how strongly (more ids agreeing), or why none."""

    student: str | None
    strength: int = 0
    note: str = ""


def _roster_claims(kind: str, people: dict[str, _Identity], roster: Sequence[RosterEntry]) -> dict[str, _Claim]:
    def index(column: str, fold: bool = False) -> dict[str, str]:
        found = {_nfc(getattr(e, column)): str(safe_student(e.student)) for e in roster if getattr(e, column)}
        return {k.casefold(): v for k, v in found.items()} if fold else found

    canvas, sid, email = index("canvas_id"), index("sid"), index("email", fold=True)
    lms_ids = {"canvas": ("canvas_id",), "gradescope": ("sid", "email"), "folders": ()}[kind]
    by_name = {_nfc(e.student): str(safe_student(e.student)) for e in roster if not any(getattr(e, c) for c in lms_ids)}
    claims: dict[str, _Claim] = {}
    for key, who in people.items():
        if who.canvas_id and who.canvas_id in canvas:
            claims[key] = _Claim(canvas[who.canvas_id], 2)
            continue
        by_sid, by_email = sid.get(who.sid) if who.sid else None, email.get(who.email) if who.email else None
        if by_sid and by_email and by_sid != by_email:
            why = f"the roster gives sid {who.sid} to {by_sid} and {who.email} to {by_email}: {who.label}"
            claims[key] = _Claim(None, note=why)
        elif by_sid or by_email:
            claims[key] = _Claim(by_sid or by_email, 2 if by_sid and by_email else 1)
        elif (named := by_name.get(_nfc(who.name))) is not None:
            claims[key] = _Claim(named)
        else:
            claims[key] = _Claim(None, note=f"{NOT_ROSTER}: {who.label}")
    return claims


def _students(kind: str, people: dict[str, _Identity], roster: Sequence[RosterEntry] | None) -> dict[str, _Claim]:
    """LMS identity key → the student it is (or why it is none); never two identities for one student."""
    if roster is None:
        return {key: _Claim(folder) for key, folder in _unique_folders(list(people.values())).items()}
    claims = _roster_claims(kind, people, roster)
    by_student: dict[str, list[str]] = defaultdict(list)
    for key, claim in claims.items():
        if claim.student is not None:
            by_student[claim.student].append(key)
    for student, keys in by_student.items():
        if len(keys) == 1:
            continue
        best = max(claims[k].strength for k in keys)
        winners = [k for k in keys if claims[k].strength == best]
        for key in keys:
            if len(winners) > 1:
                labels = ", ".join(people[k].label for k in sorted(winners))
                note = f"{len(winners)} LMS accounts match roster student {student} alike ({labels}): not collected"
            elif key != winners[0]:
                note = f"{people[key].label} also matches roster student {student}, who is {people[winners[0]].label}"
            else:
                continue
            claims[key] = _Claim(None, note=note)
    return claims


def _unique_folders(people: list[_Identity]) -> dict[str, str]:
    """A folder name per person, no two alike even in case: a name shared by several people gets each one's LMS
    id appended (then a number, if that too is taken); a name only one person has stays as it is."""
    shared = Counter(who.name.casefold() for who in people)
    folders = {who.key: who.name for who in people if shared[who.name.casefold()] == 1}
    used = {name.casefold() for name in folders.values()}
    for number, who in enumerate(sorted((w for w in people if w.key not in folders), key=lambda w: w.key)):
        suffix = _folder_name(who.suffix, "") if who.suffix else ""
        stem = f"{who.name[:60]}_{suffix[:60]}" if suffix else who.name[:60]
        stem = stem if safe_student(stem) else f"student_{number}"
        name, copy = stem, 1
        while name.casefold() in used:
            copy += 1
            name = f"{stem}_{copy}"
        folders[who.key] = name
        used.add(name.casefold())
    return folders


# --------------------------------------------------------------------------- the common pipeline


def _latest_first(candidate: _Candidate) -> tuple[Any, ...]:
    return (candidate.order, -candidate.member.position)


def _rank(candidate: _Candidate, notebook: str) -> tuple[Any, ...]:
    """Larger is later: the LMS's order, then :func:`.plan.pick_graded`'s tie-breaks, then the input's order."""
    uploaded = candidate.uploaded
    stem = PurePosixPath(uploaded).stem
    return (
        candidate.order,
        copy_number(stem),
        stem == notebook,
        [-ord(ch) for ch in uploaded],
        -candidate.member.position,
    )


def _per_student_caps(
    candidates: list[_Candidate], aside: list[tuple[_Candidate, str]], limits: CollectLimits
) -> list[_Candidate]:
    """The candidates a student may have read: her latest ``max_student_files`` notebooks; the rest go aside."""
    by_owner: dict[str, list[_Candidate]] = defaultdict(list)
    for candidate in candidates:
        if candidate.notebook_like:
            by_owner[candidate.owner].append(candidate)
    over = f"not read: more than {limits.max_student_files} notebook files from this student (the later ones read)"
    dropped: set[int] = set()
    for mine in by_owner.values():
        for candidate in sorted(mine, key=_latest_first, reverse=True)[limits.max_student_files :]:
            aside.append((candidate, over))
            dropped.add(candidate.member.position)
    return [c for c in candidates if c.member.position not in dropped]


def _check_total(candidates: list[_Candidate], limits: CollectLimits, where: str) -> None:
    projected = _projected_bytes(candidates, limits)
    total = sum(projected.values())
    if total > limits.max_total_bytes:
        raise CollectError(
            f"{where}: refused before reading: its {len(projected)} students' notebooks come to "
            f"{total / _MB:,.0f} MB (each student's counted up to {limits.max_student_bytes / _MB:g} MB), over "
            f"the cap of {limits.max_total_bytes / _MB:,.0f} MB"
        )


def _deliver(out: str, student: str, notebook: str, candidate: _Candidate, budget: _Budget) -> None:
    """Write the candidate to ``out/student/notebook.ipynb`` atomically; never through a link."""
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
            os.path.join(folder, f"{notebook}.ipynb"),
            lambda handle: budget.read(candidate.member, handle.write, candidate.owner),
            binary=True,
        )
    except BaseException:
        if made:
            with contextlib.suppress(OSError):
                os.rmdir(folder)  # only if empty: a student with nothing collected gets no folder
        raise


def _when(candidate: _Candidate) -> str:
    return candidate.submitted_at.isoformat() if candidate.submitted_at else ""


def _people(candidate: _Candidate) -> list[_Identity]:
    return list({who.key: who for who in candidate.people}.values())


@dataclass
class _Run:
    """One collection's state: its input's kind and course, the budget, and the rows so far."""

    kind: str
    course: _Course
    budget: _Budget
    rows: list[CollectedFile]

    def notebook_named(self, candidate: _Candidate) -> _Match | None:
        return _match_name(candidate.uploaded, self.course.stems, resubmissions=self.kind == "canvas")

    def match(
        self, candidates: list[_Candidate], aside: list[tuple[_Candidate, str]]
    ) -> list[tuple[_Candidate, _Match, bool]]:
        """The course notebook of each candidate, by its name or its cells (read latest first: a student's
        byte cap leaves her oldest files unread); the others go aside with the reason."""
        matched = []
        for candidate in sorted(candidates, key=_latest_first, reverse=True):
            match, by_name = self.notebook_named(candidate), True
            if match is None and candidate.notebook_like:
                try:
                    stem = self.course.by_content(candidate, self.budget)
                except _Skip as err:
                    aside.append((candidate, str(err)))
                    continue
                match, by_name = (_Match(stem) if stem else None), False
            if match is None:
                aside.append((candidate, NOT_COURSE))
                continue
            matched.append((candidate, match, by_name))
        return matched

    def set_aside(self, aside: list[tuple[_Candidate, str]], students: dict[str, _Claim]) -> None:
        """A row per person for each file not collected, with its student where known and the notebook its name
        means (the student's feedback names it)."""
        for candidate, note in aside:
            match = self.notebook_named(candidate)
            for who in _people(candidate):
                student = students[who.key].student or ""
                notebook = match.notebook if match else ""
                self.rows.append(
                    CollectedFile(student, notebook, candidate.member.name, _when(candidate), candidate.late, note=note)
                )

    def deliver(self, out: Path, matched: list[tuple[_Candidate, _Match, bool]], students: dict[str, _Claim]) -> None:
        """Keep the latest file of each student and notebook (:func:`_rank`); the others are older rows."""
        groups: dict[tuple[str, str], list[tuple[tuple[Any, ...], _Candidate, bool]]] = defaultdict(list)
        for candidate, match, by_name in matched:
            for who in _people(candidate):
                claim = students[who.key]
                if claim.student is None:
                    row = CollectedFile("", match.notebook, candidate.member.name, _when(candidate), candidate.late)
                    self.rows.append(_with(row, note=claim.note))
                    continue
                key = (claim.student, match.notebook)
                groups[key].append((_rank(candidate, match.notebook), candidate, by_name))
        real_out = os.path.realpath(out)
        for (student, notebook), ranked in sorted(groups.items()):
            kept: _Candidate | None = None
            for _, candidate, by_name in sorted(ranked, key=lambda entry: entry[0], reverse=True):
                row = CollectedFile(student, notebook, candidate.member.name, _when(candidate), candidate.late)
                if kept is not None:
                    self.rows.append(_with(row, note=f"{OLDER} (kept {kept.member.name})"))
                    continue
                try:
                    _deliver(real_out, student, notebook, candidate, self.budget)
                except _Skip as err:
                    self.rows.append(_with(row, note=str(err)))
                    continue
                kept = candidate
                notes = [] if by_name else [f"named {candidate.uploaded!r}; {notebook} by its cells"]
                notes += [] if len(candidate.people) == 1 else ["group submission"]
                self.rows.append(_with(row, kept=True, note="; ".join(notes)))


def _pipeline(
    kind: str,
    members: list[_Member],
    interpret: Callable[[_Member], _Candidate | str],
    make_out: Callable[[], Path],
    roster: Sequence[RosterEntry] | None,
    course: _Course,
    limits: CollectLimits,
    where: str,
) -> CollectResult:
    run = _Run(kind, course, _Budget(limits), [])
    candidates: list[_Candidate] = []
    aside: list[tuple[_Candidate, str]] = []
    for member in members:
        found = member.problem if member.problem in _NAMES_ONLY else interpret(member)
        if isinstance(found, str):
            run.rows.append(CollectedFile("", "", member.name, note=member.problem or found))
        elif member.problem:
            aside.append((found, member.problem))  # a link, say: never opened, but whose it is is known
        else:
            candidates.append(found)
    candidates = _per_student_caps(candidates, aside, limits)
    _check_total(candidates, limits, where)
    out = make_out()
    matched = run.match(candidates, aside)
    people = {who.key: who for c in [*(m[0] for m in matched), *(a[0] for a in aside)] for who in c.people}
    students = _students(kind, people, roster)
    run.set_aside(aside, students)
    run.deliver(out, matched, students)
    rows = run.rows
    rows.sort(key=lambda r: (not r.student, r.student, r.notebook, not r.kept, r.source_file))
    atomic_csv(out / REPORT, COLUMNS, [r.cells() for r in rows])
    collected = {r.student for r in rows if r.kept}
    absent = tuple(s for e in roster or [] if (s := str(safe_student(e.student))) not in collected)
    return CollectResult(kind, out, tuple(rows), absent)


def _with(row: CollectedFile, **changes: Any) -> CollectedFile:
    return CollectedFile(**{**row.__dict__, **changes})


def _check_out(out: Path | str, force: bool, *, inside: Path | None = None) -> Path:
    """``out`` when it may be collected into (nothing is made yet); :class:`CollectError` otherwise."""
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise CollectError(f"--out {path}: not a folder")
    if inside is not None:
        real, inner = os.path.realpath(path), os.path.realpath(inside)
        if os.path.commonpath([real, inner]) == inner:
            raise CollectError(f"--out {path} is inside the input folder {inside}")
    if path.is_dir() and any(path.iterdir()) and not force:
        raise CollectError(f"--out {path} is not empty; give --force to collect into it anyway")
    return path


def _make_out(path: Path) -> Path:
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
    submissions: Sequence[Path | str] = (),
) -> CollectResult:
    """Collect Canvas's *Download Submissions* zip (or a quiz's file uploads) into ``out/<student>/``.

    The student is the user id Canvas wrote in its place in each member's name (never read from the name the
    student gave her file); of several files of one student for one notebook, the one with the largest file id
    (the one Canvas received last) is kept. The zip says ``LATE``, not when: ``submissions`` gives the times.

    Parameters
    ----------
    zip_path : path
        The zip Canvas gave (see :mod:`.exports` for its member names).
    out : path
        The folder to write; must be empty unless ``force``.
    roster : list of RosterEntry, optional
        The course's students (matched by ``canvas_id``; an entry without one by ``student`` equal to the
        sortable name); students not on it are listed, not collected. Without one the folder is the sortable
        name (with the user id appended when two students' names are alike).
    notebooks : path
        The course's notebooks (default ``notebooks/``): their stems are the notebook names.
    force : bool
        Collect into a non-empty ``out`` (files of the same student and notebook are replaced).
    limits : CollectLimits, optional
        Caps on files and bytes read.
    submissions : sequence of path, optional
        The JSON of Canvas's submissions API for this assignment (``GET /api/v1/courses/:course_id/assignments/
        :assignment_id/submissions``), one file per page: each ``user_id``'s ``submitted_at`` is the time of that
        user's files (matched exactly to the user id in the member's name). Without it the times are unknown.

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
    return collect(
        "canvas",
        zip_path,
        out,
        roster=roster,
        notebooks=notebooks,
        force=force,
        limits=limits,
        canvas_submissions=submissions,
    )


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

    Every member of a group submission gets the group's file. A person is their ``sid`` and e-mail in the
    metadata (never their name); of several submissions of one student, the latest ``:created_at`` (then the
    larger submission id) is kept.

    Parameters
    ----------
    zip_path : str or pathlib.Path
        The zip Gradescope gave, with its ``submission_metadata.yml``.
    out : str or pathlib.Path
        The folder to write; must be empty unless ``force``.
    roster : list of RosterEntry, optional
        The course's students, matched by ``sid`` and ``email`` (an account whose sid and e-mail name two
        roster students, or that matches a student less well than another account does, is listed, not
        collected); an entry with neither by ``student`` equal to the email's local part. Students not on it
        are listed, not collected. Without one the folder is the email's local part (else the sid) made a safe
        folder name, with the sid appended when two people's are alike.
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

    Of several files of one student for one notebook the most recently modified is kept, as ``grade`` would
    pick it (:func:`.plan.pick_graded`): a copy number only breaks a tie.

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
    canvas_submissions: Sequence[Path | str] = (),
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
    canvas_submissions : sequence of path, optional
        Canvas only: the JSON of its submissions API, the files' times (see :func:`collect_canvas`).

    Returns
    -------
    CollectResult
        Every file's row; ``out/collected.csv`` holds the same.

    Raises
    ------
    CollectError
        The input cannot be read as a whole, is not the LMS's format or is over a whole-input cap of
        ``limits`` (its entries, its notebooks' bytes, Gradescope's metadata); ``canvas_submissions`` cannot be
        read, is over the metadata's byte cap or is not the API's JSON (an entry of the wrong type, a user listed
        twice, several assignments); ``out`` is a file, is inside the input folder, or is not empty without
        ``force``. Nothing is written then.
    ValueError
        ``kind`` is unknown, ``due`` is given for another kind than gradescope, ``canvas_submissions`` for another
        kind than canvas, a roster's student id is not
        safe as a folder name (:func:`safe_student`), two of its ids differ only in case, one ``canvas_id``,
        ``sid`` or ``email`` is given to two students, or ``notebooks`` holds no notebook (naming ``--source``).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if due is not None and kind != "gradescope":
        raise ValueError("due applies to gradescope only (Canvas marks late files itself)")
    if canvas_submissions and kind != "canvas":
        raise ValueError("--canvas-submissions applies to canvas only")
    limits = limits or CollectLimits()
    _check_roster(roster)
    times = _read_canvas_submissions(canvas_submissions, limits) if canvas_submissions else None
    course = _Course(notebooks)
    if kind == "folders":
        root = Path(input_path)
        if not root.is_dir():
            raise CollectError(f"{root}: not a folder")
        target = _check_out(out, force, inside=root)
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        try:
            members = _folder_members(root, root_fd, limits)
            return _pipeline(kind, members, _folders, lambda: _make_out(target), roster, course, limits, str(root))
        finally:
            os.close(root_fd)
    target = _check_out(out, force)
    with _open_zip(input_path, limits) as archive:
        members = _zip_members(archive)
        interpret: Callable[[_Member], _Candidate | str]
        if kind == "gradescope":
            top, submissions = _read_metadata(members, limits)
            interpret = lambda m: _gradescope(m, top, submissions, due)  # noqa: E731
        else:
            layout = _canvas_layout(members)
            interpret = lambda m: _canvas(m, layout, times)  # noqa: E731
        return _pipeline(kind, members, interpret, lambda: _make_out(target), roster, course, limits, str(input_path))


# --------------------------------------------------------------------------- the command


def _due(text: str) -> datetime:
    try:
        return parse_time(text)
    except TimeError:
        raise argparse.ArgumentTypeError(
            f"--due must be an ISO 8601 time with its timezone, such as 2026-11-30T23:59-08:00; got {text!r}"
        ) from None


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
