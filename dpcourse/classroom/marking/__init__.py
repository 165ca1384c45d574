"""Marking written answers by hand: the written-exercise cell, the marks database and the marking app.

Phase 2 (``release``, ``grade``'s ``needs marking`` rows and the merge of marks into totals, LMS files and
feedback) builds on this API:

The cell (:mod:`.written`)
    A Markdown cell tagged ``written`` with metadata ``{"dpcourse": {"written": {"exercise": id, "points": max,
    "rubric": [{"id": slug, "text": str, "points": ±number}, …]}}}``; its source is the model answer, the cell
    above it the prompt. :func:`read_written_exercises(notebook) <.written.read_written_exercises>` returns
    :class:`~.written.WrittenExercise` ``(exercise, rubric: Rubric(points, items), prompt, model_answer, cell)``
    and raises ``ValueError``/``TypeError`` naming the cell and field. :func:`~.written.read_answer` reads a
    student's source (str, list of str or bytes) as hostile text: control and bidi characters removed, cut at
    :data:`~.written.MAX_ANSWER_BYTES` (``Answer.cut_from`` and ``Answer.note`` say so). :func:`~.written.group_key`
    is the key under which answers equal up to whitespace, case and NFKC are marked once.

The store (:mod:`.store`)
    :func:`store_path(report) <.store.store_path>` is ``<report>.marks.sqlite``; :func:`~.store.open_store` opens
    it (WAL, 60 s busy timeout). :func:`add_answers(store, exercise, rubric, [(student, source), …])
    <.store.add_answers>` imports one exercise's answers (``grade`` calls it): each replaces that student's earlier
    answer; her mark is kept when the text's group key is unchanged, else her answer takes the mark of its new
    group (if an identical answer was marked) or none. :func:`marks(store) <.export.marks>` (:mod:`.export`) returns one
    :class:`~.export.MarkRow` ``(student, exercise, points, max_points, items, comment, marked_by, raw, clamped)``
    per answer, ``points`` ``None`` while unmarked; :func:`~.export.item_frequencies` each item's frequency among
    marked answers. A score is the sum of the applied items' *current* points plus the mark's adjustment, clamped
    to ``[0, max_points]`` (``raw`` keeps the sum; ``clamped`` says it was cut). Writes (:func:`~.store.save_mark`,
    :func:`~.store.edit_item`) carry the version read and raise :class:`~.store.StaleWrite` naming who saved in
    between; :func:`~.store.add_item` adds an item mid-way.

A grading run's answers (:mod:`.answers`)
    :func:`import_answers(report, submissions, source=…, points=…) <.answers.import_answers>` reads each written
    answer from the file the grader graded (matched as answer cells are, never run) and imports it with
    :func:`~.store.add_answers` (``grade`` calls it), so ``dpcourse mark REPORT`` opens them.

The merge (:mod:`.merge`)
    :func:`fold_marks(rows, stores) <.merge.fold_marks>` turns a report's ``needs marking`` rows into ``marked``
    rows (the mark's points, a message with the rubric items applied and the comment) and counts each rubric
    item's frequency; ``grade`` calls it on the marks databases of the reports it reads and writes
    (:func:`~.merge.report_stores`), so totals, LMS files and feedback carry the marks.

The page (:mod:`.render`, :mod:`.app`)
    :func:`~.render.render_answer` makes a source inert HTML; :func:`~.app.run` serves the app for
    ``dpcourse mark REPORT [--port] [--token] [--mathjax] [--base-url]`` (its parser is in
    :mod:`dpcourse.classroom.cli.mark`, as every command's).
"""

from .answers import import_answers
from .export import ItemFrequency, MarkRow, item_frequencies, marks
from .merge import WRITTEN_STATUSES, FoldedMarks, fold_marks, mark_message, report_stores
from .store import (
    BUSY_TIMEOUT_SECONDS,
    Group,
    ImportSummary,
    Mark,
    Question,
    StaleWrite,
    Store,
    add_answers,
    add_item,
    edit_item,
    groups,
    open_store,
    question,
    questions,
    save_mark,
    store_path,
)
from .written import (
    MAX_ANSWER_BYTES,
    Answer,
    Rubric,
    RubricItem,
    WrittenExercise,
    check_rubric,
    group_key,
    read_answer,
    read_written_exercises,
)

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "MAX_ANSWER_BYTES",
    "WRITTEN_STATUSES",
    "Answer",
    "FoldedMarks",
    "Group",
    "ImportSummary",
    "ItemFrequency",
    "Mark",
    "MarkRow",
    "Question",
    "Rubric",
    "RubricItem",
    "StaleWrite",
    "Store",
    "WrittenExercise",
    "add_answers",
    "add_item",
    "check_rubric",
    "edit_item",
    "fold_marks",
    "group_key",
    "groups",
    "import_answers",
    "item_frequencies",
    "mark_message",
    "marks",
    "open_store",
    "question",
    "questions",
    "read_answer",
    "read_written_exercises",
    "report_stores",
    "save_mark",
    "store_path",
]
