"""Submissions for the grading tests: a small source notebook with three of notebook 01's exercises, and
what honest, careless, dishonest and hostile students hand in.

Each builder returns ``{student: {file name: content}}``, where content is a notebook, raw text, or a
:class:`Link` / :class:`Special` for files that are not regular notebooks.
"""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass
from pathlib import Path

import nbformat

from dpcourse.classroom.release import release_notebook

EXERCISES = ["max-queries", "icu-sensitivity", "exact-tail-level"]
NAME = "small.ipynb"

RIGHT = {
    "max-queries": "### BEGIN SOLUTION\nK_max = 538\n### END SOLUTION",
    "icu-sensitivity": "### BEGIN SOLUTION\nicu_sensitivity = 10\n### END SOLUTION",
    "exact-tail-level": (
        "def exact_tail_level(k, beta, sensitivity, epsilon):\n    ### BEGIN SOLUTION\n"
        "    return -np.log(1 - (1 - beta) ** (1 / k)) * sensitivity / epsilon\n    ### END SOLUTION"
    ),
}
CHECKS = {
    "max-queries": "check.max_queries(K_max)",
    "icu-sensitivity": "check.icu_sensitivity(icu_sensitivity)",
    "exact-tail-level": "check.exact_tail_level(exact_tail_level)",
}
WRONG = {
    "max_queries": "K_max = 5000",
    "icu_sensitivity": "icu_sensitivity = 30",
    "exact_tail_level": "def exact_tail_level(k, beta, sensitivity, epsilon):\n"
    "    return np.log(k / beta) * sensitivity / epsilon",
}


@dataclass(frozen=True)
class Link:
    """A symbolic link to ``target`` (a path, relative to the course root unless absolute)."""

    target: str


@dataclass(frozen=True)
class Special:
    """A file that is not a regular file: ``"fifo"``."""

    kind: str


def source_notebook():
    cells = [
        nbformat.v4.new_markdown_cell("# A small workbook"),
        nbformat.v4.new_code_cell("import numpy as np\nfrom dpcourse.checks import laplace as check"),
    ]
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
    return next(
        i
        for i, c in enumerate(nb.cells)
        if c.metadata.get("dpcourse", {}).get("exercise") == exercise and "solution" in c.metadata.get("tags", [])
    )


def released():
    return release_notebook(source_notebook())


def with_answers(base, **answers):
    nb = copy.deepcopy(base)
    for exercise, text in answers.items():
        nb.cells[answer_index(nb, exercise.replace("_", "-"))].source = text
    return nb


def right():
    return with_answers(
        released(),
        max_queries="K_max = 538",
        icu_sensitivity="icu_sensitivity = 10",
        exact_tail_level=RIGHT["exact-tail-level"],
    )


def write_course(root: Path, submissions: dict[str, dict[str, object]]) -> list[Path]:
    """The source folder and every submission under ``root``; the submission paths, in order."""
    (root / "source").mkdir(exist_ok=True)
    nbformat.write(source_notebook(), root / "source" / NAME)
    (root / "submissions").mkdir(exist_ok=True)
    paths = []
    for student, files in submissions.items():
        folder = root / "submissions" / student
        folder.mkdir()
        for name, content in files.items():
            path = folder / name
            if isinstance(content, Link):
                target = Path(content.target)
                path.symlink_to(target if target.is_absolute() else root / target)
            elif isinstance(content, Special):
                import os

                os.mkfifo(path)
            elif isinstance(content, str):
                path.write_text(content)
            else:
                nbformat.write(content, path)
            paths.append(path)
    return paths


def jobs_for(sandbox: str, wanted: int = 2) -> str:
    """``--jobs`` for a batch: ``wanted``, within what the grader allows here (as an ordinary user without a
    control group, unconfined runs go one at a time: :func:`~dpcourse.classroom.sandbox.runner.max_parallel_runs`)."""
    from dpcourse.classroom.sandbox.runner import max_parallel_runs

    return str(min(wanted, max_parallel_runs(sandbox)[0]))


def sandbox_problem() -> str | None:
    """Why there is no working bubblewrap here (its own one-line reason), or None when there is one."""
    from dpcourse.classroom.sandbox.runner import SandboxUnavailable, choose_sandbox

    try:
        choose_sandbox("bwrap")
    except SandboxUnavailable as err:
        return str(err)
    return None


# --------------------------------------------------------------------------- files that never reach a kernel


def unreadable_files() -> dict[str, dict[str, object]]:
    """Submissions the grader must refuse while reading, each as that student's ``invalid`` row."""
    deep = json.dumps(right())[:-1] + ', "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
    return {
        "broken": {NAME: "{ this is not a notebook"},
        "deep": {NAME: deep},
        "to-solutions": {NAME: Link("source/" + NAME)},  # a link to the instructor's notebook
        "to-sibling": {NAME: Link("submissions/alice/" + NAME)},
        "dangling": {NAME: Link("submissions/nobody-here/" + NAME)},
        "device": {NAME: Link("/dev/zero")},
        "fifo": {NAME: Special("fifo")},
    }


def with_odd_metadata(nb):
    """``nb`` with metadata of every wrong shape: a string for ``dpcourse``, a list for an exercise id, a string
    for the tags (graded as usual, by position). The answers are found by their source."""
    nb = copy.deepcopy(nb)
    cells = {c.source: c for c in nb.cells}
    nb.cells[0].metadata["dpcourse"] = "a string"
    cells["K_max = 538"].metadata["dpcourse"] = {"exercise": ["max-queries"]}
    cells["icu_sensitivity = 10"].metadata["tags"] = "solution"
    return nb


def pasted_twice(nb, exercise: str, first: str, second: str):
    """``exercise``'s answer cell pasted twice (Jupyter keeps the metadata), ``first`` above ``second``."""
    nb = copy.deepcopy(nb)
    index = answer_index(nb, exercise)
    copy_cell = copy.deepcopy(nb.cells[index])
    copy_cell["id"] = uuid.uuid4().hex[:8]
    nb.cells[index].source = first
    copy_cell.source = second
    nb.cells.insert(index + 1, copy_cell)
    return nb
