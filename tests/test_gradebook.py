"""The gradebook: totals over the whole course, Canvas and Gradescope imports, the class summary with the
mistakes the checks named, and feedback files; every student-provided string treated as hostile."""

from __future__ import annotations

import csv
import re

import nbformat
import pytest

from dpcourse.classroom import gradebook
from dpcourse.classroom.cli import main
from dpcourse.classroom.reports import GradeRow, write_report
from tests.grading_scenarios import EXERCISES, source_notebook

LOG = "you dropped the logarithm (K/(nε) ≤ α)"


def course(folder):
    """Two notebooks of three exercises each; the second's check cells are worth 2 points."""
    (folder / "source").mkdir()
    nbformat.write(source_notebook(), folder / "source" / "01_first.ipynb")
    second = source_notebook()
    for cell in second.cells:
        if "check" in cell.metadata.get("tags", []):
            cell.metadata["dpcourse"]["points"] = 2
    nbformat.write(second, folder / "source" / "02_second.ipynb")
    return folder / "source"


def row(student, notebook, exercise, status, maximum=1.0, mistake="", message="", hint=""):
    return GradeRow(
        student,
        notebook,
        exercise,
        status,
        maximum if status == "passed" else 0.0,
        maximum,
        message or mistake,
        hint,
        mistake,
    )


def rows():
    """ada: everything right. bob: the first notebook only, one named mistake, one unnamed wrong answer.
    '=evil<script>': a hostile name, a named mistake in each notebook. carol is only on the roster."""
    found = []
    for exercise in EXERCISES:
        found.append(row("ada", "01_first", exercise, "passed"))
        found.append(row("ada", "02_second", exercise, "passed", 2.0))
    found += [
        row("bob", "01_first", "max-queries", "failed", mistake=LOG, hint="a <b>hint</b>"),
        row("bob", "01_first", "icu-sensitivity", "failed", message="Δ₁: got 3, which is not right"),
        row("bob", "01_first", "exact-tail-level", "passed"),
    ]
    evil = "=evil<script>alert(1)</script>/../../x"
    for notebook, maximum in (("01_first", 1.0), ("02_second", 2.0)):
        found += [
            row(evil, notebook, "max-queries", "failed", maximum, mistake=LOG),
            row(evil, notebook, "icu-sensitivity", "errored", maximum, message="your answer cell timed out"),
            row(evil, notebook, "exact-tail-level", "not attempted", maximum),
        ]
    found.append(GradeRow("bob", "01_first-Copy1", "-", "duplicate", message="another file of yours was graded"))
    return found


@pytest.fixture
def graded(tmp_path):
    source = course(tmp_path)
    report = tmp_path / "shard.csv"
    write_report(rows(), report)
    roster = tmp_path / "roster.csv"
    roster.write_text(
        "student,name,canvas_id,sis_user_id,section,sid,email\n"
        "ada,Ada Lovelace,101,S-1,A,1,ada@uni.example\nbob,,102,,B,2,bob@uni.example\n"
        "carol,Carol Q,103,S-3,A,3,carol@uni.example\n"
    )
    out = tmp_path / "grades.csv"
    status = main(
        [
            "grade",
            "--merge",
            str(report),
            "--report",
            str(out),
            "--source",
            str(source),
            "--roster",
            str(roster),
            "--gradebook",
            "canvas",
            "--gradebook",
            "gradescope",
            "--feedback",
            str(tmp_path / "feedback"),
        ]
    )
    return {"status": status, "folder": tmp_path, "out": out}


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_totals_are_over_the_whole_course_with_missing_notebooks_and_roster_only_students_at_zero(graded):
    assert graded["status"] == 0
    table = read_csv(graded["folder"] / "grades_totals.csv")
    assert table[0] == ["student", "01_first", "02_second", "total", "max"]
    by_student = {line[0]: line[1:] for line in table[1:]}
    assert by_student["ada"] == ["3", "6", "9", "9"]
    assert by_student["bob"] == ["1", "0", "1", "9"]  # 02 not handed in: 0 of its 6 points
    assert by_student["carol"] == ["0", "0", "0", "9"]  # on the roster, nothing submitted
    assert any(s.startswith("'=evil") for s in by_student)  # a formula-like name is neutralised


