"""The gradebook: totals over the whole course, LMS imports holding only what a run graded, late penalties,
extra and partial credit, the class summary, feedback ready to send; every student-provided string hostile."""

from __future__ import annotations

import csv
import fnmatch
import os
import re
import stat
import tomllib
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dpcourse import classroom
from dpcourse.classroom.course import load_course
from dpcourse.classroom.gradebook.feedback import feedback_name
from dpcourse.classroom.gradebook.render import _templates, class_summary, markdown_text, terminal_summary
from dpcourse.classroom.gradebook.roster import RosterEntry, SubmissionTime, read_collected, read_roster
from dpcourse.classroom.gradebook.totals import course_totals, hand_in_notes
from dpcourse.classroom.grading import reports
from dpcourse.classroom.grading.reports import GradeRow
from dpcourse.classroom.io import printable
from dpcourse.classroom.outputs import write_gradebook

EXERCISES = ["max-queries", "icu-sensitivity", "exact-tail-level"]
OUTLINE = {"01_first": dict.fromkeys(EXERCISES, 1.0), "02_second": dict.fromkeys(EXERCISES, 2.0)}
LOG = "you dropped the logarithm (K/(nε) ≤ α)"
EVIL = "=evil<script>alert(1)</script>/../../x"
DUE1 = datetime(2026, 10, 5, 23, 59, tzinfo=UTC)

COURSE = """
[late]
grace_minutes = 15
penalty_per_day = 0.1
max_penalty = 0.5

[assignments.week1]
name = "Week 1"
notebooks = ["01_first"]
due = 2026-10-05T23:59:00+00:00
points = { max-queries = 2 }
extra_credit = ["icu-sensitivity"]
partial_credit = ["exact-tail-level"]

[assignments.week2]
name = "Week 2"
notebooks = ["02_second"]
due = 2026-10-12T23:59:00+00:00

[extensions.bob]
week1 = 3
"""


def row(student, notebook, exercise, status, maximum=1.0, mistake="", message="", hint="", points=None, integrity=""):
    earned = points if points is not None else (maximum if status == "passed" else 0.0)
    return GradeRow(student, notebook, exercise, status, earned, maximum, message or mistake, hint, mistake, integrity)


def rows():
    """ada: everything right. bob: the first notebook only, one named mistake, one unnamed wrong answer, a
    duplicate file. The hostile name: a named mistake in each notebook. carol is only on the roster."""
    found = []
    for exercise in EXERCISES:
        found.append(row("ada", "01_first", exercise, "passed"))
        found.append(row("ada", "02_second", exercise, "passed", 2.0))
    found += [
        row("bob", "01_first", "max-queries", "failed", mistake=LOG, hint="a <b>hint</b>"),
        row("bob", "01_first", "icu-sensitivity", "failed", message="Δ₁: got 3, which isn't right & [so](x)"),
        row("bob", "01_first", "exact-tail-level", "passed"),
    ]
    for notebook, maximum in (("01_first", 1.0), ("02_second", 2.0)):
        found += [
            row(EVIL, notebook, "max-queries", "failed", maximum, mistake=LOG),
            row(EVIL, notebook, "icu-sensitivity", "errored", maximum, message="your answer cell timed out"),
            row(EVIL, notebook, "exact-tail-level", "not attempted", maximum, integrity="2 extra cells (not run)"),
        ]
    found.append(
        GradeRow(
            "bob",
            "01_first-Copy1",
            "-",
            "duplicate",
            message="another file of yours for 01_first, 01_first.ipynb, was graded instead",
        )
    )
    return found


ROSTER = [
    RosterEntry("ada", "Ada Lovelace", "101", "S-1", "A", "1", "ada@uni.example", "ada"),
    RosterEntry("bob", "", "102", "", "B", "2", "bob@uni.example"),
    RosterEntry("carol", "Carol Q", "103", "S-3", "A", "3", "carol@uni.example"),
]


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def run(tmp_path, found, *, course=None, submissions=None, lms=("canvas", "gradescope"), feedback=True):
    return write_gradebook(
        found,
        OUTLINE,
        report=tmp_path / "grades.csv",
        roster=ROSTER,
        lms=lms,
        feedback=tmp_path / "feedback" if feedback else None,
        course=course,
        submissions=submissions,
    )


