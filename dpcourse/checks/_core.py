"""The machinery behind every exercise's check cell: probe in the kernel, judge from evidence.

An :class:`Exercise` is two functions:

* ``probe(*answers) -> evidence`` runs in the student's kernel. It touches the student's answer
  (reads a value, calls a function on the cases) and turns what it saw into plain JSON
  (:func:`value_evidence`, :func:`call_evidence`, in :mod:`._evidence`). A stub (``...``,
  ``NotImplementedError``) becomes ``{"not_attempted": true}``; a function that raises or has the
  wrong signature is recorded as such, never raised.
* ``judge(evidence) -> detail`` is pure (its helpers are in :mod:`._judging`): it sees only the
  evidence, reads every number through :func:`numbers` (the one typed conversion: strings,
  booleans, None and odd types are refused by name), computes the reference with the package, and
  either returns the detail shown with ✓ or raises :class:`Wrong` with what is wrong and a hint.
  :func:`diagnose` names the two or three most plausible mistakes; :func:`judge_cases` judges a
  function case by case and scores the share right.

In a notebook, ``check.some_exercise(answer)`` does both and shows one short block: ✓ and the
number that proves it, ``not attempted yet`` with what to do, or ✗ with the message and the hint.
A failed check shows its block and returns, so that *Run All* goes on past a wrong answer
(:class:`CheckFailed` remains for code that wants to raise a verdict). The grader
(:mod:`dpcourse.classroom`) collects only the evidence from the student's kernel and runs the judge in
its own process, so code in a solution cell can change what its answer is, but not how it is judged.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._evidence import call_evidence, describe_error, function_problem, jsonable, quote, value_evidence, values_evidence
from ._judging import (
    NotAttempted,
    Wrong,
    calls,
    diagnose,
    judge_cases,
    named_values,
    numbers,
    short,
    value,
)

__all__ = [
    "CheckFailed",
    "Exercise",
    "NotAttempted",
    "Verdict",
    "Wrong",
    "call_evidence",
    "calls",
    "diagnose",
    "function_problem",
    "judge_cases",
    "named_values",
    "numbers",
    "quote",
    "short",
    "value",
    "value_evidence",
    "values_evidence",
]

PASSED, FAILED, NOT_ATTEMPTED = "passed", "failed", "not attempted"
_MAX_SHOWN = 400  # a verdict's message and hint are cut here as a last resort (each quotes ≤ 200 of the student's)

_jsonable = jsonable  # the old private name, for code that imported it
_describe_error = describe_error


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check: ``status`` is ``passed``, ``failed`` or ``not attempted``.

    ``mistake`` is the named mistake a failed answer matched (the same text for every student who
    made it, so that a class summary can count it), or empty.

    ``score`` is the credit the answer earns, from 0 to 1: 1.0 when it passed, 0.0 when it is not
    attempted, and when it failed either 0.0 or, for a function exercise judged on several cases
    (the inputs drawn for grading), the share of those cases the function got right, so that a course
    may give partial credit. A judge that cannot count cases (a value, a statistical test of one
    distribution, an audit) is all or nothing. Left out, it is filled in from ``status``.
    """

    exercise: str
    status: str
    message: str = ""
    hint: str = ""
    mistake: str = ""
    score: float = math.nan

    def __post_init__(self) -> None:
        score = 1.0 if self.status == PASSED else 0.0 if self.status == NOT_ATTEMPTED else self.score
        if math.isnan(score):
            score = 0.0
        object.__setattr__(self, "score", min(1.0, max(0.0, float(score))))

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def _spans(self) -> list[list[tuple[str, bool]]]:
        """The block as lines of ``(text, is_code)`` spans: code is quoted in plain text and ``<code>`` in HTML."""
        if self.status == PASSED:
            return [[(f"✓ {self.exercise}: correct{'. ' + self.message if self.message else ''}", False)]]
        if self.status == NOT_ATTEMPTED:
            return [
                [
                    (f"… {self.exercise}: not attempted yet. Replace the ", False),
                    ("...", True),
                    (" or the ", False),
                    ("raise NotImplementedError", True),
                    (" line in the cell above with your answer, then run both cells.", False),
                ]
            ]
        lines = [[(f"✗ {self.exercise}: {self.message}", False)]]
        if self.hint:
            lines.append([(f"  Hint: {self.hint}", False)])
        return lines

    def lines(self) -> list[str]:
        """The block a student sees as plain text, one short line each (code in “quotes”, no Markdown)."""
        return ["".join(f"“{text}”" if code else text for text, code in line) for line in self._spans()]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        colour = {PASSED: "#1b7837", FAILED: "#b2182b"}.get(self.status, "#555555")
        body = "<br>".join(
            "".join(f"<code>{html.escape(text)}</code>" if code else html.escape(text) for text, code in line)
            for line in self._spans()
        )
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


