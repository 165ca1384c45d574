"""The instructors' round trip: release, then grade solutions, releases, a wrong answer and a corrupt file."""

import json
from pathlib import Path

import nbformat
import pytest

from dpcourse import instructor
from dpcourse.__main__ import main

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One grading run over: every solution notebook, every released notebook, a wrong answer and a corrupt file."""
    root = tmp_path_factory.mktemp("submissions")
    solutions, released = root / "solutions", root / "student"
    solutions.mkdir()
    for path in NOTEBOOKS:
        (solutions / path.name).write_bytes(path.read_bytes())
    instructor.release(NOTEBOOKS[0].parent, released)
    wrong = nbformat.read(NOTEBOOKS[0], as_version=4)
    cell = next(c for c in wrong.cells if c.metadata.get("dpcourse", {}).get("exercise") == "sample-size"
                and instructor.BEGIN in c.source)
    cell.source = cell.source.replace("n_needed = K * np.log(K / beta) / (alpha * epsilon_office)", "n_needed = 1000.0")
    (root / "carol").mkdir()
    nbformat.write(wrong, root / "carol" / NOTEBOOKS[0].name)
    (root / "dave").mkdir()
    (root / "dave" / "broken.ipynb").write_text("{ this is not a notebook")
    paths = sorted(solutions.glob("*.ipynb")) + sorted(released.glob("*.ipynb")) + [root / "carol" / NOTEBOOKS[0].name,
                                                                                     root / "dave" / "broken.ipynb"]
    return instructor.grade(paths, cell_timeout=300)


def rows_of(rows, student):
    return [r for r in rows if r.student == student]


@pytest.mark.slow  # shares one grading run of every notebook (~1.5 min on 2 cores)
def test_solution_notebooks_pass_every_check(graded):
    rows = rows_of(graded, "solutions")
    assert {r.notebook for r in rows} == {p.stem for p in NOTEBOOKS}
    assert rows and all(r.status == "passed" for r in rows), [r for r in rows if r.status != "passed"]


@pytest.mark.slow  # shares one grading run of every notebook (~1.5 min on 2 cores)
def test_released_notebooks_fail_every_exercise_and_nothing_else(graded):
    rows = rows_of(graded, "student")
    assert all(r.exercise != "(other cells)" for r in rows), [r for r in rows if r.exercise == "(other cells)"]
    assert rows and all(r.status in ("failed", "errored") and r.message for r in rows)
    assert {r.notebook for r in rows} == {p.stem for p in NOTEBOOKS}


@pytest.mark.slow  # shares one grading run of every notebook (~1.5 min on 2 cores)
def test_one_wrong_answer_fails_exactly_that_exercise(graded):
    rows = {r.exercise: r for r in rows_of(graded, "carol")}
    assert rows["sample-size"].status == "failed" and rows["sample-size"].message.startswith("[sample-size]")
    assert all(r.status == "passed" for key, r in rows.items() if key != "sample-size")


@pytest.mark.slow  # shares one grading run of every notebook (~1.5 min on 2 cores)
def test_a_corrupt_file_is_reported_not_fatal(graded):
    (row,) = rows_of(graded, "dave")
    assert row.status == "invalid" and "not a readable notebook" in row.message


def test_command_line_writes_the_report_and_exits_zero(tmp_path, capsys):
    bad = tmp_path / "eve" / "x.ipynb"
    bad.parent.mkdir()
    bad.write_text(json.dumps({"not": "a notebook"}))
    report = tmp_path / "report.csv"
    assert main(["grade", str(bad), "--report", str(report)]) == 0
    assert "invalid" in capsys.readouterr().out
    assert report.read_text().splitlines()[0] == "student,notebook,exercise,status,message"
    assert main(["release", str(tmp_path / "out")]) == 0
    assert len(list((tmp_path / "out").glob("*.ipynb"))) == len(NOTEBOOKS)
