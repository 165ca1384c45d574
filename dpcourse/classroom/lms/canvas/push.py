"""Grades and feedback sent back to Canvas (``python -m dpcourse canvas push``): planned first, then sent.

:func:`plan_push` compares the run's Canvas gradebook import with what Canvas holds now and lists each change
(:class:`GradeChange`) and each feedback comment (:class:`CommentPost`, marked with :func:`feedback_marker` so that
a second push does not post it twice); :func:`push` sends the plan, one request per student, and says what failed.
"""

from __future__ import annotations

import csv
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...course import Assignment, Course
from ...gradebook.feedback import feedback_name
from ...gradebook.roster import RosterEntry
from ...grading.reports import points_text
from ...io import printable, unquoted
from .api import CanvasError, _where

__all__ = [
    "CommentPost",
    "GradeChange",
    "PushPlan",
    "feedback_marker",
    "plan_push",
    "push",
    "read_canvas_grades",
]


_MARKER = "dpcourse feedback"


@dataclass(frozen=True)
class GradeChange:
    """A grade to set on Canvas: the student, her Canvas user id, the score Canvas has and the new one.

    Attributes
    ----------
    student : str
        The roster's student id.
    user_id : str
        Her Canvas user id.
    old : float or None
        The score Canvas has now; None when it has none.
    new : str
        The score to set, as the gradebook's Canvas file writes it.
    """

    student: str
    user_id: str
    old: float | None
    new: str


@dataclass(frozen=True)
class CommentPost:
    """A feedback file to post as a comment: whose, which notebook, the file, and the comment's text.

    Attributes
    ----------
    student : str
        The roster's student id.
    user_id : str
        Her Canvas user id.
    notebook : str
        The notebook the feedback is about.
    path : pathlib.Path
        The feedback file, attached to the comment.
    text : str
        The comment's text, with the marker that keeps a rerun from posting it twice.
    """

    student: str
    user_id: str
    notebook: str
    path: Path
    text: str


@dataclass(frozen=True)
class PushPlan:
    """What a push sends: the grades that differ, the comments not yet on Canvas, and what is skipped (why).

    Attributes
    ----------
    grades : tuple of GradeChange
        The grades that differ from Canvas's.
    comments : tuple of CommentPost
        The feedback comments Canvas does not hold yet.
    unchanged : int
        How many grades Canvas already has.
    skipped : tuple of str
        One line per student or file left out, saying why.
    """

    grades: tuple[GradeChange, ...]
    comments: tuple[CommentPost, ...]
    unchanged: int
    skipped: tuple[str, ...]


def read_canvas_grades(path: Path | str, assignment: Assignment) -> dict[str, str]:
    """Canvas user id → score, the ``assignment`` column of the Canvas import ``grade --gradebook canvas`` wrote.

    Parameters
    ----------
    path : str or pathlib.Path
        ``<report>_canvas.csv`` (:func:`~.gradebook.write_canvas`).
    assignment : Assignment
        Its column is ``assignment.name``.

    Returns
    -------
    dict
        The user ids of the rows with a value in the column (a student who handed nothing in has none) → the
        value as written (a number).

    Raises
    ------
    ValueError
        Naming the file: no ``ID`` or no such column, a row with a value but no ``ID``, a value that is no number.
    """
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    header = [unquoted(c.strip()) for c in rows[0]] if rows else []  # as safe_cell wrote them
    if "ID" not in header or assignment.name not in header:
        raise ValueError(
            f"--grades {path}: no column {assignment.name!r} and ID (grade --gradebook canvas writes a column for "
            "each assignment graded in that run)"
        )
    at, id_at = header.index(assignment.name), header.index("ID")
    grades: dict[str, str] = {}
    for number, row in enumerate(rows[1:], start=2):
        cells = [unquoted(c.strip()) for c in row] + [""] * len(header)
        if cells[0] == "Points Possible" or not cells[at]:
            continue
        try:
            value = float(cells[at])
        except ValueError:
            raise ValueError(f"--grades {path}, line {number}: {cells[at][:20]!r} is not a number") from None
        if not cells[id_at].isdigit():
            raise ValueError(f"--grades {path}, line {number}: a score but no Canvas ID (give grade a --roster)")
        grades[str(int(cells[id_at]))] = points_text(value)
    return grades


def feedback_marker(assignment: Assignment, notebook: str, data: bytes) -> str:
    """The marker a feedback comment ends with: the assignment, the notebook and the file's digest.

    Parameters
    ----------
    assignment : Assignment
        The assignment the feedback is for.
    notebook : str
        The notebook's stem.
    data : bytes
        The feedback file's bytes.

    Returns
    -------
    str
        ``[dpcourse feedback <key>/<notebook> sha256:<16 hex digits>]``; a comment holding it is this file's.
    """
    digest = hashlib.sha256(data).hexdigest()[:16]
    return f"[{_MARKER} {assignment.key}/{notebook} sha256:{digest}]"


def _comment_texts(submission: Any) -> list[str]:
    return [str(c.get("comment") or "") for c in getattr(submission, "submission_comments", None) or []]


