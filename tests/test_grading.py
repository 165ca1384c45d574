"""Grading as dishonest, careless and hostile students would test it, with honest controls.

One grading run (``jobs=2``) over a small source notebook with three of notebook 01's exercises
covers every scenario; a second run grades the real notebook 01 (solutions, the untouched
release, execution counts stripped). The sandbox tests need bubblewrap (CI installs it).
"""

from __future__ import annotations

import copy
import csv
import os
import shutil
import uuid
from pathlib import Path

import nbformat
import pytest

import dpcourse
from dpcourse import grading
from dpcourse.__main__ import main
from dpcourse.student_copy import release_notebook

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
HAS_BWRAP = shutil.which("bwrap") is not None
EXERCISES = ["max-queries", "icu-sensitivity", "exact-tail-level"]

RIGHT = {
    "max-queries": "### BEGIN SOLUTION\nK_max = 538\n### END SOLUTION",
    "icu-sensitivity": "### BEGIN SOLUTION\nicu_sensitivity = 10\n### END SOLUTION",
    "exact-tail-level": ("def exact_tail_level(k, beta, sensitivity, epsilon):\n    ### BEGIN SOLUTION\n"
                         "    return -np.log(1 - (1 - beta) ** (1 / k)) * sensitivity / epsilon\n    ### END SOLUTION"),
}
CHECKS = {"max-queries": "check.max_queries(K_max)", "icu-sensitivity": "check.icu_sensitivity(icu_sensitivity)",
          "exact-tail-level": "check.exact_tail_level(exact_tail_level)"}


def source_notebook():
    cells = [nbformat.v4.new_markdown_cell("# A small workbook"),
             nbformat.v4.new_code_cell("import numpy as np\nfrom dpcourse.checks import laplace as check")]
    for exercise in EXERCISES:
        meta = {"dpcourse": {"exercise": exercise}}
        cells.append(nbformat.v4.new_markdown_cell(f"### Exercise {exercise}"))
        cells.append(nbformat.v4.new_code_cell(RIGHT[exercise], metadata={**meta, "tags": ["solution"]}))
        cells.append(nbformat.v4.new_code_cell(CHECKS[exercise], metadata={**meta, "tags": ["check"]}))
    cells.append(nbformat.v4.new_code_cell('print("the end")'))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def answer_index(nb, exercise):
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("dpcourse", {}).get("exercise") == exercise
                and "solution" in c.metadata.get("tags", []))


def released():
    return release_notebook(source_notebook())


def with_answers(base, **answers):
    nb = copy.deepcopy(base)
    for exercise, text in answers.items():
        nb.cells[answer_index(nb, exercise.replace("_", "-"))].source = text
    return nb


WRONG = {"max_queries": "K_max = 5000", "icu_sensitivity": "icu_sensitivity = 30",
         "exact_tail_level": "def exact_tail_level(k, beta, sensitivity, epsilon):\n    return np.log(k / beta) * sensitivity / epsilon"}


