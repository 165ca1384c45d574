"""Canvas's REST API, through ``canvasapi``: ``dpcourse canvas pull`` and ``dpcourse canvas push``.

``dpcourse canvas pull ASSIGNMENT --course course.toml --out DIR [--roster-out F]`` asks Canvas for the
course's students (``GET /api/v1/courses/:id/search_users`` with their enrollments, and the sections) and every
submission of the assignment with its history (``GET …/assignments/:id/submissions?include[]=submission_history``),
and writes what ``dpcourse collect`` writes: ``DIR/<student>/<notebook>.ipynb`` and ``DIR/collected.csv`` (the same
pipeline, :func:`~.collect._pipeline`, so the same columns, matching and notes), plus the roster
(``DIR/roster.csv``, :func:`~.roster.read_roster`'s CSV) and the submissions' JSON
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
:class:`~.archive.CollectLimits` (and the bytes read are counted again), with a timeout (:data:`TIMEOUT`).
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

import io
import json
import os
import urllib.parse
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from ...course import Assignment, Course
from ...gradebook.roster import ROSTER_FIELDS, RosterEntry
from ...io import atomic_csv, atomic_text, printable
from ...release import SOURCE
from ...validation import time_or_none
from ..archive import CollectLimits, _Candidate, _folder_name, _Identity, _Member, safe_student
from ..claims import _check_roster
from ..collected import CollectResult
from ..pipeline import _check_out, _Course, _make_out, _pipeline

__all__ = [
    "BACKOFF",
    "EXTRA",
    "RATE_LIMIT_RETRIES",
    "RETRY_AFTER_MAX",
    "TIMEOUT",
    "TOKEN_VARIABLE",
    "CanvasError",
    "connect",
    "pull",
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


class CanvasError(Exception):
    """Canvas could not be used: the message is one line saying what and what to do (never the token)."""


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


def roster_entries(users: Iterable[Mapping[str, Any]], sections: Mapping[int, str]) -> list[RosterEntry]:
    """The roster of Canvas's users (``GET /courses/:id/users?include[]=enrollments``), in the order given.

    A student's id is her login id (``login_id``, Canvas's SIS Login ID), else her ``sis_user_id``, else her
    Canvas user id, as :func:`~.roster.read_roster` reads Canvas's gradebook export; an id that is no safe
    folder name (:func:`~.archive.safe_student`), that another student has (in any case) or that is the name of a
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
