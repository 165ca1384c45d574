"""Marks go where grades go: the marks database folded into the report rows, the totals, the LMS files, the
feedback and the summary; an assignment with unmarked written answers held back from the LMS files unless asked."""

from __future__ import annotations

import csv

import pytest

from dpcourse.classroom.cli import main
from dpcourse.classroom.grading.reports import GradeRow, read_report, write_report
from dpcourse.classroom.marking.export import MarkRow
from dpcourse.classroom.marking.merge import fold_marks, mark_message, report_stores
from dpcourse.classroom.marking.store import (
    add_answers,
    edit_item,
    groups,
    open_store,
    question,
    save_mark,
    store_path,
)
from dpcourse.classroom.marking.written import RubricItem, check_rubric
from dpcourse.classroom.outputs import write_gradebook

NOTEBOOK = "04_svt"
OUTLINE = {NOTEBOOK: {"code": 1.0, "proof": 4.0}}
RUBRIC = check_rubric(
    4,
    [
        {"id": "step", "text": "Names the step that fails", "points": 3},
        {"id": "why", "text": "Says why", "points": 1},
        {"id": "claims", "text": "Claims it is private", "points": -2},
    ],
)
STUDENTS = ("ann", "ben", "cat")
ANSWERS = {"ann": "The step fails", "ben": "the  STEP fails", "cat": "It is private anyway"}
HOSTILE = '=HYPERLINK("http://x") <script>alert(1)</script>\n# heading'


def rows(status="needs marking"):
    found = []
    for student in STUDENTS:
        found.append(GradeRow(student, NOTEBOOK, "code", "passed", 1.0, 1.0))
        found.append(GradeRow(student, NOTEBOOK, "proof", status, 0.0, 4.0, "a written answer, marked by hand"))
    return found


@pytest.fixture
def report(tmp_path):
    path = tmp_path / "grades.csv"
    write_report(rows(), path)
    store = open_store(store_path(path))
    add_answers(store, "proof", RUBRIC, ANSWERS.items())
    store.close()
    return path


def mark(report, student, items, comment="", marker="ta1"):
    store = open_store(store_path(report), create=False)
    try:
        group = next(g for g in groups(store, "proof") if student in g.students)
        version = group.mark.version if group.mark else 0
        save_mark(store, "proof", group.key, items=items, comment=comment, marker=marker, expected_version=version)
    finally:
        store.close()


def folded(report):
    return {(r.student, r.exercise): r for r in fold_marks(read_report(report), report_stores([report])).rows}


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_a_marked_answer_becomes_a_marked_row_with_its_items_comment_and_points_and_the_rest_stays(report):
    mark(report, "ann", ["step", "claims"], comment="Good start.")  # ann and ben wrote the same: one group
    result = fold_marks(read_report(report), report_stores([report]))
    by = {(r.student, r.exercise): r for r in result.rows}
    for student in ("ann", "ben"):
        row = by[(student, "proof")]
        assert (row.status, row.points, row.max_points) == ("marked", 1.0, 4.0)
        assert row.message.splitlines() == [
            "marked by hand: 1 of 4 points",
            "+ 3: Names the step that fails",
            "− 2: Claims it is private",
            "comment: Good start.",
        ]
    assert by[("cat", "proof")].status == "needs marking"
    assert by[("ann", "code")] == GradeRow("ann", NOTEBOOK, "code", "passed", 1.0, 1.0)
    assert (result.marked, result.unmarked) == (2, 1)
    frequencies = {f.item: (f.students, f.marked) for f in result.frequencies}
    assert frequencies == {"step": (2, 2), "why": (0, 2), "claims": (2, 2)}


def test_editing_an_items_points_rescores_every_row_marked_with_it(report):
    mark(report, "ann", ["step"])
    mark(report, "cat", ["step", "why"])
    store = open_store(store_path(report))
    version = dict((item.id, v) for item, v in question(store, "proof").items)["step"]
    edit_item(store, "proof", "step", points=2, editor="ta2", expected_version=version)
    store.close()
    by = folded(report)
    assert [by[(s, "proof")].points for s in STUDENTS] == [2.0, 2.0, 3.0]
    assert by[("cat", "proof")].message.splitlines()[1] == "+ 2: Names the step that fails"


