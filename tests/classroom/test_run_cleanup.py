"""Nothing of a submission outlives its run (issue 38, class 8): a process that left the run's process group and
session (a double fork, ``setsid``, SIGTERM ignored) is ended with the run through the run's control group.

As root the grader makes a control group per run and empties it when the run ends (``cgroup.kill``, or freezing
it and killing each process until it is empty). As an ordinary user, or where ``/sys/fs/cgroup`` is read-only,
no group can be made: with bubblewrap the pid namespace still ends everything; unconfined, a detached process can
outlive the run (the README says so), and these tests skip.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dpcourse.classroom.grading import reports
from dpcourse.classroom.sandbox.limits import Limits, _ControlGroup
from tests.classroom.grading_scenarios import EXERCISES, NAME, right, sandbox_problem, with_answers, write_course
from tests.classroom.ordinary_python import (
    copied_checkout,
    grade_command,
    readable_environment,
    venv_imports_another_checkout,
)

ROOT = Path(__file__).resolve().parents[2]

#: Starts a process in a session of its own that ignores SIGTERM and SIGHUP and whose command line holds the
#: token; passes only once that process has started.
DAEMON = """import os, signal, sys
r, w = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        os.write(w, b"started")
        os.execv(sys.executable, [sys.executable, "-c",
                 "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(900)", {token!r}])
    os._exit(0)
os.close(w)
K_max = 538 if os.read(r, 100) == b"started" else -1"""


def _alive(token: str) -> list[int]:
    """The live processes whose command line holds ``token``."""
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if token.encode() not in Path(entry.path, "cmdline").read_bytes():
                continue
            state = Path(entry.path, "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


def _eventually_none(token: str, seconds: float = 5) -> list[int]:
    deadline = time.monotonic() + seconds
    while (alive := _alive(token)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return alive


@pytest.fixture
def token():
    token = f"dpcourse-detached-{secrets.token_hex(8)}"
    yield token
    for pid in _alive(token):  # never leave one behind, whatever the test found
        try:
            os.kill(pid, 9)
        except OSError:
            pass


def _needs_a_control_group() -> None:
    group = _ControlGroup(Limits())
    try:
        if not group.paths:
            pytest.skip("no control group can be made here (not root, or a read-only /sys/fs/cgroup)")
    finally:
        group.remove()


def test_ending_a_group_kills_a_detached_grandchild_and_leaves_it_empty(token):
    _needs_a_control_group()
    group = _ControlGroup(Limits())
    try:
        starter = DAEMON.format(token=token) + "\nprint(K_max, flush=True)"
        done = subprocess.run([sys.executable, "-c", starter], preexec_fn=group.enter, capture_output=True,
                              text=True, timeout=60, check=False)  # fmt: skip
        assert done.stdout.strip() == "538", done.stderr
        assert _alive(token) and group.pids()  # the grandchild outlived its parent, in the group
        assert group.end_processes() == 0
        assert not group.pids() and not _eventually_none(token)
    finally:
        group.remove()
    assert not any(path.exists() for path in group.paths)


def test_without_a_control_group_there_is_nothing_to_end():
    group = _ControlGroup.__new__(_ControlGroup)
    group.paths, group.caps_processes = [], False
    assert group.end_processes() == 0 and group.pids() == set()


def _grade(
    tmp_path: Path, token: str, *extra: str, environment: dict[str, str] | None = None, copied: bool = False
) -> list:
    paths = write_course(tmp_path, {"alice": {NAME: with_answers(right(), max_queries=DAEMON.format(token=token))}})
    report = tmp_path / "grades.csv"
    argv = ["grade", str(paths[0]), "--source", str(tmp_path / "source"), "--report", str(report), "--jobs", "1",
            "--cell-timeout", "60", *extra]  # fmt: skip
    # bubblewrap shows the package the venv imports: where that is another checkout's (a git worktree beside the
    # main one), a copy's own, so that this checkout's code is what runs
    if copied and venv_imports_another_checkout() is not None:
        python = readable_environment()
        done = subprocess.run([str(python), "-m", "dpcourse", *argv], cwd=copied_checkout(python),
                              capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    elif environment is None:
        assert grade_command(argv) == 0
    else:
        done = subprocess.run([sys.executable, "-m", "dpcourse", *argv], cwd=ROOT, env=environment,
                              capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return reports.read_report(report)


def _passed(rows: list) -> bool:
    return {r.exercise: r.status for r in rows} == dict.fromkeys(EXERCISES, "passed")


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.skipif(os.geteuid() != 0, reason="a submission runs as root only when the grader is root")
def test_unconfined_as_root_a_detached_grandchild_ends_with_the_run(tmp_path, token):
    """The issue's case: processes run as root (no user to drop to, ``--run-submissions-as-root``), so no user id
    of the run's own finds them; only the run's control group does."""
    _needs_a_control_group()
    environment = {**os.environ, "DPCOURSE_UNCONFINED_USER": "no-such-user-dpcourse"}
    environment.pop("DPCOURSE_UNCONFINED_UID", None)
    rows = _grade(tmp_path, token, "--sandbox", "none", "--run-submissions-as-root", environment=environment)
    assert _passed(rows), [r.message for r in rows]  # so the grandchild did start
    assert not _eventually_none(token)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_unconfined_as_nobody_a_detached_grandchild_ends_with_the_run(tmp_path, token):
    _needs_a_control_group()
    rows = _grade(tmp_path, token, "--sandbox", "none")
    assert _passed(rows), [r.message for r in rows]
    assert not _eventually_none(token)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_in_bubblewrap_a_detached_grandchild_ends_with_the_run(tmp_path, token):
    problem = sandbox_problem()
    if problem is not None:
        pytest.skip(problem)
    rows = _grade(tmp_path, token, copied=True)
    assert _passed(rows), [r.message for r in rows]
    assert not _eventually_none(token)
