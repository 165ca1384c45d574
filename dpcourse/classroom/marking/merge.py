"""Marks go where grades go: the marks databases folded into a report's written-answer rows.

:func:`fold_marks` reads the marks databases of a run (``<report>.marks.sqlite`` of each report it reads and
writes) and turns each ``needs marking`` row whose answer is marked into a ``marked`` row: the mark's points of the
exercise's maximum, and a message listing the rubric items applied with their points and the marker's comment (the
totals, LMS files and feedback read the rows, so the marks reach them all). An answer whose mark no longer applies
(a regrade changed its text) goes back to ``needs marking``. The rubric items' frequencies over the marked answers
of the class go to the summary page.

Every text of a mark (item texts, the comment) is hostile-ish: a TA typed it. It goes into the report row's
message, which every writer of the gradebook escapes (CSV cells against formulas, Markdown literally, HTML by
autoescaping), and it is cut at :data:`MAX_MARK_MESSAGE` characters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ..grading.reports import GradeRow, points_text
from .export import ItemFrequency, MarkRow, marks
from .store import open_store, questions, store_path
from .written import RubricItem

__all__ = ["MAX_MARK_MESSAGE", "WRITTEN_STATUSES", "FoldedMarks", "fold_marks", "mark_message", "report_stores"]

#: the report statuses of a written answer: before and after its mark
WRITTEN_STATUSES = ("needs marking", "marked")
#: the longest message a marked row gets: a comment of the store's maximum (10,000 characters) and a rubric's
#: items fit whole (a check's message is cut at 400, but a TA's comment is the feedback itself)
MAX_MARK_MESSAGE = 20_000
_UNMARKED_MESSAGE = "a written answer, marked by hand: not marked yet"


@dataclass(frozen=True)
class FoldedMarks:
    """What :func:`fold_marks` returns.

    Attributes
    ----------
    rows : list of GradeRow
        The report's rows, each written answer's as its mark says.
    marked : int
        The rows now ``marked``.
    unmarked : int
        The written-answer rows still ``needs marking``.
    frequencies : list of ItemFrequency
        Each rubric item's frequency among the marked answers of the rows' students, by exercise then rubric order.
    """

    rows: list[GradeRow]
    marked: int
    unmarked: int
    frequencies: list[ItemFrequency]


def report_stores(reports: Iterable[Path | str]) -> list[Path]:
    """The marks databases of ``reports`` (:func:`~.store.store_path`) that exist, each once, in order.

    Parameters
    ----------
    reports : iterable of pathlib.Path or str
        The reports a run reads (``--merge``), then the one it writes (``--report``).

    Returns
    -------
    list of pathlib.Path
    """
    found: dict[Path, None] = {}
    for report in reports:
        path = store_path(report)
        if path.is_file():
            found.setdefault(path.resolve(), None)
    return list(found)


def mark_message(mark: MarkRow, items: dict[str, RubricItem]) -> str:
    """The message of a marked row: the points, each rubric item applied with its points, the comment.

    Parameters
    ----------
    mark : MarkRow
        A marked answer (``points`` not None).
    items : dict
        The exercise's rubric items by id, as they are now.

    Returns
    -------
    str
        Lines, at most :data:`MAX_MARK_MESSAGE` characters.

    Examples
    --------
    >>> row = MarkRow("ada", "proof", 3.0, 4.0, ("step",), "Good.", "ta", 3.0, False)
    >>> print(mark_message(row, {"step": RubricItem("step", "Names the step", 3.0)}))
    marked by hand: 3 of 4 points
    + 3: Names the step
    comment: Good.
    """
    assert mark.points is not None
    lines = [f"marked by hand: {points_text(mark.points)} of {points_text(mark.max_points)} points"]
    for item in (items[i] for i in mark.items if i in items):
        lines.append(f"{'+' if item.points >= 0 else '−'} {points_text(abs(item.points))}: {item.text}")
    adjustment = (mark.raw or 0.0) - sum(items[i].points for i in mark.items if i in items)
    if adjustment:
        lines.append(f"{'+' if adjustment >= 0 else '−'} {points_text(abs(adjustment))}: the marker's adjustment")
    if mark.clamped:
        lines.append(f"(a score stays between 0 and {points_text(mark.max_points)})")
    if mark.comment.strip():
        lines.append(f"comment: {mark.comment.strip()}")
    text = "\n".join(lines)
    return text if len(text) <= MAX_MARK_MESSAGE else text[: MAX_MARK_MESSAGE - 1] + "…"


def _read(stores: Sequence[Path]) -> tuple[dict[tuple[str, str], tuple[MarkRow, int]], list[dict]]:
    """Each (student, exercise)'s mark from the last store that holds her answer, with that store's index; and
    each store's rubric (exercise → item id → RubricItem)."""
    found: dict[tuple[str, str], tuple[MarkRow, int]] = {}
    rubrics = []
    for index, path in enumerate(stores):
        store = open_store(path, create=False)
        try:
            rubrics.append({q.exercise: {item.id: item for item, _ in q.items} for q in questions(store)})
            for row in marks(store):
                found[(row.student, row.exercise)] = (row, index)
        finally:
            store.close()
    return found, rubrics


