"""The machinery behind every exercise's check cell: probe in the kernel, judge from evidence.

An :class:`Exercise` is two functions:

* ``probe(*answers) -> evidence`` runs in the student's kernel. It touches the student's answer
  (reads a value, calls a function on fixed inputs) and turns what it saw into plain JSON
  (:func:`value_evidence`, :func:`call_evidence`). A stub (``...``, ``NotImplementedError``)
  becomes ``{"not_attempted": true}``; a function that raises or has the wrong signature is
  recorded as such, never raised.
* ``judge(evidence) -> detail`` is pure: it sees only the evidence, computes the reference with the
  package, and either returns the detail shown with ✓ or raises :class:`Wrong` with what is wrong
  and a hint. :func:`diagnose` names the two or three most plausible mistakes.

In a notebook, ``check.some_exercise(answer)`` does both and shows one short block: ✓ and the
number that proves it, ``not attempted yet`` with what to do, or ✗ with the message and the hint.
A failed check shows its block and returns, so that *Run All* goes on past a wrong answer
(:class:`CheckFailed` remains for code that wants to raise a verdict). The grader
(:mod:`dpcourse.classroom`) collects only the evidence from the student's kernel and runs the judge in
its own process, so code in a solution cell can change what its answer is, but not how it is judged.
"""

from __future__ import annotations

import html
import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import ArrayLike

__all__ = [
    "CheckFailed",
    "Exercise",
    "NotAttempted",
    "Verdict",
    "Wrong",
    "call_evidence",
    "diagnose",
    "calls",
    "numbers",
    "value",
    "value_evidence",
    "values_evidence",
]

PASSED, FAILED, NOT_ATTEMPTED = "passed", "failed", "not attempted"
_MAX_ELEMENTS = 100_000  # evidence larger than this is refused, not shipped


class Wrong(Exception):
    """Raised by a judge: the answer is wrong. ``message`` says what, ``hint`` how to get it right."""

    def __init__(self, message: str, hint: str = "", mistake: str = ""):
        super().__init__(message)
        self.message, self.hint, self.mistake = message, hint, mistake


class NotAttempted(Exception):
    """Raised by a judge when the evidence shows an untouched stub."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check: ``status`` is ``passed``, ``failed`` or ``not attempted``.

    ``mistake`` is the named mistake a failed answer matched (the same text for every student who
    made it, so that a class summary can count it), or empty.
    """

    exercise: str
    status: str
    message: str = ""
    hint: str = ""
    mistake: str = ""

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def lines(self) -> list[str]:
        """The block a student sees, one short line each."""
        if self.status == PASSED:
            return [f"✓ {self.exercise}: correct{'. ' + self.message if self.message else ''}"]
        if self.status == NOT_ATTEMPTED:
            return [
                f"… {self.exercise}: not attempted yet. Replace the `...` or the `raise NotImplementedError` "
                "line in the cell above with your answer, then run both cells."
            ]
        lines = [f"✗ {self.exercise}: {self.message}"]
        if self.hint:
            lines.append(f"  Hint: {self.hint}")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        colour = {PASSED: "#1b7837", FAILED: "#b2182b"}.get(self.status, "#555555")
        body = "<br>".join(html.escape(line) for line in self.lines())
        return f'<div style="border-left: 4px solid {colour}; padding: 2px 8px; font-family: monospace">{body}</div>'


class CheckFailed(AssertionError):
    """A wrong answer in a notebook. IPython shows only the verdict's short block, never a traceback."""

    def __init__(self, exercise: str | Verdict, message: str = "", hint: str | None = None):
        self.verdict = exercise if isinstance(exercise, Verdict) else Verdict(exercise, FAILED, message, hint or "")
        self.exercise = self.verdict.exercise
        super().__init__(str(self.verdict))

    def _render_traceback_(self) -> list[str]:
        first, *rest = self.verdict.lines()
        return ["\x1b[31m" + first + "\x1b[0m", *rest]


# --------------------------------------------------------------------------- evidence (runs in the kernel)


def _jsonable(value: object) -> Any:
    """Plain JSON for numbers, arrays, strings, lists and dicts; a tagged description for anything else.

    NumPy scalars and 0-d arrays (what ``np.vectorize`` returns for scalar arguments) become numbers.
    """
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, np.bool_):
        return bool(value)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        array = np.asarray(value, dtype=object) if not isinstance(value, np.ndarray) else value
        if array.size > _MAX_ELEMENTS:
            return {"unsupported": f"an array of {array.size:,} elements (at most {_MAX_ELEMENTS:,})"}
        return [_jsonable(item) for item in value]
    if value is Ellipsis:
        return {"unsupported": "..."}
    return {"unsupported": type(value).__name__}


