"""What an LMS's export means, and reading it without trusting it: the input side of :mod:`.collect`.

This module holds the readers of each input's format (what a member's name and the export's metadata say
about who submitted which notebook, when, and whether late), the numbering the LMS and the browser add to a
file name, and the safe reading of the input itself: zip members and folder entries, capped by
:class:`CollectLimits`. It decides nothing about which file is kept or where it goes; that is the pipeline in
:mod:`.collect`, which alone imports the underscored names here. The formats:

- **canvas**: the zip of *Download Submissions*. Its members are flat and named, by Canvas's
  ``ContentZipper`` (canvas-lms ``lib/content_zipper.rb``), ``<sortable name>[_LATE]_<user id>_<file id>_<the
  name the student uploaded>``: the sortable name ("Doe, Jane") lower-cased with every ``_<digits>_`` joined
  and everything but word characters removed (``doejane``), so ``LATE`` and the ids are Canvas's own; ``anon_<id>``
  in place of name and user id when grading is anonymous; ``/ \\ : * ? " < > |`` in the uploaded name become ``_``.
  A text or URL submission is ``<…>_<user id>_text.html`` (``_link.html``). A quiz's file uploads
  (``Quizzes::QuizSubmissionZipper``, a download of its own) are ``<name><user id>_question_<question id>_<file
  id>_<file>``, without a late mark. The uploaded name is the student's and may hold anything, ``_question_``
  and ids included, so a member is read **from the left**, as Canvas itself reads its ids back: the first token
  (between ``_``) of ASCII digits is the user id and the next must be the file id. Which of the three layouts
  an archive has is decided once for the archive (quiz or anonymous only when every Canvas-named member reads
  so), never member by member: a student cannot make her member read as another layout. Canvas renames a file
  uploaded again under the same name ``name-1.ipynb`` (``Attachment.make_unique_filename``); a student can type
  that too, so it only helps to recognise the notebook. The file id (attachment ids grow with time) says which
  file Canvas received last. The zip says ``LATE``, never when: the times are in the JSON of Canvas's
  submissions API (``GET /api/v1/courses/:course_id/assignments/:assignment_id/submissions``, a list of
  Submission objects), read by :func:`_read_canvas_submissions` as hostile input (the metadata's byte cap, strict
  types, one entry per ``user_id``, one assignment); an entry's ``submitted_at`` is the time of the files its
  ``user_id`` (matched exactly to the user id in the member's name) has in the zip, which holds only each
  student's latest attempt.
- **gradescope**: the zip of *Export Submissions*: ``submission_metadata.yml`` and one folder per submission
  (``submission_<id>/``), possibly under one top folder (``assignment_<id>_export/``). The metadata maps each
  folder to Ruby-symbol keys: ``:submitters`` (a list of ``:name``, ``:sid``, ``:email``), ``:created_at`` (the
  submission time, ``2026-04-26 17:34:00.861687000 Z``), ``:score``, ``:history`` (earlier submissions). It
  carries no late mark: ``due=`` (``--due``) makes one from the submission time. Every member of a group gets
  the group's file. A person is their ``:sid`` and ``:email`` (never the ``:name``); the submission time, then
  the submission id, says which Gradescope received last. The metadata is read by a YAML loader with caps on
  bytes, nodes, nesting, aliases and time, that refuses merge keys (``<<``, which Ruby's Psych never writes).
- **folders**: today's layout ``DIR/<student>/*.ipynb``, with the browser's duplicates (``name (1).ipynb``),
  Jupyter's copies (``name-Copy1.ipynb``) and Windows Explorer's (``name - Copy (2).ipynb``). Links are never
  followed. The file's modification time says which is latest, as ``grade`` decides (:func:`.plan.pick_graded`).

**The input is hostile.** Every file of the input is a member, and a member that is a link, has a ``..`` or
absolute path or a name that is not UTF-8, is not a regular file or is encrypted carries a problem (its row's
note) and is never opened. A member's bytes are counted as they are read, not as the archive's header says,
against the cap on one file and on one student's files. An input is measured before anything is read from it:
a zip's central directory is walked as :mod:`zipfile` is about to parse it (its size and its real number of
entries, whatever the end record says) and a folder is listed entry by entry, and one over
:attr:`CollectLimits.max_files` is refused, as is an input whose students' notebooks would make the collector
read more than :attr:`CollectLimits.max_total_bytes` (:class:`CollectError`, before anything is written).

Longer than 400 lines because the three formats' readers and the safe reading of an input share its member,
identity and budget types; each format's reading is its own small section.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import struct
import time
import unicodedata
import zipfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any

from yaml import YAMLError  # type: ignore[import-untyped]
from yaml.composer import Composer  # type: ignore[import-untyped]
from yaml.constructor import SafeConstructor  # type: ignore[import-untyped]
from yaml.events import AliasEvent  # type: ignore[import-untyped]
from yaml.nodes import MappingNode, ScalarNode, SequenceNode  # type: ignore[import-untyped]
from yaml.resolver import Resolver  # type: ignore[import-untyped]

from ..grading.plan import MAX_NOTEBOOK_BYTES
from ..io import printable
from ..validation import time_or_none

try:  # libyaml's parser for the events; the nodes are composed here, with the limits
    from yaml.cyaml import CParser  # type: ignore[import-untyped]

    _PARSER_BASES: tuple[type, ...] = (CParser,)

    def _start_parser(loader: Any, text: str) -> None:
        CParser.__init__(loader, text)

except ImportError:  # PyYAML without libyaml: its pure-Python reader, scanner and parser
    from yaml.parser import Parser  # type: ignore[import-untyped]
    from yaml.reader import Reader  # type: ignore[import-untyped]
    from yaml.scanner import Scanner  # type: ignore[import-untyped]

    _PARSER_BASES = (Reader, Scanner, Parser)

    def _start_parser(loader: Any, text: str) -> None:
        Reader.__init__(loader, text)
        Scanner.__init__(loader)
        Parser.__init__(loader)


__all__ = ["CollectError", "CollectLimits", "safe_student"]

REPORT = "collected.csv"  # the collection's own CSV, which no student folder may be called
METADATA = "submission_metadata.yml"
METADATA_NOTE = "Gradescope's metadata (read; not a submission)"
_MB = 1_000_000
_DIRECTORY_ENTRY_BYTES = 1_024  # a central directory may average this much per file it is allowed to list
_MAX_SUBMITTERS = 100  # people in one Gradescope submission
_MAX_ID = 256  # characters of a sid, an e-mail or a name from the metadata

UNSAFE = "unsafe path"
LINK = "a link (links are not followed)"
NOT_UTF8 = "its name is not UTF-8"
NOT_CANVAS = "not named like Canvas's download (<name>[_LATE]_<user id>_<file id>_<file>)"


class CollectError(ValueError):
    """An input that cannot be collected at all (unreadable archive, not the LMS's format, a full ``--out``)."""


@dataclass(frozen=True)
class CollectLimits:
    """Caps on what one input may make the collector read.

    The first three caps are the whole input's and refuse it up front (:class:`CollectError`, nothing
    written); the per-student caps leave one student's surplus listed, not read, and never touch a classmate.

    Parameters
    ----------
    max_files : int
        Entries of the input (a zip's central directory, counted by walking it; a folder's files and folders):
        more and the input is refused. The central directory may hold 1,024 bytes per entry allowed.
    max_file_bytes : int
        Bytes one file may hold, counted as read (a zip's header may lie).
    max_total_bytes : int
        Bytes the students' notebooks may make the collector read in all, each student's counted up to the
        per-student caps: an input that would need more is refused.
    max_student_files : int
        Notebook files (``.ipynb``) read per student (a group submission counts as its group's); the
        student's older ones (in the LMS's order) beyond it are listed, not read.
    max_student_bytes : int
        Bytes read from one student's files; once over, the rest of that student's files are listed, not read.
    max_metadata_bytes : int
        Bytes of Gradescope's ``submission_metadata.yml``, and of each JSON file of Canvas's submissions API.
    max_metadata_nodes : int
        YAML nodes (scalars, lists, mappings, aliases) in the metadata; JSON values in a file of Canvas's
        submissions API.
    max_metadata_depth : int
        Nesting of lists and mappings in the metadata.
    max_metadata_aliases : int
        YAML aliases (``*name``) in the metadata; merge keys (``<<``) are refused whatever their number.
    metadata_seconds : float
        Seconds the metadata may take to read.
    """

    max_files: int = 50_000
    max_file_bytes: int = MAX_NOTEBOOK_BYTES
    max_total_bytes: int = 10_000_000_000
    max_student_files: int = 100
    max_student_bytes: int = 250_000_000
    max_metadata_bytes: int = 32_000_000
    max_metadata_nodes: int = 2_000_000
    max_metadata_depth: int = 32
    max_metadata_aliases: int = 10_000
    metadata_seconds: float = 60.0

    def __post_init__(self) -> None:
        for name in (
            "max_files",
            "max_file_bytes",
            "max_total_bytes",
            "max_student_files",
            "max_student_bytes",
            "max_metadata_bytes",
            "max_metadata_nodes",
            "max_metadata_depth",
            "max_metadata_aliases",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        seconds = self.metadata_seconds
        if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0 < seconds < float("inf"):
            raise ValueError(f"metadata_seconds must be a positive number of seconds; got {seconds!r}")


# --------------------------------------------------------------------------- names


def _shown(text: str) -> str:
    """A name as printed and written to the CSV: NFC, control characters escaped (a newline cannot forge a row),
    and lone surrogates (what Python makes of a file name's bytes that are not UTF-8) escaped too."""
    return _SURROGATE.sub(lambda found: f"\\u{ord(found[0]):04x}", printable(unicodedata.normalize("NFC", text)))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text).strip()


def safe_student(text: str) -> str | None:
    """``text`` (NFC-normalised) when it is safe as one folder name, else None.

    Safe: not empty, at most 128 characters, no path separator (``/`` or ``\\``), no control, format,
    surrogate, private-use or unassigned character, not starting with a dot (no ``..``, no hidden folder)
    and not the name of the collection's own CSV (``collected.csv``, in any case).

    Parameters
    ----------
    text : str
        A student id or a name from an LMS (anything else is turned into a string first).

    Returns
    -------
    str or None
        ``text`` NFC-normalised and stripped of surrounding white space, when that is safe; else None.

    Examples
    --------
    >>> safe_student("Zoë"), safe_student("../alice"), safe_student(".hidden")
    ('Zoë', None, None)
    """
    name = unicodedata.normalize("NFC", str(text)).strip()
    if not name or len(name) > 128 or name.startswith(".") or name.lower() == REPORT:
        return None
    if any(ch in "/\\" or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn") for ch in name):
        return None
    return name


def _folder_name(text: str, fallback: str) -> str:
    """An LMS name made a safe folder name: letters, digits and ``._-@+`` kept, any other run becomes ``_``."""
    name = unicodedata.normalize("NFC", str(text)).strip()
    name = re.sub(r"[^\w.@+-]+", "_", name).strip("._-")[:64]
    return safe_student(name) or fallback


_DUPLICATES = (  # each linear in the name's length (a student's name may be 64 kB)
    re.compile(r"\((\d+)\)$"),  # the browser's "name (1)" (the space before it is stripped below)
    re.compile(r"-Copy(\d*)$", re.IGNORECASE),  # Jupyter's "Make a Copy": name-Copy1
    re.compile(r" - Copy(?: \((\d+)\))?$", re.IGNORECASE),  # Windows Explorer's "name - Copy (2)"
)
_RESUBMISSION = re.compile(r"-(\d+)$")  # Canvas's name-1 for a file uploaded again under the same name


@dataclass(frozen=True)
class _Match:
    notebook: str
    resubmission: int = 0
    duplicate: int = 0


def _match_name(uploaded: str, stems: dict[str, str], *, resubmissions: bool) -> _Match | None:
    """The course notebook a file name means, allowing for the LMS's and the browser's numbering."""
    name = unicodedata.normalize("NFC", uploaded)
    if not name.lower().endswith(".ipynb"):
        return None
    stem, resubmission, duplicate = name[: -len(".ipynb")], 0, 0
    for _ in range(4):
        if stem.lower() in stems:
            return _Match(stems[stem.lower()], resubmission, duplicate)
        for pattern in _DUPLICATES:
            found = pattern.search(stem)
            if found:
                duplicate += int(found.group(1) or 1)
                stem = stem[: found.start()].rstrip()
                break
        else:
            found = _RESUBMISSION.search(stem) if resubmissions and not resubmission else None
            if not found:
                return None
            resubmission, stem = int(found.group(1)), stem[: found.start()]
    return None


# --------------------------------------------------------------------------- members of an input


class _Skip(Exception):
    """A file not collected; the message is the row's note."""


@dataclass
class _Member:
    """One file of the input, before it is interpreted."""

    name: str
    position: int
    open: Callable[[], IO[bytes]] | None = None
    size: int = 0
    mtime: float = 0.0
    problem: str = ""
    folder: str = ""  # a folder input's student folder, as the disk names it


@dataclass(frozen=True)
class _Identity:
    """Who the LMS says a file is from.

    ``key`` is unique per person and made only of what the LMS wrote and the student cannot choose (Canvas's
    user id, Gradescope's sid and e-mail, a folder's own name); ``name`` is the folder name made from the LMS
    and ``suffix`` what tells two people of the same ``name`` apart.
    """

    key: str
    name: str
    label: str
    canvas_id: str = ""
    sid: str = ""
    email: str = ""
    suffix: str = ""


@dataclass
class _Candidate:
    """A member read as a submission: its uploaded name, who, when, and the LMS's order (larger: received later)."""

    member: _Member
    uploaded: str
    people: list[_Identity]
    submitted_at: datetime | None = None
    late: bool | None = None
    order: tuple[float, ...] = ()

    @property
    def owner(self) -> str:
        """Whose caps the file counts against: its person, or its group's people together."""
        return "\n".join(sorted({who.key for who in self.people}))

    @property
    def notebook_like(self) -> bool:
        """Whether the collector may read the file (only ``.ipynb`` files are ever opened)."""
        return self.uploaded.lower().endswith(".ipynb")


def _stream(member: _Member, cap: int, sink: Callable[[bytes], object], counted: Callable[[int], None]) -> int:
    """Stream ``member`` into ``sink``, at most ``cap`` bytes (:class:`_Skip` past it), ``counted`` per chunk."""
    too_big = f"larger than {cap / _MB:g} MB"
    if member.open is None:
        raise _Skip("not readable")
    if member.size > cap:
        raise _Skip(too_big)
    total = 0
    try:
        with member.open() as stream:
            while chunk := stream.read(1 << 16):
                total += len(chunk)
                if total > cap:
                    raise _Skip(too_big)
                counted(len(chunk))
                sink(chunk)
    except _Skip:
        raise
    except Exception as err:  # noqa: BLE001 - a corrupt member (zlib, bz2, lzma, zipfile's own errors) is its row
        raise _Skip(f"unreadable ({type(err).__name__}: {str(err)[:80]})") from None
    return total


class _Budget:
    """The bytes left to read: per student (the owner of :class:`_Candidate`) and, as a last guard, in all.

    A member is charged once, however often it is read (by its cells, then to be written).
    """

    def __init__(self, limits: CollectLimits) -> None:
        self.limits = limits
        self.left = limits.max_total_bytes
        self.student_left: dict[str, int] = {}
        self.charged: set[int] = set()

    def read(self, member: _Member, sink: Callable[[bytes], object], owner: str) -> int:
        """Stream ``member`` into ``sink``; :class:`_Skip` when it is over a cap or unreadable."""
        limits = self.limits
        over_student = f"not read: this student's files are over {limits.max_student_bytes / _MB:g} MB"
        over_total = f"not read: the input's total is over {limits.max_total_bytes / _MB:g} MB"
        charge = member.position not in self.charged
        left = self.student_left.setdefault(owner, limits.max_student_bytes)
        if charge and left <= 0:
            raise _Skip(over_student)
        if charge and self.left <= 0:
            raise _Skip(over_total)
        self.charged.add(member.position)

        def counted(size: int) -> None:
            if not charge:
                return
            self.student_left[owner] -= size
            self.left -= size
            if self.student_left[owner] < 0:
                raise _Skip(over_student)
            if self.left < 0:
                raise _Skip(over_total)

        return _stream(member, limits.max_file_bytes, sink, counted)


def _projected_bytes(candidates: list[_Candidate], limits: CollectLimits) -> dict[str, int]:
    """Per owner, the most the collector may read of the notebooks it is allowed to read (as declared)."""
    found: dict[str, int] = {}
    for candidate in candidates:
        size = candidate.member.size
        if candidate.notebook_like and size <= limits.max_file_bytes:
            found[candidate.owner] = min(limits.max_student_bytes, found.get(candidate.owner, 0) + size)
    return found


def _zip_name(info: zipfile.ZipInfo) -> tuple[str, bool]:
    """The member's name as its writer meant it, and whether that is valid UTF-8.

    A name without the UTF-8 flag was decoded by :mod:`zipfile` as CP437; many writers put UTF-8 there without
    the flag, so the bytes are read back and tried as UTF-8 first.
    """
    if info.flag_bits & 0x800:
        return info.filename, True
    raw = info.filename.encode("cp437")
    try:
        return raw.decode("utf-8"), True
    except UnicodeDecodeError:
        return raw.decode("utf-8", "backslashreplace"), False


def _unsafe(name: str) -> bool:
    parts = name.split("/")
    return name.startswith(("/", "\\")) or bool(re.match(r"[A-Za-z]:", name)) or "\\" in name or ".." in parts


def _zip_members(archive: zipfile.ZipFile) -> list[_Member]:
    members: list[_Member] = []
    for info in archive.infolist():
        if info.is_dir():
            continue
        name, utf8 = _zip_name(info)
        member = _Member(_shown(name), len(members), size=info.file_size)
        mode = info.external_attr >> 16 if info.create_system == 3 else 0
        if not utf8:
            member.problem = NOT_UTF8
        elif _unsafe(name) or "\x00" in name:
            member.problem = UNSAFE
        elif stat.S_ISLNK(mode):
            member.problem = LINK
        elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):
            member.problem = "not a regular file"
        elif info.flag_bits & 0x1:
            member.problem = "encrypted"
        else:
            member.open = _zip_opener(archive, info)
        members.append(member)
    return members


def _zip_opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], IO[bytes]]:
    return lambda: archive.open(info)