@pytest.fixture
def graded(tmp_path):
    written, text = run(tmp_path, rows())
    return {"folder": tmp_path, "written": written, "text": text}


def test_totals_are_over_the_whole_course_with_missing_notebooks_and_roster_only_students_at_zero(graded):
    table = read_csv(graded["folder"] / "grades_totals.csv")
    assert table[0] == ["student", "01_first", "02_second", "total", "max"]
    by_student = {line[0]: line[1:] for line in table[1:]}
    assert by_student["ada"] == ["3", "6", "9", "9"]
    assert by_student["bob"] == ["1", "0", "1", "9"]  # 02 not handed in: 0 of its 6 points
    assert by_student["carol"] == ["0", "0", "0", "9"]  # on the roster, nothing submitted
    assert any(s.startswith("'=evil") for s in by_student)  # a formula-like name is neutralised


def test_canvas_holds_only_students_who_handed_in_with_an_empty_cell_for_what_they_did_not(graded):
    table = read_csv(graded["folder"] / "grades_canvas.csv")
    # Canvas's importer wants the student columns in this order, ending with Section
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "01_first", "02_second"]
    assert table[1] == ["Points Possible", "", "", "", "", "3", "6"]
    by_name = {line[0]: line for line in table[2:]}
    assert by_name["Ada Lovelace"] == ["Ada Lovelace", "101", "S-1", "ada", "A", "3", "6"]
    assert by_name["bob"] == ["bob", "102", "", "", "B", "1", ""]  # no 0 over a score Canvas may already hold
    assert "Carol Q" not in by_name  # nothing graded for her in this run: Canvas keeps what it has


def test_gradescope_has_one_file_per_assignment_graded_with_name_sid_email_and_score(graded):
    folder = graded["folder"]
    first = read_csv(folder / "grades_gradescope_01_first.csv")
    assert first[0] == ["Name", "SID", "Email", "Score"]
    assert ["Ada Lovelace", "1", "ada@uni.example", "3"] in first and ["bob", "2", "bob@uni.example", "1"] in first
    second = read_csv(folder / "grades_gradescope_02_second.csv")
    assert [line[0] for line in second[1:]] == ["'" + EVIL, "Ada Lovelace"]  # bob did not hand it in
    assert not (folder / "grades_gradescope.csv").exists()


def test_the_second_weeks_lms_files_hold_only_the_second_weeks_assignment(tmp_path):
    course = load_course(_course_file(tmp_path), OUTLINE)
    week1 = [r for r in rows() if r.notebook.startswith("01_first")]
    week2 = [r for r in rows() if r.notebook == "02_second"]
    run(tmp_path, week1, course=course)
    assert read_csv(tmp_path / "grades_canvas.csv")[0][5:] == ["Week 1"]
    written, _ = run(tmp_path, week2, course=course)
    canvas = read_csv(tmp_path / "grades_canvas.csv")
    assert canvas[0][5:] == ["Week 2"] and canvas[1][5:] == ["6"]
    assert {line[0] for line in canvas[2:]} == {"Ada Lovelace", "'" + EVIL}  # bob: nothing this week, no row
    gradescope = read_csv(tmp_path / "grades_gradescope.csv")  # one assignment: the plain name
    assert sorted(line[3] for line in gradescope[1:]) == ["0", "6"]
    assert read_csv(tmp_path / "grades_totals.csv")[0] == ["student", "Week 1", "Week 2", "total", "max"]
    assert tmp_path / "grades_gradescope.csv" in written


def _course_file(tmp_path, text=COURSE):
    path = tmp_path / "course.toml"
    path.write_text(text)
    return path


def totals_for(tmp_path, found, submissions=None, text=COURSE):
    course = load_course(_course_file(tmp_path, text), OUTLINE)
    return course_totals(found, OUTLINE, ROSTER, course=course, submissions=submissions)


def test_course_points_override_the_notebooks_and_extra_credit_counts_above_the_maximum(tmp_path):
    totals = totals_for(tmp_path, rows())
    week1 = totals.course.assignment("week1")
    assert week1.maximum == 3  # max-queries 2 (overridden), exact-tail-level 1; icu-sensitivity is extra
    assert totals.points("ada", "week1") == 4  # 2 + 1 + the extra point: above the maximum
    assert totals.total("ada") == 10 > totals.course_maximum == 9
    assert totals.points("bob", "week1") == 1


