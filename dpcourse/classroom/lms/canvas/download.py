"""Canvas's download, read without trusting it: the members of *Download Submissions* and the submissions API's JSON.

Canvas's ``ContentZipper`` (canvas-lms ``lib/content_zipper.rb``) names each member
``<sortable name>[_LATE]_<user id>_<attachment id>_<file name>`` (``LATE`` when handed in after the due time; an
anonymous assignment writes ``anon_<id>`` for the name and the user id); ``Quizzes::QuizSubmissionZipper`` names a
quiz's file uploads after the question. The student is the user id in its fixed place, never the name the student
gave the file. ``--canvas-submissions`` gives the JSON of Canvas's submissions API: each ``user_id``'s
``submitted_at`` (ISO 8601 with its offset), checked field by field before use.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ...io import printable
from ...validation import time_or_none
from ..archive import _MB, CollectError, CollectLimits, _Candidate, _folder_name, _Identity, _Member

NOT_CANVAS = "not named like Canvas's download (<name>[_LATE]_<user id>_<file id>_<file>)"

# canvas-lms lib/content_zipper.rb (get_filename, sanitize_user_name, add_upload_submission, add_text_or_url) and
# app/models/quizzes/quiz_submission_zipper.rb (question_attachment_filename).
_ASCII_DIGITS = re.compile(r"[0-9]+")

_CANVAS_NAME = re.compile(r"\w*")

_CANVAS_ANONYMOUS = re.compile(r"(?P<late>LATE_)?anon_(?P<anon>[A-Za-z0-9]+)_(?P<rest>.+)", re.S)

_QUIZ_NAME = re.compile(r"[-\w]*")

_QUESTION = "_question_"

_TEXT_ENTRIES = ("text.html", "link.html")  # a text or URL submission: no file id


@dataclass(frozen=True)
class _CanvasName:
    """What Canvas wrote in a member's name."""

    user: str
    name: str
    upload: str
    file_id: int
    late: bool | None


def _canvas_assignment(member: str) -> _CanvasName | None:
    """``<name>[_LATE]_<user id>_<file id>_<upload>``, read from the left (the upload may hold anything)."""
    tokens = member.split("_")
    at = next((i for i, t in enumerate(tokens) if _ASCII_DIGITS.fullmatch(t)), None)
    if at is None or at + 1 >= len(tokens):
        return None
    before = tokens[:at]
    late = bool(before) and before[-1] == "LATE"
    name = "_".join(before[:-1] if late else before)
    if not _CANVAS_NAME.fullmatch(name):
        return None
    rest = tokens[at + 1 :]
    if len(rest) == 1 and rest[0] in _TEXT_ENTRIES:
        return _CanvasName(tokens[at], name, rest[0], 0, late)
    if len(rest) < 2 or not _ASCII_DIGITS.fullmatch(rest[0]) or not "_".join(rest[1:]):
        return None
    return _CanvasName(tokens[at], name, "_".join(rest[1:]), int(rest[0]), late)


def _canvas_anonymous(member: str) -> _CanvasName | None:
    """``[LATE_]anon_<anonymous id>_<file id>_<upload>``."""
    found = _CANVAS_ANONYMOUS.fullmatch(member)
    if not found:
        return None
    late, rest = bool(found["late"]), found["rest"]
    if rest in _TEXT_ENTRIES:
        return _CanvasName(f"anon_{found['anon']}", "", rest, 0, late)
    file_id, _, upload = rest.partition("_")
    if not _ASCII_DIGITS.fullmatch(file_id) or not upload:
        return None
    return _CanvasName(f"anon_{found['anon']}", "", upload, int(file_id), late)


def _canvas_quiz(member: str) -> _CanvasName | None:
    """``<name><user id>_question_<question id>_<file id>_<upload>``: no late mark.

    Read from the left, in one pass: the first ``_question_`` right after a digit ends the user id."""
    at = member.find(_QUESTION)
    while at != -1 and (at == 0 or member[at - 1] not in "0123456789"):
        at = member.find(_QUESTION, at + 1)
    if at == -1:
        return None
    head = member[:at]
    name = head.rstrip("0123456789")
    question, _, rest = member[at + len(_QUESTION) :].partition("_")
    file_id, _, upload = rest.partition("_")
    if not _QUIZ_NAME.fullmatch(name) or not upload:
        return None
    if not _ASCII_DIGITS.fullmatch(question) or not _ASCII_DIGITS.fullmatch(file_id):
        return None
    return _CanvasName(head[len(name) :], name, upload, int(file_id), None)


