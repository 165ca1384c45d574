"""In a live kernel (issue 29): a check after an answer cell that raised says so and never judges the value an earlier
run left; a NameError outside a check cell keeps its usual traceback."""

from __future__ import annotations

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.timeout(300)


def run(*sources: str, tags=("raises-exception",)):
    cells = [nbformat.v4.new_code_cell(s, metadata={"tags": list(tags)}) for s in sources]
    nb = nbformat.v4.new_notebook(cells=cells)
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    return [
        "".join(str(o.get("data", {}).get("text/plain", "")) + o.get("evalue", "") for o in c.outputs) for c in nb.cells
    ]


def test_a_stale_value_is_not_judged_after_the_answer_cell_raised():
    outputs = run(
        "from dpcourse.checks import laplace as check",
        "K_max = 538",  # a right answer, from an earlier run
        "K_max = int(0.01 * 538 * epsilon_offic)",  # the same cell, now with a typo: K_max is still 538
        "check.max_queries(K_max)",
        "K_max = 538",
        "check.max_queries(K_max)",
    )
    assert "your answer cell raised NameError" in outputs[3] and "epsilon_offic" in outputs[3]
    assert "✓" not in outputs[3]
    assert outputs[5].startswith("✓ max-queries")  # fixed and run again: judged


def test_an_answer_never_defined_names_the_error_and_other_name_errors_keep_their_traceback():
    outputs = run(
        "from dpcourse.checks import laplace as check",
        "K_max = int(0.01 * 538 * epsilon_offic)",
        "check.max_queries(K_max)",
        "print(undefined_elsewhere)",
    )
    assert "your answer cell raised NameError: name 'epsilon_offic'" in outputs[2]
    assert "could not read your answer" in outputs[2]
    assert outputs[3] == "name 'undefined_elsewhere' is not defined"  # the ordinary error output


def test_before_you_hand_in_names_the_error_of_an_answer_cell_that_raised_even_before_the_checks_were_imported():
    outputs = run(
        "import numpy as np",
        "K_max = int(0.01 * 538 * epsilon_offic)",  # raises before dpcourse.checks is imported
        "from dpcourse.checks import laplace as check\ncheck.max_queries(K_max)",
        "icu_epsilon = 1 / 0",  # raises after: the cell hook records it
        "check.icu_epsilon(icu_epsilon)",
        "from dpcourse.checks import hand_in_status\nhand_in_status('01_laplace_utility')",
        "K_max = 538",  # fixed
        "hand_in_status('01_laplace_utility')",
    )
    assert "max-queries fails (its answer cell raised NameError: name 'epsilon_offic' is not defined)" in outputs[5]
    assert "icu-epsilon fails (its answer cell raised ZeroDivisionError: division by zero)" in outputs[5]
    assert "not attempted: workload-sensitivity, exact-tail-level, icu-sensitivity" in outputs[5]
    assert "max-queries" not in outputs[7].split("not attempted")[0] and "icu-epsilon fails" in outputs[7]