def value_evidence(value: object) -> dict:
    """Evidence for an answer that is a value: ``...`` (the stub) is not attempted."""
    if value is Ellipsis:
        return {"not_attempted": True}
    return {"value": _jsonable(value)}


def values_evidence(**answers: object) -> dict:
    """Evidence for several named values answered together; all of them ``...`` is not attempted."""
    if all(answer is Ellipsis for answer in answers.values()):
        return {"not_attempted": True}
    return {"value": {name: _jsonable(answer) for name, answer in answers.items()}}


def _describe_error(err: BaseException) -> str:
    text = str(err).strip().splitlines()[0][:200] if str(err).strip() else ""
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def call_evidence(function: object, cases: Sequence[Sequence[Any]], *, parameters: str) -> dict:
    """Evidence for an answer that is a function: its result on each case (a tuple of arguments).

    ``parameters`` spells the expected signature, e.g. ``"(k, beta, sensitivity, epsilon)"``.
    """
    if function is Ellipsis:
        return {"not_attempted": True}
    if not callable(function):
        return {"not_callable": type(function).__name__}
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        signature = None
    results = []
    for case in cases:
        if signature is not None:
            try:
                signature.bind(*case)
            except TypeError:
                return {
                    "signature": f"{getattr(function, '__name__', 'your function')}{signature}",
                    "expected": parameters,
                }
        try:
            results.append({"value": _jsonable(function(*case))})
        except NotImplementedError:
            return {"not_attempted": True}
        except Exception as err:  # noqa: BLE001 - the student's code may raise anything; that is the evidence
            results.append({"raised": _describe_error(err)})
    return {"calls": results}


# --------------------------------------------------------------------------- judging (pure)


def value(evidence: dict, what: str) -> Any:
    """The answer value from value evidence, or the right exception."""
    if evidence.get("not_attempted"):
        raise NotAttempted
    if "value" not in evidence:
        raise Wrong(f"{what}: the check could not read your answer")
    value = evidence["value"]
    if isinstance(value, dict) and "unsupported" in value:
        raise Wrong(f"{what}: expected a number, got {value['unsupported']}")
    return value


def calls(evidence: dict, *, parameters: str) -> list:
    """The results of the student's function from call evidence (raises for every kind of failure)."""
    if evidence.get("not_attempted"):
        raise NotAttempted
    if "not_callable" in evidence:
        raise Wrong(f"expected a function, got a {evidence['not_callable']}", f"define it with def name{parameters}:")
    if "signature" in evidence:
        raise Wrong(
            f"your function is {evidence['signature']}, but the check calls it as {parameters}",
            f"keep the parameters of the stub: {parameters}",
        )
    results = evidence.get("calls")
    if not isinstance(results, list):
        raise Wrong("the check could not read your function's results")
    for result in results:
        if "raised" in result:
            raise Wrong(
                f"your function raised {result['raised']}",
                "run it yourself on the example in the exercise and read the error",
            )
    return [result.get("value") for result in results]


def _has_text_or_truth(value: object, depth: int = 0) -> str | None:
    """The kind of the first string or boolean in (nested lists of) ``value``: numbers were asked for."""
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list) and depth < 8:
        return next((kind for item in value if (kind := _has_text_or_truth(item, depth + 1))), None)
    return None


