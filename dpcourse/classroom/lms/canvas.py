"""Canvas's REST API, through ``canvasapi``: ``dpcourse canvas pull`` and ``dpcourse canvas push``.

``dpcourse canvas pull ASSIGNMENT --course course.toml --out DIR [--roster-out F]`` asks Canvas for the
course's students (``GET /api/v1/courses/:id/search_users`` with their enrollments, and the sections) and every
submission of the assignment with its history (``GET …/assignments/:id/submissions?include[]=submission_history``),
and writes what ``dpcourse collect`` writes: ``DIR/<student>/<notebook>.ipynb`` and ``DIR/collected.csv`` (the same
pipeline, :func:`~.collect._pipeline`, so the same columns, matching and notes), plus the roster
(``DIR/roster.csv``, :func:`~.gradebook.read_roster`'s CSV) and the submissions' JSON
(``DIR/canvas_submissions.json``, what ``collect --canvas-submissions`` reads). Each file's ``submitted_at`` is
its attempt's own, so ``grade`` charges lateness by the minute; an earlier attempt's notebook is an ``older
submission`` row.

``dpcourse canvas push ASSIGNMENT --course course.toml --roster roster.csv --grades REPORT_canvas.csv
[--feedback DIR] [--dry-run]`` sets the assignment's grades from the Canvas import ``grade --gradebook canvas``
wrote (the gradebook's own totals: nothing is recomputed here), only for the students with a value in that
column, only where Canvas's score differs; and posts each student's feedback file (``grade --feedback``) as a
submission comment with the file attached, its text ending in a marker with the file's digest, so that a
comment already on Canvas (from a rerun, or a push that stopped midway) is never posted again.

**The input is hostile.** An attachment's name is only matched against the course's notebooks and shown in
``collected.csv``, never a path; only ``.ipynb`` attachments are downloaded, only from the Canvas instance's own
host (the token goes with the request), only when Canvas's size for them is within
:class:`~.exports.CollectLimits` (and the bytes read are counted again), with a timeout (:data:`TIMEOUT`).
Who a file is from is Canvas's user id, matched to the roster Canvas gave.

**The client.** ``canvasapi`` makes every request (pagination by the ``Link`` header included); a rate-limited
request (Canvas's 403 with ``X-Rate-Limit-Remaining`` spent, or a 429 with ``Retry-After``) is retried by
urllib3's :class:`~urllib3.util.Retry` at most :data:`RATE_LIMIT_RETRIES` times, waiting at most
:data:`RETRY_AFTER_MAX` seconds each. Any other error (401, 403, 404, a 5xx) stops the command with one line
and exit status 2; what was done is done, and a rerun does the rest. The token is read from
:data:`TOKEN_VARIABLE` or a file, never a flag, and never printed. canvasapi keeps its ``requests`` session
private: :func:`connect` mounts the adapter on it (canvasapi is pinned in ``requirements.txt`` and the tests
check the adapter is there); its ``File`` and ``Uploader`` get the ``_requester`` its own objects carry.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import sys
import urllib.parse
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from ..course import Assignment, Course, CourseError, load_course
from ..gradebook.book import ROSTER_FIELDS, RosterEntry, feedback_name, printable, read_roster
from ..grading.plan import read_outline
from ..grading.reports import points_text
from ..io import atomic_csv, atomic_text, unquoted
from ..release import SOURCE
from ..validation import time_or_none
from .archive import CollectError, CollectLimits, _Candidate, _folder_name, _Identity, _Member, safe_student
from .collect import CollectResult, _check_out, _check_roster, _Course, _make_out, _pipeline

__all__ = [
    "BACKOFF",
    "EXTRA",
    "RATE_LIMIT_RETRIES",
    "RETRY_AFTER_MAX",
    "TIMEOUT",
    "TOKEN_VARIABLE",
    "CanvasError",
    "CommentPost",
    "GradeChange",
    "PushPlan",
    "add_canvas_command",
    "connect",
    "feedback_marker",
    "plan_push",
    "pull",
    "push",
    "read_canvas_grades",
    "read_token",
    "roster_entries",
]

EXTRA = "dpcourse[canvas]"
TOKEN_VARIABLE = "CANVAS_TOKEN"
TIMEOUT = (10.0, 60.0)  # seconds to connect, and between two reads of an answer
RATE_LIMIT_RETRIES = 3
RETRY_AFTER_MAX = 60  # seconds: a longer Retry-After is waited this long, at most
BACKOFF = 1.0  # seconds before the first retry of a throttle without Retry-After, doubling after
ROSTER_FILE = "roster.csv"
SUBMISSIONS_FILE = "canvas_submissions.json"
_ROSTER_COLUMNS = ("student", "name", "canvas_id", "sis_user_id", "sis_login_id", "section")
_SUBMISSION_FIELDS = ("user_id", "assignment_id", "submitted_at", "workflow_state", "late", "seconds_late", "attempt")
_MARKER = "dpcourse feedback"


class CanvasError(Exception):
    """Canvas could not be used: the message is one line saying what and what to do (never the token)."""


# --------------------------------------------------------------------------- the client


def read_token(token_file: Path | None, environ: Mapping[str, str] = os.environ) -> str:
    """The access token: the file's first line when ``token_file`` is given, else :data:`TOKEN_VARIABLE`.

    Parameters
    ----------
    token_file : pathlib.Path or None
        A file holding the token (``--token-file``).
    environ : Mapping, optional
        The environment (default: the process's).

    Returns
    -------
    str
        The token, stripped.

    Raises
    ------
    CanvasError
        When neither gives a token, or the file cannot be read.
    """
    if token_file is not None:
        try:
            token = Path(token_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as err:
            raise CanvasError(f"--token-file {token_file}: cannot be read ({type(err).__name__})") from None
        if not token:
            raise CanvasError(f"--token-file {token_file}: empty (it should hold the access token)")
        return token.splitlines()[0].strip()
    token = environ.get(TOKEN_VARIABLE, "").strip()
    if not token:
        raise CanvasError(
            f"no Canvas token: set {TOKEN_VARIABLE} or give --token-file FILE "
            "(Canvas → Account → Settings → New access token)"
        )
    return token


def _canvasapi() -> Any:
    try:
        import canvasapi
    except ImportError:
        raise CanvasError(f"canvasapi is not installed: pip install '{EXTRA}'") from None
    return canvasapi


def _throttled(headers: Mapping[str, str]) -> bool:
    """Whether a 403 is Canvas's throttle: its ``X-Rate-Limit-Remaining`` (sent with every answer) is spent."""
    try:
        return float(headers.get("X-Rate-Limit-Remaining", "1")) <= 0
    except ValueError:
        return False


def _adapter() -> Any:
    """requests' adapter for Canvas: a timeout on every request, and urllib3's bounded retries of a rate limit.

    Canvas throttles with a 403 whose ``X-Rate-Limit-Remaining`` is spent (its documented answer); a proxy in
    front of it, with a 429 and ``Retry-After``. Both are retried, for every method (Canvas did nothing with a
    throttled request), waiting ``Retry-After`` (at most :data:`RETRY_AFTER_MAX` seconds) or an exponential
    backoff. A 5xx is not retried (a POST may have been done): the command stops and a rerun resumes.
    """
    from requests.adapters import HTTPAdapter
    from urllib3.exceptions import MaxRetryError
    from urllib3.util import Retry

    class _CanvasRetry(Retry):
        def get_retry_after(self, response: Any) -> float | None:
            wait = super().get_retry_after(response)
            return None if wait is None else min(wait, RETRY_AFTER_MAX)  # a bounded wait, whatever Canvas asks

        def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
            if status_code == 403 and self._is_method_retryable(method):
                return True  # increment() lets only a throttle through
            return super().is_retry(method, status_code, has_retry_after)

        def increment(
            self,
            method: str | None = None,
            url: str | None = None,
            response: Any = None,
            error: Exception | None = None,
            _pool: Any = None,
            _stacktrace: Any = None,
        ) -> Self:
            if response is not None and response.status == 403 and not _throttled(response.headers):
                # A real 403: no retry; with raise_on_status off, urllib3 hands the answer on as it is.
                raise MaxRetryError(_pool, url or "", None)
            return super().increment(method, url, response, error, _pool, _stacktrace)

    class _TimedAdapter(HTTPAdapter):
        def send(self, request: Any, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = TIMEOUT
            return super().send(request, *args, **kwargs)

    retry = _CanvasRetry(
        total=RATE_LIMIT_RETRIES,
        connect=2,
        read=0,
        status=RATE_LIMIT_RETRIES,
        status_forcelist=(429,),
        allowed_methods=frozenset({"GET", "PUT", "POST", "DELETE", "HEAD"}),
        backoff_factor=BACKOFF,
        backoff_max=RETRY_AFTER_MAX,
        respect_retry_after_header=True,
        raise_on_status=False,
    )
    return _TimedAdapter(max_retries=retry)


def connect(url: str, token: str) -> Any:
    """A :class:`canvasapi.Canvas` for ``url`` whose requests time out and retry a rate limit (see the module).

    Parameters
    ----------
    url : str
        The instance's base address (:class:`~.course.CanvasSite`).
    token : str
        The access token.

    Returns
    -------
    canvasapi.Canvas
        The client.

    Raises
    ------
    CanvasError
        When canvasapi is not installed (naming the extra to install).
    """
    canvasapi = _canvasapi()
    with warnings.catch_warnings():  # http:// reaches here only for a server on this machine (the course file's rule)
        warnings.filterwarnings("ignore", "Canvas may respond unexpectedly", UserWarning)
        canvas = canvasapi.Canvas(url, token)
    # canvasapi keeps its requests.Session on its private Requester and offers no hook for an adapter (checked by
    # the tests at the pinned version).
    session = canvas._Canvas__requester._session
    adapter = _adapter()
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return canvas


def _error_line(err: BaseException, site: str) -> str:
    """One line for an error of canvasapi or requests (canvasapi's own message is Canvas's answer, not ours)."""
    from canvasapi import exceptions as ex
    from requests import RequestException

    said = printable(" ".join(str(err).split()))[:200]
    if isinstance(err, ex.RateLimitExceeded) or (isinstance(err, ex.Forbidden) and "rate limit" in said.lower()):
        return (
            f"Canvas's rate limit is still exceeded after {RATE_LIMIT_RETRIES} waits ({said}); wait a few minutes "
            "and rerun: nothing done is done twice"
        )
    if isinstance(err, ex.InvalidAccessToken | ex.Unauthorized):
        return f"Canvas refused the token (401): check {TOKEN_VARIABLE} or --token-file, and that it has not expired"
    if isinstance(err, ex.Forbidden):
        return f"Canvas forbids this (403): the token's user needs a teacher's or TA's role in the course ({said})"
    if isinstance(err, ex.ResourceDoesNotExist):
        return "Canvas has no such course, assignment or student (404): check [canvas] course_id and canvas_id"
    if isinstance(err, ex.CanvasException):
        return f"Canvas answered with an error ({said}); rerun to resume: nothing done is done twice"
    if isinstance(err, RequestException):
        return f"cannot reach Canvas at {site} ({type(err).__name__}); rerun to resume: nothing done is done twice"
    return f"Canvas's answer could not be read ({type(err).__name__}: {said})"


def _canvas_errors() -> tuple[type[BaseException], ...]:
    """What canvasapi and requests raise for Canvas's answers (requests' errors are OSErrors: caught first)."""
    try:
        from canvasapi.exceptions import CanvasException
        from requests import RequestException
    except ImportError:  # not installed: connect() said so before anything was asked of Canvas
        return ()
    return (CanvasException, RequestException)


# --------------------------------------------------------------------------- pull: the roster


def roster_entries(users: Iterable[Mapping[str, Any]], sections: Mapping[int, str]) -> list[RosterEntry]:
    """The roster of Canvas's users (``GET /courses/:id/users?include[]=enrollments``), in the order given.

    A student's id is her login id (``login_id``, Canvas's SIS Login ID), else her ``sis_user_id``, else her
    Canvas user id, as :func:`~.gradebook.read_roster` reads Canvas's gradebook export; an id that is no safe
    folder name (:func:`~.exports.safe_student`), that another student has (in any case) or that is the name of a
    file ``pull`` writes beside the students' folders falls to the next.

    Parameters
    ----------
    users : iterable of Mapping
        Canvas's User objects (``id``, ``name``, ``sortable_name``, ``login_id``, ``sis_user_id``, and
        ``enrollments`` with ``course_section_id``).
    sections : Mapping
        Section id → name.

    Returns
    -------
    list of RosterEntry
        One per user, with ``canvas_id``, the SIS ids, the name and the sections (joined by semicolons).
    """
    entries: list[RosterEntry] = []
    taken = {ROSTER_FILE, SUBMISSIONS_FILE}
    for user in users:
        canvas_id = str(int(user["id"]))
        login, sis = str(user.get("login_id") or ""), str(user.get("sis_user_id") or "")
        student = next(
            (s for c in (login, sis, canvas_id) if (s := safe_student(c)) and s.casefold() not in taken), canvas_id
        )  # (taken holds the files pull writes beside the students' folders too)
        taken.add(student.casefold())
        ids = sorted({int(e["course_section_id"]) for e in user.get("enrollments") or [] if e.get("course_section_id")})
        section = "; ".join(sections.get(i, str(i)) for i in ids)
        entries.append(RosterEntry(student, str(user.get("name") or ""), canvas_id, sis, section, sis_login_id=login))
    return entries


def _write_roster(entries: Sequence[RosterEntry], path: Path) -> Path:
    assert set(_ROSTER_COLUMNS) <= set(ROSTER_FIELDS)
    return atomic_csv(path, _ROSTER_COLUMNS, ([getattr(e, c) for c in _ROSTER_COLUMNS] for e in entries))


# --------------------------------------------------------------------------- pull: the submissions


def _fields(thing: Any) -> dict[str, Any]:
    """A canvasapi object's JSON fields (it sets them as attributes, beside its private requester)."""
    return {k: v for k, v in vars(thing).items() if not k.startswith("_")} if hasattr(thing, "__dict__") else thing


def _same_host(url: str, site: str) -> bool:
    """Whether ``url`` is on the Canvas instance's own scheme and host (the token is sent with the request)."""
    there, home = urllib.parse.urlsplit(url), urllib.parse.urlsplit(site)
    return (there.scheme, there.netloc) == (home.scheme, home.netloc)


def _attempts(submission: Any) -> list[Mapping[str, Any]]:
    """The submission's attempts (``submission_history``), else the submission itself, as Canvas's JSON."""
    history = getattr(submission, "submission_history", None)
    if isinstance(history, list) and history:
        return [h for h in history if isinstance(h, dict)]
    current = {k: getattr(submission, k, None) for k in (*_SUBMISSION_FIELDS, "attachments")}
    current["attachments"] = [_fields(a) for a in getattr(submission, "attachments", [])]
    return [current]


def _members(
    submissions: Iterable[Any], people: Mapping[str, RosterEntry], site: str, requester: Any, limits: CollectLimits
) -> tuple[list[_Member], dict[int, _Candidate]]:
    """A member and a candidate for each attachment of each attempt; downloaded only when the pipeline reads it."""
    from canvasapi.file import File

    members: list[_Member] = []
    candidates: dict[int, _Candidate] = {}
    for submission in submissions:
        user = str(int(submission.user_id))
        entry = people.get(user)
        name = entry.name if entry else ""
        who = _Identity(
            f"canvas:{user}",
            _folder_name(name, f"canvas_{user}"),
            f"canvas id {user} {name}".rstrip(),
            canvas_id=user,
            suffix=user,
        )
        for attempt in _attempts(submission):
            number = int(attempt.get("attempt") or 0)
            for attachment in attempt.get("attachments") or []:
                file_id = int(attachment["id"])
                uploaded = str(attachment.get("display_name") or attachment.get("filename") or "")
                size = attachment.get("size")
                url = str(attachment.get("url") or "")
                member = _Member(f"{user}/attempt {number}/{file_id} {uploaded}", len(members))
                if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                    member.problem = "not downloaded: Canvas gave no size for it"
                elif not _same_host(url, site):
                    member.problem = "not downloaded: its address is not on the Canvas instance"
                else:
                    member.size = size
                    member.open = _download(File(requester, dict(attachment)), limits)
                members.append(member)
                candidates[member.position] = _Candidate(
                    member,
                    uploaded,
                    [who],
                    submitted_at=time_or_none(attempt.get("submitted_at")),
                    late=attempt.get("late") if isinstance(attempt.get("late"), bool) else None,
                    order=(number, file_id),
                )
    return members, candidates


def _download(file: Any, limits: CollectLimits) -> Any:
    """An ``open`` for a member: the file's bytes from Canvas, fetched once (the pipeline may read twice)."""
    got: list[bytes] = []

    def open_file() -> io.BytesIO:
        if not got:
            data = file.get_contents(binary=True)
            if len(data) > limits.max_file_bytes:  # _stream says so; nothing larger is kept in memory
                data = data[: limits.max_file_bytes + 1]
            got.append(data)
        return io.BytesIO(got[0])

    return open_file


def _submission_json(submissions: Iterable[Any]) -> list[dict[str, Any]]:
    return [{k: getattr(s, k, None) for k in _SUBMISSION_FIELDS} for s in submissions]


def pull(
    canvas: Any,
    course: Course,
    assignment: Assignment,
    out: Path | str,
    *,
    notebooks: Path | str = SOURCE,
    force: bool = False,
    limits: CollectLimits | None = None,
    roster_path: Path | str | None = None,
) -> tuple[CollectResult, list[RosterEntry]]:
    """Pull the roster and ``assignment``'s submissions from Canvas into ``out``, as ``collect`` writes them.

    Parameters
    ----------
    canvas : canvasapi.Canvas
        The client (:func:`connect`).
    course : Course
        The course file, with ``[canvas]``.
    assignment : Assignment
        The assignment, with its ``canvas_id``.
    out : str or pathlib.Path
        The folder to write (empty unless ``force``).
    notebooks : str or pathlib.Path
        The course's notebooks, whose stems the files get.
    force : bool
        Pull into a non-empty ``out``.
    limits : CollectLimits, optional
        Caps on files and bytes read.
    roster_path : str or pathlib.Path, optional
        Where the roster goes (default ``out/roster.csv``).

    Returns
    -------
    tuple of (CollectResult, list of RosterEntry)
        Every file's row (as ``out/collected.csv``), and the roster written.

    Raises
    ------
    CanvasError
        When the course file gives no ``[canvas]`` or no ``canvas_id`` for the assignment.
    CollectError
        As :func:`~.collect.collect`, for ``out``.
    canvasapi.exceptions.CanvasException, requests.RequestException
        Canvas's errors (:func:`main` makes them one line).
    """
    site, canvas_id = _where(course, assignment)
    limits = limits or CollectLimits()
    target = _check_out(out, force)
    remote = canvas.get_course(site.course_id)
    sections = {int(s.id): str(s.name) for s in remote.get_sections()}
    users = [_fields(u) for u in remote.get_users(enrollment_type=["student"], include=["enrollments"])]
    roster = roster_entries(users, sections)
    _check_roster(roster)
    remote_assignment = remote.get_assignment(canvas_id)
    submissions = list(remote_assignment.get_submissions(include=["submission_history"]))
    people = {e.canvas_id: e for e in roster}
    requester = remote_assignment._requester  # canvasapi's File needs the requester its objects carry
    members, candidates = _members(submissions, people, site.url, requester, limits)
    result = _pipeline(
        "canvas",
        members,
        lambda member: candidates[member.position],
        lambda: _make_out(target),
        roster,
        _Course(notebooks),
        limits,
        f"{site.url}/courses/{site.course_id}/assignments/{canvas_id}",
    )
    _write_roster(roster, Path(roster_path) if roster_path is not None else target / ROSTER_FILE)
    atomic_text(target / SUBMISSIONS_FILE, json.dumps(_submission_json(submissions), indent=1) + "\n")
    return result, roster


def _where(course: Course, assignment: Assignment) -> tuple[Any, int]:
    if course.canvas is None:
        raise CanvasError("the course file has no [canvas] table (url and course_id)")
    if assignment.canvas_id is None:
        raise CanvasError(f"assignments.{assignment.key} has no canvas_id (the number in its Canvas address)")
    return course.canvas, assignment.canvas_id


# --------------------------------------------------------------------------- push


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


# --------------------------------------------------------------------------- the command


def add_canvas_command(commands: Any) -> None:
    """Register ``canvas pull`` and ``canvas push`` on an argparse sub-command set.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        What :meth:`argparse.ArgumentParser.add_subparsers` returned.
    """
    parser = commands.add_parser(
        "canvas",
        help="pull submissions and the roster from Canvas, push grades and feedback to it (its API)",
        description=f"Canvas's API through canvasapi (pip install '{EXTRA}'). The token comes from "
        f"${TOKEN_VARIABLE} or --token-file; the address and course from the course file's [canvas].",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    for name, helped in (
        ("pull", "the roster and an assignment's submissions into DIR/<student>/<notebook>.ipynb, as collect"),
        ("push", "an assignment's grades (from grade --gradebook canvas) and feedback comments"),
    ):
        sub = actions.add_parser(name, help=helped, description=helped, allow_abbrev=False)  # --token is no flag
        sub.add_argument("assignment", help="the assignment's key in the course file")
        sub.add_argument("--course", type=Path, required=True, metavar="TOML", help="the course file, with [canvas]")
        sub.add_argument("--source", type=Path, default=SOURCE, help="the instructor's notebooks (default notebooks/)")
        sub.add_argument(
            "--token-file", type=Path, default=None, help=f"a file holding the token (else ${TOKEN_VARIABLE})"
        )
        if name == "pull":
            sub.add_argument("--out", type=Path, required=True, metavar="DIR", help="the folder to write (empty)")
            sub.add_argument(
                "--roster-out", type=Path, default=None, help=f"where the roster goes (default DIR/{ROSTER_FILE})"
            )
            sub.add_argument("--force", action="store_true", help="pull into a non-empty --out")
            sub.set_defaults(run=_run_pull)
        else:
            sub.add_argument("--roster", type=Path, required=True, help="the roster (pull's), for the Canvas ids")
            sub.add_argument("--grades", type=Path, default=None, metavar="CSV", help="<report>_canvas.csv of grade")
            sub.add_argument("--feedback", type=Path, default=None, metavar="DIR", help="grade --feedback's folder")
            sub.add_argument("--dry-run", action="store_true", help="say what would be sent; send nothing")
            sub.set_defaults(run=_run_push)


def _course(args: argparse.Namespace, students: Sequence[str] | None = None) -> tuple[Course, Assignment]:
    course = load_course(args.course, read_outline(args.source), students=students)
    try:
        return course, course.assignment(args.assignment)
    except KeyError:
        keys = ", ".join(a.key for a in course.assignments)
        raise CanvasError(f"no assignment {args.assignment!r} in {args.course} (allowed: {keys})") from None


def _run(name: str, work: Any) -> int:
    """Run a command's work: 0, or 2 with one line on stderr for any error of Canvas, the files or the course."""
    site: list[str] = []
    try:
        return int(work(site.append))
    except CanvasError as err:
        print(f"canvas {name}: {err}", file=sys.stderr)
        return 2
    except Exception as err:
        if isinstance(err, _canvas_errors()):
            print(f"canvas {name}: {_error_line(err, site[0] if site else 'its address')}", file=sys.stderr)
        elif isinstance(err, CourseError | CollectError | OSError | ValueError):
            print(f"canvas {name}: {err}", file=sys.stderr)
        elif isinstance(err, KeyError | TypeError):  # a Canvas object without a field this module reads
            print(f"canvas {name}: {_error_line(err, '')}", file=sys.stderr)
        else:
            raise
        return 2


def _run_pull(args: argparse.Namespace) -> int:
    def work(at: Any) -> int:
        course, assignment = _course(args)
        site, _ = _where(course, assignment)
        at(site.url)
        canvas = connect(site.url, read_token(args.token_file))
        result, roster = pull(
            canvas, course, assignment, args.out, notebooks=args.source, force=args.force, roster_path=args.roster_out
        )
        print(result.summary())
        print(f"roster of {len(roster)} students written to {args.roster_out or args.out / ROSTER_FILE}")
        return 0

    return _run("pull", work)


def _run_push(args: argparse.Namespace) -> int:
    def work(at: Any) -> int:
        roster = read_roster(args.roster)
        course, assignment = _course(args, [e.student for e in roster])
        if args.grades is None and args.feedback is None:
            raise CanvasError("nothing to push: give --grades CSV and/or --feedback DIR")
        grades = read_canvas_grades(args.grades, assignment) if args.grades is not None else {}
        site, _ = _where(course, assignment)
        at(site.url)
        canvas = connect(site.url, read_token(args.token_file))
        push(canvas, course, assignment, grades=grades, roster=roster, feedback=args.feedback, dry_run=args.dry_run)
        return 0

    return _run("push", work)