class _TooLarge(Exception):
    """An input over a whole-input cap; the message says which."""


_CENTRAL = b"PK\x01\x02"
_CENTRAL_SIZE = 46


class _MeasuredFile:
    """The archive's file as :mod:`zipfile` reads it. While the directory is being parsed, the read of the central
    directory (the bytes :mod:`zipfile` is about to turn into one object per entry) is first measured: its size,
    then its entries walked one header at a time, without keeping them, up to one past the cap."""

    def __init__(self, handle: IO[bytes], limits: CollectLimits) -> None:
        self._handle = handle
        self._limits = limits
        self.measuring = True

    def read(self, n: int | None = -1) -> bytes:
        if self.measuring and n is not None and n >= _CENTRAL_SIZE:
            start = self._handle.tell()
            if self._handle.read(4) == _CENTRAL:
                self._measure(start, n)
            self._handle.seek(start)
        return self._handle.read(-1 if n is None else n)

    def _measure(self, start: int, size: int) -> None:
        cap = self._limits.max_files
        if size > cap * _DIRECTORY_ENTRY_BYTES:
            raise _TooLarge(f"its central directory is {size:,} bytes, more than {cap:,} files can take")
        position, end, entries = start, start + size, 0
        while position < end:
            self._handle.seek(position)
            header = self._handle.read(_CENTRAL_SIZE)
            if len(header) < _CENTRAL_SIZE or header[:4] != _CENTRAL:
                return  # zipfile refuses a broken directory itself
            entries += 1
            if entries > cap:
                raise _TooLarge(f"it lists more than {cap:,} files (cap: {cap:,})")
            name, extra, comment = struct.unpack_from("<3H", header, 28)
            position += _CENTRAL_SIZE + name + extra + comment

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._handle.seek(offset, whence)

    def tell(self) -> int:
        return self._handle.tell()

    def seekable(self) -> bool:
        return True

    def close(self) -> None:
        self._handle.close()


