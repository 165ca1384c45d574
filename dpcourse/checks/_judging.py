"""The judge's side of a check: read the evidence, compare with the reference, name the mistake.

Everything here is pure and runs outside the student's kernel (in the grader) as well as in it (a
student's own run). :func:`numbers` is the one conversion every judge reads a number through;
:func:`diagnose` compares one answer with the reference and the values of named mistakes;
:func:`judge_cases` judges a function on each of its cases and scores the share right.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._validation import ArrayLike
from ._evidence import quote

__all__ = [
    "NotAttempted",
    "Wrong",
    "calls",
    "diagnose",
    "judge_cases",
    "named_values",
    "numbers",
    "short",
    "significant_atol",
    "value",
]


class Wrong(Exception):
    """Raised by a judge: the answer is wrong. ``message`` says what, ``hint`` how to get it right.

    ``mistake`` names the mistake matched (or is empty); ``score`` is the share of the exercise's cases
    the answer got right (0 unless the judge counts cases). ``consistent`` maps every named mistake the
    answer agrees with to its ``(message, hint)`` (by default just ``mistake``): :func:`judge_cases` names
    the mistake that explains every case, not merely the first that fits one.
    """

    def __init__(
        self,
        message: str,
        hint: str = "",
        mistake: str = "",
        score: float = 0.0,
        consistent: dict[str, tuple[str, str]] | None = None,
    ):
        super().__init__(message)
        self.message, self.hint, self.mistake, self.score = message, hint, mistake, score
        self.consistent = consistent if consistent is not None else ({mistake: (message, hint)} if mistake else {})


class NotAttempted(Exception):
    """Raised by a judge when the evidence shows an untouched stub."""


def short(x: float) -> str:
    """A number as a message shows it: at most 4 significant digits (``0.031``, ``1.234e+04``)."""
    return f"{x:.4g}"


def value(evidence: dict, what: str) -> Any:
    """The answer value from value evidence, or the right exception."""
    if evidence.get("not_attempted"):
        raise NotAttempted
    if "value" not in evidence:
        raise Wrong(f"{what}: the check could not read your answer")
    value = evidence["value"]
    if isinstance(value, dict) and "unsupported" in value:
        raise Wrong(f"{what}: expected a number, got {quote(value['unsupported'], 60)}", "check the type asked for")
    return value


def named_values(evidence: dict, what: str) -> dict:
    """The answers of values evidence (several named answers), as a dict, or the right exception."""
    answers = value(evidence, what)
    if type(answers) is not dict:
        raise Wrong(f"{what}: the check could not read your answers")
    return answers


def calls(evidence: dict, *, parameters: str) -> list[dict]:
    """The per-case results of the student's function from call evidence: ``{"value": …}`` or ``{"raised": …}``.

    Raises :class:`NotAttempted` or :class:`Wrong` for what fails every case at once (a stub, not a
    function, the wrong signature, unreadable evidence).
    """
    if evidence.get("not_attempted"):
        raise NotAttempted
    if "not_callable" in evidence:
        raise Wrong(
            f"expected a function, got a {quote(evidence['not_callable'], 60)}", f"define it with def name{parameters}:"
        )
    if "signature" in evidence:
        raise Wrong(
            f"your function is {quote(evidence['signature'])}, but the check calls it as {parameters}",
            f"keep the parameters of the stub: {parameters}",
        )
    results = evidence.get("calls")
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise Wrong("the check could not read your function's results")
    return results


def judge_cases(
    cases: Sequence[Any],
    results: Sequence[dict],
    judge_one: Callable[[Any, Any], tuple[str, ...] | None],
    *,
    inputs: Callable[[Any], str],
) -> int:
    """Judge a function's result on each case; return the number of cases, or raise :class:`Wrong`.

    ``judge_one(case, result)`` raises :class:`Wrong` for a wrong result, and may return the named mistakes
    that agree with the right result on that case (what :func:`diagnose` returns); ``inputs(case)`` spells
    the case's inputs in short form (``"k=7, beta=0.031, epsilon=0.42"``). Every case is judged, so that the
    :class:`Wrong` raised carries ``score`` = the share of cases right. It names a mistake only if that
    mistake agrees with the function on every case (a mistake that coincides with the right answer on some
    inputs, such as "the counted cells always gain weight", is not taken for one that explains them all);
    its message is that of a wrong case the mistake explains, else of the first wrong case.
    """
    if len(results) != len(cases):
        raise Wrong("the check could not read your function's results")
    failures: list[Wrong] = []
    explains_all: set[str] | None = None  # None: no case has constrained the named mistakes yet
    for case, result in zip(cases, results, strict=True):
        try:
            if "raised" in result:
                raise Wrong(
                    f"your function raised {quote(result['raised'])} with {inputs(case)}",
                    "run it yourself on those inputs and read the error",
                )
            if "value" not in result:
                raise Wrong(f"the check could not read your function's result with {inputs(case)}")
            agreed = judge_one(case, result["value"])
        except Wrong as wrong:
            failures.append(wrong)
            agreed = tuple(wrong.consistent)
        if agreed is not None:
            explains_all = set(agreed) if explains_all is None else explains_all & set(agreed)
    if not failures:
        return len(cases)
    score = (len(cases) - len(failures)) / len(cases)
    for failure in failures:
        for mistake, (message, hint) in failure.consistent.items():
            if explains_all is None or mistake in explains_all:
                raise Wrong(message, hint, mistake, score=score)
    first = failures[0]
    raise Wrong(first.message, first.hint, "", score=score)


_PLAIN_NUMBERS = {int, float}


def _not_a_number(value: object, depth: int = 0) -> str | None:
    """What the first thing in (nested lists of) ``value`` that is not a number is, or None.

    Types are compared exactly (``type(x) is``), so that no subclass can pass for a number.
    """
    kind = type(value)
    if kind in (int, float):
        return None
    if kind is bool or kind is np.bool_:
        return "a boolean"
    if kind is str:
        return "a string"
    if value is None:
        return "None"
    if kind is list and isinstance(value, list):
        if depth > 8:
            return "lists nested too deep"
        if set(map(type, value)) <= _PLAIN_NUMBERS:  # the common case (a flat list of numbers), read at C speed
            return None
        return next((found for item in value if (found := _not_a_number(item, depth + 1))), None)
    if kind is np.ndarray and isinstance(value, np.ndarray):
        return None if value.dtype.kind in "iuf" else f"an array of {quote(value.dtype, 30)}"
    if isinstance(value, np.integer | np.floating) and kind.__module__ == "numpy":
        return None
    if kind is dict and isinstance(value, dict):
        return quote(value["unsupported"], 60) if "unsupported" in value else "a dict"
    return f"a {quote(kind.__name__, 60)}"


def numbers(value: object, what: str, shape: tuple[int, ...] | None = None, *, whole: bool = False) -> np.ndarray:
    """``value`` as a float array (of ``shape`` if given), or :class:`Wrong` saying what it was.

    The one conversion every judge reads a number through: only ints, floats and (nested) lists of them
    (and NumPy numbers) are numbers; strings, booleans, None, dicts and any other type are refused by
    name, even where NumPy would convert them (``"538"``, ``True``). ``whole`` asks for whole numbers.
    """
    kind = _not_a_number(value)
    if kind is not None:
        raise Wrong(
            f"{what}: expected a number, got {kind}",
            "write the number itself, not text, True/False or None",
        )
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise Wrong(f"{what}: expected numbers, got a ragged or oversized list", "check the shape asked for") from None
    if shape is not None and array.shape != tuple(shape):
        raise Wrong(f"{what}: expected shape {tuple(shape)}, got {quote(array.shape, 60)}", "check the shape asked for")
    if not np.all(np.isfinite(array)):
        raise Wrong(f"{what}: got {_shown(array)}, which is not finite", "every entry must be a finite number")
    if whole and not np.all(array == np.round(array)):
        raise Wrong(f"{what}: got {_shown(array)}, but whole numbers are asked for", "give whole numbers (int)")
    return array


def _close(got: np.ndarray, want: ArrayLike, rtol: float, atol: float) -> bool:
    want = np.asarray(want, dtype=float)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))


def _shown(array: np.ndarray) -> str:
    """A student's number(s) as a message quotes them: 6 significant digits, at most 200 characters."""
    if array.ndim == 0:
        return f"{float(array):.6g}"
    shown = np.array2string(array, threshold=20, edgeitems=3, formatter={"float_kind": lambda x: f"{x:.6g}"})
    return quote(shown)


