"""A batch keeps what it graded (issue 38, class 8): each submission's rows go to ``<report>.journal`` as soon as they
are known, and the same command again grades only the submissions missing from it.

The journal's own behaviour (a torn last line, other sources, a second batch) is tested on the class directly; the
batch is interrupted for real: graded unconfined (``--sandbox none``), one submission hanging in its first run
only, the grader is stopped (SIGTERM, and SIGKILL) while that one is in flight, and run again with the same report.
Every submission's code appends its name to a marker file, which counts its runs.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from dpcourse.classroom.grading import reports
from dpcourse.classroom.grading.reports import GradeRow, ReportJournal, journal_path
from tests.classroom.grading_scenarios import EXERCISES, NAME, right, with_answers, write_course
from tests.classroom.ordinary_python import copied_checkout, readable_environment

ROOT = Path(__file__).resolve().parents[2]


def _rows(student: str, points: float = 1.0) -> list[GradeRow]:
    return [GradeRow(student, "small", ex, "passed", points, points, "ok, line one\nline two") for ex in EXERCISES]


# --------------------------------------------------------------------------- the journal


def test_a_journal_gives_back_each_record_whole_after_it_is_closed(tmp_path):
    path = tmp_path / "grades.csv.journal"
    with ReportJournal(path, "context-1") as journal:
        journal.record("/s/alice/small.ipynb", "d1", _rows("alice"))
        journal.record("/s/bob/small.ipynb", "d2", _rows("=bob", 2.0))
    with ReportJournal(path, "context-1") as journal:
        assert len(journal) == 2 and not journal.discarded
        assert journal.rows_of("/s/alice/small.ipynb", "d1") == _rows("alice")
        assert journal.rows_of("/s/bob/small.ipynb", "d2") == _rows("=bob", 2.0)
        assert journal.rows_of("/s/bob/small.ipynb", "changed") is None  # another content: graded again


def test_a_torn_last_record_is_ignored_and_cut_off_before_the_next_is_appended(tmp_path):
    path = tmp_path / "grades.csv.journal"
    with ReportJournal(path, "c") as journal:
        journal.record("/s/alice/small.ipynb", "d1", _rows("alice"))
    whole = path.read_bytes()
    with open(path, "ab") as handle:  # a record cut short: what a crash in the middle of a write leaves at worst
        handle.write(b'{"file": "/s/bob/small.ipynb", "digest": "d2", "rows": [["bob", "sm')
    with ReportJournal(path, "c") as journal:
        assert len(journal) == 1 and journal.rows_of("/s/bob/small.ipynb", "d2") is None
        assert path.read_bytes() == whole
        journal.record("/s/carol/small.ipynb", "d3", _rows("carol"))
    with ReportJournal(path, "c") as journal:
        assert journal.rows_of("/s/carol/small.ipynb", "d3") == _rows("carol") and len(journal) == 2


def test_a_journal_of_other_sources_or_options_is_started_afresh(tmp_path):
    path = tmp_path / "grades.csv.journal"
    with ReportJournal(path, "old sources") as journal:
        journal.record("/s/alice/small.ipynb", "d1", _rows("alice"))
    with ReportJournal(path, "new sources") as journal:
        assert len(journal) == 0 and journal.discarded


def test_two_batches_cannot_write_one_report(tmp_path):
    path = tmp_path / "grades.csv.journal"
    with ReportJournal(path, "c"), pytest.raises(OSError, match="another grade run is writing this report"):
        ReportJournal(path, "c")


def test_the_journal_is_beside_the_report_and_no_csv():
    assert journal_path(Path("out/grades.csv")) == Path("out/grades.csv.journal")


# --------------------------------------------------------------------------- a batch interrupted for real

COUNTED = """import time
with open({marker!r}, "a") as handle:
    handle.write("{student}\\n")
runs = open({marker!r}).read().split().count("{student}")
if {hangs} and runs == 1:
    time.sleep(600)  # the first run hangs until the grader is stopped (or its cell times out); the next is quick