@contextmanager
def _open_zip(path: Path | str, limits: CollectLimits) -> Iterator[zipfile.ZipFile]:
    """The zip at ``path``, its directory measured before :mod:`zipfile` parses it; :class:`CollectError` when it
    cannot be read as a zip or is over :attr:`CollectLimits.max_files`."""
    try:
        handle = open(path, "rb")  # closed below, after the archive
    except OSError as err:
        raise CollectError(f"{path}: not a readable zip archive ({type(err).__name__}: {str(err)[:120]})") from None
    try:
        measured = _MeasuredFile(handle, limits)
        try:
            archive = zipfile.ZipFile(measured)
        except _TooLarge as err:
            raise CollectError(f"{path}: refused before reading: {err}") from None
        except (zipfile.BadZipFile, OSError, UnicodeDecodeError, ValueError, EOFError, struct.error) as err:
            raise CollectError(f"{path}: not a readable zip archive ({type(err).__name__}: {str(err)[:120]})") from None
        measured.measuring = False
        if len(archive.filelist) > limits.max_files:  # a zipfile that read its directory another way
            raise CollectError(f"{path}: refused: it lists more than {limits.max_files:,} files")
        with archive:
            yield archive
    finally:
        handle.close()


# --------------------------------------------------------------------------- Canvas


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