def test_partial_credit_counts_the_share_of_inputs_passed_only_where_the_course_says_so(tmp_path):
    found = [
        row("dan", "01_first", "exact-tail-level", "failed", points=0.6),
        row("dan", "02_second", "exact-tail-level", "failed", 2.0, points=1.2),  # not a partial-credit exercise
        row("eve", "01_first", "exact-tail-level", "failed", points=7.0),  # a hostile report: clipped to the maximum
    ]
    totals = totals_for(tmp_path, found)
    assert totals.points("dan", "week1") == pytest.approx(0.6)
    assert totals.points("dan", "week2") == 0
    assert totals.points("eve", "week1") == 1


def at(due, **span):
    return SubmissionTime(due + timedelta(**span), None, "x.ipynb")


def test_late_penalties_grace_cap_and_extension(tmp_path):
    perfect = [row(s, "01_first", ex, "passed") for s in ("ada", "bob", "dan", "eve") for ex in EXERCISES]
    submissions = {
        ("ada", "01_first"): at(DUE1, minutes=10),  # within the 15-minute grace
        ("dan", "01_first"): at(DUE1, hours=30),  # 2 started days: 20 % of 3 points
        ("eve", "01_first"): at(DUE1, days=30),  # capped at 50 %
        ("bob", "01_first"): at(DUE1, days=2),  # his extension is 3 days
    }
    totals = totals_for(tmp_path, perfect, submissions)
    assert totals.points("ada", "week1") == 4 and totals.scores["ada"]["week1"].lateness.within_grace
    assert totals.scores["dan"]["week1"].penalty == pytest.approx(0.6)
    assert totals.points("dan", "week1") == pytest.approx(3.4)
    assert totals.points("eve", "week1") == pytest.approx(2.5)
    assert totals.points("bob", "week1") == 4 and totals.scores["bob"]["week1"].lateness is None
    assert set(totals.late) == {("dan", "01_first"), ("eve", "01_first")}


def test_late_work_not_accepted_scores_zero_and_a_penalty_never_goes_below_zero(tmp_path):
    text = COURSE.replace("max_penalty = 0.5", "max_penalty = 0.5\naccept_late = false")
    found = [row("ada", "01_first", ex, "passed") for ex in EXERCISES] + [
        row("dan", "01_first", "max-queries", "failed")
    ]
    submissions = {("ada", "01_first"): at(DUE1, hours=1), ("dan", "01_first"): at(DUE1, hours=1)}
    totals = totals_for(tmp_path, found, submissions, text)
    assert totals.points("ada", "week1") == 0 and totals.scores["ada"]["week1"].penalty == 4
    assert totals.points("dan", "week1") == 0 and totals.scores["dan"]["week1"].penalty == 0


def test_the_late_penalty_reaches_every_gradebook_file_and_the_feedback_says_what_it_cost(tmp_path):
    course = load_course(_course_file(tmp_path), OUTLINE)
    perfect = [row("ada", "01_first", ex, "passed") for ex in EXERCISES]
    submissions = {("ada", "01_first"): at(DUE1, hours=30)}
    run(tmp_path, perfect, course=course, submissions=submissions)
    assert read_csv(tmp_path / "grades_canvas.csv")[2][5] == "3.4"
    assert read_csv(tmp_path / "grades_gradescope.csv")[1][3] == "3.4"
    assert [line[1] for line in read_csv(tmp_path / "grades_totals.csv") if line[0] == "ada"] == ["3.4"]
    text = (tmp_path / "feedback" / "ada" / "01_first.md").read_text()
    assert "1 day 6 h late (due 2026-10-05T23:59+00:00, handed in 2026-10-07T05:59+00:00)" in text
    assert "2 days at 10 % a day, 20 % of its 3 points: −0.6 points" in text
    assert "**3.4 of 3 points**, after the late penalty" in text
    assert "(1/1 extra credit)" in text


