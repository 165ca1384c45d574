"""The marks database: an SQLite file beside the report (``<report>.marks.sqlite``) that several markers share.

Marks belong to an *answer group* (one exercise's answers with one :func:`~.written.group_key`), so identical
answers are marked once. A score is computed when read, never stored: the sum of the *current* points of the items
applied plus the mark's adjustment, clamped to ``[0, max]`` (the raw sum is kept beside it, and ``clamped`` says
when the two differ). So editing an item's points re-scores every answer marked with it.

Every write carries the version it read (optimistic concurrency): a mark or a rubric item saved by someone else
in between is never overwritten; :class:`StaleWrite` names who saved it and when.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .written import (
    Rubric,
    RubricItem,
    check_exercise_id,
    check_rubric,
    check_rubric_item,
    group_key,
    read_answer,
)

__all__ = [
    "BUSY_TIMEOUT_SECONDS",
    "Group",
    "ImportSummary",
    "Mark",
    "Question",
    "StaleWrite",
    "Store",
    "add_answers",
    "add_item",
    "edit_item",
    "groups",
    "open_store",
    "question",
    "questions",
    "save_mark",
    "store_path",
]

#: How long a writer waits for another's lock before failing (a grading batch may hold the machine's cores).
BUSY_TIMEOUT_SECONDS = 60.0
_SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS questions (
    exercise TEXT PRIMARY KEY, points REAL NOT NULL, prompt TEXT NOT NULL, model_answer TEXT NOT NULL,
    position INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    exercise TEXT NOT NULL REFERENCES questions(exercise), item TEXT NOT NULL, text TEXT NOT NULL,
    points REAL NOT NULL, position INTEGER NOT NULL, version INTEGER NOT NULL, edited_by TEXT NOT NULL,
    edited_at TEXT NOT NULL, PRIMARY KEY (exercise, item));
CREATE TABLE IF NOT EXISTS answers (
    exercise TEXT NOT NULL REFERENCES questions(exercise), student TEXT NOT NULL, text TEXT NOT NULL,
    cut_from INTEGER, group_key TEXT NOT NULL, imported_at TEXT NOT NULL, PRIMARY KEY (exercise, student));
CREATE INDEX IF NOT EXISTS answers_by_group ON answers (exercise, group_key);
CREATE TABLE IF NOT EXISTS marks (
    exercise TEXT NOT NULL REFERENCES questions(exercise), group_key TEXT NOT NULL, comment TEXT NOT NULL,
    adjustment REAL NOT NULL, marked_by TEXT NOT NULL, marked_at TEXT NOT NULL, version INTEGER NOT NULL,
    PRIMARY KEY (exercise, group_key));
CREATE TABLE IF NOT EXISTS mark_items (
    exercise TEXT NOT NULL, group_key TEXT NOT NULL, item TEXT NOT NULL, PRIMARY KEY (exercise, group_key, item),
    FOREIGN KEY (exercise, group_key) REFERENCES marks(exercise, group_key) ON DELETE CASCADE,
    FOREIGN KEY (exercise, item) REFERENCES items(exercise, item));
"""
_MAX_COMMENT = 10_000
_MAX_NAME = 200


class StaleWrite(RuntimeError):
    """A save based on a version someone else has replaced since; the message names who and when."""


@dataclass(frozen=True)
class Store:
    """An open marks database (see :func:`open_store`).

    Attributes
    ----------
    path : pathlib.Path
        The database file.
    connection : sqlite3.Connection
        Its connection, in autocommit mode (each write function takes ``BEGIN IMMEDIATE`` itself).
    """

    path: Path
    connection: sqlite3.Connection

    def close(self) -> None:
        """Close the connection."""
        self.connection.close()


@dataclass(frozen=True)
class Mark:
    """A group's mark.

    Attributes
    ----------
    items : tuple of str
        The rubric item ids applied, in rubric order.
    comment : str
        The free comment for the student.
    adjustment : float
        Points added to the items' sum (may be negative).
    marked_by : str
        Who saved it last.
    marked_at : str
        When (ISO 8601, UTC).
    version : int
        1 for the first save, one more for each save after.
    """

    items: tuple[str, ...]
    comment: str
    adjustment: float
    marked_by: str
    marked_at: str
    version: int


