"""Grading on Gradescope: ``python -m dpcourse gradescope build`` writes the autograder's zip, and the zip's
``run_autograder`` grades one submission with the same grader as ``python -m dpcourse grade``.

**The zip** follows Gradescope's autograder specification: ``setup.sh`` and ``run_autograder`` at its
root, beside the instructor's notebooks of one assignment (``notebooks/``), the course file, the pinned
``requirements.txt``, the dpcourse source tree (``package/``) and :data:`CONFIG` (the assignment, the outline
of the whole course, the visibility chosen and the limits). ``setup.sh`` runs once when Gradescope builds
the image: it installs Python >= 3.11, the pins and the package into ``/autograder/venv`` and creates the
unprivileged user :data:`DEFAULT_USER`. Nothing is fetched when a submission is graded.

**A run** (:func:`run_autograder`): the student's files are in ``<root>/submission``, Gradescope's
``submission_metadata.json`` beside it (``created_at``, ``assignment.due_date``, ``users``), the result goes
to ``<root>/results/results.json`` (``<root>`` is ``$DPCOURSE_AUTOGRADER_ROOT``, by default
``/autograder``). The submission is walked without recursion and within limits (:data:`MAX_DEPTH`,
:data:`MAX_ENTRIES`); the ``.ipynb`` files found are copied (regular files only, never through a link, at
most :data:`MAX_NOTEBOOKS` and :data:`MAX_STAGED_BYTES`) into a private folder, other files only counted,
and graded by :func:`~.grade.grade`: the same plan, nonces, seeds, judges, limits and statuses, with the
course file's points, partial and extra credit, late policy and extensions (:func:`~.gradebook.course_totals`).
An extension applies when its key equals a submitter's Gradescope ``sid`` (the roster's student id; both
NFC-normalised), never a name or an e-mail address, which students choose. Each exercise is one test,
named ``"01 · exact-tail-level"``; the overall output lists the notebooks graded, what to upload when one
is missing, the files ignored and why, what was not searched, the integrity notes and the lateness; the
log (stdout) shows the same course points as the result. Whatever happens, ``results.json`` is written: a
failure of the grader itself becomes a result saying so.

**The student's code cannot touch the result.** The kernel runs in bubblewrap where the container allows
it; otherwise (Gradescope's containers usually refuse its namespaces) as :data:`DEFAULT_USER` (or
``$DPCOURSE_UNCONFINED_USER``) under a user id drawn for this run alone (:func:`~.sandbox.run_job` draws it),
never as root: the run refuses to grade if it cannot drop to that user. It cannot read the solutions
(``<root>/source`` is made 0700 root) nor write ``<root>/results`` (0755 root); when its run ends, before
``results.json`` is written (atomically, as root, last), every process of that id is stopped and killed and
its files in the shared scratch folders removed (:func:`~.sandbox.kill_user_processes`), so nothing the
submission left behind outlives its run. The id is the run's own because the kernel counts ``RLIMIT_NPROC``
per id across the machine and a container may share the host's processes: with the user's fixed id,
containers of one image grading at once (or the host's own user of that id) would share one process
budget, and each clean-up would kill the others' kernels.

Longer than 400 lines because the zip and its run are one contract (the layout, :data:`CONFIG`, the
scripts' variables) that a split would spread over modules which must change together, and because the
run's safety (staging, dropping privileges, killing what is left, writing last) reads best in one place.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import traceback
import zipfile
from collections import deque
from collections.abc import Mapping, Sequence
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from ..course import Assignment, Course, CourseError, Lateness, duration_text, load_course
from ..gradebook.book import RosterEntry, SubmissionTime, course_totals, row_points
from ..grading.plan import MAX_NOTEBOOK_BYTES, load_sources, read_outline
from ..grading.reports import GradeRow, points_text
from ..grading.run import UNCONFINED, grade
from ..io import NotRegularFile, atomic_text, atomic_write, read_capped
from ..release import REQUIREMENTS, SOURCE, missing_checkout_default
from ..sandbox.runner import (
    UNCONFINED_USER_ENV,
    Limits,
    SandboxUnavailable,
    choose_sandbox,
    unconfined_user,
    why_no_unconfined_user,
)
from ..validation import positive_number, student_id, time_or_none

__all__ = [
    "CONFIG",
    "DEFAULT_USER",
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_LISTED",
    "MAX_NOTEBOOKS",
    "MAX_OTHERS_NAMED",
    "MAX_STAGED_BYTES",
    "PYTHON_ENV",
    "ROOT_ENV",
    "VISIBILITIES",
    "AutograderError",
    "Staged",
    "add_gradescope_command",
    "autograder_root",
    "build_autograder",
    "results_json",
    "run_autograder",
    "stage_submission",
    "test_name",
]

#: Environment variable that moves the whole Gradescope layout (``/autograder``), for tests and local runs.
ROOT_ENV = "DPCOURSE_AUTOGRADER_ROOT"
#: Environment variable ``run_autograder`` takes the grader's Python from (default ``<root>/venv/bin/python``).
PYTHON_ENV = "DPCOURSE_AUTOGRADER_PYTHON"
#: The user ``setup.sh`` creates and the kernels run as when bubblewrap cannot run.
DEFAULT_USER = "dpcourse-student"
#: The build's settings, at the zip's root (``<root>/source/autograder.json`` at run time).
CONFIG = "autograder.json"
#: Gradescope's visibility settings, for the result and for the autograder's stdout.
VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
#: The folder name a submission is graded under (the gradebook's student id when no extension names the student).
STUDENT = "student"
_FORMAT = 1
_TEMPLATES = "autograder_files"
_SCRIPTS = ("setup.sh", "run_autograder")
#: Folder levels searched below the submission's top: a folder more levels down is not entered, and the result
#: says so. A zipped project keeps its notebooks a few levels down (``Users/ada/Documents/dp/hw1/`` is 5), so 16
#: loses no honest notebook, while a folder thousands of levels deep costs nothing.
MAX_DEPTH = 16
#: Files, folders and links looked at in all, wherever they are (the walk stops there, and the result says so).
#: Bounds a submission of a million empty files to a fraction of a second (0.4 s for 50,000 entries on a
#: loaded 2-core machine) while a project zipped with its virtualenv (some 20,000 files) is still
#: searched through; the folders a notebook may be graded from are searched before hidden ones.
MAX_ENTRIES = 50_000
#: ``.ipynb`` files copied for grading at most; the course has six notebooks, so 50 leaves room for many copies
#: and drafts while bounding what :func:`~.grade.grade` reads. Later ones are named as not read.
MAX_NOTEBOOKS = 50
#: Bytes of notebooks copied from one submission in all (each one is also at most
#: :data:`~.plan.MAX_NOTEBOOK_BYTES`): the course's notebooks with their outputs are 0.6 to 2 MB each.
MAX_STAGED_BYTES = 200_000_000
#: ``.ipynb`` files left out that the result names one by one, with why; any more are counted.
MAX_LISTED = 50
#: Other files (not ``.ipynb``) are named one by one when there are at most this many, else only counted: a
#: folder of figures is one line of the result, not hundreds.
MAX_OTHERS_NAMED = 10
_SHOWN = 120  # characters of a student's file name quoted back to them


class AutograderError(RuntimeError):
    """The autograder cannot grade safely here (no sandbox and no unprivileged user, a broken zip)."""


def autograder_root() -> Path:
    """``$DPCOURSE_AUTOGRADER_ROOT``, else ``/autograder``.

    Returns
    -------
    pathlib.Path
        The root of Gradescope's layout (an empty :data:`ROOT_ENV` counts as unset).
    """
    return Path(os.environ.get(ROOT_ENV) or "/autograder")


# --------------------------------------------------------------------------- building the zip


def _template(name: str) -> bytes:
    return (resources.files("dpcourse.classroom") / _TEMPLATES / name).read_bytes()


def _package_files() -> list[tuple[Path, str]]:
    """The dpcourse source tree as (file, name in the zip): ``package/pyproject.toml``, ``package/dpcourse/…``."""
    import dpcourse

    package = Path(dpcourse.__file__).resolve().parent
    project = package.parent
    needed = [project / "pyproject.toml", project / "README.md"]
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        raise ValueError(
            "gradescope build needs the dpcourse source tree (a checkout of the workbook); missing: "
            + ", ".join(missing)
        )
    files = [(p, f"package/{p.name}") for p in needed]
    for path in sorted(package.rglob("*")):
        relative = path.relative_to(project)
        if path.is_file() and "__pycache__" not in relative.parts and path.suffix not in (".pyc", ".pyo"):
            files.append((path, f"package/{relative.as_posix()}"))
    return files


def _chosen_assignment(
    course_path: Path | None, key: str | None, outline: Mapping[str, Mapping[str, float]]
) -> tuple[Assignment, Course | None]:
    if course_path is None:
        if key is not None:
            raise ValueError("--assignment needs --course (without a course file every notebook of --source is graded)")
        return _all_notebooks(outline), None
    course = load_course(course_path, outline)
    keys = [a.key for a in course.assignments]
    if key is None:
        if len(keys) != 1:
            raise ValueError(f"--assignment is needed: {course_path} has several assignments ({', '.join(keys)})")
        key = keys[0]
    try:
        return course.assignment(key), course
    except KeyError:
        raise ValueError(f"--assignment {key!r} is not in {course_path} (allowed: {', '.join(keys)})") from None


def _all_notebooks(outline: Mapping[str, Mapping[str, float]]) -> Assignment:
    """No course file: one assignment of every notebook, with the notebooks' own points and no due time."""
    points = {(nb, ex): float(p) for nb, exercises in outline.items() for ex, p in exercises.items()}
    return Assignment("notebooks", "all notebooks", tuple(outline), None, points)