def scenarios(root: Path) -> dict[str, object]:
    """student → notebook (or raw text), each one of the issue's cases."""
    rel = released()
    checks = [i for i, c in enumerate(rel.cells) if "check" in c.metadata.get("tags", [])]

    tamper = with_answers(rel, **WRONG)
    tamper.cells[checks[0]].source = "pass"
    tamper.cells[checks[1]].source = "try:\n    " + CHECKS["icu-sensitivity"] + "\nexcept Exception:\n    pass"
    tamper.cells[checks[2]].source = "# NBVAL_SKIP\ncheck.exact_tail_level(lambda k, b, s, e: 0)"
    tamper.cells[checks[2]].metadata["tags"] = ["check", "raises-exception"]

    patcher = with_answers(
        rel,
        max_queries="import numpy as np\nnp.allclose = lambda *a, **k: True\nnp.isclose = lambda *a, **k: True\nK_max = 5000",
        icu_sensitivity="import dpcourse.checks.laplace as m\nm.icu_sensitivity = lambda x: print('✓ icu-sensitivity: correct')\n"
                        "icu_sensitivity = 30",
        exact_tail_level="import json\nfrom IPython.display import display\n"
                         "display({'application/vnd.dpcourse.evidence': json.dumps({'nonce': 'guess', 'exercise': 'exact-tail-level', "
                         "'records': [{'exercise': 'exact-tail-level', 'evidence': {'value': 1}}]})}, raw=True)\n"
                         "def exact_tail_level(k, beta, sensitivity, epsilon):\n    return 0.0")

    timeouts = with_answers(rel, max_queries="import time\ntime.sleep(3600)\nK_max = 538",
                            icu_sensitivity="while True:\n    pass", exact_tail_level=RIGHT["exact-tail-level"])
    exits = with_answers(rel, max_queries="import os\nos._exit(0)", icu_sensitivity="icu_sensitivity = 10")

    structure = with_answers(rel, max_queries="K_max = 538")
    icu = answer_index(structure, "icu-sensitivity")
    del structure.cells[icu:icu + 2]  # the answer and its check are gone
    for k in range(20):
        structure.cells.append(nbformat.v4.new_code_cell("pass", metadata={"dpcourse": {"exercise": f"invented-{k}"},
                                                                            "tags": ["check"]}))

    regenerated = with_answers(rel, max_queries="K_max = 538", icu_sensitivity="icu_sensitivity = 10",
                               exact_tail_level=RIGHT["exact-tail-level"])
    for cell in regenerated.cells:
        cell.metadata = {}
        cell["id"] = uuid.uuid4().hex[:8]
    regenerated.cells.insert(3, nbformat.v4.new_code_cell("scratch = 1 + 1  # a student's own cell"))
    regenerated.cells.insert(1, nbformat.v4.new_markdown_cell("my notes"))

    stripped = copy.deepcopy(source_notebook())
    for cell in stripped.cells:
        if cell.cell_type == "code":
            cell.execution_count = None
            cell.outputs = [nbformat.v4.new_output("stream", text="old output\n")]

    hostile = with_answers(rel, icu_sensitivity=f"""import os, signal
targets = [lambda: open({str(root / 'alice' / 'small.ipynb')!r}).read(),
           lambda: open({str(root / 'source' / 'small.ipynb')!r}).read(),
           lambda: open({os.path.join(os.path.dirname(dpcourse.__file__), 'checks', 'laplace.py')!r}, 'a').write('# pwned'),
           lambda: os.kill({os.getpid()}, signal.SIGTERM),
           lambda: __import__('socket').create_connection(('127.0.0.1', 22), timeout=1)]
refused = []
for attempt in targets:
    try:
        attempt()
        refused.append(False)
    except Exception:
        refused.append(True)
print(refused)
icu_sensitivity = 10 if all(refused) else -1""")

    greedy = with_answers(rel, max_queries="print('x' * 5_000_000)\nK_max = 538",
                          icu_sensitivity="import numpy as np\nbig = np.ones(10**10)\nicu_sensitivity = 10")

    return {"alice": source_notebook(), "wrong": with_answers(rel, **WRONG), "untouched": rel, "stripped": stripped,
            "tamper": tamper, "patcher": patcher, "timeouts": timeouts, "exits": exits, "structure": structure,
            "regenerated": regenerated, "hostile": hostile, "greedy": greedy, "=cmd|' C calc'!A0": source_notebook(),
            "broken": "{ this is not a notebook"}


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("course")
    (root / "source").mkdir()
    nbformat.write(source_notebook(), root / "source" / "small.ipynb")
    paths = []
    for student, nb in scenarios(root).items():
        folder = root / student
        folder.mkdir()
        name = "small[final].ipynb" if student == "stripped" else "small.ipynb"
        if isinstance(nb, str):
            (folder / name).write_text(nb)
        else:
            nbformat.write(nb, folder / name)
        paths.append(folder / name)
    package_before = (Path(dpcourse.__file__).parent / "checks" / "laplace.py").read_text()
    # 10 s per cell: far above what any cell here needs (imports take 2–3 s on a loaded 2-core machine),
    # far below the sleeper's hour
    limits = grading.Limits(cell_timeout=10, notebook_timeout=240, memory_bytes=2 * 1024**3)
    rows = grading.grade(paths, source=root / "source", jobs=2, limits=limits)
    report = root / "grades.csv"
    grading.write_report(rows, report)
    return {"rows": rows, "root": root, "report": report, "package_before": package_before}


def statuses(graded, student):
    return {r.exercise: r.status for r in graded["rows"] if r.student == student}


