"""A Gradescope submission's files staged for grading: walked without following a link, read within caps.

Gradescope puts whatever the student uploaded in ``/autograder/submission``. :func:`stage_submission` walks it
(at most :data:`MAX_DEPTH` folders deep and :data:`MAX_ENTRIES` entries), copies the regular ``.ipynb`` files
of course notebooks (at most :data:`MAX_NOTEBOOKS`, :data:`MAX_STAGED_BYTES` in all) into the grader's layout, and
says of every other file why it was not read (:class:`Staged`).
"""

from __future__ import annotations

import dataclasses
import os
from collections import deque
from pathlib import Path

from ...grading.plan import MAX_NOTEBOOK_BYTES
from ...io import NotRegularFile, read_capped

__all__ = [
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_LISTED",
    "MAX_NOTEBOOKS",
    "MAX_OTHERS_NAMED",
    "MAX_STAGED_BYTES",
    "Staged",
    "stage_submission",
]


#: Folder levels searched below the submission's top: a folder more levels down is not entered, and the result
#: says so. A zipped project keeps its notebooks a few levels down (``Users/ada/Documents/dp/hw1/`` is 5), so 16
#: loses no honest notebook, while a folder thousands of levels deep costs nothing.
MAX_DEPTH = 16

#: Files, folders and links looked at in all, wherever they are (the walk stops there, and the result says so).
#: Bounds a submission of a million empty files to a fraction of a second (0.4 s for 50,000 entries on a
#: loaded 2-core machine) while a project zipped with its virtualenv (some 20,000 files) is still
#: searched through; the folders a notebook may be graded from are searched before hidden ones.
MAX_ENTRIES = 50_000

#: ``.ipynb`` files copied for grading at most; the course has six notebooks, so 50 leaves room for many copies
#: and drafts while bounding what :func:`~.run.grade` reads. Later ones are named as not read.
MAX_NOTEBOOKS = 50

#: Bytes of notebooks copied from one submission in all (each one is also at most
#: :data:`~.plan.MAX_NOTEBOOK_BYTES`): the course's notebooks with their outputs are 0.6 to 2 MB each.
MAX_STAGED_BYTES = 200_000_000

#: ``.ipynb`` files left out that the result names one by one, with why; any more are counted.
MAX_LISTED = 50

#: Other files (not ``.ipynb``) are named one by one when there are at most this many, else only counted: a
#: folder of figures is one line of the result, not hundreds.
MAX_OTHERS_NAMED = 10

_SHOWN = 120  # characters of a student's file name quoted back to them


@dataclasses.dataclass(frozen=True)
class Staged:
    """A submission copied for grading: the notebooks (in the private folder) and what was left out, with why.

    Attributes
    ----------
    notebooks : tuple of pathlib.Path
        The copies, in the folder given to :func:`stage_submission`.
    ignored : tuple of tuple of str
        ``(file name as shown to the student, why it was not copied)`` for each file named one by one: every
        ``.ipynb`` file not graded (up to :data:`MAX_LISTED`) and, when there are at most
        :data:`MAX_OTHERS_NAMED` of them, the other files.
    skipped : tuple of str
        Sentences for what was only counted or not searched at all: other files beyond those named, folders
        deeper than :data:`MAX_DEPTH`, the entries beyond :data:`MAX_ENTRIES`, folders that could not be read.
    """

    notebooks: tuple[Path, ...]
    ignored: tuple[tuple[str, str], ...]
    skipped: tuple[str, ...] = ()


def _shown(name: str) -> str:
    printable = "".join(c if c.isprintable() else "?" for c in name)
    return printable if len(printable) <= _SHOWN else printable[: _SHOWN - 1] + "…"


def _megabytes(size: int) -> str:
    return f"{size // 1_000_000} MB"