def test_canvas_import_has_its_columns_the_points_possible_row_and_the_roster_fields(graded):
    table = read_csv(graded["folder"] / "grades_canvas.csv")
    assert table[0] == ["Student", "ID", "SIS User ID", "Section", "01_first", "02_second"]
    assert table[1] == ["Points Possible", "", "", "", "3", "6"]
    by_name = {line[0]: line for line in table[2:]}
    assert by_name["Ada Lovelace"] == ["Ada Lovelace", "101", "S-1", "A", "3", "6"]
    assert by_name["bob"] == ["bob", "102", "", "B", "1", "0"]  # no name on the roster: the id stands in
    assert by_name["Carol Q"][4:] == ["0", "0"]


def test_gradescope_import_has_name_sid_email_and_the_course_score(graded):
    table = read_csv(graded["folder"] / "grades_gradescope.csv")
    assert table[0] == ["Name", "SID", "Email", "Score"]
    assert ["Ada Lovelace", "1", "ada@uni.example", "9"] in table and [
        "Carol Q",
        "3",
        "carol@uni.example",
        "0",
    ] in table


def test_the_summary_counts_each_named_mistake_and_is_self_contained_and_escaped(graded):
    page = (graded["folder"] / "grades_summary.html").read_text()
    assert "<script" not in page.lower() and "http://" not in page and "https://" not in page
    assert page.count("data:image/png;base64,") == 1
    max_queries_01 = re.search(r"<td>01_first</td><td class='id'>max-queries</td>(.*?)</tr>", page).group(1)
    assert f"2 × {LOG.replace('<', '&lt;')}" in max_queries_01  # bob and the hostile student
    assert "(1/4)" in max_queries_01  # ada passed, of 4 students
    icu_01 = re.search(r"<td>01_first</td><td class='id'>icu-sensitivity</td>(.*?)</tr>", page).group(1)
    assert "1 × other wrong answers" in icu_01
    second = re.search(r"<td>02_second</td><td class='id'>exact-tail-level</td>(.*?)</tr>", page).group(1)
    assert re.search(r"<td class='num'>3</td>", second)  # bob and carol did not hand it in, evil left it


def test_the_terminal_summary_names_the_most_common_mistake():
    outline = {"01_first": dict.fromkeys(EXERCISES, 1.0), "02_second": dict.fromkeys(EXERCISES, 2.0)}
    totals = gradebook.course_totals(rows(), outline, [gradebook.RosterEntry("carol")])
    text = gradebook.terminal_summary(gradebook.class_summary(rows(), outline, totals), totals)
    assert text.splitlines()[0] == "class: 4 students, mean 2.5 of 9 points"
    assert f"2 of 4 on max-queries: {LOG}" in text


def test_feedback_files_stay_in_their_folder_and_escape_what_the_student_wrote(graded):
    folder = graded["folder"] / "feedback"
    files = sorted(p.relative_to(folder) for p in folder.rglob("*.md"))
    assert len(files) == 4 * 2  # every student, every notebook of the course
    assert all(".." not in p.parts and len(p.parts) == 2 for p in files)
    bob = (folder / "bob" / "01_first.md").read_text()
    assert "1 of 3 points" in bob and LOG.replace("<", "&lt;") in bob and "Hint: a &lt;b&gt;hint&lt;/b&gt;" in bob
    assert "Nothing was handed in" in (folder / "bob" / "02_second.md").read_text()
    hostile = [p for p in files if p.parts[0].startswith("_evil")]
    assert len(hostile) == 2 and "<script>" not in (folder / hostile[0]).read_text()


def test_feedback_names_never_escape_and_never_collide():
    names = [gradebook.feedback_name(s) for s in ("../x", "..", "a/b", "a_b", "", "ok-1.2")]
    assert all("/" not in n and not n.startswith(".") and n for n in names)
    assert len(set(names)) == len(names) and names[-1] == "ok-1.2"


@pytest.mark.parametrize(
    "text, error",
    [
        ("ada\nbob\nada\n", "line 3: 'ada' is already on line 1"),
        ("name,email\nAda,a@x\n", "a comma"),
        ("student,grade\nada,3\n", "unknown columns grade"),
        ("student,name\n,Ada\n", "line 2: no student id"),
    ],
)
def test_a_bad_roster_is_refused_naming_the_line(tmp_path, text, error):
    path = tmp_path / "roster.txt"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(error)):
        gradebook.read_roster(path)


def test_a_plain_roster_is_one_student_per_line(tmp_path):
    path = tmp_path / "roster.txt"
    path.write_text("# course 2026\nada\n\nbob\n")
    assert [e.student for e in gradebook.read_roster(path)] == ["ada", "bob"]
