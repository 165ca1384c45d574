"""The Gradescope autograder (``python -m dpcourse gradescope build|run``), tested as Gradescope runs it: the zip
unpacked into a temporary ``/autograder`` (``DPCOURSE_AUTOGRADER_ROOT``), a submission and its
``submission_metadata.json`` placed, the zip's own ``run_autograder`` run with bash (``setup.sh`` is not: this
venv stands in for the environment it installs), and ``results.json`` checked against the specification."""

from __future__ import annotations

import argparse
import functools
import json
import os
import pwd
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import nbformat
import pytest

from dpcourse.classroom.cli.gradescope import add_gradescope_command
from dpcourse.classroom.course import Assignment, Course, LatePolicy
from dpcourse.classroom.grading.reports import GradeRow
from dpcourse.classroom.lms.gradescope import autograder, results, staging
from dpcourse.classroom.lms.gradescope.autograder import CONFIG, DEFAULT_USER, build_autograder
from dpcourse.classroom.lms.gradescope.results import STUDENT, VISIBILITIES, _log_lines, results_json
from dpcourse.classroom.lms.gradescope.staging import MAX_DEPTH, stage_submission
from dpcourse.classroom.sandbox.runner import SandboxUnavailable, choose_sandbox
from dpcourse.classroom.sandbox.users import _remove_user_files, _user_pids, kill_user_processes, unused_user_id
from tests.classroom import grading_scenarios as gs
from tests.classroom.ordinary_python import copied_checkout, readable_environment, venv_imports_another_checkout

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = 600  # one submission's whole run on a loaded 2-core machine
MARKER = "dpcourse-hostile-marker"
DUE = "2026-10-05T23:59:00-04:00"
COURSE = f"""
[late]
penalty_per_day = 0.1
max_penalty = 0.5

[assignments.week1]
name = "Week 1"
notebooks = ["small"]
due = {DUE}
points = {{ max-queries = 2 }}

[extensions.ada]
week1 = 2026-10-06T23:59:00-04:00
"""


def _bwrap_works() -> bool:
    try:
        choose_sandbox("bwrap")
    except SandboxUnavailable:
        return False
    return True


def _user() -> pwd.struct_passwd | None:
    """The unprivileged user of setup.sh, created here as setup.sh would (root only); None when it cannot be."""
    try:
        return pwd.getpwnam(DEFAULT_USER)
    except KeyError:
        pass
    if os.geteuid() != 0 or shutil.which("useradd") is None:
        return None
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
         DEFAULT_USER],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return pwd.getpwnam(DEFAULT_USER)


BWRAP = _bwrap_works()