# --------------------------------------------------------------------------- Gradescope


class _MetadataRefused(Exception):
    """Metadata over a cap of :class:`CollectLimits`, or using merge keys; the message says which."""


_MERGE = "tag:yaml.org,2002:merge"
_NULL = "tag:yaml.org,2002:null"


class _LimitedComposer(Composer):
    """PyYAML's composer, counting as it goes: nodes, aliases, nesting, time; merge keys refused."""

    def limit(self, limits: CollectLimits) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.metadata_seconds
        self.nodes = self.aliases = self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        limits = self.limits
        if time.monotonic() > self.deadline:
            raise _MetadataRefused(f"took more than {limits.metadata_seconds:g} s to read")
        self.nodes += 1
        if self.nodes > limits.max_metadata_nodes:
            raise _MetadataRefused(f"has more than {limits.max_metadata_nodes:,} YAML nodes")
        if self.check_event(AliasEvent):
            self.aliases += 1
            if self.aliases > limits.max_metadata_aliases:
                raise _MetadataRefused(f"has more than {limits.max_metadata_aliases:,} YAML aliases")
            return super().compose_node(parent, index)
        self.depth += 1
        try:
            if self.depth > limits.max_metadata_depth:
                raise _MetadataRefused(f"is nested deeper than {limits.max_metadata_depth} levels")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def compose_mapping_node(self, anchor: Any) -> Any:
        node = super().compose_mapping_node(anchor)
        if any(key.tag == _MERGE for key, _ in node.value):
            raise _MetadataRefused("uses YAML merge keys (<<), which Gradescope never writes")
        return node