def build_autograder(
    out: Path | str,
    *,
    source: Path | str = SOURCE,
    course: Path | str | None = None,
    assignment: str | None = None,
    visibility: str = "visible",
    stdout_visibility: str = "hidden",
    limits: Limits | None = None,
    requirements: Path | str = REQUIREMENTS,
) -> Path:
    """Write Gradescope's autograder zip for one assignment to ``out``; returns ``out``.

    Parameters
    ----------
    out : str or pathlib.Path
        The zip to write (atomically; its folder is created).
    source : str or pathlib.Path
        The instructor's notebooks, with their solutions (the whole course: the course file is checked
        against all of them).
    course : str, pathlib.Path or None, optional
        The course file; without it, every notebook of ``source`` is one assignment.
    assignment : str or None, optional
        The course file's assignment key (needed when it has several; refused without ``course``).
    visibility : str
        Gradescope's ``visibility`` of the result and its tests, one of :data:`VISIBILITIES`.
    stdout_visibility : str
        The visibility of the autograder's stdout, which is meant for the instructor, one of
        :data:`VISIBILITIES`.
    limits : Limits or None, optional
        Each run's limits (default :class:`~.sandbox.Limits`).
    requirements : str or pathlib.Path
        The pinned requirements ``setup.sh`` installs.

    Returns
    -------
    pathlib.Path
        ``out``.

    Raises
    ------
    ValueError
        A visibility not in :data:`VISIBILITIES`, an assignment the course does not have (or one without
        ``course``), several assignments and none chosen, ``source`` with student copies only or a malformed
        exercise, a missing requirements file or source tree; :class:`~.course.CourseError` (a ValueError)
        for a course file that cannot be used.
    FileNotFoundError
        If ``source`` holds no notebook.
    """
    for name, value in (("visibility", visibility), ("stdout_visibility", stdout_visibility)):
        if value not in VISIBILITIES:
            raise ValueError(f"{name} must be one of {', '.join(VISIBILITIES)}; got {value!r}")
    limits = limits or Limits()
    source, requirements = Path(source), Path(requirements)
    outline = read_outline(source)
    load_sources(source)  # refuses student copies (no solutions) and malformed exercises
    chosen, _ = _chosen_assignment(Path(course) if course is not None else None, assignment, outline)
    if not requirements.is_file():
        raise ValueError(f"requirements {requirements}: no such file (setup.sh installs its exact pins)")
    config = {
        "format": _FORMAT,
        "assignment": chosen.key,
        "name": chosen.name,
        "notebooks": list(chosen.notebooks),
        "outline": outline,
        "course": "course.toml" if course is not None else None,
        "visibility": visibility,
        "stdout_visibility": stdout_visibility,
        "limits": dataclasses.asdict(limits),
        "built_at": datetime.now().astimezone().isoformat(timespec="seconds"),
    }

    def write_zip(handle: Any) -> None:
        with zipfile.ZipFile(handle, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for script in _SCRIPTS:
                info = zipfile.ZipInfo(script)
                info.external_attr = (stat.S_IFREG | 0o755) << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, _template(script))
            archive.writestr(CONFIG, json.dumps(config, indent=1) + "\n")
            archive.write(requirements, "requirements.txt")
            if course is not None:
                archive.write(course, "course.toml")
            for notebook in chosen.notebooks:
                archive.write(source / f"{notebook}.ipynb", f"notebooks/{notebook}.ipynb")
            for path, name in _package_files():
                archive.write(path, name)

    out = atomic_write(out, write_zip, binary=True)
    return out


