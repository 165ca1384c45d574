"""A regrade never writes LMS files or feedback for part of an assignment (issue 38, class 7).

The course has one assignment of two notebooks, ``small`` (3 exercises of 1 point) and ``second`` (3 of 2 points).
Alice handed in both; her ``second`` is regraded alone. A run that holds only ``second`` cannot tell her assignment
score (her ``small`` would count as not handed in), so it writes no Canvas or Gradescope cell and no feedback for
her, and says in one line which merge does; ``grade <file> --merge <earlier report> --replace`` grades the file and
writes every file over both notebooks. A full batch in which a student skipped a notebook that classmates handed in
still counts it 0.
"""

from __future__ import annotations

import csv
from pathlib import Path

import nbformat
import pytest

from dpcourse.classroom.course import load_course
from dpcourse.classroom.gradebook.roster import read_roster
from dpcourse.classroom.grading import reports
from dpcourse.classroom.grading.plan import read_outline
from dpcourse.classroom.grading.reports import GradeRow
from dpcourse.classroom.outputs import write_gradebook
from tests.classroom.grading_scenarios import EXERCISES, right, source_notebook
from tests.classroom.ordinary_python import grade_command

COURSE = """\
[assignments.hw]
name = "Homework"
notebooks = ["small", "second"]
due = 2036-10-05T23:59:00+00:00
"""
ROSTER = "student,name,canvas_id,sid,email\nalice,Alice Smith,1001,S1,alice@example.edu\n" + (
    "bob,Bob Jones,1002,S2,bob@example.edu\n"
)


def _second_notebook():
    nb = source_notebook()
    for cell in nb.cells:
        if "check" in cell.metadata.get("tags", []):
            cell.metadata["dpcourse"]["points"] = 2
    return nb


@pytest.fixture
def course_folder(tmp_path):
    (tmp_path / "source").mkdir()
    nbformat.write(source_notebook(), tmp_path / "source" / "small.ipynb")
    nbformat.write(_second_notebook(), tmp_path / "source" / "second.ipynb")
    (tmp_path / "source" / "course.toml").write_text(COURSE)
    (tmp_path / "roster.csv").write_text(ROSTER)
    return tmp_path


def _rows(student: str, notebook: str, status: str) -> list[GradeRow]:
    points = 2.0 if notebook == "second" else 1.0
    return [GradeRow(student, notebook, ex, status, points if status == "passed" else 0.0, points) for ex in EXERCISES]