class _MetadataLoader(_LimitedComposer, *_PARSER_BASES, SafeConstructor, Resolver):  # type: ignore[misc]
    """A YAML loader that only composes nodes (with :class:`_LimitedComposer`'s limits); nothing is constructed
    but the few scalars read from them."""

    def __init__(self, text: str, limits: CollectLimits) -> None:
        _start_parser(self, text)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.limit(limits)


@dataclass(frozen=True)
class _Submission:
    """One folder of the export, as its metadata describes it."""

    people: list[_Identity]
    created_at: datetime | None
    number: int

    @property
    def order(self) -> tuple[float, ...]:
        when = self.created_at
        if when is not None and when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return (when.timestamp() if when else float("-inf"), self.number)


def _text(node: Any) -> str | None:
    """A scalar's text as written (``'0012'`` stays ``0012``), at most :data:`_MAX_ID` characters; else None."""
    if not isinstance(node, ScalarNode) or node.tag == _NULL or not isinstance(node.value, str):
        return None
    return node.value if len(node.value) <= _MAX_ID else None


def _fields(node: Any) -> dict[str, Any]:
    """A mapping node's values by key, ``:key`` (Ruby's symbols) and ``key`` alike; the first of a repeated key."""
    found: dict[str, Any] = {}
    for key, value in node.value if isinstance(node, MappingNode) else ():
        name = _text(key)
        if name is not None:
            found.setdefault(name.removeprefix(":"), value)
    return found