# --------------------------------------------------------------------------- reading a submission


@dataclasses.dataclass(frozen=True)
class Staged:
    """A submission copied for grading: the notebooks (in the private folder) and what was left out, with why.

    Attributes
    ----------
    notebooks : tuple of pathlib.Path
        The copies, in the folder given to :func:`stage_submission`.
    ignored : tuple of tuple of str
        ``(file name as shown to the student, why it was not copied)`` for each file named one by one: every
        ``.ipynb`` file not graded (up to :data:`MAX_LISTED`) and, when there are at most
        :data:`MAX_OTHERS_NAMED` of them, the other files.
    skipped : tuple of str
        Sentences for what was only counted or not searched at all: other files beyond those named, folders
        deeper than :data:`MAX_DEPTH`, the entries beyond :data:`MAX_ENTRIES`, folders that could not be read.
    """

    notebooks: tuple[Path, ...]
    ignored: tuple[tuple[str, str], ...]
    skipped: tuple[str, ...] = ()


def _shown(name: str) -> str:
    printable = "".join(c if c.isprintable() else "?" for c in name)
    return printable if len(printable) <= _SHOWN else printable[: _SHOWN - 1] + "…"


def _megabytes(size: int) -> str:
    return f"{size // 1_000_000} MB"


def _copy_regular(path: Path, target: Path, room: int) -> tuple[str | None, int]:
    """Copy the regular file ``path`` (never through a link) to ``target`` if it fits in ``room`` bytes.

    Returns ``(None, bytes copied)``, or ``(why it was not copied, 0)``.
    """
    cap = min(MAX_NOTEBOOK_BYTES, room)
    too_large = f"larger than {_megabytes(MAX_NOTEBOOK_BYTES)}"
    no_room = f"the notebooks before it already fill the {_megabytes(MAX_STAGED_BYTES)} read from one submission"
    try:
        data, info = read_capped(path, cap)
    except NotRegularFile:
        return "not a regular file", 0
    except OSError as err:
        return f"could not be opened ({err.strerror})", 0
    if len(data) > cap:
        return (too_large if max(len(data), info.st_size) > MAX_NOTEBOOK_BYTES else no_room), 0
    target.write_bytes(data)
    os.utime(target, (info.st_mtime, info.st_mtime))
    return None, len(data)


