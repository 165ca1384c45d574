"""From an LMS's download to the grader's layout ``DIR/<student>/<notebook>.ipynb``, without renaming by hand.

``python -m dpcourse collect canvas|gradescope|folders INPUT --out DIR [--roster F] [--source notebooks/]
[--canvas-submissions JSON]``
writes one file per student and course notebook (the stem of one of ``--source``'s notebooks) and
``DIR/collected.csv``: one row for every file of the input, with :data:`COLUMNS`. This module holds that
pipeline, its public functions and the command. The three inputs, read by :mod:`.archive` (which describes
them in full): **canvas**, the zip of *Download Submissions*, members named by Canvas's ``ContentZipper``
(canvas-lms ``lib/content_zipper.rb``) or ``Quizzes::QuizSubmissionZipper``; **gradescope**, the zip of
*Export Submissions*, with ``submission_metadata.yml`` and one folder per submission; **folders**, today's
``DIR/<student>/*.ipynb`` with the browser's duplicates and Jupyter's copies.

**When.** Canvas's zip marks a file ``LATE`` but never says when it came; ``--canvas-submissions`` gives the JSON
of Canvas's submissions API for the assignment, and each student's ``submitted_at`` (matched by the user id in
the member's name) becomes the ``submitted_at`` of her files' rows, so that ``grade`` charges lateness by the
minute from her own due time. Gradescope's metadata has the times; a folder's are its files' modification times.

**Who.** A person is only what the LMS writes and the student cannot choose: Canvas's user id in its fixed
place in the member's name, Gradescope's ``sid`` and e-mail, a folder's own name; never the name of the file
a student uploaded. With a roster (:func:`~.roster.read_roster`) the student is the roster's id, matched
exactly after NFC: Canvas by ``canvas_id``, Gradescope by ``sid`` and ``email`` (which must not point at two
students), folders by ``student``; a roster entry without the LMS's ids is matched by ``student`` equal to the
LMS's folder name. Two LMS accounts that match one roster student equally get neither's file (the row says
why). Without a roster the student is the LMS's name made a safe folder name (NFC-normalised: a Mac's unzip
gives NFD names); two people whose names make the same folder name, even only in case, both get their LMS id
appended (``leeann_111``), so that two identities never share a folder.

**Which.** Of several files of one student for one notebook the latest is kept, by one rule on every path:
the order in which the LMS received them (Canvas's file id, Gradescope's submission time then submission id, a
folder file's modification time), then as :func:`.plan.pick_graded` breaks ties (the copy number, a file
named like the notebook, the name), so that ``grade`` on the same files would pick the same one. A number a
student can type (Canvas's ``-2``, the browser's ``(2)``) never outranks the LMS's order. The others are rows
with ``kept`` false, never dropped silently; so are files that are no course notebook, which keep their student
(a PDF on the roster is the student's, and her feedback names it), and the summary names the roster's students
of whom no notebook was collected, with what they handed in instead.

**The input is hostile.** Nothing is written outside ``DIR`` whatever a member is called (output paths are
made from the roster's or a sanitised id and the course's own notebook names), and a file is written
atomically, never through a link. What :mod:`.archive` will not read (links, ``..`` or absolute paths, names
that are not UTF-8, non-regular or encrypted members, files over :class:`~.archive.CollectLimits`, counted in
bytes actually read) are rows with a note, and the rest is collected. The caps on files and bytes are each
student's (a student's oldest notebooks beyond them are listed, not read), so nobody's files crowd out a
classmate's; an input over the whole-input ceilings (entries really listed, notebooks' bytes) or an unreadable
one raises :class:`~.archive.CollectError` before anything is written.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from ..gradebook.roster import RosterEntry
from ..release import SOURCE
from .archive import (
    CollectError,
    CollectLimits,
    _Candidate,
    _Member,
    _open_zip,
    _zip_members,
    safe_student,
)
from .canvas.download import _canvas, _canvas_layout, _read_canvas_submissions
from .claims import _check_roster
from .collected import COLUMNS, KINDS, CollectedFile, CollectResult
from .folders import _folder_members, _folders
from .gradescope.export import _gradescope, _read_metadata
from .pipeline import _check_out, _Course, _make_out, _pipeline, course_notebooks

# The collector's public face: its functions, and (defined beside them) the types and names a caller needs.
__all__ = [
    "COLUMNS",
    "KINDS",
    "CollectError",
    "CollectLimits",
    "CollectResult",
    "CollectedFile",
    "collect",
    "collect_canvas",
    "collect_folders",
    "collect_gradescope",
    "course_notebooks",
    "safe_student",
]


def collect_canvas(
    zip_path: Path | str,
    out: Path | str,
    *,
    roster: Sequence[RosterEntry] | None = None,
    notebooks: Path | str = SOURCE,
    force: bool = False,
    limits: CollectLimits | None = None,
    submissions: Sequence[Path | str] = (),
) -> CollectResult:
    """Collect Canvas's *Download Submissions* zip (or a quiz's file uploads) into ``out/<student>/``.

    The student is the user id Canvas wrote in its place in each member's name (never read from the name the
    student gave her file); of several files of one student for one notebook, the one with the largest file id
    (the one Canvas received last) is kept. The zip says ``LATE``, not when: ``submissions`` gives the times.

    Parameters
    ----------
    zip_path : path
        The zip Canvas gave (see :mod:`.archive` for its member names).
    out : path
        The folder to write; must be empty unless ``force``.
    roster : list of RosterEntry, optional
        The course's students (matched by ``canvas_id``; an entry without one by ``student`` equal to the
        sortable name); students not on it are listed, not collected. Without one the folder is the sortable
        name (with the user id appended when two students' names are alike).
    notebooks : path
        The course's notebooks (default ``notebooks/``): their stems are the notebook names.
    force : bool
        Collect into a non-empty ``out`` (files of the same student and notebook are replaced).
    limits : CollectLimits, optional
        Caps on files and bytes read.
    submissions : sequence of path, optional
        The JSON of Canvas's submissions API for this assignment (``GET /api/v1/courses/:course_id/assignments/
        :assignment_id/submissions``), one file per page: each ``user_id``'s ``submitted_at`` is the time of that
        user's files (matched exactly to the user id in the member's name). Without it the times are unknown.

    Returns
    -------
    CollectResult
        Every file's row; ``out/collected.csv`` holds the same.

    Raises
    ------
    CollectError
        See :func:`collect`.
    ValueError
        See :func:`collect`.
    """
    return collect(
        "canvas",
        zip_path,
        out,
        roster=roster,
        notebooks=notebooks,
        force=force,
        limits=limits,
        canvas_submissions=submissions,
    )


def collect_gradescope(
    zip_path: Path | str,
    out: Path | str,
    *,
    roster: Sequence[RosterEntry] | None = None,
    notebooks: Path | str = SOURCE,
    due: datetime | None = None,
    force: bool = False,
    limits: CollectLimits | None = None,
) -> CollectResult:
    """Collect Gradescope's *Export Submissions* zip into ``out/<student>/<notebook>.ipynb``.

    Every member of a group submission gets the group's file. A person is their ``sid`` and e-mail in the
    metadata (never their name); of several submissions of one student, the latest ``:created_at`` (then the
    larger submission id) is kept.

    Parameters
    ----------
    zip_path : str or pathlib.Path
        The zip Gradescope gave, with its ``submission_metadata.yml``.
    out : str or pathlib.Path
        The folder to write; must be empty unless ``force``.
    roster : list of RosterEntry, optional
        The course's students, matched by ``sid`` and ``email`` (an account whose sid and e-mail name two
        roster students, or that matches a student less well than another account does, is listed, not
        collected); an entry with neither by ``student`` equal to the email's local part. Students not on it
        are listed, not collected. Without one the folder is the email's local part (else the sid) made a safe
        folder name, with the sid appended when two people's are alike.
    notebooks : str or pathlib.Path
        The course's notebooks (default ``notebooks/``): their stems are the notebook names.
    due : datetime.datetime, optional
        With a timezone if the export's times have one: a submission made after it is marked late (the
        export has no late mark; a student's extension is not in it).
    force : bool
        Collect into a non-empty ``out`` (files of the same student and notebook are replaced).
    limits : CollectLimits, optional
        Caps on files and bytes read.

    Returns
    -------
    CollectResult
        Every file's row; ``out/collected.csv`` holds the same.

    Raises
    ------
    CollectError
        See :func:`collect`; also when the zip has no readable ``submission_metadata.yml``.
    ValueError
        See :func:`collect`.
    """
    return collect("gradescope", zip_path, out, roster=roster, notebooks=notebooks, due=due, force=force, limits=limits)


def collect_folders(
    folder: Path | str,
    out: Path | str,
    *,
    roster: Sequence[RosterEntry] | None = None,
    notebooks: Path | str = SOURCE,
    force: bool = False,
    limits: CollectLimits | None = None,
) -> CollectResult:
    """Collect ``folder/<student>/*.ipynb`` (browser duplicates and copies included) into ``out``.

    Of several files of one student for one notebook the most recently modified is kept, as ``grade`` would
    pick it (:func:`.plan.pick_graded`): a copy number only breaks a tie.

    Parameters
    ----------
    folder : str or pathlib.Path
        A folder of student folders; links in it are never followed.
    out : str or pathlib.Path
        The folder to write; must be empty unless ``force``, and not inside ``folder``.
    roster : list of RosterEntry, optional
        The course's students, matched by ``student`` equal to the folder's name (both NFC-normalised);
        students not on it are listed, not collected. Without one the folder's own name is kept.
    notebooks : str or pathlib.Path
        The course's notebooks (default ``notebooks/``): their stems are the notebook names.
    force : bool
        Collect into a non-empty ``out`` (files of the same student and notebook are replaced).
    limits : CollectLimits, optional
        Caps on files and bytes read.

    Returns
    -------
    CollectResult
        Every file's row; ``out/collected.csv`` holds the same.

    Raises
    ------
    CollectError
        See :func:`collect`; also when ``folder`` is not a folder or ``out`` is inside it.
    ValueError
        See :func:`collect`.
    """
    return collect("folders", folder, out, roster=roster, notebooks=notebooks, force=force, limits=limits)


def collect(
    kind: str,
    input_path: Path | str,
    out: Path | str,
    *,
    roster: Sequence[RosterEntry] | None = None,
    notebooks: Path | str = SOURCE,
    due: datetime | None = None,
    force: bool = False,
    limits: CollectLimits | None = None,
    canvas_submissions: Sequence[Path | str] = (),
) -> CollectResult:
    """Collect ``input_path`` of ``kind`` (one of :data:`KINDS`) into ``out``.

    What :func:`collect_canvas`, :func:`collect_gradescope` and :func:`collect_folders` call, with the
    parameters they describe.

    Parameters
    ----------
    kind : str
        ``"canvas"``, ``"gradescope"`` or ``"folders"``.
    input_path : str or pathlib.Path
        The LMS's zip (canvas, gradescope) or the folder of student folders (folders).
    out : str or pathlib.Path
        The folder to write; must be empty unless ``force`` (and, for folders, not inside ``input_path``).
    roster : list of RosterEntry, optional
        The course's students, matched as the kind's function says; without one the LMS's name made safe.
    notebooks : str or pathlib.Path
        The course's notebooks (default ``notebooks/``): their stems are the notebook names.
    due : datetime.datetime, optional
        Gradescope only: submissions made after it are marked late.
    force : bool
        Collect into a non-empty ``out`` (files of the same student and notebook are replaced).
    limits : CollectLimits, optional
        Caps on files and bytes read (default :class:`~.archive.CollectLimits`).
    canvas_submissions : sequence of path, optional
        Canvas only: the JSON of its submissions API, the files' times (see :func:`collect_canvas`).

    Returns
    -------
    CollectResult
        Every file's row; ``out/collected.csv`` holds the same.

    Raises
    ------
    CollectError
        The input cannot be read as a whole, is not the LMS's format or is over a whole-input cap of
        ``limits`` (its entries, its notebooks' bytes, Gradescope's metadata); ``canvas_submissions`` cannot be
        read, is over the metadata's byte cap or is not the API's JSON (an entry of the wrong type, a user listed
        twice, several assignments); ``out`` is a file, is inside the input folder, or is not empty without
        ``force``. Nothing is written then.
    ValueError
        ``kind`` is unknown, ``due`` is given for another kind than gradescope, ``canvas_submissions`` for another
        kind than canvas, a roster's student id is not
        safe as a folder name (:func:`safe_student`), two of its ids differ only in case, one ``canvas_id``,
        ``sid`` or ``email`` is given to two students, or ``notebooks`` holds no notebook (naming ``--source``).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    if due is not None and kind != "gradescope":
        raise ValueError("due applies to gradescope only (Canvas marks late files itself)")
    if canvas_submissions and kind != "canvas":
        raise ValueError("--canvas-submissions applies to canvas only")
    limits = limits or CollectLimits()
    _check_roster(roster)
    times = _read_canvas_submissions(canvas_submissions, limits) if canvas_submissions else None
    course = _Course(notebooks)
    if kind == "folders":
        root = Path(input_path)
        if not root.is_dir():
            raise CollectError(f"{root}: not a folder")
        target = _check_out(out, force, inside=root)
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        try:
            members = _folder_members(root, root_fd, limits)
            return _pipeline(kind, members, _folders, lambda: _make_out(target), roster, course, limits, str(root))
        finally:
            os.close(root_fd)
    target = _check_out(out, force)
    with _open_zip(input_path, limits) as archive:
        members = _zip_members(archive)
        interpret: Callable[[_Member], _Candidate | str]
        if kind == "gradescope":
            top, submissions = _read_metadata(members, limits)
            interpret = lambda m: _gradescope(m, top, submissions, due)  # noqa: E731
        else:
            layout = _canvas_layout(members)
            interpret = lambda m: _canvas(m, layout, times)  # noqa: E731
        return _pipeline(kind, members, interpret, lambda: _make_out(target), roster, course, limits, str(input_path))