def test_a_regrade_of_one_students_answer_replaces_exactly_her_mark(report):
    mark(report, "ann", ["step", "why"])
    mark(report, "cat", ["why"])
    store = open_store(store_path(report))
    add_answers(store, "proof", RUBRIC, [("ben", "Something else entirely")])  # ben's regraded notebook
    store.close()
    before = read_report(report)
    write_report([*before[:2], GradeRow("ann", NOTEBOOK, "proof", "marked", 4.0, 4.0, "old"), *before[2:]], report)
    by = folded(report)
    assert (by[("ann", "proof")].status, by[("ann", "proof")].points) == ("marked", 4.0)
    assert (by[("ben", "proof")].status, by[("ben", "proof")].points) == ("needs marking", 0.0)
    assert (by[("cat", "proof")].status, by[("cat", "proof")].points) == ("marked", 1.0)


def test_a_later_store_decides_for_the_answers_it_holds(report, tmp_path):
    mark(report, "ann", ["step", "why"])
    mark(report, "cat", ["why"])
    regrade = tmp_path / "regrade.csv"
    store = open_store(store_path(regrade))
    add_answers(store, "proof", RUBRIC, [("cat", "A new answer")])
    store.close()
    result = fold_marks(read_report(report), report_stores([report, regrade, report]))
    by = {(r.student, r.exercise): r for r in result.rows}
    assert [by[(s, "proof")].status for s in STUDENTS] == ["marked", "marked", "needs marking"]
    assert report_stores([report, tmp_path / "none.csv", regrade]) == [store_path(report), store_path(regrade)]


def gradebook(tmp_path, found, **options):
    return write_gradebook(
        found,
        OUTLINE,
        report=tmp_path / "grades.csv",
        lms=("canvas", "gradescope"),
        feedback=tmp_path / "feedback",
        **options,
    )


def test_unmarked_work_holds_back_the_lms_files_and_feedback_in_one_line_and_totals_say_how_much(report, tmp_path):
    mark(report, "ann", ["step"])
    result = fold_marks(read_report(report), report_stores([report]))
    written, text = gradebook(tmp_path, result.rows)
    assert not (tmp_path / "grades_canvas.csv").exists()
    assert not (tmp_path / "feedback").exists()
    assert not any("gradescope" in p.name for p in written)
    held = [line for line in text.splitlines() if "held back" in line]
    assert len(held) == 1
    assert "04_svt has 1 written answer not marked yet (4 points)" in held[0]
    assert "Canvas column or Gradescope file and feedback" in held[0]
    assert f"mark them (python -m dpcourse mark {tmp_path / 'grades.csv'}), then run this same grade" in held[0]
    assert "add --write-with-unmarked to write them now" in held[0]
    assert "not marked yet: 1 written answers of 04_svt (4 points, counted 0)" in text
    totals = read_csv(tmp_path / "grades_totals.csv")
    assert totals[0] == ["student", "04_svt", "total", "max", "unmarked"]
    assert totals[1:] == [["ann", "4", "4", "5", "0"], ["ben", "4", "4", "5", "0"], ["cat", "1", "1", "5", "4"]]
    page = (tmp_path / "grades_summary.html").read_text()
    assert "<table id='unmarked'><tr><th>assignment</th>" in page
    assert "<tr><td>04_svt</td><td class='num'>1</td><td class='num'>4</td></tr>" in page
    assert "<tr><td>cat</td><td class='num'>4</td></tr>" in page
    assert "<td class='rate'>written: 2 marked, 1 to mark</td>" in page  # not "0% passed"
    assert "hardest exercise: code" in text  # a written exercise is never "0% passed"