def plan_push(
    assignment: Assignment,
    submissions: Mapping[str, Any],
    grades: Mapping[str, str],
    roster: Sequence[RosterEntry],
    feedback: Path | None,
) -> PushPlan:
    """What a push would send, given what Canvas has (its submissions with their comments).

    Parameters
    ----------
    assignment : Assignment
        The assignment pushed.
    submissions : Mapping
        Canvas user id → its Submission (``score``, ``submission_comments``).
    grades : Mapping
        Canvas user id → score (:func:`read_canvas_grades`).
    roster : sequence of RosterEntry
        Student → Canvas user id (and whose feedback folder is whose).
    feedback : pathlib.Path or None
        ``grade --feedback``'s folder; None posts no comment.

    Returns
    -------
    PushPlan
        Grades whose value differs from Canvas's score; feedback files of the assignment's notebooks whose marker
        no comment holds yet; how many grades were already right; what was skipped and why.
    """
    by_id = {e.canvas_id: e for e in roster if e.canvas_id}
    changes: list[GradeChange] = []
    skipped: list[str] = []
    unchanged = 0
    for user_id, value in sorted(grades.items(), key=lambda kv: int(kv[0])):
        student = by_id[user_id].student if user_id in by_id else f"canvas {user_id}"
        if user_id not in submissions:
            skipped.append(f"grade of {student}: Canvas user {user_id} has no submission in this assignment")
            continue
        score = getattr(submissions[user_id], "score", None)
        if isinstance(score, int | float) and not isinstance(score, bool) and float(score) == float(value):
            unchanged += 1
            continue
        changes.append(GradeChange(student, user_id, score, value))
    posts: list[CommentPost] = []
    for entry in roster if feedback is not None else []:
        folder = Path(feedback or ".") / feedback_name(entry.student)
        for notebook in assignment.notebooks:
            path = folder / f"{feedback_name(notebook)}.md"
            if not path.is_file() or path.is_symlink():
                continue
            if entry.canvas_id not in submissions:
                skipped.append(f"feedback of {entry.student}: no Canvas submission (canvas_id {entry.canvas_id!r})")
                continue
            marker = feedback_marker(assignment, notebook, path.read_bytes())
            if any(marker in text for text in _comment_texts(submissions[entry.canvas_id])):
                continue
            text = f"Feedback on {notebook} ({assignment.name}), attached as {path.name}.\n\n{marker}"
            posts.append(CommentPost(entry.student, entry.canvas_id, notebook, path, text))
    return PushPlan(tuple(changes), tuple(posts), unchanged, tuple(skipped))


def push(
    canvas: Any,
    course: Course,
    assignment: Assignment,
    *,
    grades: Mapping[str, str],
    roster: Sequence[RosterEntry],
    feedback: Path | None = None,
    dry_run: bool = False,
    say: Any = print,
) -> PushPlan:
    """Send ``assignment``'s grades and feedback comments to Canvas (nothing with ``dry_run``).

    Grades go one student at a time (``PUT …/submissions/:user_id`` with ``submission[posted_grade]``), only
    those in ``grades`` and only where Canvas's score differs; each comment is the feedback file uploaded to the
    submission's comment files (``POST …/submissions/:user_id/comments/files``, Canvas's three-step upload) and
    then ``comment[text_comment]`` with ``comment[file_ids][]``. Each action is said (``say``) once done.

    Parameters
    ----------
    canvas : canvasapi.Canvas
        The client (:func:`connect`).
    course : Course
        The course file, with ``[canvas]``.
    assignment : Assignment
        The assignment, with its ``canvas_id``.
    grades : Mapping
        Canvas user id → score (:func:`read_canvas_grades`).
    roster : sequence of RosterEntry
        The students and their Canvas user ids.
    feedback : pathlib.Path or None, optional
        ``grade --feedback``'s folder; None posts no comment.
    dry_run : bool
        Only say what would be sent.
    say : callable
        Where each line goes (default :func:`print`).

    Returns
    -------
    PushPlan
        What was (or, with ``dry_run``, would be) sent.

    Raises
    ------
    CanvasError
        When the course file gives no ``[canvas]`` or no ``canvas_id``.
    canvasapi.exceptions.CanvasException, requests.RequestException
        Canvas's errors, midway included (:func:`main` makes them one line; a rerun resumes).
    """
    from canvasapi.upload import Uploader

    site, canvas_id = _where(course, assignment)
    remote = canvas.get_course(site.course_id).get_assignment(canvas_id)
    submissions = {str(int(s.user_id)): s for s in remote.get_submissions(include=["submission_comments"])}
    plan = plan_push(assignment, submissions, grades, roster, feedback)
    verb = "would set" if dry_run else "set"
    for line in plan.skipped:
        say(f"skipped: {printable(line)}")
    for change in plan.grades:
        if not dry_run:
            submissions[change.user_id].edit(submission={"posted_grade": change.new})
        old = "no score" if change.old is None else points_text(float(change.old))
        say(f"{verb} grade: {printable(change.student)} (canvas {change.user_id}): {old} → {change.new}")
    verb = "would post" if dry_run else "posted"
    for post in plan.comments:
        if not dry_run:
            submission = submissions[post.user_id]
            path = f"courses/{site.course_id}/assignments/{canvas_id}/submissions/{post.user_id}/comments/files"
            with open(post.path, "rb") as handle:
                uploaded, answer = Uploader(submission._requester, path, handle).start()
            if not uploaded or "id" not in answer:
                raise CanvasError(f"Canvas did not take {post.path} (its upload answered without a file)")
            submission.edit(comment={"text_comment": post.text, "file_ids": [answer["id"]]})
        say(f"{verb} comment: {printable(post.student)} (canvas {post.user_id}): {post.path.name}")
    say(
        f"canvas push {assignment.key}"
        + (" (dry run: nothing sent)" if dry_run else "")
        + f": {len(plan.grades)} grades "
        + ("to set" if dry_run else "set")
        + f", {plan.unchanged} already right, {len(plan.comments)} comments "
        + ("to post" if dry_run else "posted")
        + (f", {len(plan.skipped)} skipped" if plan.skipped else "")
    )
    return plan