def test_feedback_is_markdown_without_html_entities_and_names_every_file_not_graded(tmp_path):
    submissions = {("bob", "01_first"): SubmissionTime(None, True, "01_first.ipynb", (("old.ipynb", "an older copy"),))}
    run(tmp_path, rows(), submissions=submissions)
    folder = tmp_path / "feedback"
    bob = (folder / "bob" / "01_first.md").read_text()
    assert not re.search(r"&#?\w+;", bob)  # no &#x27; nor &lt;
    assert "isn't right & \\[so\\](x)" in bob and "Hint: a \\<b>hint\\</b>" in bob
    assert LOG in bob  # nothing in the named mistake needs escaping
    assert "- 01_first-Copy1: duplicate, another file of yours for 01_first, 01_first.ipynb, was graded instead" in bob
    assert "- old.ipynb: set aside by the collector (an older copy)" in bob
    assert "marked late when it was collected; no due time is set for it, so no points were deducted" in bob
    assert not (folder / "bob" / "02_second.md").exists()  # nothing of his graded there: nothing overwritten
    files = sorted(p.relative_to(folder) for p in folder.rglob("*.md"))
    assert all(".." not in p.parts and len(p.parts) == 2 for p in files)
    hostile = [p for p in files if p.parts[0].startswith("_evil")]
    assert len(hostile) == 2
    page = (folder / hostile[0]).read_text()
    assert "\\<script>" in page and "<script>" not in page.replace("\\<script>", "")
    assert "# 01_first: feedback for =evil\\<script>alert(1)\\</script>/../../x" in page


def test_markdown_escapes_only_what_markdown_reads_as_markup():
    md = markdown_text
    assert md("it's K_max = 538 (≤ α)") == "it's K_max = 538 (≤ α)"
    assert md("<img src=x onerror=alert(1)>") == "\\<img src=x onerror=alert(1)>"
    assert md("&#x27; and &amp; but not AT&T") == "\\&#x27; and \\&amp; but not AT&T"
    assert md("# heading\n- item\n1. one\n> quote") == "\\# heading\n\\- item\n1\\. one\n\\> quote"
    assert md("title\n===\n-1 = 2 - 3") == "title\n\\===\n-1 = 2 - 3"
    assert md("*bold* `code` [a](b) ~x~ _y_") == "\\*bold\\* \\`code\\` \\[a\\](b) \\~x\\~ \\_y\\_"
    assert md("two\nlines\x1b[31m", inline=True) == "two\\\\x0alines\\\\x1b\\[31m"  # shows two\\x0alines\\x1b[31m


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600)])
def test_every_file_gets_the_umasks_mode(tmp_path, umask, mode):
    previous = os.umask(umask)
    try:
        written, _ = run(tmp_path, rows())
    finally:
        os.umask(previous)
    assert len(written) == 2 + 1 + 2 + 5  # totals, summary, canvas, two gradescope files, five feedback files
    assert {stat.S_IMODE(p.stat().st_mode) for p in written} == {mode}
    assert not [p for p in tmp_path.rglob(".*") if p.is_file()]  # no temporary file left behind


def test_the_summary_separates_not_handed_in_not_attempted_late_duplicates_and_integrity_notes(tmp_path):
    submissions = {("ada", "02_second"): SubmissionTime(None, True, "02_second.ipynb")}
    found = [*rows(), row("ada", "01_first", "exact-tail-level", "passed", integrity="1 extra cells (not run)")]
    _, text = run(tmp_path, found, submissions=submissions)
    page = (tmp_path / "grades_summary.html").read_text()
    table = re.search(r"<table id='hand-in'>(.*?)</table>", page, re.S).group(1)
    assert re.findall(r"<th>(.*?)</th>", table)[1:] == [
        "not handed in",
        "not attempted",
        "late",
        "duplicate or set aside",
        "invalid",
        "integrity",
    ]
    counts = dict(re.findall(r"<tr><td>(\w+)</td>((?:<td class='num'>\d+</td>)+)</tr>", table))
    assert re.findall(r"\d+", counts["01_first"]) == ["1", "1", "0", "1", "0", "2"]  # carol; evil; -; bob; -; ada, evil
    assert re.findall(r"\d+", counts["02_second"]) == [
        "2",
        "1",
        "1",
        "0",
        "0",
        "1",
    ]  # bob, carol; evil; ada; -; -; evil
    listed = re.search(r"<table id='hand-in-list'>(.*?)</table>", page, re.S).group(1)
    assert "<td>02_second</td><td>carol</td><td>not handed in</td>" in listed
    assert "<td>01_first</td><td>bob</td><td>duplicate or set aside</td><td>01_first-Copy1: another file" in listed
    assert "<td>02_second</td><td>ada</td><td>late</td><td>marked late, no due time</td>" in listed
    assert "<script" not in page.lower() and "http://" not in page and "https://" not in page
    assert "not handed in: 3, not attempted: 2, late: 1, duplicate or set aside: 1, integrity: 3" in text