def _created_at(node: Any) -> datetime | None:
    """A scalar time, or Ruby's ``ActiveSupport::TimeWithZone`` object (its ``utc`` field)."""
    if isinstance(node, MappingNode):
        return time_or_none(_text(_fields(node).get("utc")), zone=UTC)
    return time_or_none(_text(node), zone=UTC)


def _submitter(node: Any, folder: str) -> _Identity | None:
    fields = _fields(node)
    name, sid, email = (_nfc(_text(fields.get(k)) or "") for k in ("name", "sid", "email"))
    sid, email = (value if _shown(value) == value else "" for value in (sid, email))  # no escapes in an id
    if not sid and not email:
        return None  # a name alone is the student's own to choose: never an identity
    email = email.casefold()
    local = email.split("@", 1)[0]
    label = f"{_shown(name) or '?'} (sid {sid or '?'}, {email or 'no email'})"
    base = _folder_name(local or sid, f"gradescope_{folder}")
    return _Identity(f"gradescope:{sid}\n{email}", base, label, sid=sid, email=email, suffix=sid or email)


def _submission(folder: str, node: Any) -> _Submission | str:
    fields = _fields(node)
    submitters = fields.get("submitters")
    if not isinstance(submitters, SequenceNode) or not submitters.value:
        return f"no submitter for {folder!r} in {METADATA}"
    if len(submitters.value) > _MAX_SUBMITTERS:
        return f"more than {_MAX_SUBMITTERS} submitters for {folder!r} in {METADATA}"
    people = [who for entry in submitters.value if (who := _submitter(entry, folder)) is not None]
    if not people:
        return f"no submitter with a sid or e-mail for {folder!r} in {METADATA}"
    number = re.fullmatch(r"submission_([0-9]{1,18})", folder)
    return _Submission(people, _created_at(fields.get("created_at")), int(number[1]) if number else 0)