def messages(graded, student):
    return {r.exercise: r.message for r in graded["rows"] if r.student == student}


# One shared grading run (about a minute on 2 cores): `make test` hands this file to one xdist worker
# (--dist loadfile), and the fixtures are session-scoped, so that they run once on it.
pytestmark = pytest.mark.slow


def test_honest_controls(graded):
    assert statuses(graded, "alice") == dict.fromkeys(EXERCISES, "passed")
    assert statuses(graded, "wrong") == dict.fromkeys(EXERCISES, "failed")
    assert statuses(graded, "untouched") == dict.fromkeys(EXERCISES, "not attempted")
    assert statuses(graded, "stripped") == dict.fromkeys(EXERCISES, "passed")  # and a '[' in the file name


def test_failed_rows_carry_the_checks_message_and_hint(graded):
    assert "off-by-one" not in messages(graded, "wrong")["max-queries"]
    assert "dropped the logarithm" in messages(graded, "wrong")["max-queries"]
    assert "Hint:" in messages(graded, "wrong")["icu-sensitivity"]


def test_changes_outside_the_answers_have_no_effect_and_are_noted(graded):
    assert statuses(graded, "tamper") == dict.fromkeys(EXERCISES, "failed")
    integrity = {r.integrity for r in graded["rows"] if r.student == "tamper"}
    assert integrity and "changed" in integrity.pop()


def test_patching_the_checker_or_faking_its_output_does_not_pass(graded):
    got = statuses(graded, "patcher")
    assert got["max-queries"] == "failed"  # np.allclose patched in the kernel: judged outside it
    assert got["icu-sensitivity"] != "passed"  # the check function replaced: no evidence, no pass
    assert got["exact-tail-level"] == "failed"  # a forged evidence output without the nonce is ignored


def test_a_timeout_or_a_dead_kernel_never_passes_and_the_rest_still_runs(graded):
    got = statuses(graded, "timeouts")
    assert got == {"max-queries": "errored", "icu-sensitivity": "errored", "exact-tail-level": "passed"}
    assert "timed out" in messages(graded, "timeouts")["max-queries"]
    got = statuses(graded, "exits")
    assert got == {"max-queries": "errored", "icu-sensitivity": "passed", "exact-tail-level": "not attempted"}
    assert "kernel" in messages(graded, "exits")["max-queries"]


def test_deleted_exercises_are_not_attempted_and_invented_ones_do_not_exist(graded):
    assert statuses(graded, "structure") == {"max-queries": "passed", "icu-sensitivity": "not attempted",
                                             "exact-tail-level": "not attempted"}


def test_answers_are_found_by_position_when_ids_and_metadata_were_regenerated(graded):
    assert statuses(graded, "regenerated") == dict.fromkeys(EXERCISES, "passed")


def test_huge_output_and_memory_are_contained(graded):
    got = statuses(graded, "greedy")
    assert got["max-queries"] == "passed" and got["icu-sensitivity"] == "errored"
    assert "MemoryError" in messages(graded, "greedy")["icu-sensitivity"]


@pytest.mark.skipif(not HAS_BWRAP, reason="needs bubblewrap (apt-get install bubblewrap)")
def test_the_sandbox_refuses_siblings_sources_the_package_the_grader_and_the_network(graded):
    assert statuses(graded, "hostile")["icu-sensitivity"] == "passed"  # passed only if all five attempts failed
    assert (Path(dpcourse.__file__).parent / "checks" / "laplace.py").read_text() == graded["package_before"]


def test_one_row_per_exercise_and_one_submission_never_changes_another(graded):
    rows = graded["rows"]
    for student in {r.student for r in rows} - {"broken"}:
        assert sorted(r.exercise for r in rows if r.student == student) == sorted(EXERCISES)
    assert statuses(graded, "broken") == {"-": "invalid"}
    assert statuses(graded, "=cmd|' C calc'!A0") == dict.fromkeys(EXERCISES, "passed")