def test_a_note_on_every_row_is_said_once_not_per_student(tmp_path):
    note = "graded without a sandbox (--sandbox none)"
    found = [GradeRow(**{**r.__dict__, "integrity": "; ".join(filter(None, [r.integrity, note]))}) for r in rows()]
    run(tmp_path, found)
    page = (tmp_path / "grades_summary.html").read_text()
    assert page.count(note) == 1 and f"On every submission of this run: {note}." in page


def test_the_summary_counts_each_named_mistake_and_is_self_contained(graded):
    page = (graded["folder"] / "grades_summary.html").read_text()
    assert page.count("data:image/png;base64,") == 1
    max_queries_01 = re.search(r"<td>01_first</td><td class='id'>max-queries</td>(.*?)</tr>", page).group(1)
    assert f"2 × {LOG.replace('<', '&lt;')}" in max_queries_01  # bob and the hostile student
    assert "(1/4)" in max_queries_01  # ada passed, of 4 students
    icu_01 = re.search(r"<td>01_first</td><td class='id'>icu-sensitivity</td>(.*?)</tr>", page).group(1)
    assert "1 × other wrong answers" in icu_01
    second = re.search(r"<td>02_second</td><td class='id'>exact-tail-level</td>(.*?)</tr>", page).group(1)
    assert re.findall(r"<td class='num'>(\d+)</td>", second) == ["1", "2", "0"]  # not attempted, not handed in


def test_the_terminal_summary_names_the_most_common_mistake_and_escapes_control_characters(tmp_path):
    found = [*rows(), row("\x1b[2J\u202emallory", "01_first", "max-queries", "failed", mistake="bad\x1b[31m")]
    _, text = run(tmp_path, found, lms=(), feedback=False)
    assert text.splitlines()[0] == "class: 5 students, mean 2 of 9 points"
    assert f"2 of 5 on max-queries: {LOG}" in text
    assert "\x1b" not in text and "\u202e" not in text
    totals = course_totals(found, OUTLINE, ROSTER)
    notes = hand_in_notes(found, totals)
    summary = terminal_summary(class_summary(found, totals), totals, notes, top=5)
    assert "1 of 5 on max-queries: bad\\x1b[31m" in summary


def test_an_extension_for_a_student_nobody_knows_is_pointed_out(tmp_path):
    course = load_course(_course_file(tmp_path, COURSE + "[extensions.adaa]\nweek2 = 1\n"), OUTLINE)
    _, text = run(tmp_path, rows(), course=course, lms=(), feedback=False)
    assert text.splitlines()[-1].endswith("not on the roster (misspelt?): adaa")  # bob is known: not listed


def test_an_unknown_lms_is_refused(tmp_path):
    with pytest.raises(ValueError, match="lms: unknown moodle"):
        run(tmp_path, rows(), lms=("moodle",))


def test_the_collectors_list_gives_times_late_flags_and_the_files_set_aside(tmp_path):
    path = tmp_path / "collected.csv"
    path.write_text(
        "student,notebook,source_file,submitted_at,late,kept,note\n"
        "ada,01_first,a.ipynb,2026-10-05T20:00:00-04:00,false,true,\n"
        "ada,01_first,a-old.ipynb,2026-10-04T20:00:00-04:00,false,false,older\n"
        "bob,01_first,b.ipynb,,true,true,\n"
        "cat,02_second,c.ipynb,2026-10-05T20:00:00,,true,\n"
        ",,junk.txt,,,false,not a notebook\n"
    )
    found = read_collected(path)
    assert set(found) == {("ada", "01_first"), ("bob", "01_first"), ("cat", "02_second")}
    ada = found[("ada", "01_first")]
    assert ada.submitted_at == datetime(2026, 10, 6, 0, 0, tzinfo=UTC) and ada.late is False
    assert ada.ignored == (("a-old.ipynb", "older"),)
    assert found[("bob", "01_first")] == SubmissionTime(None, True, "b.ipynb")
    assert found[("cat", "02_second")].submitted_at is None  # no offset: unknown, not guessed


