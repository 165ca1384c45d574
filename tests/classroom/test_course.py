"""The course file: every key read, every malformed key refused in one line naming it, lateness and its cost."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from dpcourse.classroom.course import (
    MAX_POINTS,
    Assignment,
    Course,
    CourseError,
    LatePolicy,
    duration_text,
    load_course,
)
from dpcourse.classroom.grading.plan import read_outline

EXERCISES = ("max-queries", "icu-sensitivity", "exact-tail-level")
OUTLINE = {
    "01_first": dict.fromkeys(EXERCISES, 1.0),
    "02_second": dict.fromkeys(EXERCISES, 2.0),
    "03_third": {"max-queries": 1.0},
}
EDT = timezone(timedelta(hours=-4))

FULL = """
[late]
grace_minutes = 15
penalty_per_day = 0.1
max_penalty = 0.5
accept_late = true

[assignments.week1]
name = "Week 1: Laplace"
notebooks = ["01_first", "02_second"]
due = 2026-10-05T23:59:00-04:00
points = { "01_first/max-queries" = 3, "02_second/icu-sensitivity" = 0.5 }
extra_credit = ["01_first/icu-sensitivity"]
partial_credit = ["02_second/exact-tail-level"]

[assignments.week2]
notebooks = ["03_third"]
due = "2026-10-12T23:59:00+00:00"

[extensions.ada]
week1 = 2026-10-07T23:59:00-04:00
[extensions."bob smith"]
week2 = 2.5
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "course.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_course_file_with_every_key_is_read_whole(tmp_path):
    course = load_course(write(tmp_path, FULL), OUTLINE)
    week1, week2 = course.assignments
    assert (week1.key, week1.name, week1.notebooks) == ("week1", "Week 1: Laplace", ("01_first", "02_second"))
    assert week1.due == datetime(2026, 10, 5, 23, 59, tzinfo=EDT)
    assert week1.points[("01_first", "max-queries")] == 3 and week1.points[("02_second", "icu-sensitivity")] == 0.5
    assert week1.points[("02_second", "max-queries")] == 2  # not overridden: the notebook's points
    assert week1.extra_credit == {("01_first", "icu-sensitivity")}
    assert week1.partial_credit == {("02_second", "exact-tail-level")}
    assert week1.maximum == 3 + 1 + 2 + 0.5 + 2  # the extra-credit exercise left out
    assert (week2.name, week2.due.utcoffset()) == ("week2", timedelta(0))  # name defaults to the key
    assert course.late == LatePolicy(15, 0.1, 0.5, True)
    assert course.due_for("ada", week1) == datetime(2026, 10, 7, 23, 59, tzinfo=EDT)
    assert course.due_for("bob smith", week2) == week2.due + timedelta(days=2.5)
    assert course.due_for("carol", week1) == week1.due
    assert course.partial_credit("02_second") == {"exact-tail-level"} and course.partial_credit("01_first") == set()
    assert course.assignment_of("03_third") is week2 and course.assignment_of("nope") is None


def test_the_shipped_example_course_file_fits_the_shipped_notebooks():
    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    course = load_course(notebooks / "course.toml", read_outline(notebooks))
    graded = [nb for a in course.assignments for nb in a.notebooks]
    assert sorted(graded) == sorted(p.stem for p in notebooks.glob("*.ipynb"))  # every notebook, once
    assert all(a.due is not None and a.due.utcoffset() is not None for a in course.assignments)


VALID = """
[assignments.week1]
notebooks = ["01_first"]
due = 2026-10-05T23:59:00-04:00
"""