def _read_metadata(members: list[_Member], limits: CollectLimits) -> tuple[str, dict[str, _Submission | str]]:
    """The export's top folder and, per submission folder, who and when (or why not); :class:`CollectError`
    when there is no metadata, it is over a cap, or it is not YAML."""
    found = [
        m for m in members if PurePosixPath(m.name).name == METADATA and not m.problem and "__MACOSX" not in m.name
    ]
    if not found:
        raise CollectError(f"no {METADATA} in the archive: not Gradescope's Export Submissions")
    top = min(m.name.count("/") for m in found)
    member, *others = [m for m in found if m.name.count("/") == top]
    if others:
        raise CollectError(f"two {METADATA} at the top of the archive ({member.name}, {others[0].name})")
    chunks: list[bytes] = []
    cap = limits.max_metadata_bytes
    try:
        _stream(member, cap, chunks.append, lambda size: None)
        loader = _MetadataLoader(b"".join(chunks).decode("utf-8"), limits)
        root = loader.get_single_node()
    except _Skip as err:
        raise CollectError(f"{member.name}: {err}") from None
    except _MetadataRefused as err:
        raise CollectError(f"{member.name}: refused: it {err}") from None
    except (YAMLError, UnicodeDecodeError, RecursionError, TypeError, ValueError) as err:
        raise CollectError(f"{member.name}: not readable YAML ({type(err).__name__})") from None
    if not isinstance(root, MappingNode):
        raise CollectError(f"{member.name}: not a mapping of submission folders")
    submissions: dict[str, _Submission | str] = {}
    for key, node in root.value:
        folder = _text(key)
        if folder is not None:
            twice = f"folder {folder!r} is listed twice in {METADATA}"
            submissions[folder] = twice if folder in submissions else _submission(folder, node)
    member.problem = METADATA_NOTE
    parent = str(PurePosixPath(member.name).parent)
    return ("" if parent == "." else parent + "/"), submissions


