"""What an LMS's export means, and reading it without trusting it: the input side of :mod:`.collect`.

This module holds the readers of each input's format (what a member's name and the export's metadata say
about who submitted which notebook, when, and whether late), the numbering the LMS and the browser add to a
file name, and the safe reading of the input itself: zip members and folder entries, capped by
:class:`CollectLimits`. It decides nothing about which file is kept or where it goes; that is the pipeline in
:mod:`.collect`, which alone imports the underscored names here. The formats:

- **canvas**: the zip of *Download Submissions*. Its members are flat and named, by Canvas's
  ``ContentZipper`` (canvas-lms ``lib/content_zipper.rb``), ``<sortable name>[_LATE]_<user id>_<file id>_<the
  name the student uploaded>``: the sortable name ("Doe, Jane") lower-cased with everything but Unicode word
  characters removed (``doejane``); ``anon_<id>`` in place of name and user id when grading is anonymous;
  ``/ \\ : * ? " < > |`` in the uploaded name become ``_``. Canvas renames a file uploaded again under the same
  name ``name-1.ipynb``, ``name-2.ipynb`` (``Attachment.make_unique_filename``): that number orders
  resubmissions, then the file id (ids grow with time). A group assignment holds one file per group, under the
  student who submitted it. A quiz's file uploads (``Quizzes::QuizSubmissionZipper``) are named
  ``<name><user id>_question_<question id>_<file id>_<file>``, without a late mark.
- **gradescope**: the zip of *Export Submissions*: ``submission_metadata.yml`` and one folder per submission
  (``submission_<id>/``), possibly under one top folder (``assignment_<id>_export/``). The metadata maps each
  folder to Ruby-symbol keys: ``:submitters`` (a list of ``:name``, ``:sid``, ``:email``), ``:created_at`` (the
  submission time, ``2026-04-26 17:34:00.861687000 Z``), ``:score``, ``:history`` (earlier submissions). It
  carries no late mark: ``due=`` (``--due``) makes one from the submission time. Every member of a group gets
  the group's file.
- **folders**: today's layout ``DIR/<student>/*.ipynb``, with the browser's duplicates (``name (1).ipynb``),
  Jupyter's copies (``name-Copy1.ipynb``) and Windows Explorer's (``name - Copy (2).ipynb``). Links are never
  followed.

**The input is hostile.** Every file of the input is a member, and a member that is a link, has a ``..`` or
absolute path or a name that is not UTF-8, is not a regular file, is encrypted, or is beyond the file-count cap
carries a problem (its row's note) and is never opened. A member's bytes are counted as they are read, not as
the archive's header says, against the cap on one file and the budget of the whole input. An archive that
cannot be read as a whole, or whose directory lists far more files than the cap, raises :class:`CollectError`
before anything is written.

Longer than 400 lines because the three formats' readers and the safe reading of an input share its member,
identity and budget types; each format's reading is its own small section.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import IO, Any

import yaml  # type: ignore[import-untyped]

from .plan import MAX_NOTEBOOK_BYTES
from .reports import printable

__all__ = ["CollectError", "CollectLimits", "safe_student"]

REPORT = "collected.csv"  # the collection's own CSV, which no student folder may be called
METADATA = "submission_metadata.yml"
METADATA_NOTE = "Gradescope's metadata (read; not a submission)"
_MB = 1_000_000

UNSAFE = "unsafe path"
LINK = "a link (links are not followed)"
NOT_UTF8 = "its name is not UTF-8"


class CollectError(ValueError):
    """An input that cannot be collected at all (unreadable archive, not the LMS's format, a full ``--out``)."""


@dataclass(frozen=True)
class CollectLimits:
    """Caps on what one input may make the collector read.

    Parameters
    ----------
    max_files : int
        Files looked at (directories not counted); the rest are listed, not read.
    max_file_bytes : int
        Bytes one file may hold, counted as read (a zip's header may lie).
    max_total_bytes : int
        Bytes read from the whole input; once over, the remaining files are listed, not read.
    """

    max_files: int = 5_000
    max_file_bytes: int = MAX_NOTEBOOK_BYTES
    max_total_bytes: int = 2_000_000_000

    def __post_init__(self) -> None:
        for name in ("max_files", "max_file_bytes", "max_total_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")


# --------------------------------------------------------------------------- names


def _shown(text: str) -> str:
    """A name as printed and written to the CSV: NFC, control characters escaped (a newline cannot forge a row)."""
    return printable(unicodedata.normalize("NFC", text))


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


_DUPLICATES = (
    re.compile(r"\s*\((\d+)\)$"),  # the browser's "name (1)"
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
                stem = stem[: found.start()]
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
    tiebreak: float = 0.0
    problem: str = ""


@dataclass(frozen=True)
class _Identity:
    """Who the LMS says a file is from; ``key`` is unique per person, ``name`` a folder name made from the LMS."""

    key: str
    name: str
    label: str
    canvas_id: str = ""
    sid: str = ""
    email: str = ""


@dataclass
class _Candidate:
    """A member read as a submission: its uploaded name, who, when and the LMS's order."""

    member: _Member
    uploaded: str
    people: list[_Identity]
    submitted_at: datetime | None = None
    late: bool | None = None
    order: float = 0.0


class _Budget:
    """The bytes left to read from the whole input."""

    def __init__(self, limits: CollectLimits) -> None:
        self.limits = limits
        self.left = limits.max_total_bytes

    def read(self, member: _Member, sink: Callable[[bytes], object]) -> int:
        """Stream ``member`` into ``sink``; :class:`_Skip` when it is over a cap or unreadable."""
        over_total = f"not read: the input's total is over {self.limits.max_total_bytes // _MB} MB"
        if self.left <= 0:
            raise _Skip(over_total)
        cap = self.limits.max_file_bytes
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
                    self.left -= len(chunk)
                    if total > cap:
                        raise _Skip(too_big)
                    if self.left < 0:
                        raise _Skip(over_total)
                    sink(chunk)
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError) as err:
            raise _Skip(f"unreadable ({type(err).__name__}: {str(err)[:80]})") from None
        return total


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


def _zip_members(archive: zipfile.ZipFile, limits: CollectLimits) -> list[_Member]:
    members: list[_Member] = []
    for info in archive.infolist():
        if info.is_dir():
            continue
        name, utf8 = _zip_name(info)
        member = _Member(_shown(name), len(members), size=info.file_size, tiebreak=len(members))
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
        elif len(members) >= limits.max_files:
            member.problem = f"not read: the archive holds more than {limits.max_files} files"
        else:
            member.open = _zip_opener(archive, info)
        members.append(member)
    return members


def _zip_opener(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Callable[[], IO[bytes]]:
    return lambda: archive.open(info)


def _listed_entries(path: Path | str) -> int:
    """How many entries the archive's end-of-central-directory record (zip64's if there is one) says it holds.

    Read before :mod:`zipfile` parses the directory, which builds an object per entry; 0 when there is no record.
    """
    with open(path, "rb") as handle:
        handle.seek(0, os.SEEK_END)
        size = handle.tell()
        handle.seek(max(0, size - 65_557))  # the record (22 bytes) and its longest comment
        tail = handle.read()
        end = tail.rfind(b"PK\x05\x06")
        if end < 0 or len(tail) < end + 22:
            return 0
        entries = int.from_bytes(tail[end + 10 : end + 12], "little")
        locator = tail.rfind(b"PK\x06\x07", 0, end)
        if entries == 0xFFFF and locator >= 0:
            handle.seek(int.from_bytes(tail[locator + 8 : locator + 16], "little"))
            record = handle.read(56)
            if record[:4] == b"PK\x06\x06" and len(record) == 56:
                entries = int.from_bytes(record[32:40], "little")
    return entries


def _open_zip(path: Path | str, limits: CollectLimits) -> zipfile.ZipFile:
    try:
        listed = _listed_entries(path)
        if listed <= 10 * limits.max_files:
            return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError, ValueError, EOFError) as err:
        raise CollectError(f"{path}: not a readable zip archive ({type(err).__name__}: {str(err)[:120]})") from None
    raise CollectError(
        f"{path}: the archive lists {listed} files; an LMS download holds far fewer (cap: 10 x {limits.max_files})"
    )


# --------------------------------------------------------------------------- Canvas


# canvas-lms lib/content_zipper.rb (get_filename, add_upload_submission) and
# app/models/quizzes/quiz_submission_zipper.rb (question_attachment_filename).
_CANVAS_ANONYMOUS = re.compile(r"(?P<late>LATE_)?anon_(?P<anon>[A-Za-z0-9]+)_(?P<file>\d+)_(?P<upload>.+)", re.S)
_CANVAS_QUIZ = re.compile(r"(?P<name>[-\w]*?)(?P<user>\d+)_question_\d+_(?P<file>\d+)_(?P<upload>.+)", re.S)
_CANVAS = re.compile(r"(?P<name>.*?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<file>\d+)_(?P<upload>.+)", re.S)


def _canvas(member: _Member) -> _Candidate | str:
    if "/" in member.name:
        return "not in Canvas's download (a folder inside the zip)"
    anonymous = _CANVAS_ANONYMOUS.fullmatch(member.name)
    if anonymous:
        anon = anonymous["anon"]
        who = _Identity(f"anon_{anon}", f"anon_{anon}", f"anonymous {anon}")
        member.tiebreak = int(anonymous["file"])
        return _Candidate(member, anonymous["upload"], [who], late=bool(anonymous["late"]), order=0)
    quiz = _CANVAS_QUIZ.fullmatch(member.name)
    found = quiz or _CANVAS.fullmatch(member.name)
    if not found:
        return "not named like Canvas's download (<name>[_LATE]_<user id>_<file id>_<file>)"
    user = found["user"]
    who = _Identity(user, _folder_name(found["name"], f"canvas_{user}"), f"canvas id {user} {found['name']}", user)
    late = None if quiz else bool(found["late"])
    member.tiebreak = int(found["file"])
    return _Candidate(member, found["upload"], [who], late=late)


# --------------------------------------------------------------------------- Gradescope


class _MetadataLoader(yaml.SafeLoader):
    """``yaml.safe_load`` that reads Ruby's own tags (``!ruby/object:BigDecimal``, …) as plain data."""


def _plain(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_MetadataLoader.add_multi_constructor("!ruby/", _plain)


def _field(mapping: Any, key: str) -> Any:
    """``mapping[":key"]`` (the export's Ruby-symbol keys), else ``mapping["key"]``, else None."""
    if not isinstance(mapping, dict):
        return None
    return mapping.get(f":{key}", mapping.get(key))


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        return None
    text = re.sub(r"\s*(Z|UTC)$", "+00:00", value.strip())
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _submitter(entry: Any, position: int) -> _Identity | None:
    if not isinstance(entry, dict):
        return None
    name, sid, email = (str(_field(entry, k) or "").strip() for k in ("name", "sid", "email"))
    local = email.split("@", 1)[0].lower()
    key = sid or email.lower() or name or f"submitter {position}"
    folder = _folder_name(local or sid or name, f"gradescope_{position}")
    return _Identity(key, folder, f"{name or '?'} (sid {sid or '?'}, {email or 'no email'})", sid=sid, email=email)


def _read_metadata(members: list[_Member], budget: _Budget) -> tuple[str, dict[str, Any]]:
    """The export's top folder and its metadata; :class:`CollectError` when there is none or it is not YAML."""
    found = [
        m for m in members if PurePosixPath(m.name).name == METADATA and not m.problem and "__MACOSX" not in m.name
    ]
    if not found:
        raise CollectError(f"no {METADATA} in the archive: not Gradescope's Export Submissions")
    member = min(found, key=lambda m: (m.name.count("/"), m.position))
    chunks: list[bytes] = []
    try:
        budget.read(member, chunks.append)
        data = yaml.load(b"".join(chunks).decode("utf-8"), Loader=_MetadataLoader)  # noqa: S506 - a SafeLoader
    except _Skip as err:
        raise CollectError(f"{member.name}: {err}") from None
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError, TypeError, ValueError) as err:
        raise CollectError(f"{member.name}: not readable YAML ({type(err).__name__})") from None
    if not isinstance(data, dict):
        raise CollectError(f"{member.name}: not a mapping of submission folders")
    member.problem = METADATA_NOTE
    parent = str(PurePosixPath(member.name).parent)
    return ("" if parent == "." else parent + "/"), data


def _gradescope(member: _Member, root: str, metadata: dict[str, Any], due: datetime | None) -> _Candidate | str:
    if member.name.startswith("__MACOSX/") or PurePosixPath(member.name).name.startswith("._"):
        return "macOS metadata (__MACOSX, ._ files)"
    if not member.name.startswith(root):
        return "outside the export's folder"
    folder = member.name[len(root) :].split("/", 1)[0]
    submission = metadata.get(folder)
    if not isinstance(submission, dict):
        return f"folder {folder!r} is not in {METADATA}"
    submitters = _field(submission, "submitters")
    people = [p for i, e in enumerate(submitters or []) if (p := _submitter(e, i)) is not None]
    if not people:
        return f"no submitter for {folder!r} in {METADATA}"
    when = _as_datetime(_field(submission, "created_at"))
    late = None
    if when is not None and due is not None and (when.tzinfo is None) == (due.tzinfo is None):
        late = when > due
    return _Candidate(member, PurePosixPath(member.name).name, people, when, late, when.timestamp() if when else 0)


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


def _folder_members(root: Path, root_fd: int, limits: CollectLimits) -> list[_Member]:
    members: list[_Member] = []

    def add(name: str, problem: str = "", **kwargs: Any) -> None:
        members.append(_Member(_shown(name), len(members), problem=problem, **kwargs))

    overflow = False
    for top in sorted(os.scandir(root), key=lambda e: e.name):
        if len(members) >= limits.max_files:
            overflow = True
        elif top.is_symlink():
            add(top.name, LINK)
        elif not top.is_dir(follow_symlinks=False):
            add(top.name, "not inside a student's folder")
        else:
            for path, folders, files in os.walk(top.path, followlinks=False):
                relative = os.path.relpath(path, root).replace(os.sep, "/")
                for name in sorted(folders + files):
                    info = os.lstat(os.path.join(path, name))
                    shown = f"{relative}/{name}"
                    if stat.S_ISDIR(info.st_mode):
                        continue
                    if len(members) >= limits.max_files:
                        overflow = True
                        break
                    if stat.S_ISLNK(info.st_mode):
                        add(shown, LINK)
                    elif "/" in relative:
                        add(shown, "inside a subfolder of the student's folder")
                    elif not stat.S_ISREG(info.st_mode):
                        add(shown, "not a regular file")
                    else:
                        add(shown, open=_opener(root_fd, top.name, name), size=info.st_size, tiebreak=info.st_mtime)
                if overflow:
                    break
        if overflow:
            add(f"{root.name}/…", f"not read: the folder holds more than {limits.max_files} files")
            break
    return members


def _folders(member: _Member) -> _Candidate | str:
    student, name = member.name.split("/", 1)
    safe = safe_student(student)
    if safe is None:
        return f"{UNSAFE}: the student folder's name is not a safe folder name"
    return _Candidate(member, name, [_Identity(safe, safe, safe)])