# (what replaces VALID, or text added after it; the exact line the instructor reads)
MALFORMED = [
    (
        VALID + "[lates]\n",
        "course.toml: lates: unknown key (allowed: assignments, canvas, extensions, late, similarity, timezone)",
    ),
    (
        VALID.replace("notebooks", "nootbooks"),
        "course.toml: assignments.week1.nootbooks: unknown key "
        "(allowed: canvas_id, due, extra_credit, name, notebooks, partial_credit, points)",
    ),
    (
        VALID.replace("-04:00", ""),
        "course.toml: assignments.week1.due: 2026-10-05T23:59:00 has no timezone offset; "
        "write it like 2026-10-05T23:59:00-04:00 (ISO 8601 with a timezone offset)",
    ),
    (
        VALID.replace("2026-10-05T23:59:00-04:00", '"next friday"'),
        "course.toml: assignments.week1.due: 'next friday' is not a date and time; "
        "write it like 2026-10-05T23:59:00-04:00 (ISO 8601 with a timezone offset)",
    ),
    (
        VALID.replace("due = 2026-10-05T23:59:00-04:00", ""),
        "course.toml: assignments.week1.due: missing: every assignment needs its due time, "
        "e.g. 2026-10-05T23:59:00-04:00",
    ),
    (
        VALID.replace('"01_first"', '"01_frist"'),
        "course.toml: assignments.week1.notebooks: '01_frist' is not a notebook of the course "
        "(allowed: 01_first, 02_second, 03_third)",
    ),
    (
        VALID.replace('["01_first"]', '"01_first"'),
        "course.toml: assignments.week1.notebooks: must be a non-empty list of notebook names "
        "(allowed: 01_first, 02_second, 03_third), got '01_first'",
    ),
    (
        VALID + VALID.replace("week1", "week2"),
        "course.toml: assignments.week2.notebooks: '01_first' is already in assignments.week1",
    ),
    (
        VALID + "points = { max-querys = 2 }\n",
        "course.toml: assignments.week1.points.max-querys: 'max-querys' is not an exercise of this assignment "
        "(allowed: exact-tail-level, icu-sensitivity, max-queries)",
    ),
    (
        VALID + "points = { max-queries = -1 }\n",
        "course.toml: assignments.week1.points.max-queries: must be a number more than 0 and at most 10000, got -1",
    ),
    (
        VALID + "points = { max-queries = true }\n",
        "course.toml: assignments.week1.points.max-queries: must be a number more than 0 and at most 10000, got True",
    ),
    # issue 38: points so large the totals overflow (1e308 twice is inf) and the summary's figure died
    (
        VALID + "points = { max-queries = 1e308 }\n",
        "course.toml: assignments.week1.points.max-queries: must be a number more than 0 and at most 10000, got 1e+308",
    ),
    (
        VALID + "points = { max-queries = 10000.5 }\n",
        "course.toml: assignments.week1.points.max-queries: must be a number more than 0 and at most 10000, "
        "got 10000.5",
    ),
    (
        VALID + "points = { max-queries = inf }\n",
        "course.toml: assignments.week1.points.max-queries: must be a number more than 0 and at most 10000, got inf",
    ),
    (
        VALID + "points = { max-queries = nan }\n",
        "course.toml: assignments.week1.points.max-queries: must be a number more than 0 and at most 10000, got nan",
    ),
    (
        VALID.replace('["01_first"]', '["01_first", "02_second"]') + "extra_credit = ['max-queries']\n",
        "course.toml: assignments.week1.extra_credit: 'max-queries' is in 01_first and 02_second; "
        "write it as '<notebook>/max-queries'",
    ),
    (
        VALID + "extra_credit = 'max-queries'\n",
        "course.toml: assignments.week1.extra_credit: must be a list of exercise ids, got 'max-queries'",
    ),
    (
        VALID + "extra_credit = ['max-queries', 'icu-sensitivity', 'exact-tail-level']\n",
        "course.toml: assignments.week1.extra_credit: leaves the assignment no points that are not extra credit",
    ),
    (
        VALID + "partial_credit = ['max-queries']\n",
        "course.toml: assignments.week1.partial_credit: 'max-queries' is not a function exercise, so it has no "
        "share of inputs passed (allowed: exact-tail-level)",
    ),
    (
        VALID + "name = ''\n",
        "course.toml: assignments.week1.name: must be a non-empty string, got ''",
    ),
    (
        VALID + "name = 'W'\n" + VALID.replace("week1", "week2").replace("01_first", "02_second") + "name = 'W'\n",
        "course.toml: assignments.week2.name: 'W' is already the name of assignments.week1",
    ),
    (
        VALID.replace("week1", '"week 1"'),
        "course.toml: assignments.\"week 1\": an assignment's key may hold only letters, digits, '-' and '_' "
        "(it names files)",
    ),
    (
        "[late]\ngrace_minutes = 5\n",
        "course.toml: assignments: missing: the course needs at least one assignment ([assignments.<name>])",
    ),
    ("assignments = {}\n", "course.toml: assignments: the course needs at least one assignment ([assignments.<name>])"),
    (
        VALID + "[late]\npenalty_per_day = 1.5\n",
        "course.toml: late.penalty_per_day: must be a number from 0 to 1, got 1.5",
    ),
    (VALID + "[late]\nmax_penalty = -0.1\n", "course.toml: late.max_penalty: must be a number from 0 to 1, got -0.1"),
    (
        VALID + "[late]\ngrace_minutes = '15'\n",
        "course.toml: late.grace_minutes: must be a number from 0 to 525600, got '15'",
    ),
    (
        VALID + "[late]\ngrace_minutes = 1e308\n",
        "course.toml: late.grace_minutes: must be a number from 0 to 525600, got 1e+308",
    ),
    (
        VALID + "[late]\ngrace_minutes = inf\n",
        "course.toml: late.grace_minutes: must be a number from 0 to 525600, got inf",
    ),
    (VALID + "[late]\naccept_late = 'no'\n", "course.toml: late.accept_late: must be true or false, got 'no'"),
    (
        VALID + "[late]\ngrace = 15\n",
        "course.toml: late.grace: unknown key (allowed: accept_late, grace_minutes, max_penalty, penalty_per_day)",
    ),
    (VALID + "[extensions.ada]\nweek9 = 2\n", "course.toml: extensions.ada.week9: unknown key (allowed: week1)"),
    (
        VALID + "[extensions.ada]\nweek1 = 2026-10-07T23:59:00\n",
        "course.toml: extensions.ada.week1: 2026-10-07T23:59:00 has no timezone offset; "
        "write it like 2026-10-05T23:59:00-04:00 (ISO 8601 with a timezone offset)",
    ),
    (
        VALID + "[extensions.ada]\nweek1 = -2\n",
        "course.toml: extensions.ada.week1: must be a number more than 0 and at most 365, got -2",
    ),
    (
        VALID + "[extensions.ada]\nweek1 = true\n",
        "course.toml: extensions.ada.week1: must be a new due time or a number of extra days, got True",
    ),
    (VALID + "extensions = ['ada']\n", "course.toml: assignments.week1.extensions: unknown key"),
    ("[assignments.week1\n", "course.toml: not valid TOML: "),
]


