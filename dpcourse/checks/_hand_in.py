"""The hand-in status at the end of a notebook: every check of the notebook on the student's current answers.

The last cell of each notebook runs ``hand_in_status("01_laplace_utility")``: each exercise of that notebook
is judged (as its check cell would judge it, on the documented examples) with the values its answer names
have now in the student's namespace; a name that is not defined counts as not attempted, and an exercise whose
answer cell raised when it was last run fails, naming the error (the kernel's cell hook in :mod:`._kernel` remembers
it). A function exercise runs here on its documented examples only, which a student can read: the block says so,
and that grading calls the function on other inputs.

A check cell run earlier in the same kernel on the very same answer objects is not run again: its evidence is
reused (see :func:`_reusable`). That holds only for answers that cannot have changed since: a function (the same
function object, so re-running its answer cell, which defines a new one, is judged afresh) or an immutable number
or string. A list or array may have been changed in place, so it is always probed again.

Written exercises (Markdown answers marked by hand, :mod:`._written`) are never judged here: the block lists each as
answered or empty, read from the notebook as last saved (the file JupyterLab's kernel names in ``__session__``, VS
Code's in ``__vsc_ipynb_file__``, else ``<notebook>.ipynb`` in the working folder), since what is handed in is the
saved file, not the kernel; they are not counted in "N of M exercises pass".
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from types import FunctionType
from typing import Any

from .._validation import check_choice
from . import _core
from ._core import FAILED, NOT_ATTEMPTED, PASSED, Exercise, Verdict, quote
from ._written import is_unanswered, written_answer_cells

__all__ = ["NOTEBOOKS", "HandInStatus", "hand_in_status", "notebook_exercises", "read_written_answers"]

#: Notebook stem → the check module of its exercises.
NOTEBOOKS: dict[str, str] = {
    "01_laplace_utility": "laplace",
    "02_rr_vs_laplace": "rr_vs_laplace",
    "03_threshold_query_trees": "trees",
    "04_above_threshold_proof": "above_threshold",
    "05_flawed_svt_variants": "svt_variants",
    "06_private_mw": "pmw",
}
_SHOWN_MESSAGE = 100
#: The largest saved notebook read for its written answers (bytes); a larger one is reported as unreadable.
MAX_SAVED_BYTES = 50_000_000
#: Where a kernel keeps the path of its notebook: JupyterLab's (``JPY_SESSION_NAME``), then VS Code's.
_SESSION_NAMES = ("__session__", "__vsc_ipynb_file__")
_UNCHANGEABLE = (FunctionType, bool, int, float, complex, str, bytes, type(None))


def _reusable(exercise: Exercise, answers: list[object]) -> dict | None:
    """The evidence of this exercise's check cell run earlier in this kernel, if it probed these very answers.

    Only when every answer is the same object as then (``is``) and of a kind that cannot change in place: a
    function (re-running the answer cell defines a new function object, which is probed afresh) or an immutable
    scalar. Otherwise None: the answers are probed again.
    """
    last = _core._LAST_RUN.get(exercise.exercise)
    if last is None or len(last[0]) != len(answers):
        return None
    same = all(then is now and isinstance(now, _UNCHANGEABLE) for then, now in zip(last[0], answers, strict=True))
    return last[1] if same else None


def notebook_exercises(notebook: str) -> tuple[Exercise, ...]:
    """The exercises of a notebook (its stem, with or without ``.ipynb``), in the order of the notebook."""
    stem = check_choice(notebook.removesuffix(".ipynb"), "notebook", sorted(NOTEBOOKS))
    module = import_module(f"{__package__}.{NOTEBOOKS[stem]}")
    return tuple(item for item in vars(module).values() if isinstance(item, Exercise))


@dataclass(frozen=True)
class HandInStatus:
    """Every exercise of one notebook judged on the current answers; shows as a short block.

    ``exercises`` holds one :class:`Verdict` per exercise, in the notebook's order; ``passed`` and ``total``
    count them. ``functions`` names the function exercises: here they ran on their documented examples (which a
    student can read, and a table of them passes), while grading calls them on inputs it draws, so the block says so.
    ``written`` holds each written exercise of the saved file ``saved`` (its name) as ``(id, answered)``;
    ``unreadable`` says why that file could not be read (empty when it was).

    Examples
    --------
    >>> status = hand_in_status("01_laplace_utility", {"K_max": 538})
    >>> (status.passed, status.total)
    (1, 5)
    >>> print(status.lines()[0])
    1 of 5 exercises pass: not attempted: workload-sensitivity, exact-tail-level, icu-sensitivity, icu-epsilon
    """

    notebook: str
    exercises: tuple[Verdict, ...]
    functions: tuple[str, ...] = ()
    written: tuple[tuple[str, bool], ...] = ()
    saved: str = ""
    unreadable: str = ""

    @property
    def passed(self) -> int:
        return sum(verdict.status == PASSED for verdict in self.exercises)

    @property
    def total(self) -> int:
        return len(self.exercises)

    @property
    def score(self) -> float:
        """The sum of the exercises' scores (partial credit where a course gives it)."""
        return sum(verdict.score for verdict in self.exercises)

    def lines(self, file: str | None = None) -> list[str]:
        """The summary line, the line that says which file to hand in (``file``: how to show its name) and, when the
        notebook has function exercises, the line that says they were run on the documented examples only."""
        file = file if file is not None else f"{self.notebook}.ipynb"
        examples = _examples_note(self.functions)
        written = self._written_lines()
        if self.passed == self.total:
            scope = " on the documented examples" if self.functions else ""
            return [
                f"✓ {self.passed} of {self.total} exercises pass{scope}; hand in this file as {file}",
                *written,
                *examples,
            ]
        failed = [
            f"{v.exercise} fails ({quote(v.message, _SHOWN_MESSAGE)})" for v in self.exercises if v.status == FAILED
        ]
        missing = [v.exercise for v in self.exercises if v.status == NOT_ATTEMPTED]
        parts = [*failed, *(["not attempted: " + ", ".join(missing)] if missing else [])]
        return [
            f"{self.passed} of {self.total} exercises pass: " + "; ".join(parts),
            f"  When you are done, hand in this file as {file}; the check cells above say what is missing.",
            *written,
            *examples,
        ]

    def _written_lines(self) -> list[str]:
        """The line on the written exercises: each answered or empty in the saved file, or why it was not read."""
        if self.unreadable:
            return [f"  written: the saved file could not be read ({self.unreadable}); what counts is the saved file"]
        if not self.written:
            return []
        answers = ", ".join(f"{exercise} {'answered' if done else 'empty'}" for exercise, done in self.written)
        return [f"  written: marked by hand: {answers} (as saved in {self.saved}: what counts is the saved file)"]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        colour = "#1b7837" if self.passed == self.total else "#555555"
        name = html.escape(f"{self.notebook}.ipynb")
        marker = "\x00file\x00"  # the file's name goes in as <code> once the rest is escaped
        lines = (html.escape(line).replace(marker, f"<code>{name}</code>") for line in self.lines(marker))
        body = "<br>".join(lines)
        return f'<div style="border-left: 4px solid {colour}; padding: 2px 8px; font-family: monospace">{body}</div>'


