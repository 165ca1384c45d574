"""Reports and ``--merge`` (issues 27 and 28): any report ``grade`` writes reads back unchanged, a malformed one is a
named error, every merged row is checked against the course and the shard plan, and ``--replace`` lets a regrade
win without editing a CSV."""

from __future__ import annotations

import csv
import os
import stat

import pytest

from dpcourse.classroom.cli import main
from dpcourse.classroom.grading import reports
from dpcourse.classroom.grading.reports import GradeRow, merge, read_report, write_report
from dpcourse.classroom.grading.run import in_shard
from tests.classroom.grading_scenarios import EXERCISES, write_course

OUTLINE = {"small": dict.fromkeys(EXERCISES, 1.0)}


def rows_for(student: str, statuses: dict[str, str], notebook: str = "small") -> list[GradeRow]:
    return [
        GradeRow(student, notebook, ex, status, 1.0 if status == "passed" else 0.0, 1.0, message=f"{status} {ex}")
        for ex, status in statuses.items()
    ]


@pytest.mark.parametrize("student", ["'=x", "=cmd|' C calc'!A0", "'abc", "-1", "+x", "@y", "plain", "''"])
def test_ids_beginning_with_a_quote_or_a_formula_sign_read_back_unchanged(student, tmp_path):
    write_report(rows_for(student, {"max-queries": "passed"}), tmp_path / "r.csv")
    assert read_report(tmp_path / "r.csv")[0].student == student
    with open(tmp_path / "r.csv", newline="", encoding="utf-8") as handle:
        cell = list(csv.reader(handle))[1][0]
    assert not cell.startswith(("=", "+", "-", "@"))


def test_a_900_kB_cell_reads_back(tmp_path):
    row = GradeRow("alice", "small", "max-queries", "failed", 0.0, 1.0, message="x" * 900_000)
    write_report([row], tmp_path / "r.csv")
    assert read_report(tmp_path / "r.csv") == [row]


@pytest.mark.parametrize(
    "text, words",
    [
        ("student,notebook,exercise,status\nalice,small,max-queries,won\n", "line 2: unknown status"),
        ("student,notebook,exercise,status,points\nalice,small,max-queries,passed,lots\n", "not a number"),
        ("student,notebook,exercise,status\nalice,small,max-queries,passed,extra\n", "line 2: more cells"),
        ('student,notebook,exercise,status\n"alice,small\n', "not a readable report"),
        ("name,score\nalice,3\n", "not a grade report"),
    ],
)
def test_a_malformed_report_is_a_named_error(text, words, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=words) as caught:
        read_report(path)
    assert str(path) in str(caught.value)
    path.write_bytes(b"student,notebook,exercise,status\n\xff\xfe,small,max-queries,passed\n")
    with pytest.raises(ValueError, match="UTF-8"):
        read_report(path)


@pytest.mark.parametrize(
    "row, words",
    [
        (GradeRow("eve", "small", "max-queries", "passed", 19.0, 19.0), "worth 1 points"),
        (GradeRow("eve", "other", "max-queries", "passed", 1.0, 1.0), "not one of the course's"),
        (GradeRow("eve", "small", "invented", "passed", 1.0, 1.0), "no exercise"),
        (GradeRow("eve", "small", "max-queries", "failed", 1.0, 1.0), "failed row with all"),
        (GradeRow("eve", "small", "max-queries", "errored", 1.0, 1.0), "errored row with 1"),
        (GradeRow("eve", "small", "max-queries", "passed", 2.0, 1.0), "2 points of 1"),
        (GradeRow("eve", "small", "-", "invalid", 1.0, 1.0), "without an exercise"),
    ],
)
def test_merge_checks_every_row_against_the_course(row, words, tmp_path):
    write_report([row], tmp_path / "a.csv")
    with pytest.raises(ValueError, match=words):
        merge([tmp_path / "a.csv"], outline=OUTLINE)


def test_partial_credit_rows_are_accepted(tmp_path):
    write_report([GradeRow("eve", "small", "max-queries", "failed", 0.5, 1.0)], tmp_path / "a.csv")
    assert merge([tmp_path / "a.csv"], outline=OUTLINE).rows[0].points == 0.5


def _shards(tmp_path, students, count=2):
    files = []
    for index in range(count):
        path = tmp_path / f"shard-{index}.csv"
        owned = [s for s in students if in_shard(s, (index, count))]
        write_report([r for s in owned for r in rows_for(s, dict.fromkeys(EXERCISES, "passed"))], path)
        files.append(path)
    return files


def test_shards_merge_when_each_holds_its_own_students(tmp_path):
    students = [f"s{k}" for k in range(12)]
    files = _shards(tmp_path, students)
    assert {r.student for r in merge(files, outline=OUTLINE, shards=2).rows} == set(students)


def test_a_planted_or_missing_shard_is_refused(tmp_path):
    students = [f"s{k}" for k in range(12)]
    files = _shards(tmp_path, students)
    stranger = next(s for s in (f"x{k}" for k in range(50)) if in_shard(s, (1, 2)))
    rows = read_report(files[0]) + rows_for(stranger, dict.fromkeys(EXERCISES, "passed"))
    write_report(rows, files[0])
    with pytest.raises(ValueError, match="does not belong to shard 0"):
        merge(files, outline=OUTLINE, shards=2)
    with pytest.raises(ValueError, match="shard 1 of 2 has no report"):
        merge(files[:1], outline=OUTLINE, shards=2)
    (tmp_path / "shard-0_totals.csv").write_text("student,total\n")
    with pytest.raises(ValueError, match="not a grade report|named"):
        merge([*files, tmp_path / "shard-0_totals.csv"], outline=OUTLINE, shards=2)