def _hidden(parts: tuple[str, ...]) -> bool:
    """A folder no notebook is graded from: hidden (``.git``, ``.ipynb_checkpoints``), macOS's, or one below them."""
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


def _why_skipped(relative: Path) -> str | None:
    parts = relative.parts
    if any(p == "__MACOSX" or p.startswith("._") for p in parts):
        return "macOS metadata, not a notebook"
    if any(p == ".ipynb_checkpoints" for p in parts):
        return "Jupyter's checkpoint copy, not your notebook"
    if any(p.startswith(".") for p in parts):
        return "a hidden file"
    if relative.suffix.lower() != ".ipynb":
        return "not a notebook (.ipynb)"
    return None


def _files(count: int, what: str = "file") -> str:
    return f"{count:,} {what}{'s were' if count != 1 else ' was'}"


#: Why an entry that is not a regular file is never opened, by :func:`_kind`.
_WHY_NOT_READ = {"link": "a link, not a file", "other": "not a regular file"}


def _kind(entry: os.DirEntry[str]) -> str:
    """``"folder"``, ``"file"`` (regular), ``"link"`` or ``"other"`` (a pipe, a device…), links never followed."""
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "folder"
        return "file" if entry.is_file(follow_symlinks=False) else "other"
    except OSError:
        return "other"


@dataclasses.dataclass
class _Walk:
    """What a walk over a submission saw: every entry but folders, as (path from the top, :func:`_kind`), and
    the limits it reached.

    Paths are tuples of names (a ``Path`` a file costs more than the whole walk).
    """

    found: list[tuple[tuple[str, ...], str]] = dataclasses.field(default_factory=list)
    too_deep: list[tuple[str, ...]] = dataclasses.field(default_factory=list)
    unreadable: list[tuple[tuple[str, ...], str]] = dataclasses.field(default_factory=list)
    truncated: bool = False


def _walk(submission: Path) -> _Walk:
    """Look at ``submission`` folder by folder, without recursion, links never followed, within the limits.

    Breadth first, names sorted in each folder, the folders a notebook can be graded from before the hidden and
    macOS ones (searched only to say why their files were left out): a notebook is found before the clutter
    beside it can use up :data:`MAX_ENTRIES`. A folder more than :data:`MAX_DEPTH` levels down is not entered.
    """
    walk = _Walk()
    visited = 0
    queues: tuple[deque[tuple[str, ...]], deque[tuple[str, ...]]] = (deque([()]), deque())
    while (queues[0] or queues[1]) and not walk.truncated:
        folder = (queues[0] or queues[1]).popleft()
        entries: list[tuple[str, str]] = []
        try:
            with os.scandir(submission.joinpath(*folder)) as listing:
                for entry in listing:
                    visited += 1
                    if visited > MAX_ENTRIES:
                        walk.truncated = True
                        break
                    entries.append((entry.name, _kind(entry)))
        except OSError as err:
            walk.unreadable.append((folder, err.strerror or type(err).__name__))
        for name, kind in sorted(entries):
            relative = (*folder, name)
            if kind != "folder":
                walk.found.append((relative, kind))
            elif len(relative) > MAX_DEPTH:
                walk.too_deep.append(relative)
            else:
                queues[_hidden(relative)].append(relative)
    return walk


def _skipped(walk: _Walk, others: int, unlisted: int) -> list[str]:
    """The sentences for what :func:`stage_submission` only counted or did not search."""
    sentences = []
    if others:
        sentences.append(f"{_files(others, 'other file')} not read (not notebooks)")
    if unlisted > 0:
        sentences.append(f"{_files(unlisted, 'more .ipynb file')} not graded (only the first {MAX_LISTED} are named)")
    if walk.too_deep:
        first = _shown("/".join(walk.too_deep[0]))
        sentences.append(
            f"folders deeper than {MAX_DEPTH} levels were not searched ({len(walk.too_deep):,} of them, the first "
            f"{first}/)"
        )
    if walk.truncated:
        sentences.append(
            f"only the first {MAX_ENTRIES:,} files and folders were looked at: the rest of the submission was not "
            "searched"
        )
    for folder, why in walk.unreadable:
        where = f"the folder {_shown('/'.join(folder))}/" if folder else "the submission's folder"
        sentences.append(f"{where} could not be read ({why})")
    return sentences


