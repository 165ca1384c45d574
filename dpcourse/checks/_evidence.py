"""The probe's side of a check: what the student's answer is, as plain JSON, read without trusting it.

Everything here runs in the student's kernel on objects the student made, so nothing asks an object
what it is: a number is recorded only through its base class's own slot (``int.__index__``,
``float.__float__``, ``str.__str__``), so a subclass whose ``__eq__``, ``__float__``, ``__int__``,
``__index__`` or ``__array__`` lies is recorded as the value it really holds, and any other type
is recorded as ``{"unsupported": <its name>}``. Booleans stay booleans and strings stay strings,
so that the judge can refuse them by name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = [
    "MAX_ELEMENTS",
    "call_evidence",
    "describe_error",
    "function_problem",
    "jsonable",
    "quote",
    "value_evidence",
    "values_evidence",
]

MAX_ELEMENTS = 100_000  # evidence larger than this is refused, not shipped
_MAX_DEPTH = 16
_QUOTE = 200

_NUMPY_INTEGERS = frozenset(
    {np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intc, np.uintc}
)
_NUMPY_FLOATS = frozenset({np.float16, np.float32, np.float64, np.longdouble})


def quote(text: object, limit: int = _QUOTE) -> str:
    """``text`` (a student's, so possibly huge) cut to ``limit`` characters, ending in "…" if cut."""
    shown = text if type(text) is str else _safe_str(text)
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"


def _safe_str(value: object) -> str:
    try:
        return str.__str__(str(value))
    except Exception:  # noqa: BLE001 - a student's __str__ may raise anything
        return f"<{type(value).__name__}>"


def _type_name(value: object) -> str:
    return quote(type(value).__name__, 60)


class _Budget:
    """How many more elements the evidence may hold (nested lists count every element)."""

    def __init__(self) -> None:
        self.left = MAX_ELEMENTS

    def spend(self, count: int) -> bool:
        self.left -= count
        return self.left >= 0


def jsonable(value: object) -> Any:
    """Plain JSON for numbers, arrays, strings, lists and dicts; ``{"unsupported": …}`` for anything else.

    Exact types are kept; NumPy scalars and 0-d arrays (what ``np.vectorize`` returns) become Python
    numbers; a subclass of ``int``, ``float``, ``str``, ``list``, ``tuple``, ``dict`` or ``ndarray`` is
    read through its base class, never through a method it may override.
    """
    return _jsonable(value, 0, _Budget())


def _jsonable(value: object, depth: int, budget: _Budget) -> Any:
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is np.bool_:
        return bool(value)
    if kind in _NUMPY_INTEGERS:
        return int(value)  # type: ignore[call-overload]
    if kind in _NUMPY_FLOATS:
        return float(value)  # type: ignore[arg-type]
    if value is Ellipsis:
        return {"unsupported": "..."}
    if depth > _MAX_DEPTH:
        return {"unsupported": f"lists nested more than {_MAX_DEPTH} deep"}
    if isinstance(value, np.ndarray):
        return _array(np.ndarray.view(value, np.ndarray), depth, budget)
    if isinstance(value, (list, tuple)):
        items = list(list.__iter__(value)) if isinstance(value, list) else list(tuple.__iter__(value))
        if not budget.spend(len(items)):
            return {"unsupported": f"more than {MAX_ELEMENTS:,} elements"}
        return [_jsonable(item, depth + 1, budget) for item in items]
    if isinstance(value, dict):
        pairs = list(dict.items(value))
        if not budget.spend(len(pairs)):
            return {"unsupported": f"more than {MAX_ELEMENTS:,} elements"}
        return {_key(key): _jsonable(item, depth + 1, budget) for key, item in pairs}
    if isinstance(value, bool):  # pragma: no cover - bool cannot be subclassed; kept for clarity
        return bool(value)
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, str):
        return str.__str__(value)
    return {"unsupported": _type_name(value)}


def _key(key: object) -> str:
    if type(key) is str:
        return key
    if type(key) in (int, float, bool) or key is None:
        return str(key)
    return f"<{_type_name(key)}>"