K_max = 538"""


def _command(argv: list[str]) -> tuple[list[str], Path]:
    """``python -m dpcourse …`` as :func:`~tests.classroom.ordinary_python.grade_command` would run it, as a
    process of its own that the test can signal."""
    from dpcourse.classroom.sandbox.runner import unconfined_user

    if os.geteuid() != 0 or unconfined_user() is not None:
        return [sys.executable, "-m", "dpcourse", *argv], ROOT
    python = readable_environment()
    return [str(python), "-m", "dpcourse", *argv], copied_checkout(python)


def _records(journal: Path) -> int:
    try:
        return max(0, len(journal.read_bytes().splitlines()) - 1)  # the first line names the context
    except FileNotFoundError:
        return 0


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGKILL])
def test_a_batch_stopped_halfway_and_run_again_ends_with_every_row_each_graded_once(tmp_path, stop, request):
    marks = Path(tempfile.mkdtemp(prefix="dpcourse-resume-"))  # the run may be nobody's: a folder it can write
    request.addfinalizer(lambda: shutil.rmtree(marks, ignore_errors=True))
    marks.chmod(0o777)
    marker = str(marks / "runs")
    Path(marker).touch()
    Path(marker).chmod(0o666)  # as root each run is a user id of its own: all of them append to one file
    students = ["alice", "bob", "carol", "dave"]
    submissions = {
        s: {NAME: with_answers(right(), max_queries=COUNTED.format(marker=marker, student=s, hangs=s == "carol"))}
        for s in students
    }
    paths = write_course(tmp_path, submissions)
    report = tmp_path / "grades.csv"
    argv = ["grade", *map(str, paths), "--source", str(tmp_path / "source"), "--report", str(report),
            "--sandbox", "none", "--jobs", "1", "--cell-timeout", "60"]  # fmt: skip
    command, cwd = _command(argv)
    first = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 600
        while _records(journal_path(report)) < 2 or "carol" not in Path(marker).read_text():
            assert first.poll() is None and time.monotonic() < deadline, first.stderr and first.stderr.read()
            time.sleep(0.5)
        first.send_signal(stop)  # alice and bob graded, carol in flight, dave not started
        assert first.wait(timeout=120) in (130, -signal.SIGKILL)
    finally:
        first.kill()
        first.wait()
        assert first.stderr is not None
        errors = first.stderr.read().decode()
    assert not report.exists() and _records(journal_path(report)) == 2
    if stop == signal.SIGTERM:
        assert "run the same command again" in errors, errors
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "2 submissions already graded are taken from" in done.stderr
    rows = reports.read_report(report)
    assert sorted((r.student, r.exercise) for r in rows) == sorted((s, e) for s in students for e in EXERCISES)
    assert all(r.status == "passed" for r in rows), [(r.student, r.exercise, r.message) for r in rows]
    runs = Path(marker).read_text().split()
    assert {s: runs.count(s) for s in students} == {"alice": 1, "bob": 1, "carol": 2, "dave": 1}
    assert not journal_path(report).exists()  # the report holds every row: a later run grades afresh


# --------------------------------------------------------------------------- which submissions a rerun takes from it


def test_a_rerun_takes_only_unchanged_files_of_the_same_student_under_the_same_sources(tmp_path):
    from dpcourse.classroom.grading import run as batch
    from dpcourse.classroom.grading.plan import load_sources
    from dpcourse.classroom.sandbox.limits import Limits

    paths = write_course(tmp_path, {"alice": {NAME: right()}, "bob": {NAME: right()}, "carol": {NAME: right()}})
    sources, _ = load_sources(tmp_path / "source")
    context = batch._grading_context(sources, Limits(), "none", "", {})
    with ReportJournal(tmp_path / "grades.csv.journal", context) as journal:
        for item in batch._prepare(paths, sources, ""):
            journal.record(batch._file_key(item), item.digest, _rows(item.student))
    # bob's answer changes; carol's file is rewritten with the same cells (a new time, other whitespace)
    paths[1].write_text(paths[1].read_text().replace("K_max = 538", "K_max = 539"))
    paths[2].write_text(paths[2].read_text().replace("\n", "\n  "))
    items = batch._prepare(paths, sources, "")
    with ReportJournal(tmp_path / "grades.csv.journal", context) as journal:
        assert batch._resume(items, journal) == 2
    assert [item.rows is not None for item in items] == [True, False, True]
    # the same file under other sources, or graded as another student, is not taken
    changed = {**sources, "small": {**sources["small"], "metadata": {"changed": True}}}
    assert batch._grading_context(changed, Limits(), "none", "", {}) != context
    assert batch._grading_context(sources, Limits(cell_timeout=5), "none", "", {}) != context
    other = dataclasses.replace(batch._prepare(paths[:1], sources, "")[0], student="mallory")
    with ReportJournal(tmp_path / "grades.csv.journal", context) as journal:
        assert batch._resume([other], journal) == 0 and other.rows is None


def test_rows_of_a_stopped_run_or_of_the_graders_own_failure_are_not_kept(tmp_path):
    from dpcourse.classroom.grading import run as batch
    from dpcourse.classroom.grading.verdicts import INFRASTRUCTURE

    item = batch._Item(tmp_path / "s" / "alice" / NAME, "alice", tmp_path / "s" / "alice", digest="d")
    failed = [
        dataclasses.replace(row, status="errored", message=f"{INFRASTRUCTURE}: OSError") for row in _rows("alice")
    ]
    with ReportJournal(tmp_path / "grades.csv.journal", "c") as journal:
        shared = batch._Batch(journal)
        assert shared.graded(item, failed) == failed and len(journal) == 0  # a rerun tries it again
        shared.graded(item, _rows("alice"))
        assert journal.rows_of(batch._file_key(item), "d") == _rows("alice")
        shared.stop.set()  # what a run ended by the stop left is not its grade
        shared.graded(dataclasses.replace(item, digest="e"), _rows("alice", 0.5))
        assert len(journal) == 1