_CANVAS_LAYOUTS: dict[str, Callable[[str], _CanvasName | None]] = {
    "anonymous": _canvas_anonymous,
    "quiz": _canvas_quiz,
    "assignment": _canvas_assignment,
}


def _canvas_layout(members: list[_Member]) -> str:
    """The archive's layout: ``anonymous`` or ``quiz`` when every Canvas-named member reads so, else ``assignment``.

    Decided once for the archive: a member whose uploaded name mimics another layout reads in the archive's."""
    names = [m.name for m in members if not m.problem and "/" not in m.name]
    named = [n for n in names if any(read(n) for read in _CANVAS_LAYOUTS.values())]
    for layout in ("anonymous", "quiz"):
        if named and all(_CANVAS_LAYOUTS[layout](n) for n in named):
            return layout
    return "assignment"


def _canvas(member: _Member, layout: str, times: Mapping[str, datetime | None] | None = None) -> _Candidate | str:
    if "/" in member.name:
        return "not in Canvas's download (a folder inside the zip)"
    found = _CANVAS_LAYOUTS[layout](member.name)
    if found is None:
        return NOT_CANVAS
    if layout == "anonymous":
        who = _Identity(f"canvas:{found.user}", found.user, f"anonymous {found.user[5:]}", suffix=found.user)
    else:
        user = found.user
        label = f"canvas id {user} {found.name}".rstrip()
        folder = _folder_name(found.name, f"canvas_{user}")
        who = _Identity(f"canvas:{user}", folder, label, canvas_id=user, suffix=user)
    when = (times or {}).get(who.canvas_id) if who.canvas_id else None
    return _Candidate(member, found.upload, [who], submitted_at=when, late=found.late, order=(found.file_id,))


# The Submission object of Canvas's Submissions API (canvas-lms app/controllers/submissions_api_controller.rb,
# doc/api/submissions): the fields read, and the JSON types each may have (None: null).
_SUBMISSION_FIELDS: dict[str, tuple[type, ...]] = {
    "user_id": (int, str),
    "assignment_id": (int, str, type(None)),
    "submitted_at": (str, type(None)),
    "workflow_state": (str, type(None)),
    "late": (bool, type(None)),
    "seconds_late": (int, float, type(None)),
    "attempt": (int, type(None)),
}

_CANVAS_ID = re.compile(r"[0-9]{1,20}")  # an id as Canvas writes it (a number, or its digits with string ids)


def _read_canvas_submissions(paths: Sequence[Path | str], limits: CollectLimits) -> dict[str, datetime | None]:
    """Canvas user id → when its current submission was made (None: not submitted, or no time), from the JSON of
    Canvas's submissions API, one file per page; :class:`CollectError` naming the file and entry otherwise.

    Hostile input: each file at most :attr:`CollectLimits.max_metadata_bytes` and (counted before it is parsed, so
    that memory stays bounded) :attr:`CollectLimits.max_metadata_nodes` values, at most
    :attr:`CollectLimits.max_files` entries in all; a list of objects whose ``user_id`` (a number, or its digits)
    is unique and whose ``submitted_at`` is ISO 8601 with its offset (Canvas writes UTC, ``…Z``); the fields of
    :data:`_SUBMISSION_FIELDS` of their JSON types; no duplicate key, no ``NaN``; one ``assignment_id``.
    """
    times: dict[str, datetime | None] = {}
    assignments: dict[str, str] = {}
    for path in paths:
        for index, entry in enumerate(_canvas_submissions_json(path, limits)):
            where = f"--canvas-submissions {path}: entry {index}"
            if not isinstance(entry, dict):
                raise CollectError(f"{where}: not an object (a Canvas Submission), but {_json_type(entry)}")
            for name, kinds in _SUBMISSION_FIELDS.items():
                _check_field(entry, name, kinds, where)
            user = _canvas_number(entry["user_id"], f"{where}: user_id")
            if entry.get("assignment_id") is not None:
                assignments.setdefault(_canvas_number(entry["assignment_id"], f"{where}: assignment_id"), where)
            if user in times:
                raise CollectError(f"{where}: user_id {user} is listed twice")
            if len(times) >= limits.max_files:
                raise CollectError(f"{where}: more than {limits.max_files:,} submissions")
            submitted = entry.get("workflow_state") != "unsubmitted"
            times[user] = _canvas_time(entry.get("submitted_at"), f"{where}: submitted_at") if submitted else None
    if len(assignments) > 1:
        ids = ", ".join(sorted(assignments))
        raise CollectError(f"--canvas-submissions: submissions of several assignments ({ids}); give this zip's only")
    return times