@pytest.mark.parametrize("text, line", MALFORMED, ids=[line.split(":")[1].strip() for _, line in MALFORMED])
def test_a_malformed_key_is_refused_in_one_line_naming_it_and_the_file_is_left_as_it_was(tmp_path, text, line):
    path = write(tmp_path, text)
    before = path.read_bytes()
    with pytest.raises(CourseError) as caught:
        load_course(path, OUTLINE)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(line.replace("course.toml", str(path), 1)), message
    assert isinstance(caught.value, ValueError)  # the cli's `except ValueError` prints it and exits 2
    assert path.read_bytes() == before


def test_the_points_bound_is_inclusive_and_a_notebooks_own_points_are_bounded_too(tmp_path):
    course = load_course(write(tmp_path, VALID + f"points = {{ max-queries = {MAX_POINTS:g} }}\n"), OUTLINE)
    assert course.assignments[0].points[("01_first", "max-queries")] == MAX_POINTS
    huge = {**OUTLINE, "01_first": {**OUTLINE["01_first"], "max-queries": 1e308}}
    with pytest.raises(CourseError) as caught:
        load_course(write(tmp_path, VALID), huge)
    assert str(caught.value).startswith(
        f"{tmp_path / 'course.toml'}: assignments.week1.notebooks: 01_first's exercise 'max-queries' has 1e+308 "
        "points in its check cell's metadata (allowed: from 0 to 10000)"
    )
    fixed = VALID + "points = { max-queries = 2 }\n"  # the course file can override them
    assert load_course(write(tmp_path, fixed), huge).assignments[0].points[("01_first", "max-queries")] == 2


