"""Grading with ``--sandbox none``: the grader survives submissions that kill, stop or flood their parent.

Without a sandbox a submission can do whatever the grader's user can (the README says exactly what
an unconfined run protects). What must still hold: the worker is detached (walking up
``os.getppid()`` does not reach the grader), a submission that kills or stops its worker or floods
its pipe only loses its own rows, every other submission is graded, the report is written, and every
row says the run was unconfined. This runs with or without bubblewrap installed.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from dpcourse.classroom.cli import main
from dpcourse.classroom.grading import reports
from dpcourse.classroom.grading.run import AS_ROOT, UNCONFINED
from tests.classroom.grading_scenarios import (
    EXERCISES,
    NAME,
    WRONG,
    jobs_for,
    released,
    right,
    source_notebook,
    unreadable_files,
    with_answers,
    write_course,
)
from tests.classroom.ordinary_python import copied_checkout, grade_command, readable_environment

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]
ROOT = Path(__file__).resolve().parents[2]

# The kernel's parent is the worker; the worker's parent, once detached, is init (pid 1) or a
# subreaper. Only a Python process there could be the grader: if it were reachable, this would kill
# the test run itself, and the run would fail.
PARRICIDE = "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nK_max = 538"
GRANDPARENT = """import os, signal
grandparent = int(open('/proc/%d/stat' % os.getppid()).read().rsplit(')', 1)[1].split()[1])
command = open('/proc/%d/cmdline' % grandparent, 'rb').read() if grandparent > 1 else b''
if b'python' in command:
    os.kill(grandparent, signal.SIGKILL)
K_max = 538 if grandparent <= 1 or b'python' not in command else -1"""
STOPPER = "import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\nK_max = 538"
FLOODER = """import os
try:
    with open('/proc/%d/fd/1' % os.getppid(), 'wb') as pipe:
        for _ in range(40):
            pipe.write(b'x' * 1_000_000)
except OSError:
    print('y' * 40_000_000)
K_max = 538"""


DROPPED = """import os
refused = []
for attempt in (lambda: open({source!r}).read(), lambda: open('/root/planted', 'w')):
    try:
        attempt()
        refused.append(False)
    except OSError:
        refused.append(True)