def stage_submission(submission: Path | str, folder: Path | str) -> Staged:
    """Copy the notebooks of ``submission`` (searched in sub-folders too, links never followed) into ``folder``.

    The walk is iterative and bounded: folders more than :data:`MAX_DEPTH` levels down are not searched, and
    no more than :data:`MAX_ENTRIES` files and folders are looked at, the folders a notebook may be graded
    from first. Only the ``.ipynb`` files are considered: regular ones of at most
    :data:`~.plan.MAX_NOTEBOOK_BYTES` are copied under their own names (keeping their modification times,
    which :func:`~.plan.pick_graded` reads), at most :data:`MAX_NOTEBOOKS` of them and
    :data:`MAX_STAGED_BYTES` in all. Every ``.ipynb`` file left out (a link, another kind of file, a
    checkpoint, a hidden or macOS file, a second file of the same name in another folder, one beyond the
    limits) is named in ``ignored`` with the reason; the other files are counted (and named too when there
    are few), never opened. Whatever was only counted or not searched is said in ``skipped``.

    Parameters
    ----------
    submission : str or pathlib.Path
        The student's files (Gradescope's ``<root>/submission``).
    folder : str or pathlib.Path
        Where the copies go (created if missing); a private folder of the grader's.

    Returns
    -------
    Staged
        The copies and what was left out.
    """
    submission, folder = Path(submission), Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    walk = _walk(submission)
    notebooks: list[Path] = []
    left_out: list[tuple[str, str]] = []
    others: list[tuple[tuple[str, ...], str]] = []
    room = MAX_STAGED_BYTES
    for parts, kind in walk.found:
        if not parts[-1].lower().endswith(".ipynb"):
            others.append((parts, kind))
            continue
        relative = Path(*parts)
        why = _WHY_NOT_READ.get(kind) or _why_skipped(relative)
        target = folder / relative.name
        if why is None and target.exists():
            why = f"another file named {_shown(relative.name)} was graded instead"
        if why is None and len(notebooks) >= MAX_NOTEBOOKS:
            why = f"more than {MAX_NOTEBOOKS} notebooks were handed in; this one was not read"
        if why is None:
            why, size = _copy_regular(submission / relative, target, room)
            room -= size
        if why is None:
            notebooks.append(target)
        else:
            left_out.append((_shown(relative.as_posix()), why))
    ignored = left_out[:MAX_LISTED]
    counted = len(others)
    if counted <= MAX_OTHERS_NAMED:
        for parts, kind in others:
            why = _WHY_NOT_READ.get(kind) or _why_skipped(Path(*parts)) or "not a notebook (.ipynb)"
            ignored.append((_shown("/".join(parts)), why))
        counted = 0
    skipped = _skipped(walk, counted, len(left_out) - MAX_LISTED)
    return Staged(tuple(notebooks), tuple(ignored), tuple(skipped))