def test_an_unreadable_course_file_is_a_course_error(tmp_path):
    path = tmp_path / "course.toml"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(CourseError, match="course.toml: cannot be read"):
        load_course(path, OUTLINE)


def course(policy: LatePolicy, extensions=None) -> Course:
    due = datetime(2026, 10, 5, 23, 59, tzinfo=EDT)
    return Course((Assignment("nb", "A", ("nb",), due, {("nb", "a"): 10.0}),), policy, extensions or {})


def late_by(**span):
    return datetime(2026, 10, 5, 23, 59, tzinfo=EDT) + timedelta(**span)


def test_within_the_grace_period_work_is_on_time_and_after_it_each_started_day_costs_the_daily_penalty():
    c = course(LatePolicy(grace_minutes=15, penalty_per_day=0.1, max_penalty=0.5))
    a = c.assignments[0]
    assert c.lateness("ada", a, late_by(minutes=-5)) is None
    grace = c.lateness("ada", a, late_by(minutes=10))
    assert grace.within_grace and not grace.late and grace.fraction == 0
    one = c.lateness("ada", a, late_by(minutes=20))
    assert one.late and one.days == 1 and one.fraction == pytest.approx(0.1)
    two = c.lateness("ada", a, late_by(days=1, minutes=1))
    assert two.days == 2 and two.fraction == pytest.approx(0.2)
    assert c.lateness("ada", a, late_by(days=9)).fraction == 0.5  # the cap


def test_late_work_not_accepted_costs_everything_and_an_extension_moves_the_due_time():
    c = course(LatePolicy(accept_late=False), {"ada": {"nb": late_by(days=2)}})
    a = c.assignments[0]
    bob = c.lateness("bob", a, late_by(hours=1))
    assert bob.late and not bob.accepted and bob.fraction == 1
    assert c.lateness("ada", a, late_by(days=1)) is None  # before her extended due time
    assert c.lateness("ada", a, late_by(days=2, hours=1)).late


def test_times_in_other_zones_compare_as_instants():
    c = course(LatePolicy(penalty_per_day=0.25))
    utc = datetime(2026, 10, 6, 3, 58, tzinfo=UTC)  # 23:58 in New York, a minute early
    assert c.lateness("ada", c.assignments[0], utc) is None
    assert c.lateness("ada", c.assignments[0], utc + timedelta(minutes=2)).fraction == 0.25


def test_without_a_time_the_collectors_late_flag_marks_late_work_without_a_cost():
    c = Course.from_outline({"nb": {"a": 1.0}})
    flagged = c.lateness("ada", c.assignments[0], None, True)
    assert flagged.late and flagged.late_by is None and flagged.fraction == 0
    assert c.lateness("ada", c.assignments[0], late_by(days=3), None) is None  # no due time, no flag


def test_a_late_mark_without_a_time_costs_one_started_day_when_there_is_a_due_time():
    """Canvas's zip marks a file LATE but says not when: charged as the least a late mark can mean."""
    c = course(LatePolicy(penalty_per_day=0.25, max_penalty=0.2))
    marked = c.lateness("ada", c.assignments[0], None, True)
    assert marked.late and marked.late_by is None and marked.days == 1 and marked.fraction == 0.2  # the cap
    assert c.lateness("ada", c.assignments[0], None, False) is None
    refused = course(LatePolicy(accept_late=False)).lateness("ada", c.assignments[0], None, True)
    assert refused.fraction == 1.0 and not refused.accepted