def _gradescope(
    member: _Member, root: str, submissions: dict[str, _Submission | str], due: datetime | None
) -> _Candidate | str:
    if member.name.startswith("__MACOSX/") or PurePosixPath(member.name).name.startswith("._"):
        return "macOS metadata (__MACOSX, ._ files)"
    if not member.name.startswith(root):
        return "outside the export's folder"
    folder = member.name[len(root) :].split("/", 1)[0]
    submission = submissions.get(folder)
    if submission is None:
        return f"folder {folder!r} is not in {METADATA}"
    if isinstance(submission, str):
        return submission
    when = submission.created_at
    late = None
    if when is not None and due is not None and (when.tzinfo is None) == (due.tzinfo is None):
        late = when > due
    uploaded = PurePosixPath(member.name).name
    return _Candidate(member, uploaded, list(submission.people), when, late, submission.order)


# --------------------------------------------------------------------------- folders


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _opener(root_fd: int, student: str, name: str) -> Callable[[], IO[bytes]]:
    """Open ``student/name`` under the input folder without following a link at either step."""

    def open_file() -> IO[bytes]:
        folder = os.open(student, _DIRECTORY, dir_fd=root_fd)
        try:
            fd = os.open(name, _FILE, dir_fd=folder)
        finally:
            os.close(folder)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError("not a regular file")
        return os.fdopen(fd, "rb")

    return open_file


@dataclass
class _Listing:
    """Entries of the input folder counted as they are listed; over the cap, the input is refused."""

    root: Path
    cap: int
    seen: int = 0
    members: list[_Member] = field(default_factory=list)

    def entries(self, path: str) -> list[os.DirEntry[str]]:
        found = []
        with os.scandir(path) as listing:
            for entry in listing:
                self.seen += 1
                if self.seen > self.cap:
                    raise CollectError(f"{self.root}: refused: it holds more than {self.cap:,} files and folders")
                found.append(entry)
        return sorted(found, key=lambda e: e.name)

    def add(self, name: str, problem: str = "", **kwargs: Any) -> None:
        if _SURROGATE.search(name):  # bytes that are not UTF-8: listed, never opened
            problem, kwargs = problem or NOT_UTF8, {}
        self.members.append(_Member(_shown(name), len(self.members), problem=problem, **kwargs))


def _folder_members(root: Path, root_fd: int, limits: CollectLimits) -> list[_Member]:
    listing = _Listing(root, limits.max_files)
    for top in listing.entries(str(root)):
        if top.is_symlink():
            listing.add(top.name, LINK)
        elif not top.is_dir(follow_symlinks=False):
            listing.add(top.name, "not inside a student's folder")
        else:
            _student_folder(listing, top, root_fd)
    return listing.members


def _student_folder(listing: _Listing, top: os.DirEntry[str], root_fd: int) -> None:
    """List one student's folder and its subfolders (depth first, never through a link)."""
    pending = [(top.path, top.name)]
    while pending:
        path, relative = pending.pop()
        try:
            entries = listing.entries(path)
        except OSError as err:
            listing.add(f"{relative}/", f"not readable ({type(err).__name__})")
            continue
        folders = []
        for entry in entries:
            shown = f"{relative}/{entry.name}"
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as err:
                listing.add(shown, f"not readable ({type(err).__name__})")
                continue
            if stat.S_ISDIR(info.st_mode):
                folders.append((entry.path, shown))
            elif stat.S_ISLNK(info.st_mode):
                listing.add(shown, LINK)
            elif relative != top.name:
                listing.add(shown, "inside a subfolder of the student's folder")
            elif not stat.S_ISREG(info.st_mode):
                listing.add(shown, "not a regular file")
            else:
                opener = _opener(root_fd, top.name, entry.name)
                listing.add(shown, open=opener, size=info.st_size, mtime=info.st_mtime, folder=top.name)
        pending.extend(reversed(folders))


def _folders(member: _Member) -> _Candidate | str:
    if "/" not in member.name:
        return member.problem or "not inside a student's folder"
    student, name = member.name.split("/", 1)
    safe = safe_student(student)
    if safe is None:
        return f"{UNSAFE}: the student folder's name is not a safe folder name"
    who = _Identity(f"folder:{member.folder or student}", safe, safe)
    return _Candidate(member, name, [who], order=(member.mtime,))
