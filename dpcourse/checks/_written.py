"""The written-exercise cell: its format, read and checked (the checks' hand-in status and the classroom's release,
grading and marking all read it from here).

A written exercise is a Markdown cell tagged ``written`` whose metadata holds::

    {"dpcourse": {"written": {"exercise": "svt-proof", "points": 4,
                              "rubric": [{"id": "names-step", "text": "Names the step that fails", "points": 2},
                                         {"id": "no-reason", "text": "No reason given", "points": -1}]}}}

Its source is the instructor's model answer; the prompt is the Markdown cell above it. In the students' copy
(``release``) the cell keeps its id, its tag and ``exercise`` and ``points`` only; its source is
:data:`PLACEHOLDER` until the student writes the answer there.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PLACEHOLDER",
    "TAG",
    "Rubric",
    "RubricItem",
    "WrittenExercise",
    "check_exercise_id",
    "check_rubric",
    "check_rubric_item",
    "is_unanswered",
    "read_written_exercises",
    "released_metadata",
    "written_answer_cells",
]

#: The tag that marks a Markdown cell as a written exercise.
TAG = "written"
#: The source of a written exercise's cell in the students' copy: what to replace with the answer.
PLACEHOLDER = "*Replace this line with your answer (Markdown; math between dollar signs, e.g. $\\varepsilon$).*"
#: Exercise and rubric item ids: a slug (letters, digits, ``-``, ``_``, ``.``), at most 64 characters.
_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class RubricItem:
    """One rubric item.

    Attributes
    ----------
    id : str
        A slug, unique in its rubric (letters, digits, ``-``, ``_``, ``.``).
    text : str
        What earns or loses it, as the markers and the student read it.
    points : float
        Its points: positive (earned) or negative (lost).

    Examples
    --------
    >>> RubricItem("names-step", "Names the step that fails", 2.0).points
    2.0
    """

    id: str
    text: str
    points: float


@dataclass(frozen=True)
class Rubric:
    """A written exercise's maximum points and its rubric items.

    Attributes
    ----------
    points : float
        The exercise's maximum (> 0); a score is clamped to ``[0, points]``.
    items : tuple of RubricItem
        The rubric, ids unique.

    Examples
    --------
    >>> Rubric(4.0, (RubricItem("a", "Right", 4.0),)).points
    4.0
    """

    points: float
    items: tuple[RubricItem, ...]


@dataclass(frozen=True)
class WrittenExercise:
    """A written exercise read from a notebook.

    Attributes
    ----------
    exercise : str
        Its id (a slug, unique in the notebook).
    rubric : Rubric
        Its maximum points and rubric.
    prompt : str
        The Markdown cell above it ("" when it is the first cell).
    model_answer : str
        The cell's own source: the instructor's answer, which ``release`` replaces by an empty answer.
    cell : int
        The cell's index in the notebook.
    """

    exercise: str
    rubric: Rubric
    prompt: str
    model_answer: str
    cell: int


def check_exercise_id(value: Any, name: str = "exercise") -> str:
    """An exercise or rubric item id: a slug of letters, digits, ``-``, ``_`` or ``.``, 1 to 64 characters.

    Parameters
    ----------
    value : object
        The id to check.
    name : str, optional
        What the caller calls it, for the message.

    Returns
    -------
    str
        ``value``, unchanged.

    Raises
    ------
    TypeError
        When ``value`` is not a string.
    ValueError
        When it is not such a slug.
    """
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; got {type(value).__name__} {value!r}")
    if not _SLUG.fullmatch(value):
        raise ValueError(
            f"{name} must be 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit; got {value!r}"
        )
    return value


def _finite(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number; got {type(value).__name__} {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number; got {value!r}")
    return float(value)


def _text(value: Any, name: str, *, limit: int = 2000) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; got {type(value).__name__} {value!r}")
    if not value.strip() or len(value) > limit:
        raise ValueError(f"{name} must be a non-empty string of at most {limit} characters; got {value[:80]!r}")
    return value


def check_rubric_item(value: Any, name: str = "rubric item") -> RubricItem:
    """A rubric item from ``{"id": slug, "text": str, "points": finite number}`` (or a :class:`RubricItem`).

    Parameters
    ----------
    value : mapping or RubricItem
        The item; no other field is allowed.
    name : str, optional
        What the caller calls it, for the message (``rubric[2]``).

    Returns
    -------
    RubricItem

    Raises
    ------
    TypeError
        For a value that is not a mapping, or a field of the wrong kind.
    ValueError
        For a missing or unknown field, a bad id, an empty text or a points that is not finite.
    """
    if isinstance(value, RubricItem):
        value = {"id": value.id, "text": value.text, "points": value.points}
    if not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping with id, text and points; got {type(value).__name__}")
    unknown = sorted(set(value) - {"id", "text", "points"})
    if unknown:
        raise ValueError(f"{name} has unknown fields {unknown}; allowed: id, text, points")
    for field in ("id", "text", "points"):
        if field not in value:
            raise ValueError(f"{name}.{field} is missing")
    return RubricItem(
        check_exercise_id(value["id"], f"{name}.id"),
        _text(value["text"], f"{name}.text"),
        _finite(value["points"], f"{name}.points"),
    )


def check_rubric(points: Any, items: Any, name: str = "rubric") -> Rubric:
    """A :class:`Rubric` from a maximum and a list of items.

    Parameters
    ----------
    points : float
        The maximum: a finite number > 0.
    items : sequence of mapping or RubricItem
        The rubric items (see :func:`check_rubric_item`), ids unique; may be empty (items can be added later).
    name : str, optional
        What the caller calls the list, for the message.

    Returns
    -------
    Rubric

    Raises
    ------
    TypeError
        For ``points`` that is not a number, ``items`` that is not a list, or a malformed item.
    ValueError
        For ``points`` <= 0 or not finite, a bad item, or two items with one id.
    """
    maximum = _finite(points, "points")
    if maximum <= 0:
        raise ValueError(f"points must be a finite number > 0; got {points!r}")
    if isinstance(items, str | bytes) or not isinstance(items, Sequence):
        raise TypeError(f"{name} must be a list of rubric items; got {type(items).__name__}")
    checked = tuple(check_rubric_item(item, f"{name}[{i}]") for i, item in enumerate(items))
    seen: set[str] = set()
    for i, item in enumerate(checked):
        if item.id in seen:
            raise ValueError(f"{name}[{i}].id must be unique in the rubric; {item.id!r} is there twice")
        seen.add(item.id)
    return Rubric(maximum, checked)


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _written_cell(cell: Mapping[str, Any], index: int) -> tuple[str, Rubric] | None:
    metadata = cell.get("metadata") or {}
    tags = metadata.get("tags") or []
    dpcourse = metadata.get("dpcourse")
    spec = dpcourse.get("written") if isinstance(dpcourse, Mapping) else None
    tagged = isinstance(tags, list) and TAG in tags
    if not tagged and spec is None:
        return None
    where = f"cell {index}"
    if not tagged:
        raise ValueError(f"{where} has metadata dpcourse.written but no tag {TAG!r}: add the tag or remove both")
    if cell.get("cell_type") != "markdown":
        raise ValueError(f"{where} is tagged {TAG!r} but is a {cell.get('cell_type')} cell; it must be Markdown")
    if not isinstance(spec, Mapping):
        raise ValueError(f"{where} is tagged {TAG!r} but its metadata has no dpcourse.written mapping")
    field = f"{where}: dpcourse.written"
    unknown = sorted(set(spec) - {"exercise", "points", "rubric"})
    if unknown:
        raise ValueError(f"{field} has unknown fields {unknown}; allowed: exercise, points, rubric")
    for key in ("exercise", "points", "rubric"):
        if key not in spec:
            raise ValueError(f"{field}.{key} is missing")
    exercise = check_exercise_id(spec["exercise"], f"{field}.exercise")
    try:
        rubric = check_rubric(spec["points"], spec["rubric"], "rubric")
    except (TypeError, ValueError) as err:
        raise type(err)(f"{field} (exercise {exercise!r}): {err}") from None
    return exercise, rubric


def read_written_exercises(notebook: Any) -> list[WrittenExercise]:
    """The notebook's written exercises, in cell order.

    Parameters
    ----------
    notebook : nbformat.NotebookNode or mapping
        A notebook (only ``cells`` is read: each cell's ``cell_type``, ``metadata`` and ``source``).

    Returns
    -------
    list of WrittenExercise

    Raises
    ------
    ValueError or TypeError
        For a malformed written cell, naming the cell's index and the field: a tag without metadata or the reverse,
        a code cell, a bad id, ``points`` not > 0, a rubric item without id/text/points, two items with one id,
        or two written exercises with one id.
    """
    cells = notebook.get("cells") if isinstance(notebook, Mapping) else None
    if not isinstance(cells, list):
        raise TypeError(f"notebook must be a notebook with a list of cells; got {type(notebook).__name__}")
    found: list[WrittenExercise] = []
    for index, cell in enumerate(cells):
        if not isinstance(cell, Mapping):
            continue
        written = _written_cell(cell, index)
        if written is None:
            continue
        exercise, rubric = written
        if any(w.exercise == exercise for w in found):
            raise ValueError(f"cell {index}: dpcourse.written.exercise {exercise!r} is already used by an earlier cell")
        above = cells[index - 1] if index > 0 else {}
        prompt = _source(above) if isinstance(above, Mapping) and above.get("cell_type") == "markdown" else ""
        found.append(WrittenExercise(exercise, rubric, prompt, _source(cell), index))
    return found


def released_metadata(written: WrittenExercise, tags: Any = ()) -> dict[str, Any]:
    """The metadata of a written exercise's cell in the students' copy: its tags, its id and points, no rubric.

    Parameters
    ----------
    written : WrittenExercise
        The exercise, as :func:`read_written_exercises` read it from the instructor's notebook.
    tags : sequence of str, optional
        The cell's tags (``written`` is added when missing; anything that is not a string is dropped).

    Returns
    -------
    dict
        ``{"tags": [...], "dpcourse": {"written": {"exercise": id, "points": max}}}`` (a whole maximum as an int).

    Examples
    --------
    >>> exercise = WrittenExercise("svt-proof", Rubric(4.0, ()), "Why?", "Because.", 3)
    >>> released_metadata(exercise, ["written"])
    {'tags': ['written'], 'dpcourse': {'written': {'exercise': 'svt-proof', 'points': 4}}}
    """
    kept = [tag for tag in tags if isinstance(tag, str)] if isinstance(tags, list | tuple) else []
    points = written.rubric.points
    return {
        "tags": kept if TAG in kept else [*kept, TAG],
        "dpcourse": {
            "written": {"exercise": written.exercise, "points": int(points) if points.is_integer() else points}
        },
    }


def written_answer_cells(cells: Any) -> dict[str, list[int]]:
    """Where a student's copy holds each written exercise's answer: exercise id → the indices of its cells.

    A cell counts when it is a Markdown cell whose metadata names the exercise (``dpcourse.written.exercise``, a
    string): the released cell, or a copy of it. Read from a student's file, so any shape is allowed: a cell or
    metadata that is not a mapping, or an id that is not a string, counts as no written cell (never an error).

    Parameters
    ----------
    cells : list
        A notebook's cells (a parsed notebook's ``cells``).

    Returns
    -------
    dict of str to list of int
        Each exercise id with at least one cell, in the order of its first cell; indices in cell order.

    Examples
    --------
    >>> cell = {"cell_type": "markdown", "metadata": {"dpcourse": {"written": {"exercise": "why"}}}, "source": ""}
    >>> written_answer_cells([{"cell_type": "code"}, cell, cell])
    {'why': [1, 2]}
    """
    found: dict[str, list[int]] = {}
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, Mapping) or cell.get("cell_type") != "markdown":
            continue
        metadata = cell.get("metadata")
        ours = metadata.get("dpcourse") if isinstance(metadata, Mapping) else None
        spec = ours.get("written") if isinstance(ours, Mapping) else None
        exercise = spec.get("exercise") if isinstance(spec, Mapping) else None
        if isinstance(exercise, str) and exercise:
            found.setdefault(exercise, []).append(index)
    return found


def is_unanswered(source: Any) -> bool:
    """Whether a written answer's source is still empty: blank, or the released :data:`PLACEHOLDER`.

    Parameters
    ----------
    source : str or list of str
        The cell's source as nbformat gives it (anything else counts as unanswered).

    Returns
    -------
    bool

    Examples
    --------
    >>> is_unanswered(PLACEHOLDER + "\\n"), is_unanswered("  "), is_unanswered("The noise on T hides ...")
    (True, True, False)
    """
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        return True
    return source.strip() in ("", PLACEHOLDER)