@pytest.mark.parametrize(
    "span, text",
    [(timedelta(seconds=20), "1 min"), (timedelta(hours=2, minutes=5), "2 h 5 min"), (timedelta(days=1), "1 day")],
)
def test_durations_read_as_a_student_reads_them(span, text):
    assert duration_text(span) == text


# --------------------------------------------------------------------------- issue 38: calendar time, extension keys

# America/New_York leaves daylight saving at 2026-11-01 02:00 EDT (06:00 UTC): -04:00 before, -05:00 after.
NEW_YORK = """timezone = "America/New_York"

[late]
penalty_per_day = 0.25

[assignments.week1]
notebooks = ["01_first"]
due = 2026-10-30T23:59:00

[extensions.ada]
week1 = 3
[extensions.bob]
week1 = 2026-11-02T23:59:00
"""
EST = timezone(timedelta(hours=-5))


def test_due_times_without_an_offset_are_read_in_the_course_time_zone_and_extra_days_are_calendar_days(tmp_path):
    """ada's 3 extra days from Friday 23:59 EDT end on Monday 23:59 EST, after daylight saving ended: her file
    handed in at 23:30 that Monday (04:30 UTC on Tuesday) is on time, not 31 minutes late as 72 hours made it."""
    course = load_course(write(tmp_path, NEW_YORK), OUTLINE)
    week1 = course.assignments[0]
    assert course.timezone == ZoneInfo("America/New_York")
    assert week1.due == datetime(2026, 10, 30, 23, 59, tzinfo=EDT)
    assert course.due_for("ada", week1) == datetime(2026, 11, 2, 23, 59, tzinfo=EST)
    assert course.due_for("bob", week1) == datetime(2026, 11, 2, 23, 59, tzinfo=EST)  # offset-less, read in the zone
    handed_in = datetime(2026, 11, 3, 4, 30, tzinfo=UTC)
    assert course.lateness("ada", week1, handed_in) is None
    assert course.lateness("ada", week1, handed_in + timedelta(minutes=30)).late_by == timedelta(minutes=1)
    # Without an extension, the same file is 2 days 23 h 31 min late on the course's calendar (3 started days, as
    # ada's 3 extra days say), though 3 days 31 min passed.
    carol = course.lateness("carol", week1, handed_in)
    assert carol.late_by == timedelta(days=2, hours=23, minutes=31) and carol.days == 3 and carol.fraction == 0.75


def test_a_course_file_with_offsets_and_no_time_zone_reads_as_before(tmp_path):
    course = load_course(write(tmp_path, FULL), OUTLINE)
    assert course.timezone is None
    week2 = course.assignments[1]
    assert course.due_for("bob smith", week2) - week2.due == timedelta(days=2.5)  # 24-hour days, as before
    with_zone = load_course(write(tmp_path, 'timezone = "UTC"\n' + FULL), OUTLINE)
    assert with_zone.assignments[0].due == course.assignments[0].due  # an offset given is kept as the moment


@pytest.mark.parametrize(
    "text, line",
    [
        (
            'timezone = "America/Gotham"\n' + VALID,
            "course.toml: timezone: 'America/Gotham' is not a time zone this machine knows "
            "(allowed: an IANA time-zone name such as America/New_York",
        ),
        ('timezone = "../../etc/passwd"\n' + VALID, "course.toml: timezone: '../../etc/passwd' is not a time zone"),
        ("timezone = -5\n" + VALID, "course.toml: timezone: -5 is not a time zone this machine knows"),
        (
            NEW_YORK.replace("2026-10-30T23:59:00", "2026-11-01T01:30:00"),
            "course.toml: assignments.week1.due: 2026-11-01T01:30:00 is skipped or repeated in America/New_York",
        ),
        (
            NEW_YORK.replace("2026-10-30T23:59:00", "2026-03-08T02:30:00"),
            "course.toml: assignments.week1.due: 2026-03-08T02:30:00 is skipped or repeated in America/New_York",
        ),
    ],
)
def test_an_unknown_time_zone_or_an_ambiguous_local_time_is_refused_naming_the_key(tmp_path, text, line):
    path = write(tmp_path, text)
    with pytest.raises(CourseError) as caught:
        load_course(path, OUTLINE)
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(line.replace("course.toml", str(path), 1)), str(caught.value)