@dataclass(frozen=True)
class Group:
    """An answer group: one exercise's answers with one group key.

    Attributes
    ----------
    key : str
        The group key (:func:`~.written.group_key`).
    text : str
        Its text (the first student's, by id).
    cut_from : int or None
        The original size when that text was cut.
    students : tuple of str
        Who wrote it, sorted.
    mark : Mark or None
        Its mark, ``None`` while unmarked.
    raw : float or None
        The applied items' current points plus the adjustment.
    points : float or None
        ``raw`` clamped to ``[0, max]``.
    """

    key: str
    text: str
    cut_from: int | None
    students: tuple[str, ...]
    mark: Mark | None
    raw: float | None
    points: float | None


@dataclass(frozen=True)
class Question:
    """A written exercise in the store, its current rubric and its progress.

    Attributes
    ----------
    exercise : str
        Its id.
    points : float
        Its maximum.
    prompt : str
        The prompt, as imported.
    model_answer : str
        The model answer, as imported.
    items : tuple of (RubricItem, int)
        The current rubric items, each with its version (for :func:`edit_item`).
    groups : int
        Answer groups.
    groups_marked : int
        Answer groups with a mark.
    answers : int
        Students' answers.
    answers_marked : int
        Students' answers whose group has a mark.
    """

    exercise: str
    points: float
    prompt: str
    model_answer: str
    items: tuple[tuple[RubricItem, int], ...]
    groups: int
    groups_marked: int
    answers: int
    answers_marked: int


@dataclass(frozen=True)
class ImportSummary:
    """What :func:`add_answers` did.

    Attributes
    ----------
    added : tuple of str
        Students with no earlier answer.
    changed : tuple of str
        Students whose answer's group key changed (their mark, if any, no longer applies to them).
    unchanged : tuple of str
        Students whose re-imported answer has the same group key (their mark is kept).
    """

    added: tuple[str, ...]
    changed: tuple[str, ...]
    unchanged: tuple[str, ...]


def store_path(report: Path | str) -> Path:
    """Where the marks of the batch that wrote ``report`` are kept.

    Parameters
    ----------
    report : pathlib.Path or str
        The report's path.

    Returns
    -------
    pathlib.Path
        ``<report>.marks.sqlite`` beside it.

    Examples
    --------
    >>> store_path("out/grades.csv").as_posix()
    'out/grades.csv.marks.sqlite'
    """
    report = Path(report)
    return report.with_name(report.name + ".marks.sqlite")


def open_store(path: Path | str, *, create: bool = True) -> Store:
    """Open (and with ``create`` make) the marks database at ``path``: WAL journal, a busy timeout of
    :data:`BUSY_TIMEOUT_SECONDS`, foreign keys on.

    Parameters
    ----------
    path : pathlib.Path or str
        The database file (:func:`store_path`).
    create : bool, optional
        Whether to create it when missing (``False``: ``dpcourse mark``, which only opens what ``grade`` made).

    Returns
    -------
    Store

    Raises
    ------
    FileNotFoundError
        When ``create`` is false and there is no file at ``path``.
    ValueError
        When the file is a marks database of another schema version.
    """
    path = Path(path)
    if not create and not path.is_file():
        raise FileNotFoundError(f"no marks database at {path}")
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA foreign_keys=ON")
    connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_SECONDS * 1000)}")
    with _transaction(connection):
        for statement in filter(str.strip, _SCHEMA.split(";")):
            connection.execute(statement)
        connection.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(_SCHEMA_VERSION),))
    found = connection.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    if found[0] != str(_SCHEMA_VERSION):
        connection.close()
        raise ValueError(f"{path} is a marks database of schema {found[0]}; this dpcourse reads {_SCHEMA_VERSION}")
    return Store(path, connection)


@contextmanager
def _transaction(connection: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on an exception): the write lock is taken before reading."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _name(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; got {type(value).__name__} {value!r}")
    if not value.strip() or len(value) > _MAX_NAME or any(ord(c) < 32 for c in value):
        raise ValueError(f"{name} must be 1 to {_MAX_NAME} printable characters; got {value[:80]!r}")
    return value.strip()


def _version(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} must be an integer >= 0 (0: nothing saved yet); got {value!r}")
    return value


def _question_row(connection: sqlite3.Connection, exercise: str) -> sqlite3.Row:
    row = connection.execute("SELECT * FROM questions WHERE exercise = ?", (exercise,)).fetchone()
    if row is None:
        raise ValueError(f"exercise {exercise!r} is not in the marks database")
    return row


