"""A semester with dpcourse (issue 28), end to end as an instructor runs it: what the LMS hands out is collected,
graded with a course file, and turned into the files the LMS takes back, without a CSV edited by hand.

Week 1 comes as Canvas's *Download Submissions* zip (a late file, a resubmission, a hostile member), week 2 as
Gradescope's *Export Submissions* zip (a late submission, one within an extension), week 3 as Canvas's zip again
with the JSON of Canvas's submissions API (issue 38): LATE-marked files, one of a student whose extension runs
across the end of daylight saving in the course's time zone (America/New_York, 2026-11-01). All are graded
unconfined (the tests must pass without bubblewrap) with ``--course``; then one student's fixed answer is regraded
and merged with ``--replace`` in weeks 2 and 3. Points: weeks 1 and 3 are "small" and "third" (three exercises of
1 point), week 2 is "second" (2 points each, ``exact-tail-level`` extra credit); every started day late costs 25 %
of the assignment, at most 50 %.
"""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import nbformat
import pytest

from dpcourse.classroom.cli import main
from dpcourse.classroom.grading import reports
from tests.classroom.grading_scenarios import WRONG, jobs_for, released, right, source_notebook, with_answers
from tests.classroom.ordinary_python import grade_command

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

COURSE = """\
timezone = "America/New_York"

[late]
grace_minutes = 10
penalty_per_day = 0.25
max_penalty = 0.5

[assignments.week1]
name = "Week 1"
notebooks = ["small"]
due = 2026-10-05T23:59:00+00:00

[assignments.week2]
name = "Week 2"
notebooks = ["second"]
due = 2026-10-12T23:59:00+00:00
extra_credit = ["exact-tail-level"]

[assignments.week3]
name = "Week 3"
notebooks = ["third"]
due = 2026-10-30T23:59:00

[extensions.carol]
week2 = 3
week3 = 3
"""
ROSTER = "student,name,canvas_id,sid,email\nalice,Alice Smith,1001,S1,alice@example.edu\n" + (
    "bob,Bob Jones,1002,S2,bob@example.edu\ncarol,Carol King,1003,S3,carol@example.edu\n"
)
# Gradescope's submission_metadata.yml (Ruby-symbol keys, its time format); bob is 1 day 6 h late (2 started
# days: 50 %), carol 2 days late within her 3-day extension, alice on time.
METADATA = """\
submission_11:
  :submitters:
  - :name: Alice Smith
    :sid: 'S1'
    :email: alice@example.edu
  :created_at: 2026-10-12 20:00:00.000000000 Z
submission_12:
  :submitters:
  - :name: Bob Jones
    :sid: 'S2'
    :email: bob@example.edu
  :created_at: 2026-10-14 05:59:00.000000000 Z
submission_13:
  :submitters:
  - :name: Carol King
    :sid: 'S3'
    :email: carol@example.edu
  :created_at: 2026-10-14 20:00:00.000000000 Z
"""
# Week 3 is due Friday 2026-10-30 23:59 EDT (03:59 UTC on the 31st); daylight saving ends on Sunday 1 November.
# Canvas marks bob's and carol's files LATE (against its own due date) and its submissions API says when: bob on
# Sunday 10:00 EST (1 day 10 h 1 min late: 2 started days, 50 %); carol on Monday 23:30 EST, within her 3 extra
# days (to Monday 23:59 EST; counted as 72 hours they ended at 22:59 EST and she was 31 minutes late).
SUBMISSIONS = [
    {
        "assignment_id": 303,
        "user_id": 1001,
        "submitted_at": "2026-10-30T20:00:00Z",
        "workflow_state": "submitted",
        "late": False,
        "seconds_late": 0,
        "attempt": 1,
    },
    {
        "assignment_id": 303,
        "user_id": 1002,
        "submitted_at": "2026-11-01T15:00:00Z",
        "workflow_state": "submitted",
        "late": True,
        "seconds_late": 122_460,
        "attempt": 1,
    },
    {
        "assignment_id": 303,
        "user_id": 1003,
        "submitted_at": "2026-11-03T04:30:00Z",
        "workflow_state": "submitted",
        "late": True,
        "seconds_late": 261_060,
        "attempt": 1,
    },
]


def text(nb) -> str:
    return nbformat.writes(nb)


def second_notebook():
    nb = source_notebook()
    for cell in nb.cells:
        if "check" in cell.metadata.get("tags", []):
            cell.metadata["dpcourse"]["points"] = 2
    return nb


def write_zip(path: Path, members) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return path


def grade(root: Path, week: str, files, *extra: str) -> int:
    return grade_command(
        [
            "grade",
            *map(str, files),
            "--source",
            str(root / "source"),
            "--course",
            str(root / "source" / "course.toml"),
            "--roster",
            str(root / "roster.csv"),
            "--sandbox",
            "none",
            "--jobs",
            jobs_for("none"),
            "--cell-timeout",
            "60",
            "--gradebook",
            "canvas",
            "--gradebook",
            "gradescope",
            "--feedback",
            str(root / "feedback"),
            "--report",
            str(root / f"{week}.csv"),
            *extra,
        ]
    )