def numbers(value: object, what: str, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` as a float array (of ``shape`` if given), or :class:`Wrong` saying what it was.

    Strings and booleans are refused even where NumPy would convert them (``"538"``, ``True``).
    """
    if isinstance(value, dict) and "unsupported" in value:
        raise Wrong(f"{what}: expected a number, got {value['unsupported']}")
    kind = _has_text_or_truth(value)
    if kind is not None:
        raise Wrong(f"{what}: expected a number, got {kind}", "write the number itself, not text or True/False")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise Wrong(f"{what}: expected a number, got {type(value).__name__} {str(value)[:40]!r}") from None
    if shape is not None and array.shape != tuple(shape):
        raise Wrong(f"{what}: expected shape {tuple(shape)}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise Wrong(
            f"{what}: got {np.array2string(array, precision=4) if array.ndim else float(array)}, which is not finite"
        )
    return array


def _close(got: np.ndarray, want: ArrayLike, rtol: float, atol: float) -> bool:
    want = np.asarray(want, dtype=float)
    return got.shape == want.shape and bool(np.allclose(got, want, rtol=rtol, atol=atol))


def _shown(array: np.ndarray) -> str:
    return np.array2string(array, precision=5) if array.ndim else f"{float(array):.6g}"


def diagnose(
    got: object,
    expected: ArrayLike,
    *,
    what: str,
    hint: str,
    mistakes: dict | None = None,
    rtol: float = 1e-6,
    atol: float = 0.0,
) -> np.ndarray:
    """Pass if ``got`` matches ``expected``; else name the first mistake it matches, or give ``hint``.

    ``mistakes`` maps a description of a plausible mistake ("you used ln(1/β) instead of ln(k/β)")
    to the value that mistake produces (or to a pair ``(value, hint)``).
    """
    want = np.asarray(expected, dtype=float)
    array = numbers(got, what, want.shape)
    if _close(array, want, rtol, atol):
        return array
    for mistake, produced in (mistakes or {}).items():
        value, mistake_hint = produced if isinstance(produced, tuple) else (produced, hint)
        value = np.asarray(value, dtype=float)
        if _close(array, value, rtol, atol) and not _close(value, want, rtol, atol):
            raise Wrong(f"{what}: got {_shown(array)}. It looks like {mistake}", mistake_hint, mistake)
    raise Wrong(f"{what}: got {_shown(array)}, which is not right", hint)


# --------------------------------------------------------------------------- the exercise

_COLLECTOR: list | None = None  # set by dpcourse.checks._grading while the grader runs a check cell
_SEED: int | None = None  # the seed the grader draws a function exercise's inputs from, for that cell


@dataclass(frozen=True)
class Exercise:
    """One exercise's check: call it in the check cell with the student's answer(s).

    Parameters
    ----------
    exercise : str
        The id, as in the notebook's ``metadata["dpcourse"]["exercise"]``.
    probe : callable
        ``probe(*answers) -> dict`` of JSON evidence; runs in the student's kernel.
    judge : callable
        ``judge(evidence) -> str`` (the detail shown with ✓); raises :class:`Wrong` or
        :class:`NotAttempted`. Pure: the grader calls it outside the student's kernel.
    cases : callable, optional
        For a function exercise: ``cases(rng) -> list`` of argument tuples, passed to both the probe
        and the judge as ``cases=``. ``rng`` is None in a student's own run (the fixed, documented
        examples) and ``np.random.default_rng(seed)`` when grading, with a seed drawn at grading time,
        so that no table of the inputs can be prepared from what ``dpcourse.checks`` exports; the
        judge regenerates the inputs from the seed and never trusts inputs echoed in the evidence.
    """

    exercise: str
    probe: Callable = field(repr=False)
    judge: Callable = field(repr=False)
    cases: Callable | None = field(default=None, repr=False)

    def _cases(self, seed: int | None) -> dict:
        if self.cases is None:
            return {}
        return {"cases": self.cases(None if seed is None else np.random.default_rng(seed))}

    def evidence(self, *answers: object, seed: int | None = None) -> dict:
        """What the probe saw, as JSON-ready data (never raises for anything the student did)."""
        try:
            return self.probe(*answers, **self._cases(seed))
        except NotImplementedError:
            return {"not_attempted": True}
        except Exception as err:  # noqa: BLE001 - e.g. an answer of the wrong type deep inside the probe
            return {"probe_error": _describe_error(err)}

    def verdict(self, evidence: object, seed: int | None = None) -> Verdict:
        """Judge evidence (as returned by :meth:`evidence` with the same ``seed``, possibly via JSON)."""
        if not isinstance(evidence, dict):
            return Verdict(self.exercise, FAILED, "the check could not read your answer")
        if "probe_error" in evidence:
            return Verdict(
                self.exercise,
                FAILED,
                f"your answer could not be read: {evidence['probe_error']}",
                "check the type the exercise asks for",
            )
        try:
            detail = self.judge(evidence, **self._cases(seed))
        except NotAttempted:
            return Verdict(self.exercise, NOT_ATTEMPTED)
        except Wrong as wrong:
            return Verdict(self.exercise, FAILED, wrong.message, wrong.hint, wrong.mistake)
        except Exception as err:  # noqa: BLE001 - evidence no judge foresaw: still a verdict, never a traceback
            return Verdict(
                self.exercise,
                FAILED,
                f"the check could not judge your answer ({_describe_error(err)})",
                "check the type and shape the exercise asks for",
            )
        return Verdict(self.exercise, PASSED, detail or "")

    def __call__(self, *answers: object) -> None:
        """Check the answer(s) and show the verdict: ✓, not attempted yet, or ✗ with the message and hint.

        A wrong answer is shown, not raised, so that *Run All* goes on to the rest of the notebook
        (grading judges the evidence itself and records it as ``failed``). Returns None, so that a
        check call ending a cell does not show the verdict a second time.
        """
        seed = _SEED if _COLLECTOR is not None else None
        evidence = self.evidence(*answers, seed=seed)
        if _COLLECTOR is not None:
            _COLLECTOR.append({"exercise": self.exercise, "evidence": json.loads(json.dumps(evidence, default=str))})
            return
        _show(self.verdict(evidence))


def _show(verdict: Verdict) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with the workbook
        print(verdict)
        return
    if get_ipython() is None:
        print(verdict)
    else:
        display(verdict)