def test_a_bad_collectors_list_is_refused_naming_the_line(tmp_path):
    path = tmp_path / "collected.csv"
    path.write_text("student,notebook,source_file,submitted_at,late,kept\nada,01_first,a.ipynb,,maybe,true\n")
    with pytest.raises(ValueError, match=r"line 2: column late holds 'maybe' \(allowed: true, false\)"):
        read_collected(path)


def test_feedback_names_never_escape_and_never_collide():
    names = [feedback_name(s) for s in ("../x", "..", "a/b", "a_b", "", "ok-1.2")]
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
        read_roster(path)


def test_a_plain_roster_is_one_student_per_line(tmp_path):
    path = tmp_path / "roster.txt"
    path.write_text("# course 2026\nada\n\nbob\n")
    assert [e.student for e in read_roster(path)] == ["ada", "bob"]


@pytest.mark.parametrize("header", ["student", "Student", "ID", "name", "SIS Login ID", "email", "  sid  "])
def test_a_one_column_rosters_header_is_not_a_student(tmp_path, header):
    path = tmp_path / "roster.txt"
    path.write_text(f"# course 2026\n{header}\nada\nbob\n")
    assert [e.student for e in read_roster(path)] == ["ada", "bob"]
    path.write_text("ada\nstudent\n")  # only the first line can be a header
    assert [e.student for e in read_roster(path)] == ["ada", "student"]


# Canvas's own export (Grades → Export), as it downloads: a byte-order mark, sortable names with commas, the
# assignment columns with their ids and the read-only totals after Section, the indented Points Possible row,
# the posting-policy row and the test student of Student View.
CANVAS_EXPORT = (
    "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Week 1 (8801),Week 2 (8802),Current Points,Final Points\n"
    "    Points Possible,,,,,3.00,6.00,(read only),(read only)\n"
    ",,,,,Manual Posting,,,\n"
    '"Lovelace, Ada",101,S-1,ada,Section A,4.00,6.00,10.00,10.00\n'
    '"Babbage, Charles",102,S-2,,Section B,1.00,,1.00,1.00\n'
    "Carol Q,103,,,Section A,,,0.00,0.00\n"
    '"Student, Test",999,,,Section A,,,0.00,0.00\n'
)


def test_canvas_gradebook_export_is_read_as_it_downloads(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text(CANVAS_EXPORT, encoding="utf-8")
    assert read_roster(path) == [
        RosterEntry("ada", "Lovelace, Ada", "101", "S-1", "Section A", sis_login_id="ada"),
        RosterEntry("S-2", "Babbage, Charles", "102", "S-2", "Section B"),
        RosterEntry("103", "Carol Q", "103", "", "Section A"),
    ]


def test_the_canvas_file_the_gradebook_writes_reads_back_as_a_roster(graded):
    roster = read_roster(graded["folder"] / "grades_canvas.csv")
    by_canvas_id = {e.canvas_id: e for e in roster}
    assert by_canvas_id["101"] == RosterEntry("ada", "Ada Lovelace", "101", "S-1", "A", sis_login_id="ada")
    assert by_canvas_id["102"] == RosterEntry("102", "bob", "102", "", "B")
    assert "Points Possible" not in {e.name for e in roster} and EVIL in {e.student for e in roster}


@pytest.mark.parametrize(
    "text, error",
    [
        ("Student,ID,SIS User ID,Email,Section\n", "unknown Canvas student column 'Email'"),
        ("Student,ID,SIS User ID\nAda,101,S-1\n", "needs its student columns to end with 'Section'"),
        ("Student,ID,Section\nAda,101,A\nAda B,101,A\n", "line 3: '101' is already on line 2"),
    ],
)
def test_a_bad_canvas_export_is_refused_in_one_line(tmp_path, text, error):
    path = tmp_path / "grades.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=re.escape(error)):
        read_roster(path)


def test_the_summary_figure_survives_totals_too_large_to_draw(tmp_path):
    # issue 38: without a course file a notebook's own points are unbounded; 1e308 twice is an infinite total
    outline = {"01_first": {"max-queries": 1e308, "icu-sensitivity": 1e308}}
    found = [row("ada", "01_first", ex, "passed") for ex in outline["01_first"]]
    written, _ = write_gradebook(found, outline, report=tmp_path / "grades.csv", lms=())
    assert tmp_path / "grades_summary.html" in written
    assert "data:image/png;base64," in (tmp_path / "grades_summary.html").read_text()


# --------------------------------------------------------------------------- templates (issue 31, item 4)

HOSTILE = (
    "{{ 7*7 }}{% for x in range(3) %}X{% endfor %}{{ cycler.__init__.__globals__ }}"
    "<script>alert('x')</script><img src=x onerror=\"alert(1)\">\x1b[31m\u202e[a](javascript:b) *em* `c`"
)


def hostile_rows():
    """A student whose id, messages, hints, named mistakes, integrity notes and file names are all hostile."""
    found = [
        GradeRow(
            HOSTILE,
            "01_first",
            exercise,
            "failed",
            0.0,
            1.0,
            HOSTILE + "\n# no heading\n- no list",
            HOSTILE,
            HOSTILE,
            HOSTILE,
        )
        for exercise in EXERCISES
    ]
    return [*rows(), *found, GradeRow(HOSTILE, HOSTILE, "-", "invalid", message=HOSTILE)]


class _Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes, self.text = set(), set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}

    def handle_data(self, data):
        self.text.append(data)