def _frequencies(chosen: Sequence[tuple[MarkRow, int]], rubrics: Sequence[dict]) -> list[ItemFrequency]:
    """Each item's count among the marked answers ``chosen``; items of the last store that holds the exercise."""
    rubric: dict[str, dict[str, RubricItem]] = {}
    for own in rubrics:
        rubric.update(own)
    result = []
    for exercise, items in rubric.items():
        marked = [mark for mark, _ in chosen if mark.exercise == exercise and mark.points is not None]
        if not marked:
            continue
        for item in items.values():
            applied = sum(item.id in mark.items for mark in marked)
            result.append(ItemFrequency(exercise, item.id, item.text, item.points, applied, len(marked)))
    return result


def fold_marks(rows: Iterable[GradeRow], stores: Sequence[Path | str]) -> FoldedMarks:
    """Fold the marks of ``stores`` into the written-answer rows of ``rows``.

    A row of status ``needs marking`` or ``marked`` whose (student, exercise) has an answer in some store takes
    what the last such store says: ``marked`` with the mark's points of its maximum and :func:`mark_message`, or
    ``needs marking`` (0 points) while the answer is not marked. So a regrade that changed one student's answer
    (``add_answers`` replaces exactly her answer, and her mark with it when the text changed) changes exactly her
    row, and an item whose points were edited re-scores every row marked with it. Other rows are returned as
    they are.

    Parameters
    ----------
    rows : iterable of GradeRow
        The report's rows.
    stores : sequence of pathlib.Path or str
        Marks databases, earliest first (:func:`report_stores`); each must exist.

    Returns
    -------
    FoldedMarks

    Raises
    ------
    FileNotFoundError
        For a store that does not exist.
    ValueError
        For a file that is a marks database of another schema version.
    """
    found, rubrics = _read([Path(p) for p in stores])
    folded = []
    chosen: dict[tuple[str, str], tuple[MarkRow, int]] = {}
    for row in rows:
        key = (row.student, row.exercise)
        if row.status not in WRITTEN_STATUSES or key not in found:
            folded.append(row)
            continue
        mark, index = chosen[key] = found[key]
        if mark.points is None:
            message = row.message if row.status == "needs marking" else _UNMARKED_MESSAGE
            folded.append(replace(row, status="needs marking", points=0.0, message=message))
        else:
            items = rubrics[index].get(row.exercise, {})
            folded.append(
                replace(
                    row,
                    status="marked",
                    points=mark.points,
                    max_points=mark.max_points,
                    message=mark_message(mark, items),
                )
            )
    statuses = [r.status for r in folded]
    return FoldedMarks(
        folded, statuses.count("marked"), statuses.count("needs marking"), _frequencies(list(chosen.values()), rubrics)
    )