def _array(array: np.ndarray, depth: int, budget: _Budget) -> Any:
    if not budget.spend(array.size):
        return {"unsupported": f"an array of {array.size:,} elements (at most {MAX_ELEMENTS:,})"}
    if array.dtype.kind in "biufU":
        return array.tolist()  # exact Python bool/int/float/str, nested like the array
    if array.dtype.kind == "O":
        items = array.tolist()
        if array.ndim == 0:
            return _jsonable(items, depth + 1, budget)
        return _jsonable_nested(items, depth + 1, budget)
    return {"unsupported": f"an array of dtype {quote(array.dtype, 40)}"}


def _jsonable_nested(items: list, depth: int, budget: _Budget) -> list:
    # tolist() of an object array is exact lists of the objects: read the objects, not the lists again
    return [
        _jsonable_nested(item, depth + 1, budget) if type(item) is list else _jsonable(item, depth, budget)
        for item in items
    ]


def value_evidence(value: object) -> dict:
    """Evidence for an answer that is a value: ``...`` (the stub) is not attempted."""
    if value is Ellipsis:
        return {"not_attempted": True}
    return {"value": jsonable(value)}


def values_evidence(**answers: object) -> dict:
    """Evidence for several named values answered together; all of them ``...`` is not attempted."""
    if all(answer is Ellipsis for answer in answers.values()):
        return {"not_attempted": True}
    return {"value": {name: jsonable(answer) for name, answer in answers.items()}}


def describe_error(err: BaseException) -> str:
    """``Type: first line`` of an exception, at most about 200 characters (its ``__str__`` may raise)."""
    text = _safe_str(err).strip()
    first = text.splitlines()[0] if text else ""
    return quote(f"{_type_name(err)}: {first}" if first else _type_name(err))


def function_problem(function: object, args: tuple, kwargs: dict, *, parameters: str) -> dict | None:
    """Evidence that ``function`` cannot be called as ``function(*args, **kwargs)``, or None if it can.

    ``...`` is not attempted; a non-callable or a function whose signature does not take the arguments
    is recorded as such.
    """
    if function is Ellipsis:
        return {"not_attempted": True}
    if not callable(function):
        return {"not_callable": _type_name(function)}
    try:
        signature: inspect.Signature | None = inspect.signature(function)
    except (TypeError, ValueError):
        signature = None
    if signature is not None:
        try:
            signature.bind(*args, **kwargs)
        except TypeError:
            name = quote(getattr(function, "__name__", "your function"), 60)
            return {"signature": quote(f"{name}{signature}"), "expected": parameters}
    return None


def call_evidence(
    function: object,
    cases: Sequence[Any],
    *,
    parameters: str,
    call: Callable[[Callable, Any], object] | None = None,
    arguments: Callable[[Any], tuple[tuple, dict]] | None = None,
) -> dict:
    """Evidence for an answer that is a function: its result on each case.

    ``parameters`` spells the expected signature, e.g. ``"(k, beta, sensitivity, epsilon)"``. By default
    a case is a tuple of positional arguments; ``arguments(case) -> (args, kwargs)`` says otherwise, and
    ``call(function, case)`` replaces the single call (e.g. to run it many times and summarise). A
    ``NotImplementedError`` anywhere is not attempted; any other exception is recorded for its case.
    """
    to_arguments = arguments or (lambda case: (tuple(case), {}))
    results: list[dict[str, Any]] = []
    for case in cases:
        args, kwargs = to_arguments(case)
        problem = function_problem(function, args, kwargs, parameters=parameters)
        if problem is not None:
            return problem
        assert callable(function)
        try:
            got = call(function, case) if call is not None else jsonable(function(*args, **kwargs))
        except NotImplementedError:
            return {"not_attempted": True}
        except Exception as err:  # noqa: BLE001 - the student's code may raise anything; that is the evidence
            results.append({"raised": describe_error(err)})
        else:
            results.append({"value": got})
    return {"calls": results}