def significant_atol(expected: float, digits: int) -> float:
    """One unit in the ``digits``-th significant digit of ``expected``: every rounding of it to ``digits`` significant
    digits or more lies within this of it, a rounding done in two steps too (0.0048448 → 0.004845 → 0.00485).

    >>> significant_atol(0.0048448, 3)
    1e-05
    """
    magnitude = int(np.floor(np.log10(abs(float(expected))))) if expected else 0
    return float(f"{10.0 ** (magnitude - digits + 1):.1g}")


def diagnose(
    got: object,
    expected: ArrayLike,
    *,
    what: str,
    hint: str,
    mistakes: dict | None = None,
    rtol: float = 1e-6,
    atol: float = 0.0,
    digits: int | None = None,
    entries: Sequence[str] = (),
) -> tuple[str, ...]:
    """Pass if ``got`` matches ``expected``; else name the first mistake it matches, or give ``hint``.

    ``mistakes`` maps a description of a plausible mistake ("you used ln(1/β) instead of ln(k/β)")
    to the value that mistake produces (or to a pair ``(value, hint)``). On a pass, returns the mistakes
    whose value is the right one here (this input cannot tell them from the right answer); the
    :class:`Wrong` raised otherwise lists in ``consistent`` every mistake the answer matches.
    ``digits`` (a scalar answer): the exercise asks for that many significant digits, so any rounding of the
    right value to them or more passes (``rtol`` and ``atol`` are then ignored), and a wrong answer's message
    says so. ``entries`` (a vector answer): the name of each entry, so that an answer that matches no named
    mistake is told which entries are off (never their values).
    """
    want = np.asarray(expected, dtype=float)
    if digits is not None:
        rtol, atol = 0.0, significant_atol(float(want), digits)
    precision = _precision(rtol, atol, digits)
    array = numbers(got, what, want.shape)
    named = {
        mistake: (np.asarray(produced[0] if isinstance(produced, tuple) else produced, dtype=float), produced)
        for mistake, produced in (mistakes or {}).items()
    }
    if _close(array, want, rtol, atol):
        return tuple(mistake for mistake, (value, _) in named.items() if _close(value, want, rtol, atol))
    consistent = {
        mistake: (
            f"{what}: got {_shown(array)}. It looks like {mistake}",
            produced[1] if isinstance(produced, tuple) else hint,
        )
        for mistake, (value, produced) in named.items()
        if _close(array, value, rtol, atol) and not _close(value, want, rtol, atol)
    }
    if consistent:
        mistake, (message, mistake_hint) = next(iter(consistent.items()))
        raise Wrong(message, mistake_hint, mistake, consistent=consistent)
    if entries and len(entries) == array.size == want.size and array.ndim == 1:
        close = np.isclose(array, want, rtol=rtol, atol=atol)
        off = [name for name, fits in zip(entries, close, strict=True) if not fits]
        right = [name for name in entries if name not in off]
        also = f"; {_listed(right)} {'is' if len(right) == 1 else 'are'} right" if right else ""
        raise Wrong(f"{what}: {_listed(off)} {'is' if len(off) == 1 else 'are'} off{also}", hint, consistent={})
    raise Wrong(f"{what}: got {_shown(array)}, which is not right{precision}", hint, consistent={})


def _precision(rtol: float, atol: float, digits: int | None) -> str:
    """How close an answer must be, as a wrong answer's message says it (nothing for an exact answer)."""
    if digits is not None:
        return f" to {digits} significant digits"
    if rtol and atol:
        return f" (the check accepts a relative error of {rtol:g} plus {atol:g})"
    if rtol:
        return f" (the check accepts a relative error of {rtol:g})"
    if atol:
        return f" (the check accepts an error of {atol:g})"
    return ""


def _listed(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