def test_hostile_text_is_shown_as_text_in_the_summary_page(tmp_path):
    run(tmp_path, hostile_rows(), feedback=False)
    source = (tmp_path / "grades_summary.html").read_text()
    page = _Page()
    page.feed(source)
    own = "html head meta title style body h1 h2 p img table tr th td span small br"
    assert page.tags == set(own.split())  # the page's own markup, nothing a student wrote
    assert page.attributes == {"lang", "charset", "alt", "src", "id", "class", "style"}  # no onerror
    shown = printable(HOSTILE, keep_newlines=True)  # escape sequences and bidi overrides shown, not obeyed
    assert "\x1b" not in source and "\u202e" not in source
    assert sum(shown in text for text in page.text) >= 4  # id, named mistake, file name, note: each as text
    assert "{{ 7*7 }}{% for x in range(3) %}X{% endfor %}{{ cycler.__init__.__globals__ }}" in source  # never source
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in source and "&#34;alert(1)&#34;" in source


def test_hostile_text_is_inert_in_the_feedback(tmp_path):
    run(tmp_path, hostile_rows(), lms=())
    (folder,) = [p for p in (tmp_path / "feedback").iterdir() if p.name.startswith("_7_7")]
    text = (folder / "01_first.md").read_text()
    assert "{{ 7\\*7 }}{% for x in range(3) %}X{% endfor %}" in text and "XXX" not in text  # data, not source
    assert not re.search(r"&#?\w+;", text)  # Markdown: backslash escapes, never HTML entities
    assert "\\<script>" in text and "\x1b" not in text and "\u202e" not in text
    assert "\n\\# no heading\n\\- no list\n" in text  # a message's lines start no heading, no list
    mistune = pytest.importorskip("mistune")  # nbconvert's Markdown renderer (a JupyterLab dependency)
    rendered = mistune.html(text)
    assert not re.search(r"<(script|img|a|em|code|h3)\b", rendered)
    assert rendered.count("<h1>") == 1 and rendered.count("<h2>") == 3 + 2  # exercises, files not graded, notes
    assert "{{ 7*7 }}" in rendered and "&lt;script&gt;" in rendered


def test_the_markdown_templates_escape_every_value_unless_a_filter_made_it_markdown():
    environment = _templates().text
    template = environment.from_string("{{ a }}|{{ n }}|{{ p|points }}|{{ m|block }}")
    assert template.render(a="# *x*\n<b>", n=2, p=0.5, m="1. a\n> b") == "\\# \\*x\\*\\\\x0a\\<b>|2|0.5|1\\. a\n\\> b"
    page = _templates().page.from_string("<td>{{ a }}</td>")
    assert page.render(a="<b>'\"&\x1b") == "<td>&lt;b&gt;&#39;&#34;&amp;\\x1b</td>"


def test_the_templates_ship_with_the_package():
    setuptools = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = setuptools["package-data"]["dpcourse.classroom"]
    folder = Path(classroom.__file__).parent / "templates"
    names = [f"templates/{p.name}" for p in folder.iterdir()]
    assert len(names) >= 3 and all(any(fnmatch.fnmatch(n, pattern) for pattern in patterns) for n in names)


