"""Grading in bubblewrap, as dishonest, careless and hostile students would test it, with honest controls;
and the refusal to grade at all without a working sandbox.

One grading run (``jobs=2``) in the sandbox covers every scenario: honest students beside every
hostile one, so the test also shows that no submission changes another's rows or stops the batch.
A second run grades the real notebook 01. Both need a working bubblewrap and are skipped (with
bwrap's own reason, printed in the summary) without one; the refusal tests run everywhere.
The unconfined run (``--sandbox none``) is in ``tests/classroom/test_grade_unconfined.py``.
"""

from __future__ import annotations

import copy
import csv
import os
import stat
from pathlib import Path

import nbformat
import pytest

import dpcourse
from dpcourse.classroom.cli import main
from dpcourse.classroom.grading import plan as plans
from dpcourse.classroom.grading import reports
from dpcourse.classroom.grading.run import grade
from dpcourse.classroom.release import release_notebook
from dpcourse.classroom.sandbox.bubblewrap import BWRAP_ENV
from dpcourse.classroom.sandbox.limits import Limits
from dpcourse.classroom.sandbox.runner import SandboxUnavailable
from tests.classroom.grading_scenarios import (
    CHECKS,
    EXERCISES,
    NAME,
    RIGHT,
    WRONG,
    answer_index,
    pasted_twice,
    released,
    right,
    sandbox_problem,
    source_notebook,
    unreadable_files,
    with_answers,
    with_odd_metadata,
    write_course,
)

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CHECKS_LAPLACE = Path(dpcourse.__file__).parent / "checks" / "laplace.py"