def _raised_verdict(exercise: str, raised: str) -> Verdict:
    """The verdict of an exercise whose answer cell raised when it was last run in this kernel."""
    return Verdict(
        exercise,
        FAILED,
        f"its answer cell raised {raised}",
        "fix the answer cell, then run it and this check again",
        "the answer cell raised",
    )


def _examples_note(functions: tuple[str, ...]) -> list[str]:
    """The line saying that the function exercises ran on their documented examples only (none if there are none)."""
    if not functions:
        return []
    names = functions[0] if len(functions) == 1 else ", ".join(functions[:-1]) + " and " + functions[-1]
    return [
        f"  Checked here on the documented examples only: grading runs {names} on other inputs, drawn when it grades."
    ]


def _user_namespace() -> Mapping[str, object]:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the workbook
        shell = None
    else:
        shell = get_ipython()
    if shell is None:
        raise ValueError("namespace must be given (e.g. namespace=globals()) when no IPython kernel is running")
    return shell.user_ns


def _saved_file(stem: str, namespace: Mapping[str, object]) -> Path:
    """The notebook as last saved: the path the kernel knows it by (JupyterLab's or VS Code's), else
    ``<stem>.ipynb`` in the working folder."""
    for name in _SESSION_NAMES:
        path = namespace.get(name)
        if isinstance(path, str) and path.endswith(".ipynb"):
            return Path(path)
    return Path(f"{stem}.ipynb")