@pytest.fixture
def world_root():
    """A folder other users may enter (pytest's tmp_path is 0700 root), so that permissions are what is tested."""
    folder = Path(tempfile.mkdtemp(prefix="dpcourse-ag-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _source(tmp: Path) -> Path:
    source = tmp / "source-notebooks"
    source.mkdir()
    nbformat.write(gs.source_notebook(), source / gs.NAME)
    return source


def _zip(tmp: Path, *, course: str | None = None, **options) -> Path:
    source = _source(tmp)
    course_path = None
    if course is not None:
        course_path = tmp / "course.toml"
        course_path.write_text(course)
    return build_autograder(tmp / "autograder.zip", source=source, course=course_path, **options)


def _gradescope(tmp: Path, archive: Path, files: dict[str, object], metadata: dict | None = None) -> Path:
    """Gradescope's layout: the zip in source/, run_autograder copied beside, the submission and its metadata."""
    root = tmp / "autograder"
    (root / "source").mkdir(parents=True)
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(root / "source")
    shutil.copy(root / "source" / "run_autograder", root / "run_autograder")
    submission = root / "submission"
    submission.mkdir()
    for name, content in files.items():
        path = submission / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(content)
        else:
            nbformat.write(content, path)
    if metadata is not None:
        (root / "submission_metadata.json").write_text(json.dumps(metadata))
    return root


def _metadata(
    created_at: str = "2026-10-05T20:00:00-04:00",
    email: str = "bob@example.edu",
    *,
    sid: str | None = None,
    name: str = "A Student",
) -> dict:
    """submission_metadata.json with the fields Gradescope documents (the ones read here and some others): each of
    ``users`` is ``{email, id, name, sid}``, the sid (the roster's student id) null when the course has none."""
    return {
        "id": 123456,
        "created_at": created_at,
        "assignment": {
            "due_date": DUE,
            "group_size": None,
            "group_submission": False,
            "id": 25828,
            "course_id": 1234,
            "late_due_date": None,
            "release_date": "2026-09-28T00:00:00-04:00",
            "title": "Week 1",
            "total_points": "4.0",
        },
        "submission_method": "upload",
        "users": [{"email": email, "id": 1234, "name": name, "sid": sid}],
        "previous_submissions": [],
    }


def _python_of_this_checkout(folder: Path, python: Path | None = None, checkout: Path = ROOT) -> Path:
    """This venv's Python as ``run_autograder`` calls it (``-I -m dpcourse.classroom.lms.gradescope``),
    but importing the dpcourse of this checkout: ``-I`` leaves out the working folder and PYTHONPATH, so in a git
    worktree the venv's editable install (another checkout) would be graded instead. The worker and the sandbox take the
    package's folder from the grader's own dpcourse, so the whole run is this checkout's."""
    script = folder / "python-of-this-checkout"
    code = (
        "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); "
        "runpy.run_module('dpcourse.classroom.lms.gradescope', run_name='__main__', alter_sys=True)"
    )
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" != -I ] || [ "$2" != -m ] || [ "$3" != dpcourse.classroom.lms.gradescope ]; then '
        "exit 3; fi\n"
        f"shift 3\nexec {shlex.quote(str(python or sys.executable))} -I -c {shlex.quote(code)} "
        f'{shlex.quote(str(checkout))} "$@"\n'
    )
    script.chmod(0o755)
    return script


def _run(root: Path, wrapper: Sequence[str] = (), **env: str) -> dict:
    return _run_logged(root, wrapper, **env)[0]


def _run_logged(root: Path, wrapper: Sequence[str] = (), **env: str) -> tuple[dict, str]:
    """The result ``run_autograder`` wrote, and its log (stdout)."""
    python, checkout = Path(sys.executable), ROOT
    unprivileged = tuple(wrapper) == UNPRIVILEGED
    if unprivileged or (not wrapper and os.geteuid() == 0 and not (BWRAP and "DPCOURSE_BWRAP" not in env)):
        # no bubblewrap (missing, hidden or refused): the kernel runs as the unprivileged user, as on Gradescope,
        # and needs a Python (and a dpcourse) that user can run
        others = _for_others()
        if isinstance(others, str):
            pytest.skip(others)
        wrapper, python, checkout = others
    if not wrapper and BWRAP and not {"DPCOURSE_BWRAP", "DPCOURSE_AUTOGRADER_PYTHON"} & set(env):  # in bubblewrap
        other = venv_imports_another_checkout()
        if other is not None:
            pytest.skip(other)
    environment = {
        **os.environ,
        "DPCOURSE_AUTOGRADER_ROOT": str(root),
        "DPCOURSE_AUTOGRADER_PYTHON": str(_python_of_this_checkout(root.parent, python, checkout)),
        "PYTHONPATH": str(checkout),  # the judges' (the grader's own -I leaves it out: see _python_of_this_checkout)
        **env,
    }
    done = subprocess.run(
        [*wrapper, "bash", str(root / "run_autograder")],
        cwd=root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((root / "results" / "results.json").read_text())
    _check_spec(result)
    return result, done.stdout


def _check_spec(result: dict) -> None:
    """results.json as Gradescope's specification has it: fields, types and allowed values."""
    assert isinstance(result["score"], int | float)
    assert isinstance(result["output"], str) and result["output"]
    assert result["visibility"] in VISIBILITIES and result["stdout_visibility"] in VISIBILITIES
    assert isinstance(result.get("execution_time", 0), int)
    assert isinstance(result["tests"], list)
    for test in result["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert isinstance(test["name"], str) and isinstance(test["output"], str)
        assert isinstance(test["score"], int | float) and isinstance(test["max_score"], int | float)
        assert test["status"] in ("passed", "failed")
        assert test["visibility"] in VISIBILITIES
        assert test["score"] >= 0
        assert "extra credit" in test["name"] or test["score"] <= test["max_score"]


def _by_name(result: dict) -> dict[str, dict]:
    return {t["name"]: t for t in result["tests"]}


def _hostile_processes() -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if MARKER.encode() in Path(entry.path, "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


needs_kernel_sandbox = pytest.mark.skipif(
    not BWRAP and os.geteuid() != 0, reason="neither bubblewrap nor root: the autograder refuses to run kernels"
)


# --------------------------------------------------------------------------- the zip


def test_zip_follows_the_specification(tmp_path):
    archive = _zip(tmp_path, course=COURSE, assignment="week1", visibility="after_due_date")
    with zipfile.ZipFile(archive) as opened:
        names = opened.namelist()
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in opened.infolist()}
        config = json.loads(opened.read(CONFIG))
    assert {"setup.sh", "run_autograder", "requirements.txt", "course.toml", "notebooks/small.ipynb"} <= set(names)
    assert modes["setup.sh"] == modes["run_autograder"] == 0o755
    assert "package/pyproject.toml" in names and "package/dpcourse/classroom/grading/run.py" in names
    assert not any("__pycache__" in n for n in names)
    assert config["assignment"] == "week1" and config["notebooks"] == ["small"]
    assert config["visibility"] == "after_due_date" and config["outline"] == {"small": dict.fromkeys(gs.EXERCISES, 1.0)}
    with zipfile.ZipFile(archive) as opened:
        assert opened.read("requirements.txt") == (ROOT / "requirements.txt").read_bytes()
        for script in ("setup.sh", "run_autograder"):
            checked = subprocess.run(["bash", "-n"], input=opened.read(script), capture_output=True, check=False)
            assert checked.returncode == 0, checked.stderr


def test_build_refuses_what_it_cannot_grade(tmp_path):
    source = _source(tmp_path)
    course = tmp_path / "course.toml"
    course.write_text(COURSE)
    out = tmp_path / "a.zip"
    with pytest.raises(ValueError, match="--assignment needs --course"):
        build_autograder(out, source=source, assignment="week1")
    with pytest.raises(ValueError, match="'week9' is not in"):
        build_autograder(out, source=source, course=course, assignment="week9")
    with pytest.raises(ValueError, match="visibility must be one of"):
        build_autograder(out, source=source, visibility="sometimes")
    released = tmp_path / "released"
    released.mkdir()
    nbformat.write(gs.released(), released / gs.NAME)
    with pytest.raises(ValueError, match="student release"):
        build_autograder(out, source=released)
    assert not out.exists() and not list(tmp_path.glob(".a.zip*"))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    add_gradescope_command(parser.add_subparsers(dest="command"))
    return parser


def test_command_line(tmp_path, capsys):
    parser = _parser()
    args = parser.parse_args(["gradescope", "build", "--out", "x.zip", "--visibility", "after_due_date"])
    assert args.visibility == "after_due_date" and args.course is None and args.assignment is None
    with pytest.raises(SystemExit):
        parser.parse_args(["gradescope", "build", "--out", "x.zip", "--visibility", "later"])
    with pytest.raises(SystemExit):
        parser.parse_args(["gradescope", "build", "--out", "x.zip", "--cell-timeout", "0"])
    source = _source(tmp_path)
    bad = parser.parse_args(["gradescope", "build", "--out", str(tmp_path / "a.zip"), "--source", str(source),
                             "--assignment", "week1"])  # fmt: skip
    assert bad.run(bad) == 2 and "--assignment needs --course" in capsys.readouterr().err
    good = parser.parse_args(["gradescope", "build", "--out", str(tmp_path / "a.zip"), "--source", str(source)])
    assert good.run(good) == 0 and (tmp_path / "a.zip").is_file()
    assert parser.parse_args(["gradescope", "run", "--root", "/x"]).root == Path("/x")


# --------------------------------------------------------------------------- pure parts


def test_stage_submission_copies_notebooks_only(tmp_path):
    submission = tmp_path / "submission"
    (submission / "hw" / ".ipynb_checkpoints").mkdir(parents=True)
    nbformat.write(gs.right(), submission / "hw" / gs.NAME)
    nbformat.write(gs.right(), submission / "hw" / ".ipynb_checkpoints" / "small-checkpoint.ipynb")
    (submission / "other").mkdir()
    nbformat.write(gs.right(), submission / "other" / gs.NAME)
    (submission / "notes.txt").write_text("hello")
    (submission / "link.ipynb").symlink_to(tmp_path)
    os.mkfifo(submission / "pipe.ipynb")
    staged = stage_submission(submission, tmp_path / "staged")
    assert [p.name for p in staged.notebooks] == [gs.NAME]
    why = dict(staged.ignored)
    assert why["notes.txt"] == "not a notebook (.ipynb)"
    assert why["link.ipynb"] == "a link, not a file"
    assert why["pipe.ipynb"] == "not a regular file"
    assert "checkpoint" in why["hw/.ipynb_checkpoints/small-checkpoint.ipynb"]
    assert "another file named small.ipynb" in why["other/small.ipynb"]


def _deep_chain(base: Path, levels: int) -> list[Path]:
    """Folders ``base/d/d/…`` ``levels`` deep, made one at a time (the deepest last)."""
    chain = [base]
    for _ in range(levels):
        chain.append(chain[-1] / "d")
        chain[-1].mkdir()
    return chain[1:]


def _remove_chain(chain: Sequence[Path]) -> None:
    """Removes what :func:`_deep_chain` made, deepest first: rmtree recurses and fails on 1,500 levels."""
    for folder in reversed(chain):
        for entry in folder.iterdir():
            if not entry.is_dir() or entry.is_symlink():
                entry.unlink()
        folder.rmdir()


def test_stage_submission_finds_notebooks_before_counting_other_files(tmp_path):
    """210 figures in a folder that sorts before the notebook's: the notebook is graded, the figures counted."""
    submission = tmp_path / "submission"
    (submission / "figures").mkdir(parents=True)
    for i in range(210):
        (submission / "figures" / f"fig{i:03d}.png").write_bytes(b"\x89PNG")
    (submission / "notebooks").mkdir()
    nbformat.write(gs.right(), submission / "notebooks" / gs.NAME)
    (submission / "README.md").write_text("hi")
    (submission / ".DS_Store").write_text("")
    staged = stage_submission(submission, tmp_path / "staged")
    assert [p.name for p in staged.notebooks] == [gs.NAME]
    assert staged.ignored == ()  # 212 other files: counted, not named one by one
    assert staged.skipped == ("212 other files were not read (not notebooks)",)
    course, week = _course()
    output = results_json([], course, week, ignored=staged.ignored, skipped=staged.skipped)["output"]
    assert "212 other files were not read (not notebooks)." in output.splitlines()


def test_stage_submission_walks_deep_folders_without_recursion(tmp_path):
    """A folder 1,500 deep: no RecursionError; notebooks down to MAX_DEPTH folders are found, the rest named as
    not searched."""
    submission = tmp_path / "submission"
    submission.mkdir()
    chain = _deep_chain(submission, 1500)
    try:
        nbformat.write(gs.right(), chain[-1] / "deepest.ipynb")
        nbformat.write(gs.right(), chain[MAX_DEPTH - 1] / "deep.ipynb")  # MAX_DEPTH folders down
        nbformat.write(gs.right(), chain[MAX_DEPTH] / "too-deep.ipynb")
        nbformat.write(gs.right(), submission / gs.NAME)
        staged = stage_submission(submission, tmp_path / "staged")
    finally:
        _remove_chain(chain)
    assert sorted(p.name for p in staged.notebooks) == ["deep.ipynb", gs.NAME]
    first = "/".join(["d"] * (MAX_DEPTH + 1))
    assert staged.skipped == (
        f"folders deeper than {MAX_DEPTH} levels were not searched (1 of them, the first {first}/)",
    )


def test_stage_submission_bounds_the_entries_it_looks_at(tmp_path, monkeypatch):
    """Thousands of files (a virtualenv zipped along) stop the walk at MAX_ENTRIES, having looked at no more;
    the folders a notebook may be graded from come before the hidden ones, so the notebook is still found."""
    monkeypatch.setattr(staging, "MAX_ENTRIES", 100)
    submission = tmp_path / "submission"
    (submission / ".venv" / "lib").mkdir(parents=True)
    for i in range(1000):
        (submission / ".venv" / "lib" / f"m{i}.py").write_text("")
    (submission / "hw").mkdir()
    nbformat.write(gs.right(), submission / "hw" / gs.NAME)
    looked_at = 0
    real_scandir = os.scandir

    def counting_scandir(path):
        def entries(listing):
            nonlocal looked_at
            with listing:
                for entry in listing:
                    looked_at += 1
                    yield entry

        class Listing:
            def __init__(self):
                self.listing = real_scandir(path)

            def __enter__(self):
                return entries(self.listing)

            def __exit__(self, *exc):
                self.listing.close()

        return Listing()

    monkeypatch.setattr(staging.os, "scandir", counting_scandir)
    staged = stage_submission(submission, tmp_path / "staged")
    monkeypatch.undo()
    assert [p.name for p in staged.notebooks] == [gs.NAME]
    assert looked_at <= 101  # the cap, and the one entry that showed it was reached
    assert staged.skipped[-1] == (
        "only the first 100 files and folders were looked at: the rest of the submission was not searched"
    )
    assert staged.skipped[0].endswith("other files were not read (not notebooks)")


def test_stage_submission_caps_the_notebooks_it_copies(tmp_path, monkeypatch):
    monkeypatch.setattr(staging, "MAX_NOTEBOOKS", 2)
    monkeypatch.setattr(staging, "MAX_LISTED", 2)
    submission = tmp_path / "submission"
    submission.mkdir()
    for name in ("a", "b", "c", "d", "e"):
        nbformat.write(gs.right(), submission / f"{name}.ipynb")
    staged = stage_submission(submission, tmp_path / "staged")
    assert [p.name for p in staged.notebooks] == ["a.ipynb", "b.ipynb"]
    assert [name for name, _ in staged.ignored] == ["c.ipynb", "d.ipynb"]
    assert staged.ignored[0][1] == "more than 2 notebooks were handed in; this one was not read"
    assert staged.skipped == ("1 more .ipynb file was not graded (only the first 2 are named)",)
    size = (submission / "a.ipynb").stat().st_size
    monkeypatch.setattr(staging, "MAX_NOTEBOOKS", 50)
    monkeypatch.setattr(staging, "MAX_STAGED_BYTES", 2 * size + 1)
    staged = stage_submission(submission, tmp_path / "staged-bytes")
    assert [p.name for p in staged.notebooks] == ["a.ipynb", "b.ipynb"]
    assert "already fill" in staged.ignored[0][1]
    assert not (tmp_path / "staged-bytes" / "c.ipynb").exists()


def _row(exercise: str, status: str, points: float = 0.0, **fields) -> GradeRow:
    return GradeRow("student", "small", exercise, status, points, 1.0, **fields)


def _course(due: datetime | None = None) -> tuple[Course, Assignment]:
    points = {("small", "max-queries"): 2.0, ("small", "icu-sensitivity"): 1.0, ("small", "exact-tail-level"): 1.0}
    week = Assignment("week1", "Week 1", ("small",), due, points)
    extension = {"ada": {"week1": datetime.fromisoformat("2026-10-06T23:59:00-04:00")}}
    return Course((week,), LatePolicy(penalty_per_day=0.1, max_penalty=0.5), extension), week


def test_results_json_scores_penalties_and_feedback():
    course, week = _course(datetime.fromisoformat(DUE))
    rows = [
        _row("max-queries", "passed", 1.0, message="K = 538"),
        _row("icu-sensitivity", "failed", message="30 cells", mistake="counted rows", hint="one patient, one row"),
        _row("exact-tail-level", "errored", message="your answer cell raised NameError", integrity="graded as small"),
    ]
    late = datetime.fromisoformat("2026-10-07T12:00:00-04:00")  # 1 day 12 h 1 min late: 2 started days
    result = results_json(rows, course, week, submitted_at=late, ignored=[("notes.txt", "not a notebook (.ipynb)")])
    _check_spec(result)
    tests = _by_name(result)
    assert list(tests) == ["small · max-queries", "small · icu-sensitivity", "small · exact-tail-level"]
    assert tests["small · max-queries"]["score"] == 2.0 and tests["small · max-queries"]["max_score"] == 2.0
    failed = tests["small · icu-sensitivity"]
    assert failed["status"] == "failed" and "Mistake: counted rows" in failed["output"]
    assert "Hint: one patient, one row" in failed["output"]
    assert tests["small · exact-tail-level"]["output"].startswith("(errored)")
    assert result["score"] == pytest.approx(2.0 - 0.2 * 4)
    assert "2 started days" in result["output"] and "Ignored: notes.txt" in result["output"]
    assert "Note: graded as small" in result["output"]
    extended = results_json(rows, course, week, student="ada", submitted_at=late)
    assert extended["score"] == pytest.approx(2.0 - 0.1 * 4)
    missing = results_json([], course, week, submitted_at=late, visibility="after_due_date")
    assert missing["score"] == 0 and all(t["status"] == "failed" for t in missing["tests"])
    assert "Upload your small.ipynb" in missing["output"]
    assert {t["visibility"] for t in missing["tests"]} == {"after_due_date"}
    assert "late" not in missing["output"]  # nothing handed in, nothing late
    assert results.test_name("01_laplace_utility", "exact-tail-level") == "01 · exact-tail-level"


JOSE_NFC, JOSE_NFD = "jos\u00e9", "jose\u0301"


def test_extension_is_keyed_by_the_sid_alone():
    """A name or e-mail a student chose never grants an extension, even one equal to another student's key; the
    submitter's sid does, compared after NFC normalisation of both sides."""
    course, week = _course()
    due = datetime.fromisoformat("2026-10-06T23:59:00-04:00")
    course = Course(course.assignments, course.late, {"ada": {"week1": due}, JOSE_NFD: {"week1": due}})

    def student(**user) -> str:
        return autograder._student_for(course, week, autograder._roster_ids({"users": [user]}))

    assert student(name="ada", email="ada@example.edu", id=7, sid="s-2") == STUDENT
    assert student(name="ada", email="ada@example.edu", sid=None) == STUDENT
    assert student(name="A Student", email="x@example.edu", sid="ada") == "ada"
    assert student(name="José", sid=JOSE_NFC) == JOSE_NFD  # the course file's key, as it is written
    assert student(sid="Ada") == student(sid="ada ") == STUDENT  # exact: no case or space folding
    nfc_course = Course(course.assignments, course.late, {JOSE_NFC: {"week1": due}})
    ids = autograder._roster_ids({"users": [{"sid": JOSE_NFD}]})
    assert autograder._student_for(nfc_course, week, ids) == JOSE_NFC
    group = {"users": [{"name": "ada", "sid": "s-2"}, {"name": "B", "sid": "ada"}, "junk", {"sid": True}]}
    assert autograder._roster_ids(group) == ["s-2", "ada"]
    assert autograder._roster_ids({"users": [{"sid": 12345}]}) == ["12345"]
    assert autograder._roster_ids({"users": "ada"}) == autograder._roster_ids({}) == []


def test_log_shows_the_course_points():
    """The log's points are the result's (the course's), not the notebook's: 1/1 in the notebook is 2/2 here."""
    course, week = _course()
    rows = [
        _row("max-queries", "passed", 1.0),
        _row("icu-sensitivity", "errored"),
        GradeRow("student", "notes", "-", "invalid", 0.0, 0.0, message="not a gradable notebook"),
    ]
    result = results_json(rows, course, week, skipped=["212 other files were not read (not notebooks)"])
    lines = _log_lines(result, rows, week, ["212 other files were not read (not notebooks)"])
    assert "  small · max-queries: passed 2/2" in lines
    assert "  small · icu-sensitivity: errored 0/1" in lines
    assert "  small · exact-tail-level: missing 0/1" in lines
    assert "  not graded: notes.ipynb: not a gradable notebook" in lines
    assert lines[0] == "autograder: 212 other files were not read (not notebooks)"
    assert lines[-1] == "autograder: score 2 of 4 (the course's points)" and result["score"] == 2.0


@pytest.mark.skipif(os.geteuid() != 0, reason="killing another user's processes needs root")
def test_kill_user_processes_leaves_none(tmp_path):
    uid = unused_user_id()  # an id of this test's own: a grader beside it (another make test) runs under others
    left = Path(tempfile.gettempdir()) / f"dpcourse-ag-left-{os.getpid()}"
    script = f"touch {left}; sleep 300 & (setsid sleep 300 &) ; sleep 300"
    shell = subprocess.Popen(["sh", "-c", script], user=uid, group=65534, extra_groups=[], start_new_session=True,
                             cwd="/")  # fmt: skip
    time.sleep(0.5)
    assert kill_user_processes(uid) >= 3
    assert shell.wait(timeout=10) == -9
    assert left.exists() and _remove_user_files(uid, [str(left.parent)]) >= 1
    assert not left.exists()
    assert _user_pids(uid) == []
    with pytest.raises(ValueError, match="uid must be"):
        kill_user_processes(0)


# --------------------------------------------------------------------------- run_autograder, as Gradescope runs it


def test_fails_closed_without_sandbox_or_user(tmp_path):
    """No bubblewrap and no usable unprivileged user: nothing of the submission runs, and the result says so."""
    root = _gradescope(tmp_path, _zip(tmp_path), {gs.NAME: gs.right()}, _metadata())
    result = _run(root, DPCOURSE_BWRAP="/nonexistent", DPCOURSE_UNCONFINED_USER="no-such-user-dpcourse")
    assert result["score"] == 0 and result["tests"] == []
    assert "could not grade" in result["output"] and "not a judgement of your work" in result["output"]


def test_a_grader_that_cannot_start_still_leaves_a_result(tmp_path):
    """A broken image (no Python where setup.sh put it): run_autograder itself writes the result."""
    root = _gradescope(tmp_path, _zip(tmp_path), {gs.NAME: gs.right()}, _metadata())
    result = _run(root, DPCOURSE_AUTOGRADER_PYTHON=str(tmp_path / "no-python"))
    assert result["score"] == 0 and result["tests"] == [] and "autograder itself failed" in result["output"]


@needs_kernel_sandbox  # without a sandbox for kernels it fails closed before reading the upload (tested above)
def test_empty_and_unreadable_submissions_say_what_to_upload(world_root):
    root = _gradescope(world_root, _zip(world_root), {gs.NAME: "{ not a notebook", "readme.md": "hi"}, None)
    result = _run(root)
    assert result["score"] == 0 and {t["status"] for t in result["tests"]} == {"failed"}
    assert "Missing: no gradable notebook small.ipynb" in result["output"]
    assert "Not graded: small.ipynb: not a gradable notebook" in result["output"]
    assert "Ignored: readme.md: not a notebook (.ipynb)" in result["output"]
    assert stat.S_IMODE((root / "source").stat().st_mode) == 0o700
    user = _user()
    if os.geteuid() == 0 and user is not None:  # what the students' user may do in this layout

        def as_user(*command: str) -> int:
            return subprocess.run(list(command), user=user.pw_uid, group=user.pw_gid, extra_groups=[],
                                  capture_output=True, check=False).returncode  # fmt: skip

        assert as_user("cat", str(root / "submission" / "readme.md")) == 0
        assert as_user("cat", str(root / "source" / "notebooks" / gs.NAME)) != 0
        assert as_user("sh", "-c", f"echo forged > {root / 'results' / 'results.json'}") != 0
        assert as_user("touch", str(root / "results" / "other")) != 0


@needs_kernel_sandbox
def test_honest_submission_with_course_file_extension_and_visibility(tmp_path):
    archive = _zip(tmp_path, course=COURSE, assignment="week1", visibility="after_due_date")
    late = _metadata(created_at="2026-10-07T12:00:00-04:00", sid="ada")  # 12 h after ada's extension
    root = _gradescope(tmp_path, archive, {gs.NAME: gs.right()}, late)
    result = _run(root)
    tests = _by_name(result)
    assert all(t["status"] == "passed" for t in tests.values()), result
    assert tests["small · max-queries"]["score"] == 2.0
    assert result["score"] == pytest.approx(4.0 - 0.1 * 4.0)
    assert result["visibility"] == "after_due_date" and {t["visibility"] for t in tests.values()} == {"after_due_date"}
    assert "1 started day" in result["output"] and "Graded: small.ipynb" in result["output"]


@needs_kernel_sandbox
def test_wrong_and_misnamed_submissions(tmp_path):
    wrong = gs.with_answers(gs.right(), **{"icu_sensitivity": gs.WRONG["icu_sensitivity"]})
    files = {"my homework (1).ipynb": wrong, "scratch/broken.ipynb": "{"}
    root = _gradescope(tmp_path, _zip(tmp_path), files, _metadata())
    result = _run(root)
    tests = _by_name(result)
    assert tests["small · max-queries"]["status"] == "passed"
    failed = tests["small · icu-sensitivity"]
    assert failed["status"] == "failed" and failed["score"] == 0 and failed["output"]
    assert "icu_sensitivity = 10" not in failed["output"]
    assert result["score"] == 2.0
    assert "Note: graded as small" in result["output"]
    assert "Not graded: broken.ipynb" in result["output"]


@pytest.mark.parametrize("confined", [True, False], ids=["bubblewrap", "unprivileged-user"])
def test_figures_and_a_deep_folder_do_not_hide_the_notebook(request, confined):
    """The honest submission of issue #38: 210 figures in a folder that sorts first, a folder 1,500 deep; the
    notebook is graded in full and the output says what was only counted and what was not searched. (Its answer
    cell is also hostile, :func:`_hostile_layout`: one run per sandbox kind for the tests that read it.)"""
    run = request.getfixturevalue("hostile_in_bubblewrap" if confined else "hostile_as_the_unprivileged_user")
    result, log = run["result"], run["log"]
    assert result["score"] == 3.0 and {t["status"] for t in result["tests"]} == {"passed"}, result
    lines = result["output"].splitlines()
    assert "Graded: small.ipynb" in lines
    assert "210 other files were not read (not notebooks)." in lines
    assert any(line.startswith(f"Folders deeper than {MAX_DEPTH} levels were not searched") for line in lines)
    assert "autograder: 210 other files were not read (not notebooks)" in log


COURSE_WITH_NAMES = (
    COURSE
    + f"""
[extensions."{JOSE_NFD}"]
week1 = 2026-10-06T23:59:00-04:00
"""
)


@needs_kernel_sandbox
def test_a_chosen_name_equal_to_an_extension_key_grants_nothing(tmp_path):
    """Gradescope lets a student choose their name (and e-mail): calling oneself "ada" gets ada's extension no
    more than any other string; the sid from the roster does, the course file's key written in NFD."""
    late = "2026-10-07T12:00:00-04:00"  # 1 day 12 h 1 min after the due time, 12 h 1 min after the extension's
    archive = _zip(tmp_path, course=COURSE_WITH_NAMES, assignment="week1")
    impostor = _metadata(late, "ada@example.edu", name="ada", sid="s-2")
    result, log = _run_logged(_gradescope(tmp_path / "impostor", archive, {gs.NAME: gs.right()}, impostor))
    assert result["score"] == pytest.approx(4.0 - 0.2 * 4.0) and "2 started days" in result["output"]
    assert "  small · max-queries: passed 2/2" in log  # the course's points, as in the result (the notebook's are 1)
    assert f"autograder: score {result['score']:g} of 4 (the course's points)" in log
    jose = _metadata(late, "someone@example.edu", name="José", sid=JOSE_NFC)
    result = _run(_gradescope(tmp_path / "jose", archive, {gs.NAME: gs.right()}, jose))
    assert result["score"] == pytest.approx(4.0 - 0.1 * 4.0) and "1 started day" in result["output"]


HOSTILE = """
import json, os, subprocess, sys
K_max = 538
target, source, spy = {target!r}, {source!r}, {spy!r}

def note(name, text):
    try:
        with open(os.path.join(spy, name), "w") as handle:
            handle.write(text)
    except OSError:
        pass

forged = json.dumps({{"score": 1000, "output": "forged", "tests": []}})
try:
    with open(target, "w") as handle:
        handle.write(forged)
    note("results", "written")
except OSError:
    note("results", "refused")
try:
    with open(source) as handle:
        note("source", "read: " + handle.read(20))
except OSError:
    note("source", "refused")
loop = "import time\\nfor _ in range(1200):\\n    try:\\n        open(%r, 'w').write(%r)\\n    except OSError:\\n" \\
    "        pass\\n    time.sleep(0.05)\\n" % (target, forged)
subprocess.Popen([sys.executable, "-c", loop, {marker!r}], start_new_session=True, stdin=subprocess.DEVNULL,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
"""


def _hostile_layout(tmp: Path, *, kill_parent: bool) -> tuple[Path, Path]:
    """Gradescope's layout for the shared runs: a submission whose answer cell is :data:`HOSTILE` (then, with
    ``kill_parent``, :data:`KILLER`), in ``notebooks/`` beside 210 figures in a folder that sorts first; the root
    and the spy folder. The caller adds the 1,500-deep folder (:func:`_deep_chain`) for the run."""
    root_guess, spy = tmp / "autograder", tmp / "spy"
    spy.mkdir()
    spy.chmod(0o777)
    code = HOSTILE.format(
        target=str(root_guess / "results" / "results.json"),
        source=str(root_guess / "source" / "notebooks" / gs.NAME),
        spy=str(spy),
        marker=MARKER,
    )
    if kill_parent:
        code += "\n" + KILLER
    files: dict[str, object] = {f"figures/fig{i:03d}.png": "png" for i in range(210)}
    files["notebooks/" + gs.NAME] = gs.with_answers(gs.right(), max_queries=code)
    root = _gradescope(tmp, _zip(tmp), files, _metadata())
    assert root == root_guess
    return root, spy


def _shared_run(tmp: Path, *, kill_parent: bool, wrapper: Sequence[str] = (), **env: str) -> dict:
    """One run of :func:`_hostile_layout`'s submission with a folder 1,500 deep, read by several tests: its result,
    log, root and spy folder, whether its result was left untouched, and the hostile processes left after it."""
    root, spy = _hostile_layout(tmp, kill_parent=kill_parent)
    chain = _deep_chain(root / "submission", 1500)
    try:
        result, log = _run_logged(root, wrapper, **env)
    finally:
        _remove_chain(chain)
    time.sleep(2.0)  # a process left behind would have rewritten the result by now
    written = json.loads((root / "results" / "results.json").read_text())
    return {"result": result, "log": log, "root": root, "spy": spy, "rewritten": written != result,
            "left": _hostile_processes()}  # fmt: skip


def _assert_untouched(run: dict) -> None:
    assert run["result"]["score"] == 3.0 and "forged" not in run["result"]["output"]
    assert not run["rewritten"] and run["left"] == []


@pytest.fixture(scope="module")
def hostile_in_bubblewrap(tmp_path_factory):
    """The shared run in bubblewrap: the submission that writes the result, reads the source, leaves a process
    behind and kills its parent, beside 210 figures and a folder 1,500 deep."""
    if not BWRAP:
        pytest.skip("bubblewrap does not work here")
    return _shared_run(tmp_path_factory.mktemp("hostile-bwrap"), kill_parent=True)


@pytest.fixture(scope="module")
def hostile_as_the_unprivileged_user():
    """The shared run as the unprivileged user (no bubblewrap: Gradescope's usual case), its parent left alive,
    while a process of the user's fixed id (another container's kernel) sleeps beside it: whether it outlived
    the run is ``neighbour_survived``."""
    found = _for_others()
    if isinstance(found, str):
        pytest.skip(found)
    folder = Path(tempfile.mkdtemp(prefix="dpcourse-ag-test-"))
    folder.chmod(0o755)  # other users may enter it (pytest's tmp_path is 0700 root): permissions are what is tested
    user = pwd.getpwnam(DEFAULT_USER)
    neighbour = subprocess.Popen(["sleep", "600"], user=user.pw_uid, group=user.pw_gid, extra_groups=[], cwd="/")
    try:
        run = _shared_run(folder, kill_parent=False, wrapper=UNPRIVILEGED, DPCOURSE_BWRAP="/nonexistent")
        run["neighbour_survived"] = neighbour.poll() is None
        yield run
    finally:
        neighbour.kill()
        neighbour.wait()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def killer_as_the_unprivileged_user():
    """A run as the unprivileged user of a submission that kills its parent (the worker), under a user id chosen
    here: the result, and the processes of that id left after it."""
    found = _for_others()
    if isinstance(found, str):
        pytest.skip(found)
    folder = Path(tempfile.mkdtemp(prefix="dpcourse-ag-test-"))
    folder.chmod(0o755)
    try:
        killer = gs.with_answers(gs.right(), max_queries=KILLER)
        root = _gradescope(folder, _zip(folder), {gs.NAME: killer}, _metadata())
        uid = unused_user_id()  # the run's own id, chosen here to be looked at afterwards
        result = _run(root, UNPRIVILEGED, DPCOURSE_BWRAP="/nonexistent", DPCOURSE_UNCONFINED_UID=str(uid))
        yield {"result": result, "left": _user_pids(uid)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_hostile_submission_in_bubblewrap_cannot_touch_the_result(hostile_in_bubblewrap):
    _assert_untouched(hostile_in_bubblewrap)


#: ``wrapper`` for :func:`_run`: the kernel runs as the unprivileged user, with whatever :func:`_for_others` found.
UNPRIVILEGED = ("<as the unprivileged user>",)


@functools.cache
def _for_others() -> tuple[list[str], Path, Path] | str:
    """How the unprivileged user runs the grader's worker: a command prefix, a Python and a checkout; or why not.

    This Python with this checkout where that user can reach them; else (a clone in a 0700 folder) a readable copy
    of the environment and of the checkout (``ordinary_python.py``), so that the tests never assume where the
    checkout lives."""
    found = _python_for_others()
    if not isinstance(found, str):
        return found, Path(sys.executable), ROOT
    if os.geteuid() != 0 or _user() is None:
        return found
    python = readable_environment()
    again = _python_for_others(python, copied_checkout(python))
    return again if isinstance(again, str) else (again, python, copied_checkout(python))


@functools.cache
def _python_for_others(python_path: Path | None = None, checkout: Path = ROOT) -> list[str] | str:
    """A command prefix under which the unprivileged user can run this Python (or ``python_path``) with the
    dpcourse of ``checkout``, or why there is none.

    Where the Python lives below a folder only root may enter (pyenv under 0700 /root), the prefix runs the
    command in a private mount namespace whose copy of that folder is an 0755 tmpfs holding only the Python's
    own sub-folder: the machine's folders keep their modes.
    """
    if os.geteuid() != 0:
        return "the unprivileged user needs a root grader"
    user = _user()
    if user is None:
        return f"{DEFAULT_USER} cannot be created here"
    python = Path(python_path or sys.executable).resolve()
    closed = next((p for p in reversed(python.parents) if not p.stat().st_mode & stat.S_IXOTH), None)
    prefix: list[str] = []
    if closed is not None and shutil.which("unshare") is not None:
        child = python.relative_to(closed).parts[0]
        script = (
            'set -e; keep=$(mktemp -d); mount --bind "$1/$2" "$keep"; mount -t tmpfs -o mode=0755,size=1m tmpfs "$1"; '
            'mkdir "$1/$2"; mount --bind "$keep" "$1/$2"; umount "$keep"; rmdir "$keep"; shift 2; exec "$@"'
        )
        prefix = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(closed), child]
    drop = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups"]
    check = [*prefix, *drop, str(python_path or sys.executable), "-c", "import dpcourse.classroom.sandbox.worker"]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(checkout)}
    done = subprocess.run(check, env=env, cwd="/", capture_output=True, timeout=120, check=False)
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace")[-300:]
        return f"{DEFAULT_USER} cannot run {python_path or sys.executable} with {checkout}'s dpcourse here: {why}"
    return prefix


def test_submission_that_kills_its_parent_still_gets_a_result(request):
    """In bubblewrap the kernel's parent is the sandbox's process 1, which ignores signals from inside: graded as
    usual. Unconfined it is the worker: the run ends, every exercise errored, and a result is written."""
    if BWRAP:
        result = request.getfixturevalue("hostile_in_bubblewrap")["result"]
        assert result["score"] == 3.0 and {t["status"] for t in result["tests"]} == {"passed"}
    else:
        _assert_worker_died(request.getfixturevalue("killer_as_the_unprivileged_user")["result"])


KILLER = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nK_max = 538"


def _assert_worker_died(result: dict) -> None:
    """Unconfined, the kernel's parent is the worker: killing it ends the run, every exercise errored, a result."""
    assert result["score"] == 0 and all("(errored)" in t["output"] for t in result["tests"])
    assert all("stopped before the end" in t["output"] for t in result["tests"])


def test_hostile_submissions_as_the_unprivileged_user(
    hostile_as_the_unprivileged_user, killer_as_the_unprivileged_user
):
    """Gradescope's usual case: no bubblewrap, the kernel runs as setup.sh's user, the grader as root."""
    _assert_untouched(hostile_as_the_unprivileged_user)
    spy = hostile_as_the_unprivileged_user["spy"]
    assert (spy / "results").read_text() == "refused" and (spy / "source").read_text() == "refused"
    _assert_worker_died(killer_as_the_unprivileged_user["result"])
    assert killer_as_the_unprivileged_user["left"] == []


def test_a_run_counts_and_kills_the_processes_of_its_own_user_id_alone(hostile_as_the_unprivileged_user):
    """Containers of one image have its user's id in common on one kernel, and a container may share the host's
    processes (buildah's chroot isolation): each run gets an id of its own, whose processes alone count against
    its RLIMIT_NPROC and are killed after it. Here a process of the user's fixed id stands for another
    container's kernel (or the host's own user of that id): it outlives the run beside it, while the process the
    submission left behind does not."""
    run = hostile_as_the_unprivileged_user
    assert run["result"]["score"] == 3.0 and {t["status"] for t in run["result"]["tests"]} == {"passed"}
    assert run["neighbour_survived"], "the run's clean-up killed a process that was not its own"
    assert run["left"] == []


# --------------------------------------------------------------------------- the workbook's own notebooks


@pytest.mark.slow
@pytest.mark.timeout(1200)
@needs_kernel_sandbox
def test_real_notebooks_solutions_score_full_marks(tmp_path):
    archive = build_autograder(tmp_path / "autograder.zip", source=ROOT / "notebooks")
    solutions = {p.name: nbformat.read(p, as_version=4) for p in sorted((ROOT / "notebooks").glob("*.ipynb"))}
    assert len(solutions) == 6
    root = _gradescope(tmp_path, archive, solutions, _metadata())
    result = _run(root)
    failed = [t for t in result["tests"] if t["status"] != "passed"]
    assert not failed, failed
    assert result["score"] == pytest.approx(sum(t["max_score"] for t in result["tests"]))
    assert {t["name"][:2] for t in result["tests"]} == {"01", "02", "03", "04", "05", "06"}
    # the written answers (issue 42) are marked by hand, never by the autograder: no test, and the output says so
    written = ("free-bottoms", "alg3-broken-step", "pmw-privacy")
    assert not [t for t in result["tests"] if t["name"].endswith(written)]
    assert all(f"{name} is marked by hand by your instructor" in result["output"] for name in written), result["output"]


# setup.sh in a real image: tests/classroom/test_autograder_image.py (buildah on a debootstrap base)