SANDBOX_PROBLEM = sandbox_problem()
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def scenarios(root: Path) -> dict[str, dict[str, object]]:
    """student → {file: content}, each one of the issue's cases, honest ones among them."""
    rel = released()
    checks = [i for i, c in enumerate(rel.cells) if "check" in c.metadata.get("tags", [])]

    tamper = with_answers(rel, **WRONG)
    tamper.cells[checks[0]].source = "pass"
    tamper.cells[checks[1]].source = "try:\n    " + CHECKS["icu-sensitivity"] + "\nexcept Exception:\n    pass"
    tamper.cells[checks[2]].source = "# NBVAL_SKIP\ncheck.exact_tail_level(lambda k, b, s, e: 0)"
    tamper.cells[checks[2]].metadata["tags"] = ["check", "raises-exception"]

    patcher = with_answers(
        rel,
        max_queries="import numpy as np\nnp.allclose = lambda *a, **k: True\nnp.isclose = lambda *a, **k: True\n"
        "K_max = 5000",
        icu_sensitivity="import dpcourse.checks.laplace as m\n"
        "m.icu_sensitivity = lambda x: print('✓ icu-sensitivity: correct')\n"
        "icu_sensitivity = 30",
        exact_tail_level="import json\nfrom IPython.display import display\n"
        "display({'application/vnd.dpcourse.evidence': json.dumps({'nonce': 'guess', 'exercise': 'exact-tail-level', "
        "'records': [{'exercise': 'exact-tail-level', 'evidence': {'value': 1}}]})}, raw=True)\n"
        "def exact_tail_level(k, beta, sensitivity, epsilon):\n    return 0.0",
    )

    # Judges: a number as a string, a lookup table of the check's example inputs, np.vectorize's 0-d arrays.
    from dpcourse.checks import laplace as check_module
    from dpcourse.mechanisms import laplace_max_error_quantile

    table = {
        case: float(laplace_max_error_quantile(k=case[0], beta=case[1], sensitivity=case[2], epsilon=case[3]))
        for case in getattr(check_module, "_TAIL_CASES", [])
    }
    judges = with_answers(
        rel,
        max_queries="K_max = '538'",
        icu_sensitivity="icu_sensitivity = True",
        exact_tail_level=f"_table = {table!r}\ndef exact_tail_level(k, beta, sensitivity, epsilon):\n"
        "    return _table[(k, beta, sensitivity, epsilon)]",
    )
    vectorized = with_answers(
        right(),
        exact_tail_level=(
            "import numpy as np\n@np.vectorize\ndef exact_tail_level(k, beta, sensitivity, epsilon):\n"
            "    return -np.log(1 - (1 - beta) ** (1 / k)) * sensitivity / epsilon"
        ),
    )

    timeouts = with_answers(
        rel,
        max_queries="import time\ntime.sleep(3600)\nK_max = 538",
        icu_sensitivity="while True:\n    pass",
        exact_tail_level=RIGHT["exact-tail-level"],
    )
    exits = with_answers(rel, max_queries="import os\nos._exit(0)", icu_sensitivity="icu_sensitivity = 10")

    structure = with_answers(rel, max_queries="K_max = 538")
    icu = answer_index(structure, "icu-sensitivity")
    del structure.cells[icu : icu + 2]  # the answer and its check are gone
    for k in range(20):
        structure.cells.append(
            nbformat.v4.new_code_cell("pass", metadata={"dpcourse": {"exercise": f"invented-{k}"}, "tags": ["check"]})
        )

    regenerated = right()
    for cell in regenerated.cells:
        cell.metadata = {}
        cell["id"] = os.urandom(4).hex()
    regenerated.cells.insert(3, nbformat.v4.new_code_cell("scratch = 1 + 1  # a student's own cell"))
    regenerated.cells.insert(1, nbformat.v4.new_markdown_cell("my notes"))
    regenerated = with_odd_metadata(regenerated)

    # Every attempt must raise; the answer is right only if all of them did. The worker is pid 1 of the
    # sandbox's pid namespace: signals from inside are ignored, and its pipes cannot be opened.
    hostile = with_answers(
        rel,
        icu_sensitivity=f"""import os, signal
targets = [lambda: open({str(root / "submissions" / "alice" / NAME)!r}).read(),
           lambda: open({str(root / "source" / NAME)!r}).read(),
           lambda: open({str(CHECKS_LAPLACE)!r}, 'a').write('# pwned'),
           lambda: os.kill({os.getpid()}, signal.SIGTERM),
           lambda: __import__('socket').create_connection(('127.0.0.1', 22), timeout=1),
           lambda: open('/proc/%d/fd/1' % os.getppid(), 'wb').write(b'DPCOURSE-RESULT 2 00\\n{{}}'),
           lambda: open('/proc/1/mem', 'rb').read(1)]
refused = []
for attempt in targets:
    try:
        attempt()
        refused.append(False)
    except Exception:
        refused.append(True)
os.kill(os.getppid(), signal.SIGSTOP)
os.kill(os.getppid(), signal.SIGKILL)
print(refused)
icu_sensitivity = 10 if all(refused) else -1""",
        # nothing in the sandbox's view holds a nonce: the notebook came on a pipe
        max_queries="""import os
seen = []
writable = os.stat('/tmp').st_dev  # the sandbox's own tmpfs; the environment may be bound below /tmp (a CI clone)
for top in ('.', '/tmp'):
    for folder, folders, files in os.walk(top):
        folders[:] = [f for f in folders if os.stat(os.path.join(folder, f)).st_dev == writable]
        for name in files:
            try:
                seen.append(open(os.path.join(folder, name), errors='ignore').read())
            except OSError:
                pass
K_max = 538 if not any('_dpcourse_grading' in text for text in seen) else -1""",
    )

    # Limits: files go to a tmpfs of 256 MiB counted inside --memory (1.4 GB are refused), and forks are capped.
    limits = with_answers(
        rel,
        max_queries="""written = 0
try:
    with open('/tmp/fill', 'wb') as handle:
        for _ in range(1400):
            handle.write(b'0' * 1_000_000)
            written += 1
except OSError:
    pass
K_max = 538 if written < 1024 else -1""",
        icu_sensitivity="""import os
children = []
try:
    for _ in range(300):  # above the cap of 256, and quick to fork even on a loaded machine
        pid = os.fork()
        if pid == 0:
            import time
            time.sleep(30)
            os._exit(0)
        children.append(pid)
except OSError:
    pass
for pid in children:
    os.kill(pid, 9)
icu_sensitivity = 10 if len(children) < 300 else -1""",
    )

    greedy = with_answers(
        rel,
        max_queries="print('x' * 5_000_000)\nK_max = 538",
        icu_sensitivity="import numpy as np\nbig = np.ones(10**10)\nicu_sensitivity = 10",
    )

    return {
        "alice": {NAME: source_notebook()},
        "wrong": {NAME: with_answers(rel, **WRONG)},
        "untouched": {NAME: rel},
        "tamper": {NAME: tamper},
        "patcher": {NAME: patcher},
        "judges": {NAME: judges},
        "vectorized": {NAME: vectorized},
        "timeouts": {NAME: timeouts},
        "exits": {NAME: exits},
        "structure": {NAME: structure},
        "regenerated": {NAME: regenerated},
        "hostile": {NAME: hostile},
        "limits": {NAME: limits},
        "greedy": {NAME: greedy},
        "pasted": {
            NAME: pasted_twice(
                pasted_twice(right(), "max-queries", "K_max = 5000", "K_max = 538"),
                "icu-sensitivity",
                "icu_sensitivity = 10",
                "icu_sensitivity = 30",
            )
        },
        # a browser's second download of the same notebook, the later file: it is graded, the first is a duplicate
        "twice": {NAME: with_answers(rel, **WRONG), "small (1).ipynb": right()},
        "=cmd|' C calc'!A0": {NAME: "{ a spreadsheet formula as a student's name"},
        **unreadable_files(),
    }


