"""Check functions for the exercises, one module per notebook topic.

A check cell imports the module of its notebook and calls one check with the student's answer::

    from dpcourse.checks import laplace as check
    check.exact_tail_level(exact_tail_level)

A right answer shows ``✓ <exercise>: correct`` and the number that proves it; an untouched stub
shows ``not attempted yet``; a wrong answer shows ✗, what is wrong and a hint, in one short block.
Neither stops *Run All*: the rest of the notebook still runs.
Each check is an :class:`~dpcourse.checks._core.Exercise`: a probe that runs in the kernel and a
pure judge; :func:`exercise` finds one by id (the grader judges with it, outside the kernel).
:func:`hand_in_status` runs every check of a notebook on the student's current answers (the notebook's
last cell), and says which file to hand in.

What a student's kernel can read here: the judges' code, which computes each reference with the package
(so a function exercise's reference is one import away, as it is in the library itself), and each
exercise's specification. What it cannot read: the answer key of a non-numeric exercise (spot-the-flaw) in plain
text, kept only as salted digests (with their salt: the key is 16 hashes away, as it is 16 questions to the check),
nor the inputs a function is graded on, which are drawn from a seed the grader picks when it grades (the documented
examples a student's own run uses are readable, so :func:`hand_in_status` says it checked those only).
"""

from __future__ import annotations

from importlib import import_module

from .._validation import check_choice
from ._core import CheckFailed, Exercise, Verdict
from ._hand_in import NOTEBOOKS, HandInStatus, hand_in_status
from ._kernel import install as _install_kernel_handler

__all__ = [
    "NOTEBOOKS",
    "CheckFailed",
    "Exercise",
    "HandInStatus",
    "MODULES",
    "Verdict",
    "all_exercises",
    "exercise",
    "hand_in_status",
]

MODULES = ("laplace", "rr_vs_laplace", "trees", "above_threshold", "svt_variants", "pmw")

_install_kernel_handler()  # in a notebook: a check whose answer cell raised says so (see _kernel)


def all_exercises() -> dict[str, Exercise]:
    """Every exercise of the workbook by id (imports the six check modules).

    Returns
    -------
    dict of str to Exercise
        Each exercise under its id, module by module in the notebooks' order (:data:`MODULES`).
    """
    found: dict[str, Exercise] = {}
    for name in MODULES:
        module = import_module(f"{__name__}.{name}")
        for item in vars(module).values():
            if isinstance(item, Exercise):
                found[item.exercise] = item
    return found


def exercise(exercise_id: str) -> Exercise:
    """The :class:`Exercise` with this id; ``ValueError`` naming the known ids if there is none.

    Parameters
    ----------
    exercise_id : str
        The exercise's id, as in its cells' ``metadata["dpcourse"]["exercise"]``.

    Returns
    -------
    Exercise
        The exercise: its probe, its judge and (for a function exercise) its cases.

    Raises
    ------
    ValueError
        If no exercise has this id (the message lists the known ids).
    """
    known = all_exercises()
    return known[check_choice(exercise_id, "exercise_id", sorted(known))]
