"""Written exercises reach grading (issue 42, phase 2a): matched like answer cells, never run, one ``needs marking``
row per student and exercise, the answers in the marks database beside the report; the course file takes their ids.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest

from dpcourse.checks._written import PLACEHOLDER
from dpcourse.classroom.course import CourseError, load_course
from dpcourse.classroom.grading import plan as plans
from dpcourse.classroom.grading import reports
from dpcourse.classroom.grading import run as runs
from dpcourse.classroom.marking import MAX_ANSWER_BYTES, groups, marks, open_store, question, store_path
from dpcourse.classroom.release import release_notebook
from tests.classroom.grading_scenarios import RIGHT, answer_index, source_notebook, with_answers
from tests.classroom.ordinary_python import grade_command
from tests.written_cells import MODEL_ANSWER, written_cells

ANSWER = "The one threshold noise is shifted by $\\Delta$, paid **once**."
WRITTEN_ID = "free-bottoms"


def source_with_written():
    """The small workbook with a written exercise between its second and third exercise."""
    nb = source_notebook()
    where = answer_index(nb, "exact-tail-level") - 1  # above the third exercise's heading
    nb.cells[where:where] = written_cells()
    return nb


def released_with_written():
    return release_notebook(source_with_written())


def answered(text, base=None):
    nb = copy.deepcopy(base if base is not None else released_with_written())
    (index,) = [i for i, c in enumerate(nb.cells) if "written" in c.metadata.get("tags", [])]
    nb.cells[index].source = text
    return nb, index


def _plan(submission, source=None):
    source = source or source_with_written()
    return plans.plan_submission(
        Path("s/alice/small.ipynb"), submission, "small", {"small": source}, {"small": release_notebook(source)}
    )


# --- matching, on the plan ------------------------------------------------------------------------------------


def test_a_written_answer_is_matched_by_metadata_and_an_empty_one_is_untouched():
    submission, index = answered(ANSWER)
    plan = _plan(plans.parse_notebook(nbformat.writes(submission).encode()))
    assert plan.written_answers == {WRITTEN_ID: index} and WRITTEN_ID not in plan.untouched
    assert not any("changed" in note for note in plan.integrity)  # the answer is not an instructor's cell changed
    assert ANSWER not in nbformat.writes(plan.built)  # never run: the notebook that runs holds the source's cell
    empty = _plan(plans.parse_notebook(nbformat.writes(released_with_written()).encode()))
    assert empty.written_answers == {WRITTEN_ID: index} and WRITTEN_ID in empty.untouched


def test_a_cell_whose_metadata_is_gone_is_found_by_its_id_and_a_missing_one_is_none():
    submission, index = answered(ANSWER)
    submission.cells[index].metadata = {"dpcourse": "garbage", "tags": 3}  # any shape reads as absent
    plan = _plan(plans.parse_notebook(nbformat.writes(submission).encode()))
    assert plan.written_answers == {WRITTEN_ID: index}
    del submission.cells[index]
    plan = _plan(plans.parse_notebook(nbformat.writes(submission).encode()))
    assert plan.written_answers == {WRITTEN_ID: None} and WRITTEN_ID in plan.untouched


def test_a_written_cell_pasted_twice_takes_the_last_and_says_so():
    submission, index = answered("first try")
    second = copy.deepcopy(submission.cells[index])
    second.id, second.source = "pasted", ANSWER
    submission.cells.insert(index + 1, second)
    plan = _plan(plans.parse_notebook(nbformat.writes(submission).encode()))
    assert plan.written_answers == {WRITTEN_ID: index + 1}
    assert f"2 cells for written exercise {WRITTEN_ID}: the last one is marked" in plan.integrity


def test_rows_are_needs_marking_or_not_attempted_in_notebook_order():
    from dpcourse.classroom.grading.verdicts import with_written_rows

    submission, _ = answered(ANSWER)
    plan = _plan(plans.parse_notebook(nbformat.writes(submission).encode()))
    code = [reports.GradeRow("alice", "small", ex.exercise, "passed", 1, 1) for ex in plan.exercises]
    rows = with_written_rows(plan, code, "note")
    assert [r.exercise for r in rows] == ["max-queries", "icu-sensitivity", WRITTEN_ID, "exact-tail-level"]
    written = rows[2]
    assert (written.status, written.points, written.max_points, written.integrity) == ("needs marking", 0, 4, "note")
    assert ANSWER not in written.message and MODEL_ANSWER not in written.message
    empty = _plan(plans.parse_notebook(nbformat.writes(released_with_written()).encode()))
    assert with_written_rows(empty, code, "")[2].status == "not attempted"
    assert with_written_rows(empty, code, "")[2].max_points == 4


def test_the_outline_holds_written_exercises_in_notebook_order(tmp_path):
    nbformat.write(source_with_written(), tmp_path / "small.ipynb")
    assert plans.read_outline(tmp_path) == {
        "small": {"max-queries": 1.0, "icu-sensitivity": 1.0, WRITTEN_ID: 4.0, "exact-tail-level": 1.0}
    }
    assert [w.exercise for w in plans.read_written(tmp_path)["small"]] == [WRITTEN_ID]


# --- the course file ------------------------------------------------------------------------------------------

COURSE = """\
[assignments.hw]
notebooks = ["small"]
due = 2036-10-05T23:59:00+00:00
points = {{ {points} }}
extra_credit = [{extra}]
partial_credit = [{partial}]
"""


def _course(tmp_path, points="", extra="", partial=""):
    path = tmp_path / "course.toml"
    path.write_text(COURSE.format(points=points, extra=extra, partial=partial))
    nbformat.write(source_with_written(), tmp_path / "small.ipynb")
    written = {("small", w.exercise) for w in plans.read_written(tmp_path)["small"]}
    return load_course(path, plans.read_outline(tmp_path), written=written)


def test_a_written_exercise_takes_points_and_extra_credit_in_the_course_file(tmp_path):
    course = _course(tmp_path, points=f"{WRITTEN_ID} = 6", extra=f'"{WRITTEN_ID}"')
    (assignment,) = course.assignments
    assert assignment.points[("small", WRITTEN_ID)] == 6 and ("small", WRITTEN_ID) in assignment.extra_credit


def test_partial_credit_for_a_written_exercise_is_refused_with_a_message(tmp_path):
    with pytest.raises(CourseError, match=f"partial_credit: '{WRITTEN_ID}' is a written exercise, marked by hand"):
        _course(tmp_path, partial=f'"{WRITTEN_ID}"')


# --- grading: no kernel for written answers ----------------------------------------------------------------------


def test_a_notebook_with_only_written_exercises_is_graded_without_a_kernel_and_resumed_from_the_journal(
    tmp_path, monkeypatch
):
    source = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 07"), *written_cells()])
    (tmp_path / "source").mkdir()
    nbformat.write(source_notebook(), tmp_path / "source" / "small.ipynb")
    nbformat.write(source, tmp_path / "source" / "essay.ipynb")
    student, _ = answered(ANSWER, release_notebook(source))
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    nbformat.write(student, tmp_path / "subs" / "alice" / "essay.ipynb")

    def no_kernel(*args, **kwargs):
        raise AssertionError("a kernel was started for written answers")

    monkeypatch.setattr(runs, "run_job", no_kernel)
    monkeypatch.setattr(runs, "choose_sandbox", lambda name: "bwrap")
    monkeypatch.setattr(runs, "max_parallel_runs", lambda mode, limits: (2, ""))
    submission = tmp_path / "subs" / "alice" / "essay.ipynb"
    journal = tmp_path / "grades.csv.journal"
    rows = runs.grade([submission], source=tmp_path / "source", jobs=1, journal=journal)
    assert [(r.exercise, r.status, r.points, r.max_points) for r in rows] == [(WRITTEN_ID, "needs marking", 0, 4)]

    def not_again(*args, **kwargs):
        raise AssertionError("a submission the journal holds was planned again")

    monkeypatch.setattr(runs, "plan_submission", not_again)  # resumed: the rows come from the journal
    assert runs.grade([submission], source=tmp_path / "source", jobs=1, journal=journal) == rows


# --- the whole command, in the sandbox -----------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_grade_writes_needs_marking_rows_and_the_answers_into_the_marks_database(tmp_path, capfd):
    """Unconfined (``--sandbox none``, as tests/classroom/test_regrade.py runs the command): the rows and the marks
    database are this test's subject, not the sandbox."""
    source = tmp_path / "source"
    source.mkdir()
    nbformat.write(source_with_written(), source / "small.ipynb")
    (source / "course.toml").write_text(COURSE.format(points=f"{WRITTEN_ID} = 6", extra="", partial=""))
    base = with_answers(released_with_written(), max_queries="K_max = 538", exact_tail_level=RIGHT["exact-tail-level"])
    hostile = "<script>alert(1)</script> $x$ " + "y" * (MAX_ANSWER_BYTES + 5000)
    missing, index = answered(ANSWER, base)
    del missing.cells[index]
    students = {
        "alice": answered(ANSWER, base)[0],
        "bob": answered(PLACEHOLDER, base)[0],
        "carol": missing,
        "dave": answered(hostile, base)[0],
        "erin": answered("  the ONE threshold noise is shifted by $\\Delta$, paid **once**.", base)[0],
    }
    paths = []
    for student, nb in students.items():
        (tmp_path / "subs" / student).mkdir(parents=True)
        nbformat.write(nb, tmp_path / "subs" / student / "small.ipynb")
        paths.append(str(tmp_path / "subs" / student / "small.ipynb"))
    report = tmp_path / "grades.csv"
    common = ["--source", str(source), "--course", str(source / "course.toml"), "--sandbox", "none", "--jobs", "1"]
    assert grade_command(["grade", *paths, "--report", str(report), *common]) == 0
    out = capfd.readouterr().out
    assert f"written answers: 3 to 1 exercises in {store_path(report)}; mark them with dpcourse mark {report}" in out
    rows = {(r.student, r.exercise): r for r in reports.read_report(report)}
    assert {s: rows[(s, WRITTEN_ID)].status for s in students} == {
        "alice": "needs marking",
        "bob": "not attempted",
        "carol": "not attempted",
        "dave": "needs marking",
        "erin": "needs marking",
    }
    # the notebook's maximum, as on every row (merge checks it); the course file's 6 applies in the totals, by share
    assert {rows[(s, WRITTEN_ID)].max_points for s in students} == {4.0}
    assert rows[("alice", "max-queries")].status == "passed", rows[("alice", "max-queries")].message
    store = open_store(store_path(report), create=False)
    try:
        found = {m.student: m for m in marks(store)}
        assert set(found) == {"alice", "dave", "erin"} and found["alice"].points is None
        assert found["alice"].max_points == 4.0 and question(store, WRITTEN_ID).prompt.startswith("### Written")
        by_students = {g.students: g for g in groups(store, WRITTEN_ID)}
        assert set(by_students) == {("alice", "erin"), ("dave",)}  # equal up to whitespace and case: one group
        assert (
            by_students[("dave",)].cut_from == len(hostile.encode()) and by_students[("alice", "erin")].text == ANSWER
        )
    finally:
        store.close()

    # a regrade of alice alone, into the same report: her answer replaced, the others' kept
    fixed, _ = answered("A different answer: the threshold is shared.", base)
    nbformat.write(fixed, tmp_path / "subs" / "alice" / "small.ipynb")
    regrade = ["grade", paths[0], "--merge", str(report), "--replace", "--report", str(report), *common]
    assert grade_command(regrade) == 0
    assert len(reports.read_report(report)) == len(rows)
    store = open_store(store_path(report), create=False)
    try:
        assert {g.students for g in groups(store, WRITTEN_ID)} == {("alice",), ("erin",), ("dave",)}
        assert {g.text for g in groups(store, WRITTEN_ID) if g.students == ("erin",)} == {
            students["erin"].cells[index].source
        }
    finally:
        store.close()