def table(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.fixture(scope="module")
def semester(tmp_path_factory):
    root = tmp_path_factory.mktemp("semester")
    (root / "source").mkdir()
    nbformat.write(source_notebook(), root / "source" / "small.ipynb")
    nbformat.write(second_notebook(), root / "source" / "second.ipynb")
    nbformat.write(source_notebook(), root / "source" / "third.ipynb")
    (root / "source" / "course.toml").write_text(COURSE)
    (root / "roster.csv").write_text(ROSTER)
    wrong = with_answers(released(), **WRONG)
    canvas = write_zip(
        root / "canvas.zip",
        [
            ("smithalice_1001_5001_small.ipynb", text(right())),
            ("jonesbob_LATE_1002_5002_small.ipynb", text(right())),
            ("kingcarol_1003_5003_small.ipynb", text(wrong)),
            ("kingcarol_1003_5004_small-1.ipynb", text(right())),  # her resubmission: graded
            ("../../evil_1004_5005_small.ipynb", text(right())),
        ],
    )
    carol_week2 = with_answers(released(), max_queries="K_max = 5000", icu_sensitivity="icu_sensitivity = 10")
    gradescope = write_zip(
        root / "gradescope.zip",
        [
            ("assignment_77_export/submission_metadata.yml", METADATA),
            ("assignment_77_export/submission_11/second.ipynb", text(right())),
            ("assignment_77_export/submission_12/second.ipynb", text(right())),
            ("assignment_77_export/submission_13/second.ipynb", text(carol_week2)),
        ],
    )
    canvas_week3 = write_zip(
        root / "canvas-week3.zip",
        [
            ("smithalice_1001_6001_third.ipynb", text(right())),
            ("jonesbob_LATE_1002_6002_third.ipynb", text(right())),
            ("kingcarol_LATE_1003_6003_third.ipynb", text(carol_week2)),  # one of three right; regraded below
        ],
    )
    (root / "submissions.json").write_text(json.dumps(SUBMISSIONS))
    result = {"root": root}
    times = ["--canvas-submissions", str(root / "submissions.json")]
    for week, kind, archive, extra in (
        ("week1", "canvas", canvas, []),
        ("week2", "gradescope", gradescope, []),
        ("week3", "canvas", canvas_week3, times),
    ):
        out = root / week
        status = main(
            [
                "collect",
                kind,
                str(archive),
                "--out",
                str(out),
                "--roster",
                str(root / "roster.csv"),
                "--source",
                str(root / "source"),
                *extra,
            ]
        )
        assert status == 0
        result[f"{week}-collected"] = table(out / "collected.csv")
        status = grade(root, week, sorted(out.glob("*/*.ipynb")))
        assert status == 0, [(r.student, r.exercise, r.message) for r in reports.read_report(root / f"{week}.csv")]
        result[f"{week}-canvas"] = table(root / f"{week}_canvas.csv")
        result[f"{week}-gradescope"] = table(root / f"{week}_gradescope.csv")
        result[f"{week}-totals"] = table(root / f"{week}_totals.csv")
    return result


def by_student(rows: list[list[str]]) -> dict[str, list[str]]:
    return {line[0]: line[1:] for line in rows[1:]}


def test_canvas_is_collected_with_its_late_mark_the_resubmission_and_the_hostile_member_listed(semester):
    root = semester["root"]
    rows = {
        line[2]: dict(zip(semester["week1-collected"][0], line, strict=True))
        for line in semester["week1-collected"][1:]
    }
    assert rows["jonesbob_LATE_1002_5002_small.ipynb"]["late"] == "true"
    assert rows["kingcarol_1003_5004_small-1.ipynb"]["kept"] == "true"
    assert rows["kingcarol_1003_5003_small.ipynb"]["kept"] == "false"
    hostile = next(r for name, r in rows.items() if "evil" in name)
    assert hostile["kept"] == "false"
    assert sorted(p.name for p in (root / "week1").iterdir()) == ["alice", "bob", "carol", "collected.csv"]
    assert (
        not (root / "evil_1004_5005_small.ipynb").exists() and not (root.parent / "evil_1004_5005_small.ipynb").exists()
    )


def test_week1_totals_charge_the_canvas_late_mark_one_day(semester):
    canvas = semester["week1-canvas"]
    assert canvas[0][-1] == "Week 1" and "Week 2" not in canvas[0]
    assert canvas[1][-1] == "3"
    scores = {line[0]: line[-1] for line in canvas[2:]}
    assert scores == {"Alice Smith": "3", "Bob Jones": "2.25", "Carol King": "3"}


def test_week2_penalties_extensions_and_extra_credit(semester):
    canvas = semester["week2-canvas"]
    assert canvas[0][-1] == "Week 2" and "Week 1" not in canvas[0]  # last week's column is never rewritten
    assert canvas[1][-1] == "4"  # extra credit is above the maximum
    scores = {line[0]: line[-1] for line in canvas[2:]}
    # alice 6 of 4 (2 extra); bob 6 less 50 % of 4 (2 started days); carol 2 (one exercise right), on time by her
    # extension (without it, 2 days late would have cost her the 2 points)
    assert scores == {"Alice Smith": "6", "Bob Jones": "4", "Carol King": "2"}
    gradescope = {line[2]: line[3] for line in semester["week2-gradescope"][1:]}
    assert gradescope == {"alice@example.edu": "6", "bob@example.edu": "4", "carol@example.edu": "2"}


def test_feedback_says_how_late_and_what_it_cost(semester):
    bob = (semester["root"] / "feedback" / "bob" / "second.md").read_text()
    assert "late" in bob and "−2 points" in bob and "&#" not in bob
    canvas_bob = (semester["root"] / "feedback" / "bob" / "small.md").read_text()
    assert "one started day" in canvas_bob


def test_regrading_one_student_replaces_only_their_rows(semester):
    root = semester["root"]
    fixed = root / "regrade" / "carol"
    fixed.mkdir(parents=True)
    nbformat.write(right(), fixed / "second.ipynb")
    assert (
        grade(root, "carol-fixed", [fixed / "second.ipynb"], "--collected", str(root / "week2" / "collected.csv")) == 0
    )
    status = main(
        [
            "grade",
            "--merge",
            str(root / "week2.csv"),
            str(root / "carol-fixed.csv"),
            "--replace",
            "--source",
            str(root / "source"),
            "--course",
            str(root / "source" / "course.toml"),
            "--collected",
            str(root / "week2" / "collected.csv"),
            "--roster",
            str(root / "roster.csv"),
            "--gradebook",
            "canvas",
            "--report",
            str(root / "week2-final.csv"),
        ]
    )
    assert status == 0
    before, after = reports.read_report(root / "week2.csv"), reports.read_report(root / "week2-final.csv")
    assert [r for r in after if r.student != "carol"] == [r for r in before if r.student != "carol"]
    assert {r.status for r in after if r.student == "carol"} == {"passed"}
    scores = {line[0]: line[-1] for line in table(root / "week2-final_canvas.csv")[2:]}
    assert scores == {"Alice Smith": "6", "Bob Jones": "4", "Carol King": "6"}


def test_week3_canvas_times_charge_by_the_minute_and_an_extension_holds_across_daylight_saving(semester):
    collected = {line[0]: line for line in semester["week3-collected"][1:] if line[5] == "true"}
    assert collected["carol"][3:5] == ["2026-11-03T04:30:00+00:00", "true"]  # the API's time, Canvas's mark
    canvas = semester["week3-canvas"]
    assert canvas[0][-1] == "Week 3" and canvas[1][-1] == "3"
    scores = {line[0]: line[-1] for line in canvas[2:]}
    # bob 2 started days (50 %), not the one day a LATE mark cost; carol 1 of 3, on time by her extension
    assert scores == {"Alice Smith": "3", "Bob Jones": "1.5", "Carol King": "1"}
    bob = (semester["root"] / "feedback" / "bob" / "third.md").read_text()
    assert "1 day 10 h 1 min late (due 2026-10-30T23:59-04:00, handed in 2026-11-01T10:00-05:00)" in bob
    carol = (semester["root"] / "feedback" / "carol" / "third.md").read_text()
    assert "was handed in" not in carol and "marked late" not in carol and "deducted" not in carol


def test_regrading_week3_keeps_the_extension_and_the_canvas_times(semester):
    root = semester["root"]
    fixed = root / "regrade3" / "carol"
    fixed.mkdir(parents=True)
    nbformat.write(right(), fixed / "third.ipynb")
    collected = ["--collected", str(root / "week3" / "collected.csv")]
    assert grade(root, "carol-fixed3", [fixed / "third.ipynb"], *collected) == 0
    merged = ["grade", "--merge", str(root / "week3.csv"), str(root / "carol-fixed3.csv"), "--replace"]
    course = ["--source", str(root / "source"), "--course", str(root / "source" / "course.toml")]
    files = ["--roster", str(root / "roster.csv"), "--gradebook", "canvas", "--report", str(root / "week3-final.csv")]
    assert main([*merged, *course, *collected, *files]) == 0
    scores = {line[0]: line[-1] for line in table(root / "week3-final_canvas.csv")[2:]}
    assert scores == {"Alice Smith": "3", "Bob Jones": "1.5", "Carol King": "3"}
