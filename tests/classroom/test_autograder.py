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

from dpcourse.classroom import autograder, sandbox
from dpcourse.classroom.autograder import (
    CONFIG,
    DEFAULT_USER,
    VISIBILITIES,
    add_gradescope_command,
    build_autograder,
    results_json,
    stage_submission,
)
from dpcourse.classroom.course import Assignment, Course, LatePolicy
from dpcourse.classroom.reports import GradeRow
from dpcourse.classroom.sandbox import SandboxUnavailable, choose_sandbox, kill_user_processes, unused_user_id
from tests.classroom import grading_scenarios as gs

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


def _metadata(created_at: str = "2026-10-05T20:00:00-04:00", email: str = "bob@example.edu") -> dict:
    """submission_metadata.json with the fields Gradescope documents (the ones read here and some others)."""
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
        "users": [{"email": email, "id": 1234, "name": "A Student"}],
        "previous_submissions": [],
    }


def _run(root: Path, wrapper: Sequence[str] = (), **env: str) -> dict:
    if not wrapper and os.geteuid() == 0 and not (BWRAP and "DPCOURSE_BWRAP" not in env):
        # no bubblewrap (missing, hidden or refused): the kernel runs as the unprivileged user, as on Gradescope,
        # and needs a Python that user can run
        others = _python_for_others()
        if isinstance(others, str):
            pytest.skip(others)
        wrapper = others
    environment = {
        **os.environ,
        "DPCOURSE_AUTOGRADER_ROOT": str(root),
        "DPCOURSE_AUTOGRADER_PYTHON": sys.executable,
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
    return result


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
    assert "package/pyproject.toml" in names and "package/dpcourse/classroom/grade.py" in names
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
    assert autograder.test_name("01_laplace_utility", "exact-tail-level") == "01 · exact-tail-level"


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
    assert left.exists() and sandbox._remove_user_files(uid, [str(left.parent)]) >= 1
    assert not left.exists()
    assert sandbox._user_pids(uid) == []
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
    late = _metadata(created_at="2026-10-07T12:00:00-04:00", email="ada@example.edu")  # 12 h after ada's extension
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


def _hostile_run(tmp: Path, wrapper: Sequence[str] = (), **env: str) -> tuple[dict, Path]:
    root_guess, spy = tmp / "autograder", tmp / "spy"
    spy.mkdir()
    spy.chmod(0o777)
    code = HOSTILE.format(
        target=str(root_guess / "results" / "results.json"),
        source=str(root_guess / "source" / "notebooks" / gs.NAME),
        spy=str(spy),
        marker=MARKER,
    )
    root = _gradescope(tmp, _zip(tmp), {gs.NAME: gs.with_answers(gs.right(), max_queries=code)}, _metadata())
    assert root == root_guess
    return _run(root, wrapper, **env), root


def _assert_untouched(result: dict, root: Path) -> None:
    assert result["score"] == 3.0 and "forged" not in result["output"]
    time.sleep(2.0)  # a process left behind would have rewritten it by now
    assert json.loads((root / "results" / "results.json").read_text()) == result
    assert _hostile_processes() == []


@pytest.mark.skipif(not BWRAP, reason="bubblewrap does not work here")
def test_hostile_submission_in_bubblewrap_cannot_touch_the_result(tmp_path):
    result, root = _hostile_run(tmp_path)
    _assert_untouched(result, root)


@functools.cache
def _python_for_others() -> list[str] | str:
    """A command prefix under which the unprivileged user can run this Python, or why there is none.

    Where the Python lives below a folder only root may enter (pyenv under 0700 /root), the prefix runs the
    command in a private mount namespace whose copy of that folder is an 0755 tmpfs holding only the Python's
    own sub-folder: the machine's folders keep their modes.
    """
    if os.geteuid() != 0:
        return "the unprivileged user needs a root grader"
    user = _user()
    if user is None:
        return f"{DEFAULT_USER} cannot be created here"
    python = Path(sys.executable).resolve()
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
    check = [*prefix, *drop, sys.executable, "-c", "import dpcourse.classroom.worker"]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(check, env=env, cwd="/", capture_output=True, timeout=120, check=False)
    if done.returncode != 0:
        return f"{DEFAULT_USER} cannot run {sys.executable} here: {done.stderr.decode(errors='replace')[-300:]}"
    return prefix


@needs_kernel_sandbox
def test_submission_that_kills_its_parent_still_gets_a_result(tmp_path):
    root = _gradescope(tmp_path, _zip(tmp_path), {gs.NAME: gs.with_answers(gs.right(), max_queries=KILLER)}, None)
    result = _run(root)
    if BWRAP:  # the kernel's parent is the sandbox's process 1, which ignores signals from inside: graded as usual
        assert result["score"] == 3.0 and {t["status"] for t in result["tests"]} == {"passed"}
    else:
        _assert_worker_died(result)


KILLER = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nK_max = 538"


def _assert_worker_died(result: dict) -> None:
    """Unconfined, the kernel's parent is the worker: killing it ends the run, every exercise errored, a result."""
    assert result["score"] == 0 and all("(errored)" in t["output"] for t in result["tests"])
    assert all("stopped before the end" in t["output"] for t in result["tests"])


def test_hostile_submissions_as_the_unprivileged_user(world_root):
    """Gradescope's usual case: no bubblewrap, the kernel runs as setup.sh's user, the grader as root."""
    wrapper = _python_for_others()
    if isinstance(wrapper, str):
        pytest.skip(wrapper)
    result, root = _hostile_run(world_root, wrapper, DPCOURSE_BWRAP="/nonexistent")
    _assert_untouched(result, root)
    spy = world_root / "spy"
    assert (spy / "results").read_text() == "refused" and (spy / "source").read_text() == "refused"
    again = world_root / "again"
    again.mkdir()
    killer = gs.with_answers(gs.right(), max_queries=KILLER)
    root = _gradescope(again, _zip(again), {gs.NAME: killer}, _metadata())
    uid = unused_user_id()  # the run's own id, chosen here to be looked at afterwards
    _assert_worker_died(_run(root, wrapper, DPCOURSE_BWRAP="/nonexistent", DPCOURSE_UNCONFINED_UID=str(uid)))
    assert sandbox._user_pids(uid) == []


def test_a_run_counts_and_kills_the_processes_of_its_own_user_id_alone(world_root):
    """Containers of one image have its user's id in common on one kernel, and a container may share the host's
    processes (buildah's chroot isolation): each run gets an id of its own, whose processes alone count against
    its RLIMIT_NPROC and are killed after it. Here a process of the user's fixed id stands for another
    container's kernel (or the host's own user of that id): it outlives the run beside it."""
    wrapper = _python_for_others()
    if isinstance(wrapper, str):
        pytest.skip(wrapper)
    user = pwd.getpwnam(DEFAULT_USER)
    neighbour = subprocess.Popen(["sleep", "600"], user=user.pw_uid, group=user.pw_gid, extra_groups=[], cwd="/")
    try:
        root = _gradescope(world_root, _zip(world_root), {gs.NAME: gs.right()}, _metadata())
        result = _run(root, wrapper, DPCOURSE_BWRAP="/nonexistent")
        assert result["score"] == 3.0 and {t["status"] for t in result["tests"]} == {"passed"}
        assert neighbour.poll() is None, "the run's clean-up killed a process that was not its own"
    finally:
        neighbour.kill()
        neighbour.wait()


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


# setup.sh in a real image: tests/classroom/test_autograder_image.py (buildah on a debootstrap base)