def add_answers(
    store: Store,
    exercise: str,
    rubric: Rubric,
    answers: Iterable[tuple[str, Any]],
    *,
    prompt: str = "",
    model_answer: str = "",
) -> ImportSummary:
    """Import students' answers to one written exercise (what phase 2's ``grade`` calls).

    The first import of ``exercise`` stores its rubric; later imports keep the rubric as the markers have edited
    it and only add items the notebook has and the store has not (an item's text and points belong to the
    markers once imported). Each answer replaces exactly that student's earlier answer to this exercise. A mark
    belongs to the text: when the re-imported text has the same group key (equal up to whitespace and case), her
    mark is kept; when it changed, her answer joins the group of its new text (marked if an identical answer was
    marked, else unmarked) and her old group's mark stays with the other students in it.

    Parameters
    ----------
    store : Store
    exercise : str
        The exercise id.
    rubric : Rubric
        Its maximum points and rubric (from :func:`~.written.read_written_exercises` or :func:`~.written.check_rubric`).
    answers : iterable of (str, str or list of str or bytes)
        ``(student, source)``: each student at most once; the source is read by :func:`~.written.read_answer`.
    prompt, model_answer : str, optional
        Shown to markers (the prompt above the answer, the instructor's answer folded away).

    Returns
    -------
    ImportSummary

    Raises
    ------
    ValueError
        For a student twice, an empty student id, or ``rubric.points`` different from the stored maximum (a
        question's maximum is not changed under its marks).
    """
    exercise = check_exercise_id(exercise)
    if not isinstance(rubric, Rubric):
        raise TypeError(f"rubric must be a Rubric; got {type(rubric).__name__}")
    rubric = check_rubric(rubric.points, rubric.items)
    rows = [(_name(student, "student"), read_answer(source)) for student, source in answers]
    counts = Counter(student for student, _ in rows)
    twice = sorted(s for s, n in counts.items() if n > 1)
    if twice:
        raise ValueError(f"answers must name each student once; {twice[:5]} appear more than once")
    now = _now()
    added: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    with _transaction(store.connection) as db:
        found = db.execute("SELECT points FROM questions WHERE exercise = ?", (exercise,)).fetchone()
        if found is None:
            position = db.execute("SELECT COUNT(*) FROM questions").fetchone()[0]
            db.execute(
                "INSERT INTO questions VALUES (?, ?, ?, ?, ?)",
                (exercise, rubric.points, str(prompt), str(model_answer), position),
            )
        elif found[0] != rubric.points:
            raise ValueError(
                f"rubric.points for {exercise!r} is {rubric.points:g} but the marks database has {found[0]:g}"
            )
        known = {row[0] for row in db.execute("SELECT item FROM items WHERE exercise = ?", (exercise,))}
        position = len(known)
        for item in rubric.items:
            if item.id not in known:
                db.execute(
                    "INSERT INTO items VALUES (?, ?, ?, ?, ?, 1, 'notebook', ?)",
                    (exercise, item.id, item.text, item.points, position, now),
                )
                position += 1
        for student, answer in rows:
            key = group_key(answer.text)
            old = db.execute(
                "SELECT group_key FROM answers WHERE exercise = ? AND student = ?", (exercise, student)
            ).fetchone()
            (added if old is None else unchanged if old[0] == key else changed).append(student)
            db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?)",
                (exercise, student, answer.text, answer.cut_from, key, now),
            )
    return ImportSummary(tuple(added), tuple(changed), tuple(unchanged))


def _items(db: sqlite3.Connection, exercise: str) -> list[sqlite3.Row]:
    return db.execute("SELECT * FROM items WHERE exercise = ? ORDER BY position", (exercise,)).fetchall()


def _mark(db: sqlite3.Connection, exercise: str, key: str) -> Mark | None:
    row = db.execute("SELECT * FROM marks WHERE exercise = ? AND group_key = ?", (exercise, key)).fetchone()
    if row is None:
        return None
    applied = db.execute(
        "SELECT m.item FROM mark_items m JOIN items i ON i.exercise = m.exercise AND i.item = m.item "
        "WHERE m.exercise = ? AND m.group_key = ? ORDER BY i.position",
        (exercise, key),
    ).fetchall()
    return Mark(
        tuple(r[0] for r in applied),
        row["comment"],
        row["adjustment"],
        row["marked_by"],
        row["marked_at"],
        row["version"],
    )


def _score(mark: Mark | None, points: dict[str, float], maximum: float) -> tuple[float | None, float | None]:
    """(raw, clamped): the current points of the applied items plus the adjustment, and that clamped to [0, max]."""
    if mark is None:
        return None, None
    raw = sum(points[item] for item in mark.items) + mark.adjustment
    return raw, min(max(raw, 0.0), maximum)