def test_a_run_that_fails_to_write_leaves_the_last_runs_files_as_they_were(tmp_path, monkeypatch):
    written, _ = run(tmp_path, rows())
    before = {p: p.read_bytes() for p in written}

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(reports.os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space"):
        run(tmp_path, hostile_rows())
    assert {p: p.read_bytes() for p in written} == before
    assert not [p for p in tmp_path.rglob(".*")]  # no temporary file anywhere


def test_feedback_counts_an_exercise_graded_twice_as_the_totals_do(tmp_path):
    # of two rows for one exercise the later counts, in the totals and in the student's feedback alike
    found = [row("ada", "01_first", exercise, "passed") for exercise in EXERCISES]
    found.append(row("ada", "01_first", "max-queries", "failed", mistake=LOG))
    run(tmp_path, found)
    feedback = (tmp_path / "feedback" / "ada" / "01_first.md").read_text()
    assert "2 of 3 points" in feedback, feedback


# --------------------------------------------------------------------------- issue 38: lateness and extensions


def test_a_late_mark_without_a_time_on_an_extension_costs_nothing_and_the_row_and_feedback_say_to_check(tmp_path):
    """Canvas's zip said LATE (against Canvas's own due date) and not when: bob's 3-day extension may cover it, so
    he is not charged (he got 10.9 for 12, his feedback quoting the extended due date); dan has no extension and
    is charged one started day, as before."""
    course = load_course(_course_file(tmp_path), OUTLINE)
    perfect = [row(s, "01_first", ex, "passed") for s in ("bob", "dan") for ex in EXERCISES]
    marked = {(s, "01_first"): SubmissionTime(None, True, "x.ipynb") for s in ("bob", "dan")}
    written, text = run(tmp_path, perfect, course=course, submissions=marked)
    scores = {line[0]: line[5] for line in read_csv(tmp_path / "grades_canvas.csv")[2:]}
    assert scores["bob"] == "4" and scores["dan"] == "3.7"
    brief = "late mark, time unknown, extension until 2026-10-08T23:59+00:00: check"
    notes = hand_in_notes(perfect, course_totals(perfect, OUTLINE, course=course, submissions=marked), marked)
    assert [(n.student, n.detail) for n in notes if n.kind == "late"] == [
        ("bob", brief),
        ("dan", "marked late, time unknown (one day: −10 %)"),
    ]
    assert brief in (tmp_path / "grades_summary.html").read_text()
    bob = (tmp_path / "feedback" / "bob" / "01_first.md").read_text()
    assert brief in bob and "no points were deducted" in bob and "−" not in bob.split("## ")[0]


def test_with_canvas_times_lateness_is_by_the_minute_on_the_course_calendar_across_daylight_saving(tmp_path):
    """The course's zone is New York; week 1 is due Friday 2026-10-30 23:59 EDT; bob has 3 extra days, which end
    on Monday 23:59 EST, after daylight saving ended on Sunday. bob's file came at 23:30 EST that Monday: on time.
    dan's came 2 h after the due time: one started day, not the whole day every Canvas late file used to cost."""
    text = 'timezone = "America/New_York"\n' + COURSE.replace("2026-10-05T23:59:00+00:00", "2026-10-30T23:59:00")
    course = load_course(_course_file(tmp_path, text), OUTLINE, students=[e.student for e in ROSTER] + ["dan"])
    perfect = [row(s, "01_first", ex, "passed") for s in ("bob", "dan") for ex in EXERCISES]
    times = {
        ("bob", "01_first"): SubmissionTime(datetime(2026, 11, 3, 4, 30, tzinfo=UTC), True, "b.ipynb"),
        ("dan", "01_first"): SubmissionTime(datetime(2026, 10, 31, 5, 59, tzinfo=UTC), True, "d.ipynb"),
    }
    run(tmp_path, perfect, course=course, submissions=times)
    scores = {line[0]: line[5] for line in read_csv(tmp_path / "grades_canvas.csv")[2:]}
    assert scores == {"bob": "4", "dan": "3.7"}
    dan = (tmp_path / "feedback" / "dan" / "01_first.md").read_text()
    assert "2 h late (due 2026-10-30T23:59-04:00, handed in 2026-10-31T01:59-04:00)" in dan
    assert "extension" not in (tmp_path / "feedback" / "bob" / "01_first.md").read_text()