def _copy_regular(path: Path, target: Path, room: int) -> tuple[str | None, int]:
    """Copy the regular file ``path`` (never through a link) to ``target`` if it fits in ``room`` bytes.

    Returns ``(None, bytes copied)``, or ``(why it was not copied, 0)``.
    """
    cap = min(MAX_NOTEBOOK_BYTES, room)
    too_large = f"larger than {_megabytes(MAX_NOTEBOOK_BYTES)}"
    no_room = f"the notebooks before it already fill the {_megabytes(MAX_STAGED_BYTES)} read from one submission"
    try:
        data, info = read_capped(path, cap)
    except NotRegularFile:
        return "not a regular file", 0
    except OSError as err:
        return f"could not be opened ({err.strerror})", 0
    if len(data) > cap:
        return (too_large if max(len(data), info.st_size) > MAX_NOTEBOOK_BYTES else no_room), 0
    target.write_bytes(data)
    os.utime(target, (info.st_mtime, info.st_mtime))
    return None, len(data)


def _hidden(parts: tuple[str, ...]) -> bool:
    """A folder no notebook is graded from: hidden (``.git``, ``.ipynb_checkpoints``), macOS's, or one below them."""
    return any(p.startswith(".") or p == "__MACOSX" for p in parts)


def _why_skipped(relative: Path) -> str | None:
    parts = relative.parts
    if any(p == "__MACOSX" or p.startswith("._") for p in parts):
        return "macOS metadata, not a notebook"
    if any(p == ".ipynb_checkpoints" for p in parts):
        return "Jupyter's checkpoint copy, not your notebook"
    if any(p.startswith(".") for p in parts):
        return "a hidden file"
    if relative.suffix.lower() != ".ipynb":
        return "not a notebook (.ipynb)"
    return None


def _files(count: int, what: str = "file") -> str:
    return f"{count:,} {what}{'s were' if count != 1 else ' was'}"


#: Why an entry that is not a regular file is never opened, by :func:`_kind`.
_WHY_NOT_READ = {"link": "a link, not a file", "other": "not a regular file"}


def _kind(entry: os.DirEntry[str]) -> str:
    """``"folder"``, ``"file"`` (regular), ``"link"`` or ``"other"`` (a pipe, a device…), links never followed."""
    try:
        if entry.is_symlink():
            return "link"
        if entry.is_dir(follow_symlinks=False):
            return "folder"
        return "file" if entry.is_file(follow_symlinks=False) else "other"
    except OSError:
        return "other"


@dataclasses.dataclass
class _Walk:
    """What a walk over a submission saw: every entry but folders, as (path from the top, :func:`_kind`), and
    the limits it reached.

    Paths are tuples of names (a ``Path`` a file costs more than the whole walk).
    """

    found: list[tuple[tuple[str, ...], str]] = dataclasses.field(default_factory=list)
    too_deep: list[tuple[str, ...]] = dataclasses.field(default_factory=list)
    unreadable: list[tuple[tuple[str, ...], str]] = dataclasses.field(default_factory=list)
    truncated: bool = False


def _walk(submission: Path) -> _Walk:
    """Look at ``submission`` folder by folder, without recursion, links never followed, within the limits.

    Breadth first, names sorted in each folder, the folders a notebook can be graded from before the hidden and
    macOS ones (searched only to say why their files were left out): a notebook is found before the clutter
    beside it can use up :data:`MAX_ENTRIES`. A folder more than :data:`MAX_DEPTH` levels down is not entered.
    """
    walk = _Walk()
    visited = 0
    queues: tuple[deque[tuple[str, ...]], deque[tuple[str, ...]]] = (deque([()]), deque())
    while (queues[0] or queues[1]) and not walk.truncated:
        folder = (queues[0] or queues[1]).popleft()
        entries: list[tuple[str, str]] = []
        try:
            with os.scandir(submission.joinpath(*folder)) as listing:
                for entry in listing:
                    visited += 1
                    if visited > MAX_ENTRIES:
                        walk.truncated = True
                        break
                    entries.append((entry.name, _kind(entry)))
        except OSError as err:
            walk.unreadable.append((folder, err.strerror or type(err).__name__))
        for name, kind in sorted(entries):
            relative = (*folder, name)
            if kind != "folder":
                walk.found.append((relative, kind))
            elif len(relative) > MAX_DEPTH:
                walk.too_deep.append(relative)
            else:
                queues[_hidden(relative)].append(relative)
    return walk