K_max = 538 if os.geteuid() != 0 and all(refused) else -1"""


@pytest.fixture(scope="session")
def unconfined(tmp_path_factory):
    root = tmp_path_factory.mktemp("unconfined")
    rel = released()
    submissions = {
        "alice": {NAME: right()},
        "bob": {NAME: with_answers(rel, **WRONG)},
        "parricide": {NAME: with_answers(right(), max_queries=PARRICIDE)},
        "grandparent": {NAME: with_answers(right(), max_queries=GRANDPARENT)},
        "stopper": {NAME: with_answers(right(), max_queries=STOPPER)},
        "flooder": {NAME: with_answers(right(), max_queries=FLOODER)},
        "zed": {NAME: right()},
        # as root, the grader drops each submission to nobody: it cannot read the sources or write the report
        "dropped": {NAME: with_answers(right(), max_queries=DROPPED.format(source=str(root / "source" / NAME)))},
        **unreadable_files(),
    }
    paths = write_course(root, submissions)
    # a second notebook of the course, worth 2 points an exercise, which nobody handed in; carol is only on the roster
    second = source_notebook()
    for cell in second.cells:
        if "check" in cell.metadata.get("tags", []):
            cell.metadata["dpcourse"]["points"] = 2
    nbformat.write(second, root / "source" / "second.ipynb")
    (root / "roster.txt").write_text("alice\nbob\ncarol\n")
    report = root / "grades.csv"
    status = grade_command(
        [
            "grade",
            *map(str, paths),
            "--source",
            str(root / "source"),
            "--report",
            str(report),
            "--sandbox",
            "none",
            "--jobs",
            jobs_for("none"),
            "--cell-timeout",
            "20",
            "--notebook-timeout",
            "90",
            "--roster",
            str(root / "roster.txt"),
            "--gradebook",
            "canvas",
            "--gradebook",
            "gradescope",
            "--feedback",
            str(root / "feedback"),
        ]
    )
    return {
        "status": status,
        "rows": reports.read_report(report),
        "report": report,
        "root": root,
        "students": {r.student for r in reports.read_report(report)} | {"carol"},
    }


def statuses(result, student):
    return {r.exercise: r.status for r in result["rows"] if r.student == student}


def test_every_other_submission_is_graded_and_the_report_written(unconfined):
    assert unconfined["status"] == 0
    assert statuses(unconfined, "alice") == dict.fromkeys(EXERCISES, "passed")
    assert statuses(unconfined, "zed") == dict.fromkeys(EXERCISES, "passed")
    assert statuses(unconfined, "bob") == dict.fromkeys(EXERCISES, "failed")
    for student in unreadable_files():
        assert statuses(unconfined, student) == {"-": "invalid"}, student


def test_killing_the_parent_loses_only_that_submission(unconfined):
    assert statuses(unconfined, "parricide") == dict.fromkeys(EXERCISES, "errored")


def test_the_grader_is_not_up_the_parent_chain(unconfined):
    assert statuses(unconfined, "grandparent") == dict.fromkeys(EXERCISES, "passed")


def test_a_stopped_worker_is_continued(unconfined):
    assert statuses(unconfined, "stopper") == dict.fromkeys(EXERCISES, "passed")


def test_a_flood_loses_at_most_that_submission(unconfined):
    assert set(statuses(unconfined, "flooder").values()) <= {"passed", "errored"}


def test_as_root_each_submission_runs_as_nobody_reading_no_source_and_writing_nothing_of_roots(unconfined):
    if os.geteuid() != 0:
        pytest.skip("run as an ordinary user, an unconfined submission is that user and reads what it reads (README)")
    assert statuses(unconfined, "dropped") == dict.fromkeys(EXERCISES, "passed")
    assert not any(AS_ROOT in r.integrity for r in unconfined["rows"])


def test_every_row_says_the_run_was_unconfined(unconfined):
    assert all(UNCONFINED in r.integrity for r in unconfined["rows"])


def _csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_the_gradebook_is_over_the_whole_course_and_the_roster(unconfined):
    """Issue 21: a notebook nobody handed in counts 0 of its points; a student only on the roster is a row of 0."""
    root = unconfined["root"]
    totals = {line[0]: line[1:] for line in _csv(root / "grades_totals.csv")[1:]}
    assert _csv(root / "grades_totals.csv")[0] == ["student", "second", "small", "total", "max"]
    assert totals["alice"] == ["0", "3", "3", "9"] and totals["bob"] == ["0", "0", "0", "9"]
    assert totals["carol"] == ["0", "0", "0", "9"] and set(totals) == unconfined["students"]
    # Issue 28: the LMS files and the feedback hold only what this run graded ("small"), never a 0 for "second",
    # and only the students who handed something in (carol, only on the roster, is left to the LMS as she is)
    handed_in = {r.student for r in unconfined["rows"]}
    canvas = _csv(root / "grades_canvas.csv")
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "small"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "3"] and len(canvas) == 2 + len(handed_in)
    assert {line[0] for line in canvas[2:]} == handed_in
    assert len(_csv(root / "grades_gradescope.csv")) == 1 + len(handed_in)
    page = (root / "grades_summary.html").read_text()
    assert "1 × you dropped the logarithm" in page  # bob's, the one wrong max-queries of the class
    feedback = list((root / "feedback").rglob("*.md"))
    assert {p.name for p in feedback} == {"small.md"} and len(feedback) == len(handed_in)


HOLDER = """import sys, threading, time
threading.stack_size(64 * 1024)
for _ in range(int(sys.argv[1])):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
print("holding", flush=True)
time.sleep(600)
"""


def test_processes_of_nobody_the_grader_cannot_see_do_not_cost_its_runs_their_budget(tmp_path):
    """The Kubernetes recipe grades as root with ``--sandbox none`` and no control group, each shard in a pod of
    its own: the kernel counts RLIMIT_NPROC per user id over the whole node, so the processes of ``nobody`` in
    the other pods (other shards, other tenants), which this pod cannot see, count against a run that drops
    to ``nobody``. Each run gets a user id of its own instead. Here a process of ``nobody``, outside the
    grader's pid namespace, holds more threads than a run may start."""
    if os.geteuid() != 0 or shutil.which("unshare") is None or not Path("/usr/bin/python3").exists():
        pytest.skip("needs root, unshare and /usr/bin/python3 (run by nobody, outside the grader's pid namespace)")
    held = 256 + 50  # Limits().processes, and more
    holder = subprocess.Popen(["/usr/bin/python3", "-c", HOLDER, str(held)], user=65534, group=65534,
                              extra_groups=[], stdout=subprocess.PIPE, cwd="/")  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"holding\n"
        paths = write_course(tmp_path, {"alice": {NAME: right()}})
        report = tmp_path / "grades.csv"
        python = readable_environment()
        argv = ["grade", str(paths[0]), "--source", str(tmp_path / "source"), "--report", str(report),
                "--sandbox", "none", "--jobs", "1"]  # fmt: skip
        # a pod: its own pid namespace, and no control group to make (an empty read-only cgroupfs), so that
        # RLIMIT_NPROC is each run's budget, as in the recipe's pods
        pod = 'mount -t tmpfs -o ro,size=4k none /sys/fs/cgroup && exec "$@"'
        done = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--mount-proc", "sh", "-c", pod, "sh",
                               str(python), "-m", "dpcourse", *argv],
                              cwd=copied_checkout(python), timeout=600, check=False, capture_output=True,
                              text=True)  # fmt: skip
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        rows = reports.read_report(report)
        assert {r.exercise: r.status for r in rows} == dict.fromkeys(EXERCISES, "passed"), [r.message for r in rows]
        assert holder.poll() is None  # and the run's clean-up left nobody's other processes alone
    finally:
        holder.kill()
        holder.wait()