def read_written_answers(path: Path | str) -> tuple[tuple[str, bool], ...]:
    """Each written exercise of a saved notebook, in order, and whether it is answered (not blank, not the
    placeholder); of two cells of one exercise, the last one counts, as in grading.

    Parameters
    ----------
    path : str or pathlib.Path
        The saved notebook.

    Returns
    -------
    tuple of (str, bool)
        ``(exercise id, answered)`` per written exercise.

    Raises
    ------
    OSError
        When the file cannot be opened or read.
    ValueError
        When it is larger than :data:`MAX_SAVED_BYTES`, not JSON, or not a notebook.
    """
    with open(path, "rb") as file:
        raw = file.read(MAX_SAVED_BYTES + 1)
    if len(raw) > MAX_SAVED_BYTES:
        raise ValueError(f"larger than {MAX_SAVED_BYTES // 1_000_000} MB")
    try:
        cells = json.loads(raw).get("cells")
    except (ValueError, AttributeError):
        raise ValueError("not a notebook") from None
    if not isinstance(cells, list):
        raise ValueError("not a notebook")
    found = written_answer_cells(cells)
    return tuple((exercise, not is_unanswered(cells[where[-1]].get("source"))) for exercise, where in found.items())


def _written_status(stem: str, namespace: Mapping[str, object]) -> tuple[tuple[tuple[str, bool], ...], str, str]:
    """The written answers of the saved notebook, its name, and why it could not be read (or "")."""
    path = _saved_file(stem, namespace)
    try:
        return read_written_answers(path), path.name, ""
    except OSError as err:
        return (), path.name, f"{os.fspath(path)}: {err.strerror or type(err).__name__}"
    except ValueError as err:
        return (), path.name, f"{os.fspath(path)}: {err}"


def hand_in_status(notebook: str, namespace: Mapping[str, object] | None = None) -> HandInStatus:
    """Judge every exercise of ``notebook`` on the answers in ``namespace`` (None: the IPython user namespace).

    Parameters
    ----------
    notebook : str
        The notebook's stem, e.g. ``"01_laplace_utility"`` (a trailing ``.ipynb`` is ignored).
    namespace : mapping, optional
        Where the answers are: each exercise's :attr:`~dpcourse.checks._core.Exercise.answers` are looked up in
        it; an exercise with any answer missing is not attempted. None reads IPython's ``user_ns``.
        An exercise whose check cell already ran in this kernel on the same function object (or the same
        immutable number or string) is judged on the evidence that check gathered, without probing it again.

    Returns
    -------
    HandInStatus
        One verdict per exercise, judged as the check cells judge a student's own run, and each written exercise
        of the saved notebook (``namespace["__session__"]``, the path JupyterLab gives the kernel, or
        ``__vsc_ipynb_file__``; else ``<notebook>.ipynb`` in the working folder) as answered or empty.
    """
    exercises = notebook_exercises(notebook)
    stem = notebook.removesuffix(".ipynb")
    found = _user_namespace() if namespace is None else namespace
    if not isinstance(found, Mapping):
        raise TypeError(f"namespace must be a mapping of names to values (e.g. globals()), got {type(found).__name__}")
    verdicts = []
    for exercise in exercises:
        raised = _core._RAISED.get(exercise.exercise)
        if raised is not None:  # its names are unbound, or hold an earlier run's values: never judge those
            verdicts.append(_raised_verdict(exercise.exercise, raised))
            continue
        if not exercise.answers or any(name not in found for name in exercise.answers):
            verdicts.append(Verdict(exercise.exercise, NOT_ATTEMPTED))
            continue
        answers = [found[name] for name in exercise.answers]
        evidence = _reusable(exercise, answers)
        verdicts.append(exercise.verdict(exercise.evidence(*answers) if evidence is None else evidence))
    functions = tuple(exercise.exercise for exercise in exercises if exercise.cases is not None)
    return HandInStatus(stem, tuple(verdicts), functions, *_written_status(stem, found))