def test_write_with_unmarked_writes_them_with_the_unmarked_answers_at_zero(report, tmp_path):
    written, text = gradebook(
        tmp_path, fold_marks(read_report(report), report_stores([report])).rows, write_with_unmarked=True
    )
    assert "held back" not in text
    assert read_csv(tmp_path / "grades_canvas.csv")[2][-1] == "1"
    assert (tmp_path / "feedback" / "cat" / "04_svt.md").is_file()


def test_once_marked_the_totals_lms_files_feedback_and_summary_carry_the_marks_escaped(report, tmp_path):
    mark(report, "ann", ["step", "why"], comment=HOSTILE)
    mark(report, "cat", ["claims"], comment="")
    result = fold_marks(read_report(report), report_stores([report]))
    write_report(result.rows, report)
    assert [r.status for r in read_report(report) if r.exercise == "proof"] == ["marked"] * 3
    written, text = gradebook(tmp_path, result.rows, rubric=result.frequencies)
    assert "held back" not in text
    assert read_csv(tmp_path / "grades_totals.csv")[0] == ["student", "04_svt", "total", "max"]
    canvas = read_csv(tmp_path / "grades_canvas.csv")
    assert [row[-1] for row in canvas[2:]] == ["5", "5", "1"]
    message = next(r.message for r in read_report(report) if r.student == "ann" and r.exercise == "proof")
    assert message.endswith("comment: " + HOSTILE)  # the report keeps the comment, in a cell starting with text
    feedback = (tmp_path / "feedback" / "ann" / "04_svt.md").read_text()
    assert (
        "## proof: marked (4/4)\n\n- marked by hand: 4 of 4 points\n- \\+ 3: Names the step that fails\n"
        "- \\+ 1: Says why\n"
        '- comment: =HYPERLINK("http://x") \\<script>alert(1)\\</script>\n- \\# heading\n'
    ) in feedback  # the comment's markup shown literally: no HTML, no heading of its own
    page = (tmp_path / "grades_summary.html").read_text()
    assert "<script>alert" not in page
    assert "Every written answer is marked." in page
    assert "<td>Names the step that fails</td><td class='num'>3</td><td class='num'>2 of 3</td>" in page
    assert "<td>Claims it is private</td><td class='num'>-2</td><td class='num'>1 of 3</td>" in page


def test_grade_merge_folds_the_marks_and_holds_back_until_marked_or_asked(report, tmp_path, monkeypatch, capsys):
    # until the written branch's read_outline lands (written exercises in the outline), the test gives it
    monkeypatch.setattr("dpcourse.classroom.cli.grade.read_outline", lambda source: OUTLINE)
    final = tmp_path / "final.csv"
    args = ["grade", "--merge", str(report), "--report", str(final), "--gradebook", "canvas"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "written answers: 0 marked, 3 not marked yet" in out
    held = [line for line in out.splitlines() if "held back: 04_svt has 3 written answers" in line]
    assert len(held) == 1 and f"(python -m dpcourse mark {report})" in held[0]  # the report beside the marks
    assert not (tmp_path / "final_canvas.csv").exists()
    assert main([*args, "--write-with-unmarked"]) == 0
    assert [row[-1] for row in read_csv(tmp_path / "final_canvas.csv")[2:]] == ["1", "1", "1"]
    for student in STUDENTS:
        mark(report, student, ["step"])
    assert main(args) == 0
    assert "written answers: 3 marked, 0 not marked yet" in capsys.readouterr().out
    assert [r.points for r in read_report(final) if r.exercise == "proof"] == [3.0, 3.0, 3.0]
    assert [row[-1] for row in read_csv(tmp_path / "final_canvas.csv")[2:]] == ["4", "4", "4"]


def test_a_long_comment_reaches_the_row_whole():
    comment = "Think about the coupling. " * 380  # 9,880 characters: a check's message would be cut at 400
    row = MarkRow("ann", "proof", 3.0, 4.0, ("step",), comment, "ta1", 3.0, False)
    message = mark_message(row, {"step": RubricItem("step", "Names the step", 3.0)})
    assert message.endswith("comment: " + comment.strip())
