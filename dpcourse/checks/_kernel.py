"""In a student's kernel: a check cell whose answer is not defined says why, instead of a traceback.

A typo in an answer cell (``K_max = int(alpha * n * epsilon_offic)``) raises before the answer is
bound, so the check cell below it raises ``NameError`` on the answer's name. The student copy tags
both cells ``raises-exception`` so that *Run All* goes on; this handler, installed when
``dpcourse.checks`` is imported in IPython, turns that ``NameError`` in a check cell into the
check's own short block: the answer is not defined because the answer cell raised (naming its
error), and what to do. A ``NameError`` anywhere else shows the usual traceback.
"""

from __future__ import annotations

import re
from typing import Any

from ._core import FAILED, Exercise, Verdict, show
from ._evidence import quote

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
    message = (
        f"your answer cell raised {_describe(previous)}, so the check could not read your answer ({value})"
        if previous is not None
        else f"your answer is not defined ({value}): run the answer cell above first"
    )
    show(
        Verdict(
            _exercise_id(shell, match.group(1)),
            FAILED,
            message,
            "fix the answer cell, then run it and this check again",
            "the answer cell raised",
        )
    )
    return None  # the block above says it all: no traceback


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
    setattr(shell, _INSTALLED, True)
