"""Check functions for the exercises, one module per notebook topic.

A check cell imports the module of its notebook and calls one check with the student's answer::

    from dpcourse.checks import laplace as check
    check.exact_tail_level(exact_tail_level)

A right answer shows ``✓ <exercise>: correct`` and the number that proves it; an untouched stub
shows ``not attempted yet``; a wrong answer shows ✗, what is wrong and a hint, in one short block.
Neither stops *Run All*: the rest of the notebook still runs.
Each check is an :class:`~dpcourse.checks._core.Exercise`: a probe that runs in the kernel and a
pure judge; :func:`exercise` finds one by id (the grader judges with it, outside the kernel).
"""

from __future__ import annotations

from importlib import import_module

from .._validation import check_choice
from ._core import CheckFailed, Exercise, Verdict

__all__ = ["CheckFailed", "Exercise", "MODULES", "Verdict", "all_exercises", "exercise"]

MODULES = ("laplace", "release", "trees", "above_threshold", "svt_variants", "pmw")


def all_exercises() -> dict[str, Exercise]:
    """Every exercise of the workbook by id (imports the six check modules)."""
    found: dict[str, Exercise] = {}
    for name in MODULES:
        module = import_module(f"{__name__}.{name}")
        for item in vars(module).values():
            if isinstance(item, Exercise):
                found[item.exercise] = item
    return found


def exercise(exercise_id: str) -> Exercise:
    """The :class:`Exercise` with this id; ``ValueError`` naming the known ids if there is none."""
    known = all_exercises()
    return known[check_choice(exercise_id, "exercise_id", sorted(known))]