def _metadata(path: Path) -> dict[str, Any]:
    """Gradescope's ``submission_metadata.json``; ``{}`` when missing or unreadable (a local run)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _roster_ids(metadata: Mapping[str, Any]) -> list[str]:
    """The submitters' roster ids, NFC-normalised: each listed user's ``sid`` (student id), when Gradescope has one.

    Never a name or an e-mail address: a student chooses those on Gradescope, so either could be made to
    equal another student's roster id; the ``sid`` comes from the course's roster.
    """
    found: list[str] = []
    users = metadata.get("users")
    for user in users if isinstance(users, list) else []:
        sid = user.get("sid") if isinstance(user, dict) else None
        if isinstance(sid, int) and not isinstance(sid, bool):
            sid = str(sid)
        if isinstance(sid, str) and sid:
            normalised = student_id(sid)
            if normalised not in found:
                found.append(normalised)
    return found


# --------------------------------------------------------------------------- the result


def test_name(notebook: str, exercise: str) -> str:
    """``"01 · exact-tail-level"``: the notebook's number (its whole stem when it has none) and the exercise id.

    Parameters
    ----------
    notebook : str
        The notebook's stem, such as ``"01_laplace_utility"``.
    exercise : str
        The exercise id.

    Returns
    -------
    str
        The leading digits of ``notebook`` (else all of it), ``" · "`` and ``exercise``.

    Examples
    --------
    >>> test_name("01_laplace_utility", "max-queries")
    '01 · max-queries'
    """
    number = re.match(r"\d+", notebook)
    return f"{number.group(0) if number else notebook} · {exercise}"


def _student_notes(integrity: str, dropped: str) -> list[str]:
    return [note for note in integrity.split("; ") if note and note != dropped]


def _test_output(row: GradeRow | None, notebook: str) -> str:
    if row is None:
        return f"Not graded: no notebook {notebook}.ipynb was found in your submission (see the overall output)."
    lines = [row.message or row.status]
    if row.status == "failed" and row.mistake:
        lines.append(f"Mistake: {row.mistake}")
    if row.status == "failed" and row.hint:
        lines.append(f"Hint: {row.hint}")
    if row.status not in ("passed", "failed"):
        lines.insert(0, f"({row.status})")
    return "\n".join(lines)


def _lateness_line(lateness: Lateness | None, penalty: float, maximum: float) -> str | None:
    if lateness is None or lateness.due is None:
        return None
    due = lateness.due.isoformat(timespec="minutes")
    if lateness.late_by is None:
        return f"Marked late (due {due}): −{points_text(penalty)} points."
    span = duration_text(lateness.late_by)
    if lateness.within_grace:
        return f"Handed in {span} after the due time ({due}), within the grace period: no penalty."
    if not lateness.accepted:
        return f"Handed in {span} late (due {due}). Late work is not accepted: it scores 0."
    if lateness.fraction == 0:
        return f"Handed in {span} late (due {due}); no points are deducted for lateness."
    days = f"{lateness.days} started day{'s' if lateness.days != 1 else ''}"
    if penalty == 0:
        return f"Handed in {span} late (due {due}): {days}; no points were earned, so none are deducted."
    return (
        f"Handed in {span} late (due {due}): {days}, {100 * lateness.fraction:.4g} % of the assignment's "
        f"{points_text(maximum)} points: −{points_text(penalty)} points."
    )


def results_json(
    rows: Sequence[GradeRow],
    course: Course,
    assignment: Assignment,
    *,
    student: str = STUDENT,
    submitted_at: datetime | None = None,
    ignored: Sequence[tuple[str, str]] = (),
    skipped: Sequence[str] = (),
    visibility: str = "visible",
    stdout_visibility: str = "hidden",
    dropped_note: str = "",
) -> dict[str, Any]:
    """Gradescope's ``results.json`` for one submission's grade rows.

    One test per exercise of ``assignment`` (its points as the course gives them), ``passed`` or ``failed``
    (an errored, not attempted or missing exercise is ``failed``, its output saying which); the top-level
    ``score`` is the course's: extra and partial credit, less the late penalty. ``dropped_note`` is an
    integrity note left out of what students see (the unconfined run's, expected on Gradescope).

    Parameters
    ----------
    rows : sequence of GradeRow
        The rows :func:`~.grade.grade` gave for the submission's notebooks (rows of files that were not
        graded, exercise ``"-"``, are listed in the output).
    course : Course
        The course, for its late policy and extensions.
    assignment : Assignment
        The assignment graded: its notebooks, exercises and points.
    student : str
        The course's id for the submitter (whose extension applies).
    submitted_at : datetime.datetime or None, optional
        When the submission was made; None when unknown (no late penalty then).
    ignored : sequence of tuple of str
        ``(file name, why)`` of the files not graded, listed in the output.
    skipped : sequence of str
        Sentences for what staging only counted or did not search (:attr:`Staged.skipped`), in the output.
    visibility : str
        Gradescope's visibility of the result and its tests.
    stdout_visibility : str
        Gradescope's visibility of the autograder's stdout.
    dropped_note : str
        An integrity note not shown to the student.

    Returns
    -------
    dict
        ``results.json`` as Gradescope reads it: ``score``, ``output`` (the notebooks graded and missing,
        the files ignored, what was not searched, the notes and the lateness), ``tests`` (by notebook,
        then in the order of the assignment's points) and the visibilities.
    """
    outline = {nb: [ex for n, ex in assignment.points if n == nb] for nb in assignment.notebooks}
    times = {(student, nb): SubmissionTime(submitted_at, None) for nb in assignment.notebooks}
    rows = [dataclasses.replace(r, student=student) for r in rows]
    graded_rows = [r for r in rows if r.exercise != "-"]
    totals = course_totals(
        graded_rows,
        {nb: {ex: assignment.points[(nb, ex)] for ex in exercises} for nb, exercises in outline.items()},
        [RosterEntry(student)],
        course=course,
        submissions={k: v for k, v in times.items() if any(r.notebook == k[1] for r in graded_rows)},
    )
    score = totals.scores[student][assignment.key]
    by_key = {(r.notebook, r.exercise): r for r in graded_rows}
    tests = []
    for notebook, exercise in _exercises(assignment):
        row = by_key.get((notebook, exercise))
        extra = (notebook, exercise) in assignment.extra_credit
        tests.append(
            {
                "name": test_name(notebook, exercise) + (" (extra credit)" if extra else ""),
                "score": round(row_points(row, assignment), 6) if row is not None else 0.0,
                "max_score": 0.0 if extra else assignment.points[(notebook, exercise)],
                "status": "passed" if row is not None and row.status == "passed" else "failed",
                "output": _test_output(row, notebook),
                "output_format": "text",
                "visibility": visibility,
            }
        )
    lines = [f"{assignment.name}: {points_text(round(score.points, 6))} of {points_text(assignment.maximum)} points."]
    graded = [nb for nb in assignment.notebooks if any(r.notebook == nb for r in graded_rows)]
    missing = [nb for nb in assignment.notebooks if nb not in graded]
    for notebook in graded:
        lines.append(f"Graded: {notebook}.ipynb")
    for notebook in missing:
        lines.append(
            f"Missing: no gradable notebook {notebook}.ipynb was found. Upload your {notebook}.ipynb (in JupyterLab: "
            "right-click it, Download) and submit again; its exercises score 0 until then."
        )
    for row in rows:
        if row.exercise == "-":
            lines.append(f"Not graded: {_shown(row.notebook)}.ipynb: {row.message}")
    for name, why in ignored:
        lines.append(f"Ignored: {name}: {why}")
    lines += [sentence[:1].upper() + sentence[1:] + "." for sentence in skipped]
    notes = sorted({n for r in graded_rows for n in _student_notes(r.integrity, dropped_note)})
    lines += [f"Note: {note}" for note in notes]
    late = _lateness_line(score.lateness, score.penalty, assignment.maximum)
    if late:
        lines.append(late)
    return {
        "score": round(score.points, 6),
        "output": "\n".join(lines),
        "output_format": "text",
        "test_output_format": "text",
        "visibility": visibility,
        "stdout_visibility": stdout_visibility,
        "tests": tests,
    }


def _exercises(assignment: Assignment) -> list[tuple[str, str]]:
    """``(notebook, exercise)`` of ``assignment`` in the order of its tests: by notebook, then as its points list."""
    return [(nb, ex) for nb in assignment.notebooks for n, ex in assignment.points if n == nb]


def _log_lines(
    result: Mapping[str, Any], rows: Sequence[GradeRow], assignment: Assignment, skipped: Sequence[str]
) -> list[str]:
    """The autograder's log of a result: each test's course points exactly as ``result`` gives them."""
    lines = [f"autograder: {sentence}" for sentence in skipped]
    status = {(r.notebook, r.exercise): r.status for r in rows if r.exercise != "-"}
    for (notebook, exercise), test in zip(_exercises(assignment), result["tests"], strict=True):
        how = status.get((notebook, exercise), "missing")
        lines.append(f"  {test['name']}: {how} {points_text(test['score'])}/{points_text(test['max_score'])}")
    lines += [f"  not graded: {_shown(r.notebook)}.ipynb: {r.message}" for r in rows if r.exercise == "-"]
    lines.append(
        f"autograder: score {points_text(result['score'])} of {points_text(assignment.maximum)} (the course's points)"
    )
    return lines


def _failure_result(message: str, config: Mapping[str, Any] | None) -> dict[str, Any]:
    visibility = (config or {}).get("visibility", "visible")
    return {
        "score": 0.0,
        "output": f"The autograder could not grade this submission: {message} This is not a judgement of your "
        "work; please tell your instructor.",
        "output_format": "text",
        "visibility": visibility if visibility in VISIBILITIES else "visible",
        "stdout_visibility": "hidden",
        "tests": [],
    }


# --------------------------------------------------------------------------- running as Gradescope does


def _lock_down(root: Path) -> None:
    """As root: the solutions readable by root alone, the results folder root's, a stale result gone."""
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "results.json").unlink(missing_ok=True)
    if os.geteuid() == 0:
        os.chown(results, 0, 0)
        os.chmod(results, 0o755)
        os.chmod(root / "source", 0o700)


