"""Grading round four (issue 27): what the kernel sends or leaves behind, what a judge is asked to do, and where a
notebook sits are that submission's problem, never an honest classmate's nor the batch's.

One batch per sandbox (bubblewrap when it works, and unconfined), through the command line so that the exit
status is checked too: honest students beside a duplicate kernel message, a display holding a 5,000-digit
integer, start-up files left for the restarted kernel (IPython's startup folder, a user site's
``usercustomize``, an ``ipykernel_launcher.py`` in the home), a check flooded with 600 records, a check pasted
above a corrected answer, a notebook nested in a classmate's folder, and a folder name in NFD.
"""

from __future__ import annotations

import os
import time
import unicodedata

import pytest

from dpcourse.classroom.grading import reports
from tests.classroom.grading_scenarios import (
    EXERCISES,
    NAME,
    answer_index,
    jobs_for,
    released,
    right,
    sandbox_problem,
    with_answers,
    write_course,
)
from tests.classroom.ordinary_python import grade_command

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

DUPLICATE_MESSAGES = """k = get_ipython().kernel
parent = k.get_parent()
msg = k.session.msg('display_data', {'data': {'text/plain': 'x'}, 'metadata': {}, 'transient': {}}, parent=parent)
for _ in range(3):
    k.session.send(k.iopub_socket, msg)
for _ in range(2):
    k.session.send(k.iopub_socket, 'status', {'execution_state': 'idle'}, parent=parent)
icu_sensitivity = 10"""
HUGE_INTEGER = """import sys
sys.set_int_max_str_digits(0)
from IPython.display import display
display({'application/json': {'n': 10**5000}}, raw=True)
icu_sensitivity = 10"""
LEAVE_STARTUP_FILES = """import os, tempfile
startup = os.path.expanduser('~/.ipython/profile_default/startup')
os.makedirs(startup, exist_ok=True)
open(startup + '/00-exit.py', 'w').write('import os\\nos._exit(3)\\n')
user_site = os.path.expanduser('~/.local/lib/python3.11/site-packages')
os.makedirs(user_site, exist_ok=True)
open(user_site + '/usercustomize.py', 'w').write('import time\\ntime.sleep(10**6)\\n')
open(os.path.expanduser('~/ipykernel_launcher.py'), 'w').write('import os\\nos._exit(4)\\n')
K_max = 538"""
FLOOD_RECORDS = (
    """import dpcourse.checks._core as core
_call = core.Exercise.__call__
def _flood(self, *answers):
    for _ in range(600):
        _call(self, *answers)
core.Exercise.__call__ = _flood
"""
    + "def exact_tail_level(k, beta, sensitivity, epsilon):\n"
    + "    return -np.log(1 - (1 - beta) ** (1 / k)) * sensitivity / epsilon"
)
#: right only if the kernel's channels are Unix sockets (the run's own files), never loopback ports another
#: program on the machine could have taken between the client choosing them and the kernel binding them
ON_SOCKETS = """import json
from ipykernel.kernelapp import IPKernelApp
with open(IPKernelApp.instance().connection_file) as f:
    transport = json.load(f)['transport']
icu_sensitivity = 10 if transport == 'ipc' else transport"""
STUDENTS_WITH_NFD = unicodedata.normalize("NFD", "zoë")


def _check_pasted_above_the_fix():
    """The answer, a copy of its check, then the corrected answer and the check: Run All ends with ✓."""
    nb = with_answers(released(), max_queries="K_max = 5000", icu_sensitivity="icu_sensitivity = 10")
    index = answer_index(nb, "max-queries")
    check = nb.cells[index + 1]
    fixed = nb.cells[index].copy()
    fixed.source, fixed["id"] = "K_max = 538", "fixedans"
    pasted = check.copy()
    pasted["id"] = "pastedck"
    nb.cells[index + 1 : index + 1] = [pasted, fixed]
    return nb


def _sandbox_problem(mode: str) -> str | None:
    return None if mode == "none" else sandbox_problem()


