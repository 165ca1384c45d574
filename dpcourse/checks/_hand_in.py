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
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import import_module
from types import FunctionType
from typing import Any

from .._validation import check_choice
from . import _core
from ._core import FAILED, NOT_ATTEMPTED, PASSED, Exercise, Verdict, quote

__all__ = ["NOTEBOOKS", "HandInStatus", "hand_in_status", "notebook_exercises"]

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
        if self.passed == self.total:
            scope = " on the documented examples" if self.functions else ""
            return [f"✓ {self.passed} of {self.total} exercises pass{scope}; hand in this file as {file}", *examples]
        failed = [
            f"{v.exercise} fails ({quote(v.message, _SHOWN_MESSAGE)})" for v in self.exercises if v.status == FAILED
        ]
        missing = [v.exercise for v in self.exercises if v.status == NOT_ATTEMPTED]
        parts = [*failed, *(["not attempted: " + ", ".join(missing)] if missing else [])]
        return [
            f"{self.passed} of {self.total} exercises pass: " + "; ".join(parts),
            f"  When you are done, hand in this file as {file}; the check cells above say what is missing.",
            *examples,
        ]

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
        One verdict per exercise, judged as the check cells judge a student's own run.
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
    return HandInStatus(stem, tuple(verdicts), functions)
