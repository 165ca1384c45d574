"""What the grading processes import: nothing that does heavy work at import time.

Every graded submission starts a worker (and the grader, nbval and JupyterLab each import nbformat): a module that
compiles something when imported costs that in every one of them. jsonschema 4.25 and later import rfc3987-syntax
whenever it is installed, which builds a Lark grammar at import (1.55 s of CPU on the course's 2-core machine),
so requirements.txt pins jsonschema 4.24; these tests fail if a change of version or import brings it back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Modules that compile a grammar or otherwise work for a second or more when imported.
HEAVY_AT_IMPORT = ("rfc3987_syntax", "lark")


def modules_after(statement: str, path: Path | None = None) -> set[str]:
    """Every module a fresh interpreter holds after running ``statement`` (``path`` first on its path)."""
    code = f"{statement}\nimport sys, json; print(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(path or ""), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300, env=env
    )
    return set(json.loads(done.stdout.splitlines()[-1]))  # the statement may print lines of its own


def modules_after_importing(module: str, path: Path | None = None) -> set[str]:
    """The top-level modules a fresh interpreter holds after importing ``module`` (``path`` first on its path)."""
    return {name.split(".")[0] for name in modules_after(f"import {module}", path)}


@pytest.mark.parametrize(
    "module",
    [
        "nbformat",
        "dpcourse.classroom.sandbox.worker",
        "dpcourse.classroom.lms.gradescope.autograder",
        "dpcourse.classroom.cli",
    ],
)
def test_grading_imports_nothing_that_compiles_a_grammar(module):
    loaded = modules_after_importing(module)
    assert "nbformat" in loaded or module == "nbformat"
    assert not loaded & set(HEAVY_AT_IMPORT), f"{module} imports {sorted(loaded & set(HEAVY_AT_IMPORT))}"


def test_the_check_sees_the_grammar_when_it_is_imported(tmp_path):
    # the same check on a module that imports one named lark (a stand-in, so that this runs where lark is not
    # installed, as in a fresh environment): the test above can fail
    (tmp_path / "lark.py").write_text("")
    (tmp_path / "uses_lark.py").write_text("import lark\n")
    assert "lark" in modules_after_importing("uses_lark", tmp_path)


#: What listing the exercises costs every grader, judge and autograder process: ``scipy.stats`` alone is about
#: 0.6 s of CPU to import, and only the SVT checks' judging and the audit's tests use it, so they import it then.
LISTING_THE_EXERCISES = "from dpcourse.checks import all_exercises; all_exercises()"


def test_listing_the_exercises_does_not_import_scipy_stats():
    loaded = modules_after(LISTING_THE_EXERCISES)
    assert "dpcourse.checks.svt_variants" in loaded and "dpcourse.audit.statistics" in loaded
    assert "scipy.stats" not in loaded


def test_judging_an_svt_exercise_imports_it_when_it_needs_it():
    # the check above sees scipy.stats where it is imported: judging the top-budget exercise computes an exact loss
    statement = f"{LISTING_THE_EXERCISES}; from dpcourse.checks.above_threshold import top_budget; top_budget(15.0)"
    assert "scipy.stats" in modules_after(statement)
