"""The machinery behind every exercise's check cell.

A check compares a student's answer with the package's own reference, computed at check
time (never a stored number), and either prints a short confirmation or raises
:class:`CheckFailed` with a message that says what was expected and a hint.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["CheckFailed", "expect_close", "expect_callable", "passed"]


class CheckFailed(AssertionError):
    """A student's answer is wrong; the message says why and how to get it right."""

    def __init__(self, exercise: str, message: str, hint: str | None = None):
        self.exercise = exercise
        text = f"[{exercise}] {message}"
        if hint:
            text += f"\nHint: {hint}"
        super().__init__(text)


def passed(exercise: str, detail: str = "") -> None:
    """Print the confirmation a check cell shows when the answer is right."""
    print(f"✓ {exercise}: correct{'. ' + detail if detail else ''}")


def expect_callable(exercise: str, value, what: str) -> Callable:
    if not callable(value):
        raise CheckFailed(exercise, f"expected {what} to be a function; got {type(value).__name__}")
    return value


def expect_close(exercise: str, value, expected, *, what: str, rtol: float = 1e-6, atol: float = 0.0,
                 hint: str | None = None) -> None:
    """Fail unless ``value`` is within ``rtol``/``atol`` of ``expected`` (element-wise)."""
    if value is None or value is Ellipsis:
        raise CheckFailed(exercise, f"{what}: no answer yet", hint)
    try:
        got = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise CheckFailed(exercise, f"{what}: expected a number, got {value!r}", hint) from None
    want = np.asarray(expected, dtype=float)
    if got.shape != want.shape:
        raise CheckFailed(exercise, f"{what}: expected shape {want.shape}, got {got.shape}", hint)
    if not np.all(np.isfinite(got)) or not np.allclose(got, want, rtol=rtol, atol=atol):
        shown = np.array2string(got, precision=6) if got.ndim else f"{float(got):.6g}"
        raise CheckFailed(exercise, f"{what}: got {shown}, which is not right", hint)
