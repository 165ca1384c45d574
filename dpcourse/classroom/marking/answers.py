"""The written answers of a grading run, into the marks database beside its report (what ``grade`` calls).

Each student's answer to each written exercise is read from the file the grader graded, as the grader reads it
(:func:`~dpcourse.classroom.grading.similarity.graded_files`: links refused, size capped, the cell matched by
:func:`~dpcourse.classroom.grading.plan.match_written`), never run, and imported with
:func:`~.store.add_answers`, which reads it as hostile text (:func:`~.written.read_answer`: cut at
:data:`~.written.MAX_ANSWER_BYTES`) and replaces exactly that student's earlier answer: a regrade of one student
changes her answer and nobody else's. An answer still blank or the placeholder is not imported (its row is
``not attempted``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..grading.plan import Plan, load_sources, read_written
from ..grading.similarity import graded_files
from .store import ImportSummary, add_answers, open_store, store_path

__all__ = ["import_answers"]


def _written_sources(plan: Plan, submission: Any) -> dict[str, str]:
    """The plan's answered written exercises: id → the answer cell's source."""
    return {
        exercise: submission.cells[index].source
        for exercise, index in plan.written_answers.items()
        if index is not None and exercise not in plan.untouched
    }


def import_answers(
    report: Path | str,
    submissions: Sequence[Path | str],
    *,
    source: Path | str,
) -> dict[str, ImportSummary]:
    """Import every written answer of ``submissions`` into ``<report>.marks.sqlite`` (created when missing).

    Parameters
    ----------
    report : str or pathlib.Path
        The grade report; the marks database is :func:`~.store.store_path` of it.
    submissions : sequence of str or pathlib.Path
        The submitted notebooks, as :func:`~dpcourse.classroom.grading.run.grade` took them.
    source : str or pathlib.Path
        The instructor's notebooks; each exercise's maximum and rubric are the notebook's (a course file's
        ``points`` apply in the totals, by the share of the maximum earned, as for every exercise).

    Returns
    -------
    dict of str to ImportSummary
        Written exercise id → what its import did, for each one some student answered, in the notebooks' order;
        empty (and no database written) when there is none.

    Raises
    ------
    FileNotFoundError, ValueError, TypeError
        If ``source`` cannot be read or holds a malformed exercise (never for a submission).
    ValueError
        If an exercise's maximum differs from the one the marks database already holds (see
        :func:`~.store.add_answers`).
    OSError
        If the database cannot be written.
    """
    written = read_written(source)
    if not any(written.values()):
        return {}
    sources, released = load_sources(source)
    by_exercise: defaultdict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for (student, stem), found in graded_files(submissions, sources, released, _written_sources).items():
        for exercise_id, text in found.items():
            by_exercise[(stem, exercise_id)].append((student, text))
    summaries: dict[str, ImportSummary] = {}
    store = None
    try:
        for stem, exercises in written.items():
            for exercise in exercises:
                answers = by_exercise.get((stem, exercise.exercise))
                if not answers:
                    continue
                store = store or open_store(store_path(report))
                summaries[exercise.exercise] = add_answers(
                    store,
                    exercise.exercise,
                    exercise.rubric,
                    sorted(answers),
                    prompt=exercise.prompt,
                    model_answer=exercise.model_answer,
                )
    finally:
        if store is not None:
            store.close()
    return summaries