# --------------------------------------------------------------------------- the exercise

_COLLECTOR: list | None = None  # set by dpcourse.checks._grading while the grader runs a check cell
_SEED: int | None = None  # the seed the grader draws a function exercise's inputs from, for that cell
#: Exercise id → (the answers, the evidence) of its check cell's last run in this kernel (a student's own run only):
#: :func:`~dpcourse.checks.hand_in_status` reuses the evidence when it would probe the very same answers again.
_LAST_RUN: dict[str, tuple[tuple[object, ...], dict]] = {}
#: Exercise id → the error (``Type: first line``) its answer cell raised when last run in this kernel; filled by the
#: kernel's cell hook (:mod:`._kernel`), read by :func:`~dpcourse.checks.hand_in_status`.
_RAISED: dict[str, str] = {}


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
        For a function exercise: ``cases(rng) -> list`` of inputs, passed to both the probe and the
        judge as ``cases=``. ``rng`` is None in a student's own run (the fixed, documented examples)
        and ``np.random.default_rng(seed)`` when grading, with a seed drawn at grading time, so that no
        table of the inputs can be prepared from what ``dpcourse.checks`` exports; the judge
        regenerates the inputs from the seed and never trusts inputs echoed in the evidence.
    answers : tuple of str
        The names of the notebook globals the check cell passes, in order (``("K_max",)``):
        :func:`dpcourse.checks.hand_in_status` reads them from the student's namespace.
    """

    exercise: str
    probe: Callable = field(repr=False)
    judge: Callable = field(repr=False)
    cases: Callable | None = field(default=None, repr=False)
    answers: tuple[str, ...] = ()

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
            return {"probe_error": describe_error(err)}

    def verdict(self, evidence: object, seed: int | None = None) -> Verdict:
        """Judge evidence (as returned by :meth:`evidence` with the same ``seed``, possibly via JSON)."""
        if not isinstance(evidence, dict):
            return Verdict(self.exercise, FAILED, "the check could not read your answer")
        if "probe_error" in evidence:
            return Verdict(
                self.exercise,
                FAILED,
                f"your answer could not be read: {quote(evidence['probe_error'])}",
                "check the type the exercise asks for",
            )
        try:
            detail = self.judge(evidence, **self._cases(seed))
        except NotAttempted:
            return Verdict(self.exercise, NOT_ATTEMPTED)
        except Wrong as wrong:
            return Verdict(
                self.exercise,
                FAILED,
                quote(wrong.message, _MAX_SHOWN),
                quote(wrong.hint, _MAX_SHOWN),
                wrong.mistake,
                wrong.score,
            )
        except Exception as err:  # noqa: BLE001 - evidence no judge foresaw: still a verdict, never a traceback
            return Verdict(
                self.exercise,
                FAILED,
                f"the check could not judge your answer ({describe_error(err)})",
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
        _LAST_RUN[self.exercise] = (answers, evidence)
        raised = self.answer_cell_error()
        if raised is not None:  # the names still hold an earlier run's values: never judge those
            _RAISED[self.exercise] = raised  # and Before you hand in says so too
            show(
                Verdict(
                    self.exercise,
                    FAILED,
                    f"your answer cell raised {raised}, so the check did not judge it",
                    "fix the answer cell, then run it and this check again",
                    "the answer cell raised",
                )
            )
            return
        show(self.verdict(evidence))

    def answer_cell_error(self) -> str | None:
        """The error of the cell run just before this check, when that cell is this exercise's answer cell.

        In a live kernel, a typo in the answer cell leaves the answer's name bound to its value from an
        earlier run (or to the stub); the check must say the cell raised rather than judge that value.
        The answer cell is recognised by its source naming one of :attr:`answers`.
        """
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover - IPython comes with the workbook
            return None
        shell = get_ipython()
        last = getattr(shell, "last_execution_result", None)
        error = getattr(last, "error_in_exec", None)
        if error is None:
            return None
        source = str(getattr(getattr(last, "info", None), "raw_cell", "") or "")
        if self.answers and not any(re.search(rf"\b{re.escape(name)}\b", source) for name in self.answers):
            return None
        text = str(error).strip().splitlines()
        return f"{type(error).__name__}: {quote(text[0]) if text else ''}".rstrip(": ")


def show(shown: object) -> None:
    """Display a verdict (or any object with ``_repr_html_``) in IPython, or print it outside."""
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with the workbook
        print(shown)
        return
    if get_ipython() is None:
        print(shown)
    else:
        display(shown)


_show = show
