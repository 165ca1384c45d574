"""What runs for one submission: read it safely, match its answers to the instructor's exercises, build
the notebook.

**The instructor's notebooks decide.** The notebook that runs is the source notebook (matched by file
name, else by content); from the submission only the answer cells are taken, matched by exercise id,
then cell id, then position among the instructor's cells (:func:`match_answers`). Everything else
the student changed is ignored and listed as an integrity note.

**A submission is hostile input.** :func:`read_submission` resolves links and refuses a path that
leaves the student's own folder, opens without following a last link and without blocking, refuses
anything but a regular file, and reads at most :data:`MAX_NOTEBOOK_BYTES`. Metadata of any shape
(``metadata.dpcourse`` a string, an exercise id that is a list) reads as absent, never as an error.
Of several files one student handed in for the same notebook, one is graded (:func:`pick_graded`).

**Written exercises** (Markdown answers marked by hand, :mod:`dpcourse.checks._written`) are matched like answer
cells (:func:`match_written`: by the exercise id in the cell's metadata, else by the source cell's id) and never
run: their rows are ``needs marking`` (:func:`~.verdicts.written_rows`) and their text goes to the marks database.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import secrets
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from ...checks._written import WrittenExercise, is_unanswered, read_written_exercises, written_answer_cells
from ..io import NotRegularFile, read_capped
from ..release import BEGIN, release_notebook
from ..validation import student_id

__all__ = [
    "MAX_NOTEBOOK_BYTES",
    "Plan",
    "PlannedExercise",
    "SubmissionError",
    "load_sources",
    "match_answers",
    "pick_graded",
    "without_copy_number",
    "plan_submission",
    "match_written",
    "read_outline",
    "read_submission",
    "read_written",
    "source_exercises",
]

MAX_NOTEBOOK_BYTES = 50_000_000
_MAX_EXTRA_CELLS = 500  # a submission may add this many cells to the source's before it is refused
_MAX_CELL_CHARS = 2_000_000


class SubmissionError(ValueError):
    """A submission that cannot be graded; the message says why, for the report."""


@dataclass(frozen=True)
class PlannedExercise:
    """One of the instructor's exercises: its solution and check cells in the source, and its points.

    Attributes
    ----------
    exercise : str
        The exercise id (the cells' ``metadata["dpcourse"]["exercise"]``; ``exercise-<n>`` when the solution
        cell has none).
    solution : int
        The index of the solution cell (the one holding ``### BEGIN SOLUTION``) in the source notebook.
    check : int
        The index of its check cell, the first cell after it tagged ``check`` for this exercise (or for none).
    points : float
        The check cell's ``metadata["dpcourse"]["points"]``, 1 by default.
    """

    exercise: str
    solution: int
    check: int
    points: float


@dataclass
class Plan:
    """What runs for one submission, and what is known before it runs.

    Attributes
    ----------
    student : str
        Whose submission it is.
    notebook : str
        The stem of the source notebook it is graded as.
    path : pathlib.Path
        The submitted file.
    built : nbformat.NotebookNode
        The notebook that runs: the source's cells, the submission's answers in the solution cells and
        each check cell wrapped to collect evidence under its nonce and seed.
    exercises : list of PlannedExercise
        The source notebook's exercises, in order.
    nonces : dict
        Exercise id → the fresh random nonce its check's evidence must carry.
    seeds : dict
        Exercise id → the fresh seed the grading inputs of a function exercise are drawn from.
    answered : dict
        Exercise id → the index of the submission's answer cell, or None when none was found.
    untouched : set of str
        Exercises whose answer is missing or still the released stub (written ones included).
    written : list of WrittenExercise
        The source notebook's written exercises, in order.
    written_answers : dict
        Written exercise id → the index of the submission's cell holding its answer, or None when none was found.
    integrity : list of str
        Notes for the report: the source it was graded as when the file name differs, and the instructor's
        cells changed, missing or added (the originals ran instead).
    """

    student: str
    notebook: str
    path: Path
    built: Any
    exercises: list[PlannedExercise]
    nonces: dict[str, str]
    seeds: dict[str, int]
    answered: dict[str, int | None]  # exercise → index of the submission's answer cell (None: missing)
    untouched: set[str] = field(default_factory=set)
    integrity: list[str] = field(default_factory=list)
    written: list[WrittenExercise] = field(default_factory=list)
    written_answers: dict[str, int | None] = field(default_factory=dict)


# --------------------------------------------------------------------------- metadata of any shape


def _metadata(cell: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = cell.get("metadata")
    return meta if isinstance(meta, Mapping) else {}


def meta_exercise(cell: Mapping[str, Any]) -> str | None:
    """The cell's exercise id, or None when the metadata is absent or of the wrong shape."""
    ours = _metadata(cell).get("dpcourse")
    exercise = ours.get("exercise") if isinstance(ours, Mapping) else None
    return exercise if isinstance(exercise, str) and exercise else None


def tags(cell: Mapping[str, Any]) -> list[str]:
    """The cell's tags (strings only)."""
    found = _metadata(cell).get("tags")
    return [t for t in found if isinstance(t, str)] if isinstance(found, list) else []


def _cell_id(cell: Mapping[str, Any]) -> str | None:
    value = cell.get("id")
    return value if isinstance(value, str) else None


def _normalise(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


# --------------------------------------------------------------------------- the instructor's side


def source_exercises(nb: Any) -> list[PlannedExercise]:
    """The instructor's exercises: each solution cell (BEGIN … END) and the check cell after it.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        An instructor's notebook, with its solutions.

    Returns
    -------
    list of PlannedExercise
        One per code cell holding ``### BEGIN SOLUTION``, in notebook order.

    Raises
    ------
    ValueError
        If a solution cell has no check cell after it (no later cell tagged ``check`` for its exercise).
    """
    found: list[PlannedExercise] = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code" or BEGIN not in cell.source:
            continue
        exercise = meta_exercise(cell) or f"exercise-{len(found) + 1}"
        check = next(
            (
                j
                for j in range(index + 1, len(nb.cells))
                if "check" in tags(nb.cells[j]) and meta_exercise(nb.cells[j]) in (exercise, None)
            ),
            None,
        )
        if check is None:
            raise ValueError(f"source notebook: exercise {exercise!r} (cell {index}) has no check cell after it")
        ours = _metadata(nb.cells[check]).get("dpcourse")
        points = float(ours.get("points", 1)) if isinstance(ours, Mapping) else 1.0
        found.append(PlannedExercise(exercise, index, check, points))
    return found


def load_sources(source_dir: Path | str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The instructor's notebooks (stem → notebook, in file-name order) and their released versions.

    Parameters
    ----------
    source_dir : str or pathlib.Path
        The folder of the instructor's notebooks (``*.ipynb`` directly in it).

    Returns
    -------
    sources : dict
        Stem → the notebook as read.
    released : dict
        Stem → its student version (:func:`~.release.release_notebook`).

    Raises
    ------
    FileNotFoundError
        If ``source_dir`` is not a folder or holds no notebook (the message names ``--source``).
    ValueError
        If a solution cell has no check cell after it, a written exercise is malformed, or no notebook holds an
        exercise (a student release given in place of the instructor's notebooks).
    ReleaseError
        If a solution region is not closed (a ``ValueError`` too).
    """
    folder = Path(source_dir)
    sources = _read_folder(folder)
    found = 0
    for stem, nb in sources.items():
        try:
            found += len(source_exercises(nb)) + len(read_written_exercises(nb))
        except (TypeError, ValueError) as err:
            raise ValueError(f"{folder / stem}.ipynb: {err}") from None
    if not found:
        raise ValueError(
            f"--source {folder}: its notebooks hold no exercise (no '{BEGIN}' line): it looks like a student "
            "release; give the instructor's notebooks with their solutions"
        )
    return sources, {stem: release_notebook(nb) for stem, nb in sources.items()}


def read_outline(source_dir: Path | str) -> dict[str, dict[str, float]]:
    """The course: notebook stem → {exercise id: points}, in file-name order, from the instructor's notebooks.

    Parameters
    ----------
    source_dir : str or pathlib.Path
        The folder of the instructor's notebooks (``*.ipynb`` directly in it).

    Returns
    -------
    dict
        Notebook stem → {exercise id: points}, exercises (written ones too) in notebook order (empty for a
        notebook without).

    Raises
    ------
    FileNotFoundError
        If ``source_dir`` is not a folder or holds no notebook (the message names ``--source``).
    ValueError
        If a solution cell has no check cell after it (:func:`source_exercises`), or a written exercise is
        malformed (:func:`~dpcourse.checks._written.read_written_exercises`; a ``TypeError`` too).
    """
    return {stem: _notebook_outline(nb) for stem, nb in _read_folder(source_dir).items()}


def _read_folder(source_dir: Path | str) -> dict[str, Any]:
    """Stem → notebook, for every ``*.ipynb`` directly in ``source_dir``, in file-name order."""
    folder = Path(source_dir)
    paths = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    if not paths:
        raise FileNotFoundError(f"--source {folder}: no notebooks there")
    return {p.stem: nbformat.read(p, as_version=4) for p in paths}


def _notebook_outline(nb: Any) -> dict[str, float]:
    """Exercise id → points, the written exercises among the others in cell order."""
    placed = [(ex.solution, ex.exercise, ex.points) for ex in source_exercises(nb)]
    placed += [(w.cell, w.exercise, w.rubric.points) for w in read_written_exercises(nb)]
    return {exercise: points for _, exercise, points in sorted(placed)}


def read_written(source_dir: Path | str) -> dict[str, list[WrittenExercise]]:
    """The written exercises of the instructor's notebooks: notebook stem → its written exercises, in order.

    Parameters
    ----------
    source_dir : str or pathlib.Path
        The folder of the instructor's notebooks (``*.ipynb`` directly in it).

    Returns
    -------
    dict
        Notebook stem → list of :class:`~dpcourse.checks._written.WrittenExercise` (empty for a notebook without).

    Raises
    ------
    FileNotFoundError
        If ``source_dir`` is not a folder or holds no notebook.
    ValueError, TypeError
        If a written exercise is malformed (naming its cell and field).
    """
    return {stem: read_written_exercises(nb) for stem, nb in _read_folder(source_dir).items()}


# --------------------------------------------------------------------------- reading a submission


def student_of(path: Path) -> str:
    """The student a submission belongs to: the name of its folder (``submissions/<student>/x.ipynb``)."""
    return student_id(path.parent.name or path.stem)


def read_submission(path: Path, own_folder: Path | None = None) -> Any:
    """The submitted notebook, read as hostile input; :class:`SubmissionError` says why it cannot be.

    The path, with every link resolved, must stay inside the student's own folder; it must be a regular
    file of at most :data:`MAX_NOTEBOOK_BYTES`; it must be JSON of a notebook's shape.

    Parameters
    ----------
    path : pathlib.Path
        The submitted file.
    own_folder : pathlib.Path or None, optional
        The student's own folder; by default the folder named in the path. Its parent is resolved, the
        folder itself must not be a link.

    Returns
    -------
    nbformat.NotebookNode
        A notebook of the submission's cells only: each with its type, its source as one string, its
        metadata (when a dict) and its id (when a string); no outputs, no notebook metadata.

    Raises
    ------
    SubmissionError
        If the file is missing, a link to nothing or a link out of the student's folder, cannot be
        opened, is not a regular file, is too large, is not JSON, or is not of a notebook's shape.
    """
    folder = own_folder if own_folder is not None else path.parent
    if folder.name:
        own = os.path.join(os.path.realpath(folder.parent), folder.name)
    else:
        own = os.path.realpath(folder)
    try:
        real = os.path.realpath(path, strict=True)
    except OSError:
        raise SubmissionError("the file is missing, or a link to nothing") from None
    if os.path.realpath(own) != own or os.path.commonpath([own, real]) != own or real == own:
        raise SubmissionError("it is a link leading out of the student's own folder")
    try:
        raw, _ = read_capped(real, MAX_NOTEBOOK_BYTES)
    except NotRegularFile:
        raise SubmissionError("it is not a regular file") from None
    except OSError as err:
        raise SubmissionError(f"it could not be opened ({err.strerror})") from None
    if len(raw) > MAX_NOTEBOOK_BYTES:
        raise SubmissionError(f"the file is larger than {MAX_NOTEBOOK_BYTES // 1_000_000} MB")
    return parse_notebook(raw)


def parse_notebook(raw: bytes) -> Any:
    """A notebook from untrusted bytes: every cell a dict with a known type and string source."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise SubmissionError("it is not a notebook (not valid JSON)") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise SubmissionError("it is not a notebook (no list of cells)")
    cells = []
    for cell in data["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
            raise SubmissionError("a cell is malformed")
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(line, str) for line in source):
            source = "".join(source)
        if not isinstance(source, str) or len(source) > _MAX_CELL_CHARS:
            raise SubmissionError("a cell's source is malformed or too long")
        metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
        cells.append(
            nbformat.from_dict(
                {"cell_type": cell["cell_type"], "source": source, "metadata": metadata, "id": _cell_id(cell)}
            )
        )
    return nbformat.from_dict({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


# --------------------------------------------------------------------------- matching


def match_answers(
    source: Any, released: Any, submission: Any, exercises: Sequence[PlannedExercise]
) -> dict[str, int | None]:
    """For each exercise, the index of the submission's answer cell, or None when it is gone.

    Tried in order: a code cell with the exercise id in its metadata that is not a check cell (of several
    such copies, e.g. pasted twice, the last one above the submission's last copy of the check cell,
    which is what a top-to-bottom run leaves defined when that check runs); the cell whose id is the
    source's solution cell id; else the code cell in the same place among the instructor's cells (a
    difflib alignment of the released notebook's cell sources with the submission's), the one most
    like the released stub.

    Parameters
    ----------
    source : nbformat.NotebookNode
        The instructor's notebook.
    released : nbformat.NotebookNode
        Its student version (:func:`~.release.release_notebook`).
    submission : nbformat.NotebookNode
        The student's notebook, as :func:`read_submission` read it.
    exercises : sequence of PlannedExercise
        The source's exercises (:func:`source_exercises`).

    Returns
    -------
    dict
        Exercise id → the index of its answer cell in ``submission``, or None; no cell answers two
        exercises through the alignment.
    """
    answers: dict[str, int | None] = {}
    instructor_sources = {
        _normalise(c.source) for i, c in enumerate(released.cells) if i not in {e.solution for e in exercises}
    }
    by_id = {_cell_id(cell): i for i, cell in enumerate(submission.cells) if _cell_id(cell)}
    taken: set[int] = set()
    for ex in exercises:
        check_source = _normalise(source.cells[ex.check].source)
        own = [i for i, cell in enumerate(submission.cells) if meta_exercise(cell) == ex.exercise]
        checks = [
            i
            for i in own
            if "check" in tags(submission.cells[i]) or _normalise(submission.cells[i].source) == check_source
        ]
        candidates = [i for i in own if i not in checks and submission.cells[i].cell_type == "code"]
        # the last copy of the check is what a top-to-bottom run leaves on screen (a student who pasted the
        # check above a corrected answer sees ✓ at the end): the answer above it is the one graded
        before_check = [i for i in candidates if checks and i < checks[-1]]
        found = before_check or candidates
        index = found[-1] if found else None
        if index is None:
            same_id = by_id.get(_cell_id(source.cells[ex.solution]))
            if same_id is not None and submission.cells[same_id].cell_type == "code":
                index = same_id
        answers[ex.exercise] = index
        if index is not None:
            taken.add(index)
    missing = [ex for ex in exercises if answers[ex.exercise] is None]
    if missing:
        released_keys = [(c.cell_type, _normalise(c.source)) for c in released.cells]
        submitted_keys = [(c.cell_type, _normalise(c.source)) for c in submission.cells]
        matcher = difflib.SequenceMatcher(a=released_keys, b=submitted_keys, autojunk=False)
        anchor = {}  # released index → submission index, for identical cells
        for block in matcher.get_matching_blocks():
            for k in range(block.size):
                anchor[block.a + k] = block.b + k
        for ex in missing:
            before = max((anchor[i] for i in anchor if i < ex.solution), default=-1)
            after = min((anchor[i] for i in anchor if i > ex.solution), default=len(submission.cells))
            gap = [
                i
                for i in range(before + 1, after)
                if submission.cells[i].cell_type == "code"
                and i not in taken
                and _normalise(submission.cells[i].source) not in instructor_sources
            ]
            if gap:
                stub = released.cells[ex.solution].source
                best = max(gap, key=lambda i: difflib.SequenceMatcher(a=stub, b=submission.cells[i].source).ratio())
                answers[ex.exercise] = best
                taken.add(best)
    return answers


def match_written(
    source: Any, submission: Any, written: Sequence[WrittenExercise]
) -> tuple[dict[str, int | None], list[str]]:
    """For each written exercise, the index of the submission's cell holding its answer, or None when it is gone.

    A Markdown cell whose metadata names the exercise (``dpcourse.written.exercise``) holds it; of several (a
    copy pasted), the last one, which is noted; without one, the Markdown cell whose id is the source's written
    cell's id. Metadata of any shape reads as absent.

    Parameters
    ----------
    source : nbformat.NotebookNode
        The instructor's notebook.
    submission : nbformat.NotebookNode
        The student's notebook, as :func:`read_submission` read it.
    written : sequence of WrittenExercise
        The source's written exercises (:func:`~dpcourse.checks._written.read_written_exercises`).

    Returns
    -------
    answers : dict
        Written exercise id → the index of its answer cell in ``submission``, or None.
    notes : list of str
        An integrity note for each exercise with several cells.
    """
    claimed = written_answer_cells(submission.cells)
    by_id = {_cell_id(cell): i for i, cell in enumerate(submission.cells) if _cell_id(cell)}
    answers: dict[str, int | None] = {}
    notes = []
    for exercise in written:
        cells = claimed.get(exercise.exercise, [])
        if len(cells) > 1:
            notes.append(f"{len(cells)} cells for written exercise {exercise.exercise}: the last one is marked")
        same_id = by_id.get(_cell_id(source.cells[exercise.cell]))
        if not cells and same_id is not None and submission.cells[same_id].cell_type == "markdown":
            cells = [same_id]
        answers[exercise.exercise] = cells[-1] if cells else None
    return answers, notes


def _integrity_notes(
    released: Any,
    submission: Any,
    exercises: Sequence[PlannedExercise],
    answers: Mapping[str, int | None],
    written: Sequence[WrittenExercise] = (),
    written_answers: Mapping[str, int | None] | None = None,
) -> list[str]:
    answer_cells = {i for i in [*answers.values(), *(written_answers or {}).values()] if i is not None}
    solution_cells = {e.solution for e in exercises} | {w.cell for w in written}
    instructor = [(c.cell_type, _normalise(c.source)) for i, c in enumerate(released.cells) if i not in solution_cells]
    submitted = [(c.cell_type, _normalise(c.source)) for i, c in enumerate(submission.cells) if i not in answer_cells]
    matcher = difflib.SequenceMatcher(a=instructor, b=submitted, autojunk=False)
    changed = extra = removed = 0
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "replace":
            changed += min(a1 - a0, b1 - b0)
            extra += max(0, (b1 - b0) - (a1 - a0))
            removed += max(0, (a1 - a0) - (b1 - b0))
        elif tag == "insert":
            extra += b1 - b0
        elif tag == "delete":
            removed += a1 - a0
    notes = []
    if changed:
        notes.append(f"{changed} of the instructor's cells were changed (the originals ran)")
    if extra:
        notes.append(f"{extra} extra cells (not run)")
    if removed:
        notes.append(f"{removed} of the instructor's cells were missing (the originals ran)")
    return notes


def _wrap_check(source: str, exercise: str, nonce: str, seed: int) -> str:
    body = textwrap.indent(source.strip() or "pass", "    ")
    return (
        f"import dpcourse.checks._grading as _dpcourse_grading\n"
        f"with _dpcourse_grading.collect({exercise!r}, {nonce!r}, {seed}):\n{body}\n"
    )


def source_for(path: Path, submission: Any, sources: Mapping[str, Any]) -> str | None:
    """The source notebook's stem: by file name, else the one sharing the most cell ids and exercise ids, and among
    those (two notebooks may share exercise ids) the one whose cells the submission's resemble most."""
    if path.stem in sources:
        return path.stem
    submitted = {_cell_id(c) for c in submission.cells} | {meta_exercise(c) for c in submission.cells}
    submitted.discard(None)
    score = {
        stem: len(submitted & ({_cell_id(c) for c in nb.cells} | {meta_exercise(c) for c in nb.cells}))
        for stem, nb in sources.items()
    }
    top = max(score.values(), default=0)
    if top == 0:
        return None
    tied = [stem for stem in sources if score[stem] == top]
    if len(tied) == 1:
        return tied[0]
    cells = [_normalise(c.source) for c in submission.cells]
    return max(
        tied,
        key=lambda stem: difflib.SequenceMatcher(
            a=cells, b=[_normalise(c.source) for c in sources[stem].cells], autojunk=False
        ).ratio(),
    )


_BROWSER_COPY = re.compile(r"(?: \((\d+)\)|-Copy(\d+))$")


def copy_number(stem: str) -> int:
    """The browser's or JupyterLab's copy number in a file name: ``name (2)`` → 2, ``name-Copy1`` → 1, else 0."""
    match = _BROWSER_COPY.search(stem)
    return int(match.group(1) or match.group(2)) if match else 0


def without_copy_number(stem: str) -> str:
    """``stem`` without the browser's or JupyterLab's copy number: ``name (2)`` and ``name-Copy1`` → ``name``.

    Parameters
    ----------
    stem : str
        A file name without its extension.

    Returns
    -------
    str
        ``stem`` with a trailing ``(N)`` (after a space) or ``-CopyN`` removed; unchanged without one.

    Examples
    --------
    >>> without_copy_number("01_laplace_utility (2)"), without_copy_number("01_laplace_utility-Copy1")
    ('01_laplace_utility', '01_laplace_utility')
    """
    return _BROWSER_COPY.sub("", stem)


def pick_graded(paths: Sequence[Path], stem: str, modified: Mapping[Path, float] | None = None) -> Path:
    """Of one student's files for the notebook ``stem``, the one graded: the latest handed in.

    The latest is the most recently modified file (``modified``: path → modification time), then the one
    with the highest copy number (``name (1).ipynb`` is a later download than ``name.ipynb``), then the
    one named like the source. The others are reported as ``duplicate``, naming the file graded.

    Parameters
    ----------
    paths : sequence of pathlib.Path
        The student's files read as the notebook ``stem``; at least one.
    stem : str
        The source notebook's stem.
    modified : Mapping or None, optional
        Path → modification time (seconds); a path left out counts as 0.

    Returns
    -------
    pathlib.Path
        The one of ``paths`` to grade; a tie after the rules above is broken by the file names, so that
        the choice does not depend on the order of ``paths``.
    """
    times = modified or {}
    return max(
        paths,
        key=lambda p: (times.get(p, 0.0), copy_number(p.stem), p.stem == stem, [-ord(c) for c in p.name]),
    )


def plan_submission(
    path: Path,
    submission: Any,
    stem: str,
    sources: Mapping[str, Any],
    released: Mapping[str, Any],
    student: str | None = None,
) -> Plan:
    """Build the notebook that will run for ``submission`` (already read) against the source ``stem``.

    The source's cells run, with the submission's answer (:func:`match_answers`) in each solution cell (the
    released stub where none was found) and each check cell wrapped to collect evidence under a nonce and a
    seed drawn fresh for this run; outputs and execution counts are cleared.

    Parameters
    ----------
    path : pathlib.Path
        The submitted file (its stem, when it differs from ``stem``, is noted).
    submission : nbformat.NotebookNode
        The submitted notebook, as :func:`read_submission` read it.
    stem : str
        The source notebook to grade it as; a key of ``sources`` and ``released``.
    sources : Mapping
        Stem → the instructor's notebook (:func:`load_sources`).
    released : Mapping
        Stem → its student version.
    student : str or None, optional
        Whose it is (default: the folder it is in, :func:`student_of`).

    Returns
    -------
    Plan
        The notebook to run and what the judging needs: nonces, seeds, answer cells and integrity notes.

    Raises
    ------
    SubmissionError
        If the submission has more than 500 cells beyond the longest source notebook's.
    """
    if len(submission.cells) > max(len(nb.cells) for nb in sources.values()) + _MAX_EXTRA_CELLS:
        raise SubmissionError(f"it has {len(submission.cells):,} cells, far more than the workbook's")
    source, student_copy = sources[stem], released[stem]
    exercises = source_exercises(source)
    answers = match_answers(source, student_copy, submission, exercises)
    built = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    )
    nonces, seeds, untouched = {}, {}, set()
    by_solution = {e.solution: e for e in exercises}
    by_check = {e.check: e for e in exercises}
    for index, cell in enumerate(source.cells):
        new = nbformat.from_dict({k: v for k, v in cell.items() if k not in ("outputs", "execution_count")})
        if cell.cell_type == "code":
            new.outputs, new.execution_count = [], None
        if index in by_solution:
            ex = by_solution[index]
            answer = answers[ex.exercise]
            stub = student_copy.cells[index].source
            new.source = stub if answer is None else submission.cells[answer].source
            if answer is None or _normalise(new.source) == _normalise(stub):
                untouched.add(ex.exercise)
        if index in by_check:
            ex = by_check[index]
            nonces[ex.exercise] = secrets.token_hex(16)
            seeds[ex.exercise] = secrets.randbits(63)
            new.source = _wrap_check(cell.source, ex.exercise, nonces[ex.exercise], seeds[ex.exercise])
        built.cells.append(new)
    written = read_written_exercises(source)
    written_answers, written_notes = match_written(source, submission, written)
    untouched |= {
        exercise
        for exercise, index in written_answers.items()
        if index is None or is_unanswered(submission.cells[index].source)
    }
    notes = _integrity_notes(student_copy, submission, exercises, answers, written, written_answers)
    notes += written_notes
    if path.stem != stem:
        notes.insert(0, f"graded as {stem}")
    return Plan(
        student or student_of(path),
        stem,
        path,
        built,
        exercises,
        nonces,
        seeds,
        answers,
        untouched,
        notes,
        written,
        written_answers,
    )
