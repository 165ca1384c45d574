"""Reading an LMS's download without trusting it: the part every platform shares.

This module holds the safe reading of an input (zip members and folder entries, capped by :class:`CollectLimits`,
counted by :class:`_Budget`), the people and members it is made of (:class:`_Identity`, :class:`_Member`,
:class:`_Candidate`), safe folder names (:func:`safe_student`) and the numbering the LMS and the browser add to a
file name. Each platform's format is read by its own module, :mod:`~dpcourse.classroom.lms.canvas.download`,
:mod:`~dpcourse.classroom.lms.gradescope.export` and :mod:`~dpcourse.classroom.lms.folders`; which file is kept and
where it goes is the pipeline's (:mod:`~dpcourse.classroom.lms.pipeline`). The formats:

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
"""

from __future__ import annotations

import re
import stat
import struct
import unicodedata
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from ..grading.plan import MAX_NOTEBOOK_BYTES
from ..io import printable

__all__ = ["CollectError", "CollectLimits", "safe_student"]


REPORT = "collected.csv"  # the collection's own CSV, which no student folder may be called

_MB = 1_000_000

_DIRECTORY_ENTRY_BYTES = 1_024  # a central directory may average this much per file it is allowed to list

_MAX_SUBMITTERS = 100  # people in one Gradescope submission

_MAX_ID = 256  # characters of a sid, an e-mail or a name from the metadata

UNSAFE = "unsafe path"

LINK = "a link (links are not followed)"

NOT_UTF8 = "its name is not UTF-8"


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