def _table(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def _write(folder: Path, rows: list[GradeRow], report: Path, lms=("canvas", "gradescope")):
    outline = read_outline(folder / "source")
    return write_gradebook(
        rows,
        outline,
        report=report,
        roster=read_roster(folder / "roster.csv"),
        lms=list(lms),
        feedback=folder / "feedback",
        course=load_course(folder / "source" / "course.toml", outline),
    )


def test_a_run_of_one_notebook_of_an_assignment_writes_no_lms_cell_or_feedback_for_it(course_folder):
    report = course_folder / "regrade.csv"
    written, text = _write(course_folder, _rows("alice", "second", "passed"), report)
    canvas = _table(course_folder / "regrade_canvas.csv")
    assert [line[0] for line in canvas[2:]] == []  # not a 6 of 9 that would replace her 9 in Canvas
    assert _table(course_folder / "regrade_gradescope.csv")[1:] == []
    assert not (course_folder / "feedback" / "alice").exists()  # no "0 of 3" for the small she did hand in
    line = next(line for line in text.splitlines() if "part of an assignment" in line)
    assert "alice" in line and "small" in line
    assert f"--merge EARLIER.csv {report} --replace --report FINAL.csv" in line


def test_a_notebook_of_hers_the_run_was_not_given_is_part_of_an_assignment_too(course_folder):
    """Alice's and bob's regrades together hold both notebooks; alice's other notebook is in her folder, not in
    the run: no LMS cell or feedback for her assignment. Bob's folder holds nothing else: his counts."""
    from dpcourse.classroom.gradebook.roster import left_out_notebooks as _left_out

    for student, names in {"alice": ["second.ipynb", "small.ipynb", "notes.txt"], "bob": ["small.ipynb"]}.items():
        (course_folder / "submissions" / student).mkdir(parents=True)
        for name in names:
            (course_folder / "submissions" / student / name).write_text("{}")
    given = [
        course_folder / "submissions" / "alice" / "second.ipynb",
        course_folder / "submissions" / "bob" / "small.ipynb",
    ]
    left_out = _left_out(given, read_outline(course_folder / "source"))
    assert left_out == {"alice": frozenset({"small"})}
    outline = read_outline(course_folder / "source")
    rows = [*_rows("alice", "second", "passed"), *_rows("bob", "small", "passed")]
    _, text = write_gradebook(
        rows,
        outline,
        report=course_folder / "regrade.csv",
        roster=read_roster(course_folder / "roster.csv"),
        lms=["canvas"],
        feedback=course_folder / "feedback",
        course=load_course(course_folder / "source" / "course.toml", outline),
        left_out=left_out,
    )
    scores = {line[0]: line[-1] for line in _table(course_folder / "regrade_canvas.csv")[2:]}
    assert scores == {"Bob Jones": "3"} and not (course_folder / "feedback" / "alice").exists()
    assert "alice" in next(line for line in text.splitlines() if "part of an assignment" in line)


def test_a_full_batch_still_counts_a_notebook_a_student_did_not_hand_in(course_folder):
    rows = [*_rows("alice", "small", "passed"), *_rows("alice", "second", "passed"), *_rows("bob", "small", "passed")]
    _, text = _write(course_folder, rows, course_folder / "grades.csv")
    scores = {line[0]: line[-1] for line in _table(course_folder / "grades_canvas.csv")[2:]}
    assert scores == {"Alice Smith": "9", "Bob Jones": "3"}  # bob's second, which classmates handed in, counts 0
    assert (course_folder / "feedback" / "bob" / "second.md").exists()
    assert "part of an assignment" not in text


def test_merged_with_the_earlier_report_every_file_is_written_over_the_whole_assignment(course_folder):
    rows = [*_rows("alice", "small", "passed"), *_rows("alice", "second", "failed"), *_rows("bob", "small", "passed")]
    reports.write_report(rows, course_folder / "grades.csv")
    reports.write_report(_rows("alice", "second", "passed"), course_folder / "regrade.csv")
    merged = reports.merge(
        [course_folder / "grades.csv", course_folder / "regrade.csv"],
        outline=read_outline(course_folder / "source"),
        replace=True,
    )
    _, text = _write(course_folder, merged.rows, course_folder / "final.csv")
    scores = {line[0]: line[-1] for line in _table(course_folder / "final_canvas.csv")[2:]}
    assert scores == {"Alice Smith": "9", "Bob Jones": "3"} and "part of an assignment" not in text


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_grading_a_resubmission_with_merge_writes_the_whole_assignment(course_folder):
    """The README's regrade recipe in one command: grade the file, merge it after the earlier report."""
    earlier = [
        *_rows("alice", "small", "passed"),
        *_rows("alice", "second", "failed"),
        *_rows("bob", "small", "passed"),
    ]
    reports.write_report(earlier, course_folder / "grades.csv")
    fixed = course_folder / "submissions" / "alice" / "second.ipynb"
    fixed.parent.mkdir(parents=True)
    nbformat.write(right(), fixed)
    report = course_folder / "final.csv"
    argv = ["grade", str(fixed), "--merge", str(course_folder / "grades.csv"), "--replace",
            "--source", str(course_folder / "source"), "--course", str(course_folder / "source" / "course.toml"),
            "--roster", str(course_folder / "roster.csv"), "--gradebook", "canvas", "--gradebook", "gradescope",
            "--feedback", str(course_folder / "feedback"), "--report", str(report),
            "--sandbox", "none", "--jobs", "1", "--cell-timeout", "60"]  # fmt: skip
    assert grade_command(argv) == 0
    rows = reports.read_report(report)
    assert {(r.notebook, r.status) for r in rows if r.student == "alice"} == {("small", "passed"), ("second", "passed")}
    assert len(rows) == len(earlier)  # her second's rows replaced, nothing graded twice
    scores = {line[0]: line[-1] for line in _table(course_folder / "final_canvas.csv")[2:]}
    assert scores == {"Alice Smith": "9", "Bob Jones": "3"}
    gradescope = {line[2]: line[3] for line in _table(course_folder / "final_gradescope.csv")[1:]}
    assert gradescope == {"alice@example.edu": "9", "bob@example.edu": "3"}
    small = (course_folder / "feedback" / "alice" / "small.md").read_text()
    assert "Nothing was handed in" not in small and "9" in small