def _sandbox(user_name: str) -> str:
    """``"bwrap"`` where it works; else ``"none"`` as ``user_name``; :class:`AutograderError` if neither is safe."""
    try:
        return choose_sandbox("bwrap")
    except SandboxUnavailable as err:
        # choose_sandbox speaks to `grade` ("... Nothing was graded."); here the run goes on unconfined
        reason = str(err).split(". Nothing was graded.")[0]
        print(f"autograder: bubblewrap is not usable in this container ({reason}); trying the unprivileged user")
    if os.geteuid() != 0:
        raise AutograderError(
            "bubblewrap does not work here and the grader is not root, so the submission's code could not be kept "
            "from the result"
        )
    os.environ[UNCONFINED_USER_ENV] = user_name
    user = unconfined_user()
    if user is None or user.pw_name != user_name:
        raise AutograderError(
            f"bubblewrap does not work here and the kernel cannot run as the user {user_name!r}: "
            f"{why_no_unconfined_user() or 'another user was found'} (setup.sh creates the user; it must be able to "
            "run the grader's Python)"
        )
    print(f"autograder: the kernel runs unconfined as {user_name}, under a user id drawn for the run")
    return "none"


def _course_of(config: Mapping[str, Any], source: Path, due_fallback: datetime | None) -> tuple[Course, Assignment]:
    outline = config["outline"]
    if config.get("course"):
        course = load_course(source / str(config["course"]), outline)
        return course, course.assignment(str(config["assignment"]))
    assignment = dataclasses.replace(_all_notebooks(outline), due=due_fallback)
    return Course((assignment,)), assignment