def _skipped(walk: _Walk, others: int, unlisted: int) -> list[str]:
    """The sentences for what :func:`stage_submission` only counted or did not search."""
    sentences = []
    if others:
        sentences.append(f"{_files(others, 'other file')} not read (not notebooks)")
    if unlisted > 0:
        sentences.append(f"{_files(unlisted, 'more .ipynb file')} not graded (only the first {MAX_LISTED} are named)")
    if walk.too_deep:
        first = _shown("/".join(walk.too_deep[0]))
        sentences.append(
            f"folders deeper than {MAX_DEPTH} levels were not searched ({len(walk.too_deep):,} of them, the first "
            f"{first}/)"
        )
    if walk.truncated:
        sentences.append(
            f"only the first {MAX_ENTRIES:,} files and folders were looked at: the rest of the submission was not "
            "searched"
        )
    for folder, why in walk.unreadable:
        where = f"the folder {_shown('/'.join(folder))}/" if folder else "the submission's folder"
        sentences.append(f"{where} could not be read ({why})")
    return sentences


def stage_submission(submission: Path | str, folder: Path | str) -> Staged:
    """Copy the notebooks of ``submission`` (searched in sub-folders too, links never followed) into ``folder``.

    The walk is iterative and bounded: folders more than :data:`MAX_DEPTH` levels down are not searched, and
    no more than :data:`MAX_ENTRIES` files and folders are looked at, the folders a notebook may be graded
    from first. Only the ``.ipynb`` files are considered: regular ones of at most
    :data:`~.plan.MAX_NOTEBOOK_BYTES` are copied under their own names (keeping their modification times,
    which :func:`~.plan.pick_graded` reads), at most :data:`MAX_NOTEBOOKS` of them and
    :data:`MAX_STAGED_BYTES` in all. Every ``.ipynb`` file left out (a link, another kind of file, a
    checkpoint, a hidden or macOS file, a second file of the same name in another folder, one beyond the
    limits) is named in ``ignored`` with the reason; the other files are counted (and named too when there
    are few), never opened. Whatever was only counted or not searched is said in ``skipped``.

    Parameters
    ----------
    submission : str or pathlib.Path
        The student's files (Gradescope's ``<root>/submission``).
    folder : str or pathlib.Path
        Where the copies go (created if missing); a private folder of the grader's.

    Returns
    -------
    Staged
        The copies and what was left out.
    """
    submission, folder = Path(submission), Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    walk = _walk(submission)
    notebooks: list[Path] = []
    left_out: list[tuple[str, str]] = []
    others: list[tuple[tuple[str, ...], str]] = []
    room = MAX_STAGED_BYTES
    for parts, kind in walk.found:
        if not parts[-1].lower().endswith(".ipynb"):
            others.append((parts, kind))
            continue
        relative = Path(*parts)
        why = _WHY_NOT_READ.get(kind) or _why_skipped(relative)
        target = folder / relative.name
        if why is None and target.exists():
            why = f"another file named {_shown(relative.name)} was graded instead"
        if why is None and len(notebooks) >= MAX_NOTEBOOKS:
            why = f"more than {MAX_NOTEBOOKS} notebooks were handed in; this one was not read"
        if why is None:
            why, size = _copy_regular(submission / relative, target, room)
            room -= size
        if why is None:
            notebooks.append(target)
        else:
            left_out.append((_shown(relative.as_posix()), why))
    ignored = left_out[:MAX_LISTED]
    counted = len(others)
    if counted <= MAX_OTHERS_NAMED:
        for parts, kind in others:
            why = _WHY_NOT_READ.get(kind) or _why_skipped(Path(*parts)) or "not a notebook (.ipynb)"
            ignored.append((_shown("/".join(parts)), why))
        counted = 0
    skipped = _skipped(walk, counted, len(left_out) - MAX_LISTED)
    return Staged(tuple(notebooks), tuple(ignored), tuple(skipped))