def question(store: Store, exercise: str) -> Question:
    """One exercise's rubric (items with their versions) and progress (groups and answers marked).

    Parameters
    ----------
    store : Store
    exercise : str

    Returns
    -------
    Question

    Raises
    ------
    ValueError
        For an exercise not in the store.
    """
    db = store.connection
    row = _question_row(db, exercise)
    items = tuple((RubricItem(r["item"], r["text"], r["points"]), r["version"]) for r in _items(db, exercise))
    counts = db.execute(
        "SELECT COUNT(*), COUNT(DISTINCT a.group_key), COUNT(m.version), COUNT(DISTINCT m.group_key) "
        "FROM answers a LEFT JOIN marks m ON m.exercise = a.exercise AND m.group_key = a.group_key "
        "WHERE a.exercise = ?",
        (exercise,),
    ).fetchone()
    return Question(
        exercise, row["points"], row["prompt"], row["model_answer"], items, counts[1], counts[3], counts[0], counts[2]
    )


def questions(store: Store) -> list[Question]:
    """Every exercise in the store, in the order first imported.

    Parameters
    ----------
    store : Store

    Returns
    -------
    list of Question
    """
    names = [r[0] for r in store.connection.execute("SELECT exercise FROM questions ORDER BY position")]
    return [question(store, name) for name in names]


def groups(store: Store, exercise: str) -> list[Group]:
    """The exercise's answer groups, with their marks and scores.

    Parameters
    ----------
    store : Store
    exercise : str

    Returns
    -------
    list of Group
        Ordered by group key: an order that says nothing about who wrote what.

    Raises
    ------
    ValueError
        For an exercise not in the store.
    """
    db = store.connection
    maximum = _question_row(db, exercise)["points"]
    points = {r["item"]: r["points"] for r in _items(db, exercise)}
    found: dict[str, list[sqlite3.Row]] = {}
    for row in db.execute(
        "SELECT * FROM answers WHERE exercise = ? ORDER BY group_key, student", (exercise,)
    ).fetchall():
        found.setdefault(row["group_key"], []).append(row)
    result = []
    for key, rows in found.items():
        mark = _mark(db, exercise, key)
        raw, clamped = _score(mark, points, maximum)
        result.append(
            Group(key, rows[0]["text"], rows[0]["cut_from"], tuple(r["student"] for r in rows), mark, raw, clamped)
        )
    return result


def _stale(what: str, by: str, at: str, version: int, expected: int) -> StaleWrite:
    return StaleWrite(
        f"{what} was saved by {by} at {at} (version {version}) after you read version {expected}; "
        "nothing of yours was saved: reload to see theirs, then apply your change again"
    )


def save_mark(
    store: Store,
    exercise: str,
    key: str,
    *,
    items: Sequence[str],
    comment: str = "",
    adjustment: float = 0.0,
    marker: str,
    expected_version: int,
) -> Mark:
    """Save a group's mark if nobody has saved it since ``expected_version`` (0 when it had no mark).

    Parameters
    ----------
    store : Store
    exercise, key : str
        The exercise and the group's key (:attr:`Group.key`).
    items : sequence of str
        The rubric item ids applied (each an item of this exercise).
    comment : str, optional
        A free comment for the student (at most 10,000 characters).
    adjustment : float, optional
        Points added to the items' sum (finite; may be negative).
    marker : str
        Who saves (shown to the next marker who meets a conflict).
    expected_version : int
        The mark's version the marker read.

    Returns
    -------
    Mark
        The saved mark, at version ``expected_version + 1``.

    Raises
    ------
    StaleWrite
        When the mark's version is not ``expected_version``: someone saved in between (the message names them).
    ValueError
        For an unknown exercise, group or item, or a bad comment, adjustment or marker.
    """
    marker = _name(marker, "marker")
    expected_version = _version(expected_version, "expected_version")
    if not isinstance(comment, str) or len(comment) > _MAX_COMMENT:
        raise ValueError(f"comment must be a string of at most {_MAX_COMMENT} characters")
    adjustment = check_rubric_item({"id": "adjustment", "text": "-", "points": adjustment}, "adjustment").points
    applied = list(dict.fromkeys(items))
    with _transaction(store.connection) as db:
        _question_row(db, exercise)
        if db.execute("SELECT 1 FROM answers WHERE exercise = ? AND group_key = ?", (exercise, key)).fetchone() is None:
            raise ValueError(f"exercise {exercise!r} has no answer group {key!r}")
        known = {r["item"] for r in _items(db, exercise)}
        unknown = [item for item in applied if item not in known]
        if unknown:
            raise ValueError(f"items {unknown} are not rubric items of {exercise!r}; known: {sorted(known)}")
        current = _mark(db, exercise, key)
        version = 0 if current is None else current.version
        if current is not None and version != expected_version:
            raise _stale("This answer's mark", current.marked_by, current.marked_at, version, expected_version)
        if current is None and expected_version != 0:
            raise StaleWrite(f"This answer's mark was removed after you read version {expected_version}; reload")
        now = _now()
        db.execute(
            "INSERT OR REPLACE INTO marks VALUES (?, ?, ?, ?, ?, ?, ?)",
            (exercise, key, comment, adjustment, marker, now, version + 1),
        )
        db.execute("DELETE FROM mark_items WHERE exercise = ? AND group_key = ?", (exercise, key))
        db.executemany("INSERT INTO mark_items VALUES (?, ?, ?)", [(exercise, key, item) for item in applied])
        saved = _mark(db, exercise, key)
    assert saved is not None  # written just above, in this transaction
    return saved