def _canvas_submissions_json(path: Path | str, limits: CollectLimits) -> list[Any]:
    """One file of Canvas's submissions API read whole, within the byte cap: its list of entries."""
    where = f"--canvas-submissions {path}"
    cap = limits.max_metadata_bytes
    try:
        with open(path, "rb") as handle:
            data = handle.read(cap + 1)
    except OSError as err:
        raise CollectError(f"{where}: cannot be read ({err.strerror or type(err).__name__})") from None
    if len(data) > cap:
        raise CollectError(f"{where}: larger than {cap / _MB:g} MB (the cap on an LMS's metadata)")
    values = data.count(b",") + data.count(b"[") + data.count(b"{")  # at least the values less one: counted unparsed
    if values > limits.max_metadata_nodes:
        raise CollectError(
            f"{where}: refused before parsing: up to {values:,} JSON values, over the cap on an LMS's metadata of "
            f"{limits.max_metadata_nodes:,}"
        )
    try:
        found = json.loads(data.decode("utf-8-sig"), object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:  # json's errors are ValueErrors
        raise CollectError(f"{where}: not the JSON of Canvas's submissions API ({printable(str(err))[:200]})") from None
    if not isinstance(found, list):
        raise CollectError(f"{where}: not a list of submissions (Canvas's API gives a list), but {_json_type(found)}")
    return found


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        twice = next(key for i, (key, _) in enumerate(pairs) if key in dict(pairs[:i]))
        raise ValueError(f"the key {printable(twice)[:40]!r} is given twice in one object")
    return found


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_field(entry: dict[str, Any], name: str, kinds: tuple[type, ...], where: str) -> None:
    """:class:`CollectError` unless ``entry[name]`` (null when absent) is of one of ``kinds``."""
    value = entry.get(name)
    if _of_type(value, kinds):
        return
    given = "missing" if name not in entry else _json_type(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        given = repr(value)[:40]
    allowed = " or ".join(_json_type(k) for k in kinds)
    raise CollectError(f"{where}: {name} is {given} (allowed: {allowed})")


def _of_type(value: Any, kinds: tuple[type, ...]) -> bool:
    """Whether a JSON value is of one of ``kinds``: true/false is no number, a number is finite and not negative."""
    if isinstance(value, bool):
        return bool in kinds
    if isinstance(value, int | float):
        return isinstance(value, kinds) and math.isfinite(value) and value >= 0
    return isinstance(value, kinds)


def _json_type(value: Any) -> str:
    kind = value if isinstance(value, type) else type(value)
    names = {bool: "true/false", int: "a whole number ≥ 0", float: "a number ≥ 0", str: "a string", type(None): "null"}
    return names.get(kind, "a list" if kind is list else "an object" if kind is dict else kind.__name__)


def _canvas_number(value: int | str, where: str) -> str:
    """A Canvas id as the zip writes it: the number's digits (a string of digits is kept exactly as it is)."""
    text = str(value)
    if not _CANVAS_ID.fullmatch(text) or (isinstance(value, int) and value < 0):
        raise CollectError(f"{where}: {printable(text)[:40]!r} is not a Canvas id (allowed: up to 20 ASCII digits)")
    return text


def _canvas_time(value: str | None, where: str) -> datetime | None:
    """``submitted_at``: ISO 8601 with its offset (Canvas's ``2026-10-06T04:12:00Z``), in UTC; None for null."""
    if value is None:
        return None
    when = time_or_none(value) if _ASCII_TIME.fullmatch(value) else None
    if when is None:
        raise CollectError(
            f"{where}: {printable(value)[:40]!r} is not an ISO 8601 time with its offset (such as 2026-10-06T04:12:00Z)"
        )
    return when.astimezone(UTC)


_ASCII_TIME = re.compile(r"[0-9T:.+Z -]{10,40}")
