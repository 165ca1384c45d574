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
and graded by :func:`~.run.grade`: the same plan, nonces, seeds, judges, limits and statuses, with the
course file's points, partial and extra credit, late policy and extensions (:func:`~.totals.course_totals`).
An extension applies when its key equals a submitter's Gradescope ``sid`` (the roster's student id; both
NFC-normalised), never a name or an e-mail address, which students choose. Each exercise is one test,
named ``"01 · exact-tail-level"``; the overall output lists the notebooks graded, what to upload when one
is missing, the files ignored and why, what was not searched, the integrity notes and the lateness; the
log (stdout) shows the same course points as the result. Whatever happens, ``results.json`` is written: a
failure of the grader itself becomes a result saying so.

**The student's code cannot touch the result.** The kernel runs in bubblewrap where the container allows
it; otherwise (Gradescope's containers usually refuse its namespaces) as :data:`DEFAULT_USER` (or
``$DPCOURSE_UNCONFINED_USER``) under a user id drawn for this run alone (:func:`~.runner.run_job` draws it),
never as root: the run refuses to grade if it cannot drop to that user. It cannot read the solutions
(``<root>/source`` is made 0700 root) nor write ``<root>/results`` (0755 root); when its run ends, before
``results.json`` is written (atomically, as root, last), every process of that id is stopped and killed and
its files in the shared scratch folders removed (:func:`~.users.kill_user_processes`), so nothing the
submission left behind outlives its run. The id is the run's own because the kernel counts ``RLIMIT_NPROC``
per id across the machine and a container may share the host's processes: with the user's fixed id,
containers of one image grading at once (or the host's own user of that id) would share one process
budget, and each clean-up would kill the others' kernels.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import stat
import sys
import tempfile
import time
import traceback
import zipfile
from collections.abc import Mapping, Sequence
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

from ...course import Assignment, Course, CourseError, load_course
from ...grading.plan import load_sources, read_outline, read_written
from ...grading.reports import GradeRow
from ...grading.run import UNCONFINED, grade
from ...io import atomic_text, atomic_write
from ...release import REQUIREMENTS, SOURCE
from ...sandbox.limits import Limits
from ...sandbox.runner import SandboxUnavailable, choose_sandbox, unconfined_user, why_no_unconfined_user
from ...sandbox.users import UNCONFINED_USER_ENV
from ...validation import student_id, time_or_none
from .results import STUDENT, VISIBILITIES, _failure_result, _log_lines, results_json
from .staging import stage_submission

__all__ = [
    "CONFIG",
    "DEFAULT_USER",
    "PYTHON_ENV",
    "ROOT_ENV",
    "AutograderError",
    "autograder_root",
    "build_autograder",
    "run_autograder",
]


#: Environment variable that moves the whole Gradescope layout (``/autograder``), for tests and local runs.
ROOT_ENV = "DPCOURSE_AUTOGRADER_ROOT"

#: Environment variable ``run_autograder`` takes the grader's Python from (default ``<root>/venv/bin/python``).
PYTHON_ENV = "DPCOURSE_AUTOGRADER_PYTHON"

#: The user ``setup.sh`` creates and the kernels run as when bubblewrap cannot run.
DEFAULT_USER = "dpcourse-student"

#: The build's settings, at the zip's root (``<root>/source/autograder.json`` at run time).
CONFIG = "autograder.json"

_FORMAT = 1

_TEMPLATES = "autograder_files"

_SCRIPTS = ("setup.sh", "run_autograder")


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
        Each run's limits (default :class:`~.limits.Limits`).
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
    # written answers are marked by hand (a manually graded question on Gradescope), never by the autograder
    written = {(nb, w.exercise) for nb, found in read_written(source).items() for w in found}
    outline = {
        nb: {ex: p for ex, p in exercises.items() if (nb, ex) not in written}
        for nb, exercises in read_outline(source).items()
    }
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


def _lock_down(root: Path) -> None:
    """The solutions readable by their owner alone (root on Gradescope, whoever runs it elsewhere), a stale result
    gone, and as root the results folder root's."""
    results = root / "results"
    results.mkdir(parents=True, exist_ok=True)
    (results / "results.json").unlink(missing_ok=True)
    os.chmod(root / "source", 0o700)
    if os.geteuid() == 0:
        os.chown(results, 0, 0)
        os.chmod(results, 0o755)


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