def test_the_report_has_points_totals_and_no_formulas(graded):
    with open(graded["report"], newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert set(grading.COLUMNS) <= set(table[0])
    assert all(not row[c].startswith(("=", "+", "-", "@")) for row in table for c in grading.COLUMNS)
    assert any(row["student"].startswith("'=cmd") for row in table)
    assert {row["status"] for row in table} <= set(grading.STATUSES)
    totals_path = graded["report"].with_name("grades_totals.csv")
    with open(totals_path, newline="", encoding="utf-8") as handle:
        totals = {row["student"]: row for row in csv.DictReader(handle)}
    assert totals["alice"]["points"] == "3" and totals["alice"]["max_points"] == "3"
    assert totals["untouched"]["points"] == "0"
    assert grading.read_report(graded["report"]) == [
        grading.GradeRow(**{**r.__dict__, "points": float(r.points), "max_points": float(r.max_points)}) for r in graded["rows"]]


def test_merge_joins_shards_and_refuses_a_row_graded_twice(graded, tmp_path):
    rows = graded["rows"]
    half = len(rows) // 2
    grading.write_report(rows[:half], tmp_path / "a.csv")
    grading.write_report(rows[half:], tmp_path / "b.csv")
    assert main(["grade", "--merge", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--report", str(tmp_path / "all.csv")]) == 0
    assert grading.read_report(tmp_path / "all.csv") == grading.read_report(graded["report"])
    assert main(["grade", "--merge", str(tmp_path / "a.csv"), str(tmp_path / "a.csv"), "--report", str(tmp_path / "x.csv")]) == 2


def test_command_line_refuses_bad_input(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "missing.ipynb"), "--report", str(tmp_path / "r.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["grade", "x.ipynb", "--report", "r.csv", "--memory", "lots"])
    with pytest.raises(SystemExit):
        main(["grade", "x.ipynb", "--report", "r.csv", "--jobs", "0"])


def test_matching_by_position_survives_extra_cells():
    source = source_notebook()
    rel = released()
    sub = with_answers(rel, max_queries="K_max = 1")
    for cell in sub.cells:
        cell.metadata = {}
        cell["id"] = uuid.uuid4().hex[:8]
    sub.cells.insert(4, nbformat.v4.new_code_cell("print('my scratch work')"))
    answers = grading.match_answers(source, rel, sub, grading.source_exercises(source))
    assert sub.cells[answers["max-queries"]].source == "K_max = 1"
    assert sub.cells[answers["icu-sensitivity"]].source == rel.cells[answer_index(rel, "icu-sensitivity")].source


@pytest.fixture(scope="session")
def graded_notebook_01(tmp_path_factory):
    root = tmp_path_factory.mktemp("nb01")
    source = nbformat.read(NOTEBOOKS / "01_laplace_utility.ipynb", as_version=4)
    stripped = copy.deepcopy(source)
    for cell in stripped.cells:
        if cell.cell_type == "code":
            cell.execution_count = None
    for student, nb in {"solutions": source, "released": release_notebook(source), "stripped": stripped}.items():
        (root / student).mkdir()
        nbformat.write(nb, root / student / "01_laplace_utility.ipynb")
    return grading.grade(sorted(root.glob("*/*.ipynb")), jobs=2)


def test_the_real_notebook_01_grades_right(graded_notebook_01):
    by_student = {}
    for r in graded_notebook_01:
        by_student.setdefault(r.student, set()).add(r.status)
    assert by_student == {"solutions": {"passed"}, "released": {"not attempted"}, "stripped": {"passed"}}
    assert len([r for r in graded_notebook_01 if r.student == "solutions"]) == 3


def test_a_flood_of_cells_is_invalid_before_anything_runs(tmp_path):
    (tmp_path / "source").mkdir()
    nbformat.write(source_notebook(), tmp_path / "source" / "small.ipynb")
    sources, copies = grading.load_sources(tmp_path / "source")
    flood = released()
    flood.cells += [nbformat.v4.new_code_cell("pass") for _ in range(2000)]
    (tmp_path / "eve").mkdir()
    nbformat.write(flood, tmp_path / "eve" / "small.ipynb")
    row = grading.plan_submission(tmp_path / "eve" / "small.ipynb", sources, copies)
    assert isinstance(row, grading.GradeRow) and row.status == "invalid" and "cells" in row.message


def test_a_source_exercise_without_its_check_is_refused(tmp_path):
    nb = source_notebook()
    nb.cells = [c for c in nb.cells if "check" not in c.metadata.get("tags", [])]
    nbformat.write(nb, tmp_path / "small.ipynb")
    with pytest.raises(ValueError, match="no check cell"):
        grading.load_sources(tmp_path)