def _limits(config: Mapping[str, Any]) -> Limits:
    stored = config.get("limits")
    known = {f.name for f in dataclasses.fields(Limits)}
    return Limits(**{k: v for k, v in stored.items() if k in known}) if isinstance(stored, dict) else Limits()


def _student_for(course: Course, assignment: Assignment, roster_ids: Sequence[str]) -> str:
    """The course's id for this submission: the extension key with the latest due time for ``assignment`` among
    those equal to one of ``roster_ids`` (NFC-normalised, as the keys are here), else :data:`STUDENT`."""
    wanted = set(roster_ids)
    extended = [
        key for key, due_times in course.extensions.items() if assignment.key in due_times and student_id(key) in wanted
    ]
    if not extended:
        return STUDENT
    return max(extended, key=lambda key: (course.extensions[key][assignment.key], key))


def _grade_submission(root: Path, config: Mapping[str, Any], user_name: str, work: Path) -> dict[str, Any]:
    source = root / "source"
    metadata = _metadata(root / "submission_metadata.json")
    listed = metadata.get("assignment")
    gradescope_due = time_or_none(listed.get("due_date")) if isinstance(listed, dict) else None
    course, assignment = _course_of(config, source, gradescope_due)
    submitted_at = time_or_none(metadata.get("created_at"))
    if assignment.due is not None and gradescope_due is not None and gradescope_due != assignment.due:
        print(f"autograder: Gradescope's due date {gradescope_due} differs from the course file's {assignment.due}")
    student = _student_for(course, assignment, _roster_ids(metadata))
    staged = stage_submission(root / "submission", work / STUDENT)
    mode = _sandbox(user_name)
    rows: list[GradeRow] = []
    if staged.notebooks:
        rows = grade(
            list(staged.notebooks),
            source=source / "notebooks",
            jobs=1,
            limits=_limits(config),
            sandbox=mode,
            partial_credit={nb: course.partial_credit(nb) for nb in assignment.notebooks},
        )
    result = results_json(
        rows,
        course,
        assignment,
        student=student,
        submitted_at=submitted_at,
        ignored=staged.ignored,
        skipped=staged.skipped,
        visibility=str(config.get("visibility", "visible")),
        stdout_visibility=str(config.get("stdout_visibility", "hidden")),
        dropped_note=UNCONFINED,
    )
    print(
        f"autograder: {len(staged.notebooks)} notebooks staged and graded ({mode}), {len(staged.ignored)} files named"
    )
    print("\n".join(_log_lines(result, rows, assignment, staged.skipped)))
    return result


def _read_config(source: Path) -> dict[str, Any]:
    try:
        config = json.loads((source / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise AutograderError(f"the autograder's {CONFIG} cannot be read ({err}): rebuild the zip") from None
    if not isinstance(config, dict) or config.get("format") != _FORMAT:
        raise AutograderError(f"the autograder's {CONFIG} is not of format {_FORMAT}: rebuild the zip")
    return config


def run_autograder(root: Path | str | None = None) -> dict[str, Any]:
    """Grade ``<root>/submission`` and write ``<root>/results/results.json`` (always); returns what was written.

    Must run as root on Gradescope (see the module's text). A failure of the grader itself, or a process
    of the submission that cannot be stopped, becomes a result saying so, with a score of 0.

    Parameters
    ----------
    root : str, pathlib.Path or None, optional
        The layout's root (default :func:`autograder_root`).

    Returns
    -------
    dict
        The result written (:func:`results_json`'s, or the failure's), with ``execution_time`` in seconds.
    """
    root = Path(root) if root is not None else autograder_root()
    started = time.monotonic()
    user_name = os.environ.get(UNCONFINED_USER_ENV) or DEFAULT_USER
    config: dict[str, Any] | None = None
    result: dict[str, Any]
    work = Path(tempfile.mkdtemp(prefix="dpcourse-autograder-"))  # 0700, the grader's
    try:
        _lock_down(root)
        config = _read_config(root / "source")
        result = _grade_submission(root, config, user_name, work)
    except (AutograderError, CourseError) as err:
        print(f"autograder: {err}")
        result = _failure_result(str(err), config)
    except Exception as err:  # noqa: BLE001 - whatever failed, the student gets a result saying so
        traceback.print_exc(file=sys.stdout)
        result = _failure_result(f"the grader failed ({type(err).__name__}).", config)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result["execution_time"] = max(0, math.ceil(time.monotonic() - started))
    text = json.dumps(result, indent=1, ensure_ascii=False) + "\n"
    atomic_text(root / "results" / "results.json", text)
    return result


# --------------------------------------------------------------------------- the command line


def _positive_float(text: str) -> float:
    try:
        return positive_number(text, float)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


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
    build.add_argument("--cell-timeout", type=_positive_float, default=Limits.cell_timeout, help="seconds per cell")
    build.add_argument(
        "--notebook-timeout",
        type=_positive_float,
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


if __name__ == "__main__":
    sys.exit(main())