def notebook_01_submissions() -> dict[str, dict[str, object]]:
    """The real notebook 01: its solutions, its untouched release, and the solutions with execution counts stripped."""
    source = nbformat.read(NOTEBOOKS / "01_laplace_utility.ipynb", as_version=4)
    stripped = copy.deepcopy(source)
    for cell in stripped.cells:
        if cell.cell_type == "code":
            cell.execution_count = None
            cell.outputs = [nbformat.v4.new_output("stream", text="old output\n")]
    return {
        "nb01-solutions": {"01_laplace_utility.ipynb": source},
        "nb01-released": {"01_laplace_utility.ipynb": release_notebook(source)},
        "nb01-stripped": {"01_laplace_utility[final].ipynb": stripped},
    }  # a '[' in the name: matched by content


@pytest.fixture(scope="session")
def graded(tmp_path_factory):
    if SANDBOX_PROBLEM is not None:
        pytest.skip(f"needs a working bubblewrap: {SANDBOX_PROBLEM}")
    root = tmp_path_factory.mktemp("course")
    paths = write_course(root, {**scenarios(root), **notebook_01_submissions()})
    nbformat.write(
        nbformat.read(NOTEBOOKS / "01_laplace_utility.ipynb", as_version=4),
        root / "source" / "01_laplace_utility.ipynb",
    )
    package_before = (Path(dpcourse.__file__).parent / "checks" / "laplace.py").read_text()
    # 20 s per cell: far above what any cell here needs on a machine running a second `make test` beside this
    # one (imports take 2–3 s on an idle 2-core machine, the fork and file limits' cells under 2 s; at 8 s they
    # timed out under load), far below the sleeper's hour. Four at a time on two cores: most of a run is
    # waiting (kernel start-up, the sleepers), and the batch shares one run with the real notebook 01.
    limits = Limits(cell_timeout=20, notebook_timeout=300)
    rows = grade(paths, source=root / "source", jobs=4, limits=limits)
    report = root / "grades.csv"
    reports.write_report(rows, report)
    return {"rows": rows, "root": root, "report": report, "package_before": package_before}


def statuses(graded, student):
    return {r.exercise: r.status for r in graded["rows"] if r.student == student}


def messages(graded, student):
    return {r.exercise: r.message for r in graded["rows"] if r.student == student}


# --------------------------------------------------------------------------- no sandbox: refuse, run nothing


def _refusing_bwrap(folder: Path) -> Path:
    fake = folder / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return fake


