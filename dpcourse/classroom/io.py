"""Files and text the classroom writes and reads, safely: atomic writes, safe CSV cells, printable text, capped reads.

Everything the classroom writes (the report, the gradebook's CSVs, the class summary, the feedback, the collected
notebooks) goes through :func:`atomic_write`: a temporary file in the same folder, flushed to the disk, then
:func:`os.replace`, so that an interrupted or failing run leaves the old file or the new one, never half of one,
and no temporary file. Every CSV cell a spreadsheet could run as a formula gets a leading quote (OWASP's advice,
:func:`safe_cell`); text shown on a terminal has its control characters escaped (:func:`printable`); a file from a
submission or an LMS is read through :func:`read_capped`: never through a link, only a regular file, at most its cap.
"""

from __future__ import annotations

import csv
import os
import re
import stat
import tempfile
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import IO, Any

__all__ = [
    "NotRegularFile",
    "atomic_csv",
    "atomic_text",
    "atomic_write",
    "printable",
    "read_capped",
    "safe_cell",
    "unquoted",
]

# A cell that starts with a quote gets one more, so that reading removes exactly the quote writing added
# (a student id ``'=x`` or ``'abc`` comes back unchanged).
_QUOTED = re.compile(r"^[=+\-@\t\r']")


def safe_cell(value: object) -> str:
    """A report cell a spreadsheet will not run as a formula (a leading quote, OWASP's advice).

    Parameters
    ----------
    value : object
        The cell's value; written as ``str(value)``.

    Returns
    -------
    str
        The text with a ``'`` in front when it begins with ``=``, ``+``, ``-``, ``@``, a tab, a carriage
        return or a quote (so that :func:`read_report` can remove exactly the quote added), else unchanged.
    """
    text = str(value)
    return "'" + text if _QUOTED.match(text) else text


def unquoted(text: str) -> str:
    """A cell as it was before :func:`safe_cell`: the one quote it added removed.

    Parameters
    ----------
    text : str
        A cell read back from a CSV this package wrote.

    Returns
    -------
    str
        ``text`` without its first character when that is a quote :func:`safe_cell` added, else unchanged.
    """
    return text[1:] if text.startswith("'") and _QUOTED.match(text[1:]) else text


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: Path | str, write: Callable[[Any], object], *, binary: bool = False) -> Path:
    """Write a file atomically: ``write(handle)`` fills a temporary file beside ``path``, which then replaces it.

    The temporary file (``.<name>.<random>`` in the same folder, so that the rename stays on one file
    system) is flushed and synced to the disk before :func:`os.replace` puts it in place: a reader, or the
    file system after a crash, sees the old file or the complete new one, never part of it. When ``write``
    or anything after it fails (an exception, ``KeyboardInterrupt``), the temporary file is removed, the old
    file is left as it was, and the exception propagates. The file gets the mode an ordinary ``open``
    would give it (0666 less the umask), not the 0600 of a temporary file, so that a TA reading the
    gradebook as another user can open it.

    Parameters
    ----------
    path : pathlib.Path or str
        The file to write; its folder is made when missing.
    write : callable
        Called once with the open temporary file: text (UTF-8, newlines written as given) or, with
        ``binary``, bytes.
    binary : bool, optional
        Whether the handle takes bytes.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    OSError
        If the folder cannot be made or the file cannot be written or renamed into place.
    Exception
        Whatever ``write`` raises, after the temporary file is removed.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text: dict[str, Any] = {} if binary else {"newline": "", "encoding": "utf-8"}
    handle = tempfile.NamedTemporaryFile(
        "wb" if binary else "w", dir=path.parent, prefix=f".{path.name}.", delete=False, **text
    )
    try:
        with handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, 0o666 & ~_umask())
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    return path


def atomic_text(path: Path | str, text: str) -> Path:
    """Write ``text`` to ``path`` atomically, with the umask's mode (:func:`atomic_write`).

    Parameters
    ----------
    path : pathlib.Path or str
        The file to write.
    text : str
        Its whole content, written as UTF-8 with newlines as given.

    Returns
    -------
    pathlib.Path
        ``path``.
    """

    def write(handle: IO[str]) -> None:
        handle.write(text)

    return atomic_write(path, write)


def atomic_csv(path: Path | str, header: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    """Write a CSV to ``path`` atomically (every cell through :func:`safe_cell`), with the umask's mode.

    Parameters
    ----------
    path : pathlib.Path or str
        The file to write (:func:`atomic_write`).
    header : sequence of str
        The first row, the column names (written as they are).
    rows : iterable of sequences
        The rows; each cell is written as ``safe_cell(cell)``. Consumed while the temporary file is
        written, so a generator that raises leaves the old file in place.

    Returns
    -------
    pathlib.Path
        ``path``.
    """

    def write(handle: IO[str]) -> None:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows([safe_cell(cell) for cell in row] for row in rows)

    return atomic_write(path, write)


_ESCAPED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp"}  # control and format characters, line and paragraph separators


def printable(text: str, *, keep_newlines: bool = False) -> str:
    """``text`` with control and format characters (escape sequences, bidi overrides) shown as ``\\x1b``, ``\\u202e``.

    For the terminal: a student's id or answer can no longer move the cursor, recolour or reverse the text.

    Parameters
    ----------
    text : str
        Any text.
    keep_newlines : bool, optional
        Whether ``\\n`` stays a line break (it is shown as ``\\x0a`` otherwise).

    Returns
    -------
    str
        ``text`` with every character of the Unicode categories Cc, Cf, Zl and Zp written as its escape.
    """

    def shown(char: str) -> str:
        if keep_newlines and char == "\n":
            return char
        if unicodedata.category(char) not in _ESCAPED_CATEGORIES:
            return char
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"

    return "".join(shown(char) for char in text)


class NotRegularFile(OSError):
    """A path that is a folder, a FIFO, a device or a socket where a regular file was expected."""


#: How :func:`read_capped` opens: never through a link, never blocking on a FIFO, not inherited by a child.
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def read_capped(path: Path | str, cap: int) -> tuple[bytes, os.stat_result]:
    """At most ``cap + 1`` bytes of the regular file ``path``, opened without following a link.

    A caller tells "over the cap" by ``len(data) > cap``, without the rest of a huge file ever being read.

    Parameters
    ----------
    path : pathlib.Path or str
        The file; a link at its last component is refused by the kernel (``O_NOFOLLOW``), a FIFO does not
        block (``O_NONBLOCK``).
    cap : int
        The most bytes the caller accepts.

    Returns
    -------
    tuple of (bytes, os.stat_result)
        What was read, and the file's status (size, modification time) from the open descriptor.

    Raises
    ------
    NotRegularFile
        If ``path`` is not a regular file.
    OSError
        If it cannot be opened (a link, missing, no permission) or read.
    """
    fd = os.open(path, _READ_FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(f"{Path(path).name}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(cap + 1), info
    finally:
        os.close(fd)
