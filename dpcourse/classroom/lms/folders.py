"""Submissions as folders, ``DIR/<student>/*.ipynb``: listed without following a link, each student's files
within the caps.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .archive import (
    _SURROGATE,
    LINK,
    NOT_UTF8,
    UNSAFE,
    CollectError,
    CollectLimits,
    _Candidate,
    _Identity,
    _Member,
    _shown,
    safe_student,
)

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