def edit_item(
    store: Store,
    exercise: str,
    item: str,
    *,
    text: str | None = None,
    points: float | None = None,
    editor: str,
    expected_version: int,
) -> tuple[RubricItem, int]:
    """Change a rubric item's text and/or points if nobody has since ``expected_version``; every answer marked with
    it is re-scored (scores are computed from the current points when read).

    Parameters
    ----------
    store : Store
    exercise, item : str
        The exercise and the item's id.
    text : str or None, optional
        The new text (``None``: unchanged).
    points : float or None, optional
        The new points (``None``: unchanged).
    editor : str
        Who edits.
    expected_version : int
        The item's version the editor read (:attr:`Question.items`).

    Returns
    -------
    (RubricItem, int)
        The item as saved and its new version.

    Raises
    ------
    StaleWrite
        When someone edited the item since ``expected_version`` (the message names them).
    ValueError
        For an unknown item or a bad text, points or editor.
    """
    editor = _name(editor, "editor")
    expected_version = _version(expected_version, "expected_version")
    with _transaction(store.connection) as db:
        row = db.execute("SELECT * FROM items WHERE exercise = ? AND item = ?", (exercise, item)).fetchone()
        if row is None:
            raise ValueError(f"{item!r} is not a rubric item of {exercise!r}")
        if row["version"] != expected_version:
            raise _stale(f"Rubric item {item!r}", row["edited_by"], row["edited_at"], row["version"], expected_version)
        new = check_rubric_item(
            {
                "id": item,
                "text": row["text"] if text is None else text,
                "points": row["points"] if points is None else points,
            },
            "rubric item",
        )
        db.execute(
            "UPDATE items SET text = ?, points = ?, version = ?, edited_by = ?, edited_at = ? "
            "WHERE exercise = ? AND item = ?",
            (new.text, new.points, expected_version + 1, editor, _now(), exercise, item),
        )
    return new, expected_version + 1


def add_item(
    store: Store, exercise: str, *, text: str, points: float, editor: str, item: str | None = None
) -> RubricItem:
    """Add a rubric item to an exercise mid-way.

    Parameters
    ----------
    store : Store
    exercise : str
    text : str
        What earns or loses it.
    points : float
        Its points (positive or negative).
    editor : str
        Who adds it.
    item : str or None, optional
        Its id (default ``item-<n>``, the first free number).

    Returns
    -------
    RubricItem
        The item as stored.

    Raises
    ------
    ValueError
        For an unknown exercise, an id already used, or a bad text, points or editor.
    """
    editor = _name(editor, "editor")
    with _transaction(store.connection) as db:
        _question_row(db, exercise)
        taken = {r["item"] for r in _items(db, exercise)}
        if item is None:
            item = next(f"item-{n}" for n in range(1, len(taken) + 2) if f"item-{n}" not in taken)
        new = check_rubric_item({"id": item, "text": text, "points": points}, "rubric item")
        if new.id in taken:
            raise ValueError(f"rubric item {new.id!r} already exists in {exercise!r}")
        db.execute(
            "INSERT INTO items VALUES (?, ?, ?, ?, ?, 1, ?, ?)",
            (exercise, new.id, new.text, new.points, len(taken), editor, _now()),
        )
    return new