def test_a_student_in_two_shard_files_is_refused(tmp_path):
    a, b = tmp_path / "shard-0.csv", tmp_path / "shard-1.csv"
    student = next(s for s in (f"x{k}" for k in range(50)) if in_shard(s, (0, 2)))
    write_report(rows_for(student, {"max-queries": "passed"}), a)
    write_report(rows_for(student, {"icu-sensitivity": "passed"}), b)
    with pytest.raises(ValueError, match="does not belong|in both"):
        merge([a, b], outline=OUTLINE, shards=2)


def test_replace_lets_the_later_report_win_for_exactly_its_student_and_notebook(tmp_path, capsys):
    week = rows_for("alice", dict.fromkeys(EXERCISES, "failed")) + rows_for("bob", dict.fromkeys(EXERCISES, "passed"))
    write_report(week, tmp_path / "old.csv")
    write_report(rows_for("alice", dict.fromkeys(EXERCISES, "passed")), tmp_path / "new.csv")
    with pytest.raises(ValueError, match="--replace"):
        merge([tmp_path / "old.csv", tmp_path / "new.csv"], outline=OUTLINE)
    merged = merge([tmp_path / "old.csv", tmp_path / "new.csv"], outline=OUTLINE, replace=True)
    assert {(r.student, r.status) for r in merged.rows} == {("alice", "passed"), ("bob", "passed")}
    assert merged.replaced == [("alice", "small", str(tmp_path / "new.csv"))]
    # the same through the command line, with the course from --source
    write_course(tmp_path, {})
    status = main(
        [
            "grade",
            "--merge",
            str(tmp_path / "old.csv"),
            str(tmp_path / "new.csv"),
            "--replace",
            "--source",
            str(tmp_path / "source"),
            "--report",
            str(tmp_path / "all.csv"),
        ]
    )
    assert status == 0
    assert "replaced: alice/small" in capsys.readouterr().out
    assert sum(r.points for r in read_report(tmp_path / "all.csv")) == 6


def test_reports_are_written_with_the_umasks_mode(tmp_path):
    for mask, mode in ((0o022, 0o644), (0o077, 0o600)):
        old = os.umask(mask)
        try:
            write_report(rows_for("alice", {"max-queries": "passed"}), tmp_path / f"r{mask}.csv")
        finally:
            os.umask(old)
        assert stat.S_IMODE((tmp_path / f"r{mask}.csv").stat().st_mode) == mode
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_the_terminal_table_escapes_control_characters():
    table = reports.summary_table(rows_for("eve\x1b[2J\rroot", {"max-queries": "passed"}))
    assert "\x1b" not in table and "\r" not in table and "\\x1b" in table


@pytest.mark.parametrize("bubblewrap", ["as this machine has it", "hidden"])
def test_a_release_as_source_is_refused_before_the_sandbox_is_looked_at(tmp_path, capsys, monkeypatch, bubblewrap):
    """Issue 37: a refusal that does not depend on the sandbox comes first, so it is the same on any machine."""
    from dpcourse.classroom.release import release_notebook
    from tests.classroom.grading_scenarios import NAME, source_notebook

    if bubblewrap == "hidden":
        monkeypatch.setenv("DPCOURSE_BWRAP", "/nonexistent/bwrap")
    paths = write_course(tmp_path, {"alice": {NAME: source_notebook()}})
    import nbformat

    nbformat.write(release_notebook(source_notebook()), tmp_path / "source" / NAME)
    assert (
        main(["grade", str(paths[0]), "--source", str(tmp_path / "source"), "--report", str(tmp_path / "r.csv")]) == 2
    )
    error = capsys.readouterr().err
    assert "student release" in error and "no sandbox" not in error
    assert not (tmp_path / "r.csv").exists()


def test_without_bubblewrap_a_bad_course_file_is_named_before_the_sandbox_and_then_the_sandbox(
    tmp_path, capsys, monkeypatch
):
    """The order an instructor meets the refusals in, on a machine without bubblewrap: arguments, the course file,
    the source, and only then the sandbox."""
    from tests.classroom.grading_scenarios import right

    monkeypatch.setenv("DPCOURSE_BWRAP", "/nonexistent/bwrap")
    paths = write_course(tmp_path, {"alice": {"small.ipynb": right()}})
    (tmp_path / "course.toml").write_text("[assignments.week1]\nnotebooks = ['no-such-notebook']\n")
    argv = ["grade", str(paths[0]), "--source", str(tmp_path / "source"), "--report", str(tmp_path / "r.csv")]
    assert main([*argv, "--course", str(tmp_path / "course.toml")]) == 2
    error = capsys.readouterr().err
    assert "no-such-notebook" in error and "no sandbox" not in error
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "bubblewrap (bwrap) is not installed" in error and "nothing was graded" in error
    assert not (tmp_path / "r.csv").exists()
