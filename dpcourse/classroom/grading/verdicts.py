"""Judging a run: the worker's verified result in, one report row per exercise out.

The result holds, per exercise, the evidence outputs of its check cell (JSON text published by
:mod:`dpcourse.checks._grading`), the first error of its answer cell and of its check cell, and the
cells the worker skipped. Only evidence carrying the nonce of this cell and run counts, and it is
judged outside the run by the exercise's own judge, with the seed the inputs of a function exercise
were drawn from. Everything in a result may be hostile (it was shaped by code the student wrote), so
every value is type-checked here and nothing here raises for it; the judges themselves run
in the processes of a :class:`~.judge_pool.JudgePool`, each exercise with a deadline and at most
:data:`~.judge_pool.MAX_RECORDS` records, and every text that reaches the report is cut to
:data:`MAX_MESSAGE` characters.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .judge_pool import MAX_RECORDS, JudgePool, OverBudget
from .plan import Plan, PlannedExercise
from .reports import GradeRow

__all__ = ["INFRASTRUCTURE", "MAX_MESSAGE", "judge_run", "rows_for_failure", "with_written_rows", "written_rows"]

INFRASTRUCTURE = "the grader could not run this submission"
#: the longest message, hint or mistake a report cell gets (a judge may quote the student's answer)
MAX_MESSAGE = 400


def _text(value: object, limit: int = MAX_MESSAGE) -> str:
    if not isinstance(value, str):
        return ""
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _payloads(outputs: object, nonce: str) -> list[dict[str, Any]]:
    """The evidence payloads carrying ``nonce`` (anything unreadable is ignored)."""
    found = []
    for text in outputs if isinstance(outputs, list) else []:
        if not isinstance(text, str):
            continue
        try:
            payload = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(payload, dict) and payload.get("nonce") == nonce:
            found.append(payload)
    return found


def _row(
    plan: Plan,
    ex: PlannedExercise,
    status: str,
    message: str = "",
    hint: str = "",
    mistake: str = "",
    integrity: str = "",
    score: float = 0.0,
) -> GradeRow:
    points = ex.points if status == "passed" else ex.points * score if status == "failed" else 0.0
    return GradeRow(
        plan.student,
        plan.notebook,
        ex.exercise,
        status,
        points,
        ex.points,
        _text(message),
        _text(hint),
        _text(mistake),
        integrity,
    )


def written_rows(plan: Plan, integrity: str) -> list[tuple[int, GradeRow]]:
    """The rows of the plan's written exercises, each with its cell's index in the source (for the rows' order).

    ``needs marking`` (0 points of the maximum) for an answer; ``not attempted`` for a missing cell or one still
    blank or the placeholder. Nothing is run or judged: the marks come from the marking app. The maximum is the
    notebook's, as on every row (the report is checked against the notebooks); a course file's ``points`` apply in
    the totals, by the share of it earned, as for any exercise.

    Parameters
    ----------
    plan : Plan
        The submission's plan (:func:`~.plan.plan_submission`).
    integrity : str
        The integrity notes, ``"; "``-joined, for every row.

    Returns
    -------
    list of (int, GradeRow)
    """
    found = []
    for exercise in plan.written:
        index = plan.written_answers.get(exercise.exercise)
        if index is None:
            status, message = "not attempted", "no answer cell for this written exercise was found in the submission"
        elif exercise.exercise in plan.untouched:
            status, message = "not attempted", "the written answer is empty"
        else:
            status, message = "needs marking", "a written answer, marked by hand"
        maximum = exercise.rubric.points
        row = GradeRow(plan.student, plan.notebook, exercise.exercise, status, 0.0, maximum, message, "", "", integrity)
        found.append((exercise.cell, row))
    return found


def with_written_rows(plan: Plan, rows: list[GradeRow], integrity: str) -> list[GradeRow]:
    """The rows of ``plan``'s exercises (``rows``, in the plan's order) with its written exercises' rows among
    them, all in the notebook's order.

    Parameters
    ----------
    plan : Plan
        The submission's plan.
    rows : list of GradeRow
        One row per exercise of ``plan.exercises``, in that order (as :func:`judge_run` and
        :func:`rows_for_failure` give them).
    integrity : str
        The integrity notes for the written rows.

    Returns
    -------
    list of GradeRow
    """
    placed = [(ex.solution, row) for ex, row in zip(plan.exercises, rows, strict=True)]
    return [row for _, row in sorted([*placed, *written_rows(plan, integrity)], key=lambda pair: pair[0])]


def rows_for_failure(plan: Plan, failure: str, integrity: str) -> list[GradeRow]:
    """Rows for a run without a result: ``errored`` with ``failure``, ``not attempted`` where no answer was found.

    Parameters
    ----------
    plan : Plan
        What ran (:func:`~.plan.plan_submission`): the student, notebook, exercises and answer cells.
    failure : str
        Why there is no result, the message of every ``errored`` row (cut to :data:`MAX_MESSAGE` characters).
    integrity : str
        The integrity notes, ``"; "``-joined, for every row.

    Returns
    -------
    list of GradeRow
        One row per exercise of ``plan``, in order, each scoring 0.
    """
    return [
        _row(
            plan,
            ex,
            "not attempted",
            "no answer cell for this exercise was found in the submission",
            integrity=integrity,
        )
        if plan.answered.get(ex.exercise) is None
        else _row(plan, ex, "errored", failure, integrity=integrity)
        for ex in plan.exercises
    ]


def judge_run(
    plan: Plan,
    result: Mapping[str, Any],
    integrity: str,
    judges: JudgePool,
    partial_credit: frozenset[str] = frozenset(),
) -> list[GradeRow]:
    """One row per exercise of ``plan`` from a verified worker result.

    An exercise is ``passed`` only when its check's evidence carries this run's nonce and its judge
    accepts every record; ``not attempted`` without an answer cell or with the stub as the answer;
    ``errored``, with the reason, when its answer cell did not run to its end, its check left no evidence
    (or published it more than once, or ran more than :data:`~.judge_pool.MAX_RECORDS` times) or its judge
    failed; otherwise ``failed``, with the judge's message, hint and mistake.

    Parameters
    ----------
    plan : Plan
        What ran (:func:`~.plan.plan_submission`), with the nonces and seeds drawn for this run.
    result : Mapping
        The worker's verified result (:attr:`~.runner.RunResult.result`); any value in it may be hostile.
    integrity : str
        The integrity notes, ``"; "``-joined, for every row.
    judges : JudgePool
        The judge processes the evidence is sent to.
    partial_credit : frozenset of str, optional
        The exercises whose failed rows earn the share of grading inputs the answer got right (the judge's
        ``score``, below 1), as the course file allows; elsewhere a failed row earns 0.

    Returns
    -------
    list of GradeRow
        One row per exercise of ``plan``, in order. When the worker reported an error of its own, as
        :func:`rows_for_failure` gives them, the failure starting with :data:`INFRASTRUCTURE`.
    """
    if "error" in result:
        return rows_for_failure(plan, f"{INFRASTRUCTURE}: {_text(result['error'])}", integrity)
    skipped_raw = result.get("skipped")
    skipped = {}
    if isinstance(skipped_raw, dict):
        skipped = {int(k): _text(v) for k, v in skipped_raw.items() if isinstance(k, str) and k.isdigit()}
    exercises = result.get("exercises")
    per_exercise = exercises if isinstance(exercises, dict) else {}
    return [
        _judge_one(plan, ex, per_exercise.get(ex.exercise), skipped, judges, integrity, ex.exercise in partial_credit)
        for ex in plan.exercises
    ]


def _judge_one(
    plan: Plan,
    ex: PlannedExercise,
    seen: object,
    skipped: Mapping[int, str],
    judges: JudgePool,
    integrity: str,
    partial: bool,
) -> GradeRow:
    def row(status: str, message: str = "", hint: str = "", mistake: str = "", score: float = 0.0) -> GradeRow:
        return _row(plan, ex, status, message, hint, mistake, integrity, score)

    if plan.answered.get(ex.exercise) is None:
        return row("not attempted", "no answer cell for this exercise was found in the submission")
    if ex.solution in skipped:
        return row("errored", f"your answer cell {skipped[ex.solution]}")
    seen = seen if isinstance(seen, dict) else {}
    payloads = _payloads(seen.get("evidence"), plan.nonces[ex.exercise])
    solution_error = _text(seen.get("solution_error"))
    if len(payloads) > 1:
        return row("errored", f"the check's result was published {len(payloads)} times in one run (once is expected)")
    payload = payloads[0] if payloads else {}
    listed = payload.get("records")
    records = [
        r
        for r in (listed if isinstance(listed, list) else [])
        if isinstance(r, dict) and r.get("exercise") == ex.exercise
    ]
    if not records:
        if ex.check in skipped:
            return row("errored", f"the check cell {skipped[ex.check]} while running your answer")
        if ex.exercise in plan.untouched:
            return row("not attempted", "the answer cell is the untouched stub")
        if solution_error:
            return row("errored", f"your answer cell raised {solution_error}")
        if _text(payload.get("error")):
            return row("errored", f"the check could not run: {_text(payload.get('error'))}")
        return row("errored", "the check produced no result")
    if len(records) > MAX_RECORDS:
        return row("errored", f"the check ran {len(records)} times in one run (an honest check cell runs it once)")
    verdicts = judges.judge(ex.exercise, plan.seeds[ex.exercise], [r.get("evidence") for r in records])
    if isinstance(verdicts, OverBudget):
        return row("errored", verdicts)
    if isinstance(verdicts, str):
        return row("errored", f"{INFRASTRUCTURE}: {verdicts}")
    if len(verdicts) != len(records):
        return row("errored", f"{INFRASTRUCTURE}: the judge of {ex.exercise!r} answered {len(verdicts)} times")
    verdict = next((v for v in verdicts if v.get("status") != "passed"), verdicts[0])
    status = verdict.get("status")
    if status == "passed":
        return row("passed", _text(verdict.get("message")))
    if solution_error and status != "failed":
        return row("errored", f"your answer cell raised {solution_error}")
    if status == "not attempted":
        return row("not attempted", "the answer is still the stub")
    score = verdict.get("score") if partial else 0.0
    share = float(score) if isinstance(score, (int, float)) and 0.0 <= score < 1.0 else 0.0
    message, hint, mistake = (_text(verdict.get(key)) for key in ("message", "hint", "mistake"))
    return row("failed", message, hint, mistake, share)
