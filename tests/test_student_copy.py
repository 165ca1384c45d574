"""The student copy: `python -m dpcourse release`."""

import json
from pathlib import Path

import nbformat
import pytest

from dpcourse import instructor

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def test_release_replaces_solutions_and_keeps_everything_else(tmp_path):
    written = instructor.release(NOTEBOOKS[0].parent, tmp_path)
    assert [p.name for p in written] == [p.name for p in NOTEBOOKS]
    for original_path, released_path in zip(NOTEBOOKS, written):
        original, released = (nbformat.read(p, as_version=4) for p in (original_path, released_path))
        assert len(original.cells) == len(released.cells)
        for before, after in zip(original.cells, released.cells):
            if instructor.BEGIN in before.source:
                assert instructor.BEGIN not in after.source and "raise NotImplementedError" in after.source
                assert after.outputs == [] and after.execution_count is None
            else:
                assert after == before  # text, figures and check cells are untouched
        assert len(instructor.exercises(released)) >= 2


def test_release_is_deterministic_and_safe_to_rerun(tmp_path):
    instructor.release(NOTEBOOKS[0].parent, tmp_path / "a")
    instructor.release(NOTEBOOKS[0].parent, tmp_path / "a")
    instructor.release(NOTEBOOKS[0].parent, tmp_path / "b")
    for path in (tmp_path / "a").glob("*.ipynb"):
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes()


def test_stub_keeps_indentation_and_code_around_the_region():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\nprint(f)"
    stub = instructor._stub_solution(source, "ex")
    assert stub.splitlines()[0] == "def f(x):" and stub.splitlines()[-1] == "print(f)"
    assert '    raise NotImplementedError("exercise ex: write your answer here")' in stub
    with pytest.raises(ValueError, match="without"):
        instructor._stub_solution("### BEGIN SOLUTION\nx = 1", "ex")