NFC_ZOE, NFD_ZOE = unicodedata.normalize("NFC", "zoë"), unicodedata.normalize("NFD", "zoë")


def test_extension_keys_are_nfc_so_an_nfd_key_reaches_the_nfc_student(tmp_path):
    course = load_course(write(tmp_path, VALID + f'[extensions."{NFD_ZOE}"]\nweek1 = 2\n'), OUTLINE)
    assert list(course.extensions) == [NFC_ZOE]
    assert course.extended(NFC_ZOE, course.assignments[0])


def test_an_extension_key_that_is_no_roster_id_or_one_only_after_nfc_is_refused_showing_the_key(tmp_path):
    path = write(tmp_path, VALID + f'[extensions."{NFD_ZOE}"]\nweek1 = 2\n')
    with pytest.raises(CourseError) as caught:
        load_course(path, OUTLINE, students=[NFC_ZOE, "ada"])
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: extensions.")
    assert "'zoe\\u0308'" in message and "'zo\\xeb'" in message and "only after Unicode NFC" in message
    with pytest.raises(CourseError, match=r"'zoe\\u0308' is no student id on the roster"):
        load_course(path, OUTLINE, students=["ada"])
    assert load_course(path, OUTLINE, students=[NFD_ZOE]).extensions == {NFC_ZOE: {"week1": ANY_DUE}}
    both = write(tmp_path, VALID + f'[extensions."{NFD_ZOE}"]\nweek1 = 2\n[extensions."{NFC_ZOE}"]\nweek1 = 1\n')
    with pytest.raises(CourseError, match="the same student as"):
        load_course(both, OUTLINE)


class _AnyDue:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, datetime)


ANY_DUE = _AnyDue()


def test_a_late_mark_without_a_time_on_an_extension_costs_nothing_and_says_to_check():
    """Canvas marks LATE against its own due date, which knows nothing of the course file's extension."""
    c = course(LatePolicy(penalty_per_day=0.25), {"ada": {"nb": late_by(days=2)}})
    a = c.assignments[0]
    marked = c.lateness("ada", a, None, True)
    assert marked.needs_check and marked.fraction == 0 and marked.days == 0 and marked.due == late_by(days=2)
    assert c.lateness("bob", a, None, True).fraction == 0.25  # no extension: one started day, as before
    refused = course(LatePolicy(accept_late=False), {"ada": {"nb": late_by(days=2)}})
    assert refused.lateness("ada", a, None, True).accepted  # not "late work scores 0" either
    timed = c.lateness("ada", a, late_by(days=2, hours=3))  # with the time: by the minute from her due time
    assert timed.late_by == timedelta(hours=3) and timed.fraction == 0.25 and not timed.needs_check


def test_grade_checks_the_extension_keys_against_its_roster_before_grading_anything(tmp_path, capsys):
    from dpcourse.classroom.cli import main

    notebooks = Path(__file__).resolve().parents[2] / "notebooks"
    path = write(
        tmp_path,
        '[assignments.week1]\nnotebooks = ["01_laplace_utility"]\ndue = 2026-10-05T23:59:00-04:00\n'
        f'[extensions."{NFD_ZOE}"]\nweek1 = 2\n',
    )
    roster = tmp_path / "roster.txt"
    roster.write_text(f"{NFC_ZOE}\nada\n", encoding="utf-8")
    argv = ["grade", "--merge", str(tmp_path / "absent.csv"), "--source", str(notebooks), "--course", str(path)]
    assert main([*argv, "--roster", str(roster), "--report", str(tmp_path / "grades.csv")]) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"grade: {path}: extensions.") and error.count("\n") == 1
    assert "'zoe\\u0308'" in error and "only after Unicode NFC" in error
    assert not (tmp_path / "grades.csv").exists()
