"""The one pipeline every LMS's download goes through: rank each student's files, keep the latest within the
per-student caps, write them atomically into ``DIR/<student>/<notebook>.ipynb`` and ``collected.csv``.

Of several files of one student for one notebook the latest is kept, by the order in which the LMS received them,
then as :func:`~dpcourse.classroom.grading.plan.pick_graded` breaks ties; the others are rows with ``kept`` false,
never dropped silently. Nothing is written outside ``DIR`` whatever a member is called.
"""

from __future__ import annotations

import contextlib
import os
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import nbformat

from ..gradebook.roster import RosterEntry
from ..grading.plan import SubmissionError, copy_number, parse_notebook, source_for
from ..io import atomic_csv, atomic_write
from .archive import (
    _MB,
    NOT_UTF8,
    REPORT,
    UNSAFE,
    CollectError,
    CollectLimits,
    _Budget,
    _Candidate,
    _Identity,
    _Match,
    _match_name,
    _Member,
    _projected_bytes,
    _Skip,
    safe_student,
)
from .claims import _Claim, _students
from .collected import COLUMNS, NOT_COURSE, OLDER, CollectedFile, CollectResult
from .gradescope.export import METADATA_NOTE

__all__ = ["course_notebooks"]


_NAMES_ONLY = (UNSAFE, NOT_UTF8, METADATA_NOTE)  # members whose name says nothing the LMS wrote about who


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