@pytest.mark.parametrize("kind", ["missing", "refused"])
def test_without_a_working_sandbox_grade_exits_2_having_run_and_written_nothing(kind, tmp_path, monkeypatch, capsys):
    paths = write_course(tmp_path, {"alice": {NAME: source_notebook()}})
    monkeypatch.setenv(
        BWRAP_ENV, str(tmp_path / "no-such-bwrap") if kind == "missing" else str(_refusing_bwrap(tmp_path))
    )
    report = tmp_path / "grades.csv"
    assert main(["grade", *map(str, paths), "--source", str(tmp_path / "source"), "--report", str(report)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--sandbox none" in err and "apt-get install bubblewrap" in err
    if kind == "missing":
        assert "not installed" in err
    else:
        assert "refused" in err and "Permission denied" in err and "Grading at scale" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bwrap", "source", "submissions"][kind == "missing" :]
    with pytest.raises(SandboxUnavailable):
        grade(paths, source=tmp_path / "source")


# --------------------------------------------------------------------------- the sandboxed batch


def test_honest_controls(graded):
    assert statuses(graded, "alice") == dict.fromkeys(EXERCISES, "passed")
    assert statuses(graded, "wrong") == dict.fromkeys(EXERCISES, "failed")
    assert statuses(graded, "untouched") == dict.fromkeys(EXERCISES, "not attempted")


def test_failed_rows_carry_the_checks_message_hint_and_mistake_in_their_own_columns(graded):
    rows = {r.exercise: r for r in graded["rows"] if r.student == "wrong"}
    assert "dropped the logarithm" in rows["max-queries"].message and rows["max-queries"].hint
    assert "Hint:" not in rows["max-queries"].message
    assert rows["max-queries"].mistake and rows["max-queries"].mistake in rows["max-queries"].message


def test_changes_outside_the_answers_have_no_effect_and_are_noted(graded):
    assert statuses(graded, "tamper") == dict.fromkeys(EXERCISES, "failed")
    integrity = {r.integrity for r in graded["rows"] if r.student == "tamper"}
    assert integrity and "changed" in integrity.pop()


def test_patching_the_checker_or_faking_its_output_does_not_pass(graded):
    got = statuses(graded, "patcher")
    assert got["max-queries"] == "failed"  # np.allclose patched in the kernel: judged outside it
    assert got["icu-sensitivity"] != "passed"  # the check function replaced: no evidence, no pass
    assert got["exact-tail-level"] == "failed"  # a forged evidence output without the nonce is ignored


def test_judges_refuse_strings_booleans_and_lookup_tables_and_accept_vectorize(graded):
    assert statuses(graded, "judges") == dict.fromkeys(EXERCISES, "failed")
    assert "number" in messages(graded, "judges")["max-queries"]
    assert statuses(graded, "vectorized") == dict.fromkeys(EXERCISES, "passed")


def test_a_timeout_or_a_dead_kernel_never_passes_and_the_rest_still_runs(graded):
    got = statuses(graded, "timeouts")
    assert got == {"max-queries": "errored", "icu-sensitivity": "errored", "exact-tail-level": "passed"}
    assert "timed out after 20 s" in messages(graded, "timeouts")["max-queries"]
    got = statuses(graded, "exits")
    assert got == {"max-queries": "errored", "icu-sensitivity": "passed", "exact-tail-level": "not attempted"}
    assert "kernel" in messages(graded, "exits")["max-queries"]


def test_deleted_exercises_are_not_attempted_and_invented_ones_do_not_exist(graded):
    assert statuses(graded, "structure") == {
        "max-queries": "passed",
        "icu-sensitivity": "not attempted",
        "exact-tail-level": "not attempted",
    }


def test_answers_are_found_by_position_when_ids_and_metadata_were_regenerated_or_odd(graded):
    assert statuses(graded, "regenerated") == dict.fromkeys(EXERCISES, "passed")  # and its metadata of odd shapes


def test_an_answer_pasted_twice_is_graded_as_a_run_leaves_it(graded):
    assert statuses(graded, "pasted")["max-queries"] == "passed"  # wrong, then right
    assert statuses(graded, "pasted")["icu-sensitivity"] == "failed"  # right, then wrong


def test_the_sandbox_refuses_siblings_sources_the_package_the_grader_the_network_and_the_result_pipe(graded):
    assert statuses(graded, "hostile") == {
        "max-queries": "passed",
        "icu-sensitivity": "passed",
        "exact-tail-level": "not attempted",
    }
    assert (Path(dpcourse.__file__).parent / "checks" / "laplace.py").read_text() == graded["package_before"]


def test_files_count_against_memory_and_processes_are_capped(graded):
    got, why = statuses(graded, "limits"), messages(graded, "limits")
    assert got["max-queries"] == "passed", why["max-queries"]
    assert got["icu-sensitivity"] == "passed", why["icu-sensitivity"]


def test_huge_output_and_memory_are_contained(graded):
    got = statuses(graded, "greedy")
    assert got["max-queries"] == "passed" and got["icu-sensitivity"] == "errored"
    assert "MemoryError" in messages(graded, "greedy")["icu-sensitivity"]


def test_files_that_are_not_notebooks_of_the_student_are_invalid_rows_not_a_stopped_batch(graded):
    for student in unreadable_files():
        assert statuses(graded, student) == {"-": "invalid"}, student
    assert "link" in messages(graded, "to-solutions")["-"] and "link" in messages(graded, "to-sibling")["-"]
    assert "regular file" in messages(graded, "fifo")["-"]


def test_one_notebook_per_student_the_latest_and_the_others_are_duplicates(graded):
    rows = [r for r in graded["rows"] if r.student == "twice"]
    graded_rows = {r.exercise: r.status for r in rows if r.exercise != "-"}
    assert graded_rows == dict.fromkeys(EXERCISES, "passed")  # the later download, with the right answers
    duplicates = [r for r in rows if r.exercise == "-"]
    assert [(r.notebook, r.status, r.points, r.max_points) for r in duplicates] == [("small", "duplicate", 0.0, 0.0)]
    assert "small (1).ipynb" in duplicates[0].message and "latest" in duplicates[0].message
    assert reports.totals(graded["rows"])["twice"]["max_points"] == 3


def test_one_row_per_exercise_and_one_submission_never_changes_another(graded):
    rows = graded["rows"]
    single = (
        {r.student for r in rows}
        - set(unreadable_files())
        - {"twice", "=cmd|' C calc'!A0"}
        - set(notebook_01_submissions())
    )
    for student in single:
        assert sorted(r.exercise for r in rows if r.student == student) == sorted(EXERCISES), student
    assert statuses(graded, "=cmd|' C calc'!A0") == {"-": "invalid"}
    assert not any("without a sandbox" in r.integrity for r in rows)


def test_the_report_has_its_columns_and_no_formulas(graded):
    with open(graded["report"], newline="", encoding="utf-8") as handle:
        table = list(csv.DictReader(handle))
    assert tuple(table[0]) == reports.COLUMNS
    assert all(not row[c].startswith(("=", "+", "-", "@")) for row in table for c in reports.COLUMNS)
    assert any(row["student"].startswith("'=cmd") for row in table)
    assert {row["status"] for row in table} <= set(reports.STATUSES)
    assert reports.read_report(graded["report"]) == graded["rows"]


def test_merge_joins_shards_and_refuses_a_row_graded_twice(graded, tmp_path):
    rows = graded["rows"]
    half = len(rows) // 2
    reports.write_report(rows[:half], tmp_path / "a.csv")
    reports.write_report(rows[half:], tmp_path / "b.csv")
    assert (
        main(
            [
                "grade",
                "--merge",
                str(tmp_path / "a.csv"),
                str(tmp_path / "b.csv"),
                "--source",
                str(graded["root"] / "source"),
                "--report",
                str(tmp_path / "all.csv"),
            ]
        )
        == 0
    )
    assert reports.read_report(tmp_path / "all.csv") == reports.read_report(graded["report"])
    assert (
        main(
            [
                "grade",
                "--merge",
                str(tmp_path / "a.csv"),
                str(tmp_path / "a.csv"),
                "--source",
                str(graded["root"] / "source"),
                "--report",
                str(tmp_path / "x.csv"),
            ]
        )
        == 2
    )


# --------------------------------------------------------------------------- pieces that need no kernel


def test_command_line_refuses_bad_input(tmp_path, capsys):
    assert main(["grade", str(tmp_path / "missing.ipynb"), "--report", str(tmp_path / "r.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    for bad in (["--memory", "lots"], ["--jobs", "0"], ["--shard", "3/3"], ["--shard", "a/b"]):
        with pytest.raises(SystemExit):
            main(["grade", "x.ipynb", "--report", "r.csv", *bad])


def test_matching_by_position_survives_extra_cells():
    source = source_notebook()
    rel = released()
    sub = with_answers(rel, max_queries="K_max = 1")
    for cell in sub.cells:
        cell.metadata = {}
        cell["id"] = os.urandom(4).hex()
    sub.cells.insert(4, nbformat.v4.new_code_cell("print('my scratch work')"))
    answers = plans.match_answers(source, rel, sub, plans.source_exercises(source))
    assert sub.cells[answers["max-queries"]].source == "K_max = 1"
    assert sub.cells[answers["icu-sensitivity"]].source == rel.cells[answer_index(rel, "icu-sensitivity")].source


def test_a_flood_of_cells_is_refused_before_anything_runs(tmp_path):
    paths = write_course(tmp_path, {"eve": {NAME: released()}})
    sources, copies = plans.load_sources(tmp_path / "source")
    flood = released()
    flood.cells += [nbformat.v4.new_code_cell("pass") for _ in range(2000)]
    with pytest.raises(plans.SubmissionError, match="cells"):
        plans.plan_submission(paths[0], flood, "small", sources, copies)


def test_a_source_exercise_without_its_check_is_refused(tmp_path):
    nb = source_notebook()
    nb.cells = [c for c in nb.cells if "check" not in c.metadata.get("tags", [])]
    nbformat.write(nb, tmp_path / NAME)
    with pytest.raises(ValueError, match="no check cell"):
        plans.load_sources(tmp_path)


def test_shards_split_the_students_and_cover_each_once():
    from dpcourse.classroom.grading.run import in_shard

    students = [f"student-{k}" for k in range(200)]
    owners = [[i for i in range(4) if in_shard(s, (i, 4))] for s in students]
    assert all(len(o) == 1 for o in owners)
    assert min(sum(o == [i] for o in owners) for i in range(4)) > 25  # about 50 each; 25 is > 7 sd away


# --------------------------------------------------------------------------- the real notebook 01


def test_the_real_notebook_01_grades_right(graded):
    by_student: dict[str, set] = {}
    for r in graded["rows"]:
        if r.notebook == "01_laplace_utility":
            by_student.setdefault(r.student, set()).add(r.status)
    assert by_student == {"nb01-solutions": {"passed"}, "nb01-released": {"not attempted"}, "nb01-stripped": {"passed"}}
    assert len([r for r in graded["rows"] if r.student == "nb01-solutions"]) == 5


@pytest.mark.parametrize(
    ("keywords", "named"),
    [
        ({"jobs": 0}, "jobs"),
        ({"jobs": -2}, "jobs"),
        ({"shard": (5, 2)}, "shard index"),
        ({"shard": (0, 0)}, "shard count"),
        ({"shard": (1,)}, "shard"),
    ],
)
def test_grade_refuses_a_job_count_or_shard_that_would_grade_nobody_or_crash(tmp_path, keywords, named):
    from dpcourse.classroom.grading.run import grade

    with pytest.raises(ValueError, match=named):
        grade([], source=tmp_path, sandbox="none", **keywords)


def test_a_sandbox_name_other_than_bwrap_or_none_never_runs_a_submission():
    from dpcourse.classroom.sandbox.limits import Limits
    from dpcourse.classroom.sandbox.runner import run_job

    with pytest.raises(ValueError, match="sandbox must be"):
        run_job({}, sandbox="auto", limits=Limits())