# --------------------------------------------------------------------------- as root with nobody to drop to (issue 37)

MARKS_ITS_RUN = """import os
with open({marker!r}, "w") as handle:
    handle.write(str(os.geteuid()))
K_max = 538"""


def _grade_as_root_with_no_user_to_drop_to(tmp_path, *extra: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``grade --sandbox none`` as root where the unprivileged user does not exist, whatever this machine has."""
    marker = tmp_path / "the-submission-ran"
    paths = write_course(tmp_path, {"alice": {NAME: with_answers(right(), max_queries=MARKS_ITS_RUN.format(
        marker=str(marker)))}})  # fmt: skip
    argv = ["grade", str(paths[0]), "--source", str(tmp_path / "source"), "--report", str(tmp_path / "grades.csv"),
            "--sandbox", "none", "--jobs", "1", *extra]  # fmt: skip
    environment = {**os.environ, "DPCOURSE_UNCONFINED_USER": "no-such-user-dpcourse"}
    environment.pop("DPCOURSE_UNCONFINED_UID", None)
    done = subprocess.run([sys.executable, "-m", "dpcourse", *argv], cwd=ROOT, env=environment, capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip
    return done, marker


@pytest.mark.skipif(os.geteuid() != 0, reason="the refusal is about a grader that runs as root")
def test_as_root_with_no_user_to_drop_to_nothing_is_graded(tmp_path):
    done, marker = _grade_as_root_with_no_user_to_drop_to(tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    error = done.stderr.strip()
    assert len(error.splitlines()) == 1, error
    assert "no user 'no-such-user-dpcourse'" in error and "nothing was graded" in error
    assert "readable" in error and "--run-submissions-as-root" in error
    assert not marker.exists() and not (tmp_path / "grades.csv").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="running students' code as root needs a grader that is root")
def test_as_root_only_the_named_flag_runs_submissions_as_root_and_every_row_says_so(tmp_path):
    done, marker = _grade_as_root_with_no_user_to_drop_to(tmp_path, "--run-submissions-as-root")
    assert done.returncode == 0, done.stdout + done.stderr
    assert marker.read_text() == "0"  # it did run, as root
    rows = reports.read_report(tmp_path / "grades.csv")
    assert rows and all(AS_ROOT in r.integrity and UNCONFINED in r.integrity for r in rows)
    assert "AS ROOT" in done.stdout


def test_the_root_flag_is_refused_without_sandbox_none(tmp_path, capsys):
    paths = write_course(tmp_path, {"alice": {NAME: right()}})
    argv = ["grade", str(paths[0]), "--source", str(tmp_path / "source"), "--report", str(tmp_path / "grades.csv"),
            "--run-submissions-as-root"]  # fmt: skip
    assert main(argv) == 2
    assert "--run-submissions-as-root goes with --sandbox none" in capsys.readouterr().err
    assert not (tmp_path / "grades.csv").exists()
