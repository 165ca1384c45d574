"""In a student's kernel: a check cell whose answer is not defined says why, instead of a traceback.

A typo in an answer cell (``K_max = int(alpha * n * epsilon_offic)``) raises before the answer is
bound, so the check cell below it raises ``NameError`` on the answer's name. The student copy tags
both cells ``raises-exception`` so that *Run All* goes on; this handler, installed when
``dpcourse.checks`` is imported in IPython, turns that ``NameError`` in a check cell into the
check's own short block: the answer is not defined because the answer cell raised (naming its
error), and what to do. A ``NameError`` anywhere else shows the usual traceback.

It also remembers, after every cell, whether an answer cell (one that assigns or defines all of an
exercise's answer names) raised: *Before you hand in* then says that the cell raised, and which error, instead of
"not attempted" or a verdict on the value an earlier run left (:data:`~dpcourse.checks._core._RAISED`). The
answer cell run again without an error forgets it.
"""

from __future__ import annotations

import ast
import re
import sys
from typing import Any

from . import _core
from ._core import FAILED, Exercise, Verdict, show
from ._evidence import describe_error, quote

__all__ = ["install"]

_CHECK_CALL = re.compile(r"\bcheck\.(\w+)\(")
_INSTALLED = "_dpcourse_check_handler"


def _current_source(shell: Any) -> str:
    history = shell.user_ns.get("In")
    return history[-1] if isinstance(history, list) and history and isinstance(history[-1], str) else ""


def _exercise_id(shell: Any, name: str) -> str:
    found = getattr(shell.user_ns.get("check"), name, None)
    return found.exercise if isinstance(found, Exercise) else name.replace("_", "-")


def _describe(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {quote(text[0]) if text else ''}".rstrip(": ")


def _on_name_error(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: int | None = None) -> Any:
    """IPython's custom exception handler (it shows what it wants; the return value is not used)."""
    match = _CHECK_CALL.search(_current_source(shell))
    if match is None:  # not a check cell: the usual traceback
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    previous = getattr(getattr(shell, "last_execution_result", None), "error_in_exec", None)
    exercise = _exercise_id(shell, match.group(1))
    if previous is not None:  # remembered for Before you hand in (the hook may not have known the cell then)
        _core._RAISED[exercise] = describe_error(previous)
    message = (
        f"your answer cell raised {_describe(previous)}, so the check could not read your answer ({value})"
        if previous is not None
        else f"your answer is not defined ({value}): run the answer cell above first"
    )
    show(
        Verdict(
            exercise,
            FAILED,
            message,
            "fix the answer cell, then run it and this check again",
            "the answer cell raised",
        )
    )
    return None  # the block above says it all: no traceback


def _bound_names(source: str) -> set[str]:
    """The names a cell assigns or defines at its top level (by pattern when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set(re.findall(r"(?m)^\s*(?:def\s+)?(\w+)\s*(?:\(|(?<![=!<>])=(?!=)|,)", source))
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.add(node.name)
            continue
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign | ast.AugAssign)
            else []
        )
        for target in targets:
            found.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return found


def _answered(source: str) -> list[str]:
    """The exercises all of whose answer names the cell assigns or defines (as its answer cell does; a demo cell that
    reuses one of several names is not taken for it), among the check modules imported so far
    (importing all six would cost seconds; an answer cell run before its module's first check cell is recorded by
    that check cell instead, see :func:`_on_name_error` and :meth:`Exercise.__call__`)."""
    from ._hand_in import NOTEBOOKS, notebook_exercises

    bound = _bound_names(source)
    if not bound:
        return []
    return [
        exercise.exercise
        for stem, module in NOTEBOOKS.items()
        if f"{__package__}.{module}" in sys.modules
        for exercise in notebook_exercises(stem)
        if exercise.answers and bound.issuperset(exercise.answers)
    ]


def _after_cell(result: Any) -> None:
    """IPython's ``post_run_cell`` event: remember (or forget) that an answer cell raised."""
    source = str(getattr(getattr(result, "info", None), "raw_cell", "") or "")
    if _CHECK_CALL.search(source):  # a check cell names the answers but is not their cell
        return
    error = getattr(result, "error_before_exec", None) or getattr(result, "error_in_exec", None)
    for exercise in _answered(source):
        if error is None:
            _core._RAISED.pop(exercise, None)
        else:
            _core._RAISED[exercise] = describe_error(error)


def install() -> None:
    """Install the handler in the running IPython, once; does nothing outside IPython."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with the workbook
        return
    shell = get_ipython()
    if shell is None or getattr(shell, _INSTALLED, False):
        return
    shell.set_custom_exc((NameError,), _on_name_error)
    shell.events.register("post_run_cell", _after_cell)
    setattr(shell, _INSTALLED, True)
