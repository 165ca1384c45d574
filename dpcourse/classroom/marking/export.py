"""The marks as the grade report needs them: one row per student's written answer, and each rubric item's frequency.

:func:`marks` is what ``grade`` folds into a report (:mod:`.merge`); :func:`item_frequencies` is the class's common
mistakes on written work, for the summary. Both read the store through its public queries only
(:func:`~.store.questions`, :func:`~.store.groups`), so a score is computed here exactly as the marking page shows it.
"""

from __future__ import annotations

from dataclasses import dataclass

from .store import Store, groups, questions

__all__ = ["ItemFrequency", "MarkRow", "item_frequencies", "marks"]


@dataclass(frozen=True)
class MarkRow:
    """One student's written answer, for phase 2's merge.

    Attributes
    ----------
    student : str
        Whose answer.
    exercise : str
        To which exercise.
    points : float or None
        The score, ``None`` while unmarked.
    max_points : float
        The exercise's maximum.
    items : tuple of str
        The rubric item ids applied.
    comment : str
        The marker's comment.
    marked_by : str
        Who saved the mark last ("" while unmarked).
    raw : float or None
        The unclamped sum.
    clamped : bool
        Whether ``raw`` fell outside ``[0, max_points]``.
    """

    student: str
    exercise: str
    points: float | None
    max_points: float
    items: tuple[str, ...]
    comment: str
    marked_by: str
    raw: float | None
    clamped: bool


@dataclass(frozen=True)
class ItemFrequency:
    """How often a rubric item was applied.

    Attributes
    ----------
    exercise : str
        The exercise.
    item : str
        The item's id.
    text : str
        Its current text.
    points : float
        Its current points.
    students : int
        Students whose marked answer has it.
    marked : int
        Students whose answer to the exercise is marked.
    """

    exercise: str
    item: str
    text: str
    points: float
    students: int
    marked: int


def marks(store: Store) -> list[MarkRow]:
    """Every student's written answer with its mark: what phase 2 merges into the report.

    Parameters
    ----------
    store : Store

    Returns
    -------
    list of MarkRow
        One per answer, sorted by exercise then student; ``points`` ``None`` while unmarked.
    """
    rows = []
    for q in questions(store):
        for group in groups(store, q.exercise):
            mark = group.mark
            for student in group.students:
                rows.append(
                    MarkRow(
                        student,
                        q.exercise,
                        group.points,
                        q.points,
                        mark.items if mark else (),
                        mark.comment if mark else "",
                        mark.marked_by if mark else "",
                        group.raw,
                        group.raw is not None and group.raw != group.points,
                    )
                )
    return sorted(rows, key=lambda r: (r.exercise, r.student))


def item_frequencies(store: Store) -> list[ItemFrequency]:
    """Each rubric item's frequency among the students whose answer is marked (the class's common mistakes).

    Parameters
    ----------
    store : Store

    Returns
    -------
    list of ItemFrequency
        By exercise, then in rubric order.
    """
    rows = marks(store)
    result = []
    for q in questions(store):
        marked = [r for r in rows if r.exercise == q.exercise and r.points is not None]
        for item, _version in q.items:
            applied = sum(item.id in r.items for r in marked)
            result.append(ItemFrequency(q.exercise, item.id, item.text, item.points, applied, len(marked)))
    return result
