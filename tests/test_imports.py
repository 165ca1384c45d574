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


def modules_after_importing(module: str, path: Path | None = None) -> set[str]:
    """The top-level modules a fresh interpreter holds after importing ``module`` (``path`` first on its path)."""
    code = f"import sys, json, {module}; print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(path or ""), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300, env=env
    )
    return set(json.loads(done.stdout))


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