@pytest.fixture(scope="module", params=["bwrap", "none"])
def batch(request, tmp_path_factory):
    problem = _sandbox_problem(request.param)
    if problem is not None:
        pytest.skip(f"needs a working bubblewrap: {problem}")
    root = tmp_path_factory.mktemp(f"faults-{request.param}")
    paths = write_course(
        root,
        {
            "alice": {NAME: right()},
            "duplicate": {NAME: with_answers(right(), icu_sensitivity=DUPLICATE_MESSAGES)},
            "huge": {NAME: with_answers(right(), icu_sensitivity=HUGE_INTEGER)},
            "startup": {
                NAME: with_answers(right(), max_queries=LEAVE_STARTUP_FILES, icu_sensitivity="import os\nos._exit(1)")
            },
            "flood": {NAME: with_answers(right(), exact_tail_level=FLOOD_RECORDS)},
            "pasted": {NAME: _check_pasted_above_the_fix()},
            "aaron": {NAME: right()},
            STUDENTS_WITH_NFD: {NAME: with_answers(right(), icu_sensitivity=ON_SOCKETS)},
        },
    )
    nested = root / "submissions" / "aaron" / "alice"
    nested.mkdir()
    stub = released()
    (nested / NAME).write_text(__import__("nbformat").writes(stub))
    hour_ago = time.time() - 3600  # aaron's own file is his latest: the nested stub is the older one
    os.utime(nested / NAME, (hour_ago, hour_ago))
    paths.append(nested / NAME)
    report = root / "grades.csv"
    status = grade_command(
        [
            "grade",
            *map(str, paths),
            "--source",
            str(root / "source"),
            "--report",
            str(report),
            "--sandbox",
            request.param,
            "--jobs",
            jobs_for(request.param),
            "--cell-timeout",
            "30",
            "--notebook-timeout",
            "240",
        ]
    )
    return {"status": status, "rows": reports.read_report(report), "mode": request.param}


def statuses(batch, student):
    return {r.exercise: r.status for r in batch["rows"] if r.student == student and r.exercise != "-"}


def messages(batch, student):
    return {r.exercise: r.message for r in batch["rows"] if r.student == student}


def test_the_grader_worked_so_it_exits_0_and_honest_rows_pass(batch):
    assert batch["status"] == 0
    assert statuses(batch, "alice") == dict.fromkeys(EXERCISES, "passed")
    assert not any(r.message.startswith("the grader could not run") for r in batch["rows"])


@pytest.mark.parametrize("student", ["duplicate", "huge"])
def test_a_message_the_grader_cannot_read_costs_only_that_cell(batch, student):
    assert statuses(batch, student) == {
        "max-queries": "passed",  # graded before the fault: kept
        "icu-sensitivity": "errored",
        "exact-tail-level": "passed",  # after it: the notebook ran again without that cell
    }
    assert "message the grader could not read" in messages(batch, student)["icu-sensitivity"]


def test_files_left_for_the_next_kernel_are_gone_before_it_starts(batch):
    # the kernel death restarts the notebook; the start-up files of the first cell would exit or hang it
    assert statuses(batch, "startup") == {
        "max-queries": "passed",
        "icu-sensitivity": "errored",
        "exact-tail-level": "passed",
    }
    assert "stopped the Python kernel" in messages(batch, "startup")["icu-sensitivity"]


def test_a_check_flooded_with_records_is_errored_without_judging_them(batch):
    assert statuses(batch, "flood")["exact-tail-level"] == "errored"
    assert "600 times" in messages(batch, "flood")["exact-tail-level"]
    assert statuses(batch, "flood")["max-queries"] == "passed"


def test_a_check_pasted_above_the_corrected_answer_grades_the_correction(batch):
    assert statuses(batch, "pasted")["max-queries"] == "passed"


def test_a_nested_folder_is_its_top_folders_student_and_noted(batch):
    aaron = [r for r in batch["rows"] if r.student == "aaron"]
    assert statuses(batch, "alice") == dict.fromkeys(EXERCISES, "passed")  # alice's own file, not aaron's stub
    assert {r.status for r in aaron if r.exercise != "-"} == {"passed"}
    assert any(r.status == "duplicate" and "nested" in r.integrity for r in aaron)


def test_student_ids_are_nfc_and_kernels_talk_over_the_runs_own_sockets(batch):
    assert statuses(batch, unicodedata.normalize("NFC", "zoë")) == dict.fromkeys(EXERCISES, "passed")
    assert not statuses(batch, STUDENTS_WITH_NFD)
