"""Feedback back to Canvas in one upload: the zip of *Re-Upload Submissions*, one HTML file per student.

``python -m dpcourse feedback canvas COLLECTED --feedback DIR --out FILE.zip [--notebook NB …] [--force]`` reads
the Markdown that ``grade --feedback DIR`` wrote (``DIR/<student>/<notebook>.md``, :func:`~.feedback.write_feedback`)
and the ``collected.csv`` that ``collect canvas`` wrote from the assignment's *Download Submissions* zip, and writes
``FILE.zip`` for Canvas's *Re-Upload Submissions* (Assignments → the assignment → *Re-Upload Submissions*), which
attaches each member to its student's submission as a comment ("See attached file").

**What Canvas matches on.** canvas-lms ``Assignment#generate_comments_from_files`` and
``#infer_comment_context_from_filename`` (``app/models/assignment.rb``) split a member's base name on ``_`` and
take the first two tokens made only of digits as the **user id** and the **attachment (file) id**. The member
becomes a comment on that user's submission of this assignment only when the attachment is one of that
submission's files (``submission.attachments``) and the user may read it; any other member is ignored and listed
as such on the upload's result page, as is a name whose last token starts with ``link`` or that starts with
``._``. Nothing else in the name counts: not the sortable name, not ``LATE``. The comment's file is stored by
``FileInContext.attach`` (``lib/file_in_context.rb``) with the **display name of the student's attachment** and
the content type of **our member's extension** (``Attachment.mimetype``), so the student sees her
``analysis.ipynb``'s name on a ``text/html`` file (instructure/canvas-lms issue #2406 reports the same for a PDF).
A text or URL submission has no attachment id in its name, so it cannot get a file this way; an anonymous
download (``anon_<id>``, no user id) and a quiz's (the user id glued to the name) cannot either, and are refused.
For a group assignment graded as a group, Canvas puts each user's comment on every member's submission
(``group_students``), so each member would see every member's page: send such feedback another way. Canvas's
guides describe the upload, not this rule; it is read from canvas-lms's source (the newest version of
``infer_comment_context_from_filename`` the stored copies hold, and today's ``lib/file_in_context.rb``).

**How members are named.** Each member is the download's name of one of the student's files up to and including
its file id, exactly as Canvas wrote it (``<sortable name>[_LATE]_<user id>_<file id>_``, read back by the
collector's parser in :mod:`.archive`; NFC, as ``collected.csv`` holds it), followed by ``feedback.html``. The
name part is Canvas's own (the sortable name lower-cased with everything but word characters removed:
``O'Brien, Seán`` is ``obrienseán``), copied from the download, never rebuilt from a roster; the uploaded file's
name, the one part a student chose, is dropped. The file id is that of the student's kept notebook of the
assignment (the first in the assignment's order; a resubmission's ``-1`` file has its own id, the one Canvas
holds now), else of another file of hers in the download (a PDF handed in instead). A name over 255 bytes (what
a file system takes, and Canvas unpacks the zip to disk) has its name part shortened, or dropped if what is left
would end in a number Canvas would read as an id. Every member's name is checked against Canvas's own reading
(its first two all-digit tokens must be the user id and the file id) before it is written.

**Who gets what.** One member per student in the download who has feedback for the assignment: the feedback
files of its notebooks (``--notebook``, in that order; by default the notebooks ``collected.csv`` names, sorted)
rendered from Markdown to one HTML page with mistune (``escape=True``: raw HTML shows as text, harmful link
protocols are dropped; a student's text was already escaped when ``grade`` wrote the Markdown), the page a jinja2
template (``templates/feedback.html.j2``). ``not-graded.md`` is sent only to a student of whom no notebook was
collected. Nobody without a feedback file gets a member; a student whose rows carry two Canvas user ids, or whose
user id another student's rows carry, gets none (the summary says why), so that feedback never reaches another
account. A feedback file that is a link, or over :data:`MAX_FEEDBACK_BYTES`, is left out, named in the summary.
"""

from __future__ import annotations

import csv
import os
import re
import zipfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO

from ...gradebook.feedback import feedback_name
from ...gradebook.render import _templates
from ...gradebook.roster import _COLLECTED, _flag
from ...io import atomic_write, printable, read_capped, unquoted
from ..archive import _Member
from .download import _canvas_assignment, _canvas_layout

__all__ = [
    "FEEDBACK_MEMBER",
    "MAX_FEEDBACK_BYTES",
    "FeedbackMember",
    "FeedbackZip",
    "canvas_feedback_zip",
    "canvas_reads",
    "feedback_html",
]

FEEDBACK_MEMBER = "feedback.html"  # what follows the download's <name>[_LATE]_<user id>_<file id>_
NOT_GRADED = "not-graded"  # write_feedback's file for a student whose files were all set aside
MAX_FEEDBACK_BYTES = 5_000_000  # one Markdown feedback file
_MAX_MEMBER_BYTES = 255  # a file name, on the file systems Canvas unpacks the zip to
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True)
class FeedbackMember:
    """One member of the zip: whose feedback, under which name, attached to which of her files.

    Attributes
    ----------
    student : str
        The student (``collected.csv``'s id, the feedback folder's student).
    member : str
        The member's name in the zip.
    user_id : str
        Canvas's user id, from the download.
    file_id : str
        The id of the student's file in the download that the comment is attached to.
    sections : tuple of str
        The feedback files in the page, in order (notebook stems, or ``not-graded``).
    """

    student: str
    member: str
    user_id: str
    file_id: str
    sections: tuple[str, ...]


@dataclass(frozen=True)
class FeedbackZip:
    """What :func:`canvas_feedback_zip` wrote, and who was left out and why.

    Attributes
    ----------
    out : pathlib.Path
        The zip written.
    members : tuple of FeedbackMember
        Its members, sorted by name.
    left_out : tuple of (str, str)
        ``(student, why)`` for each student with feedback or files who has no member (or a member missing one
        of her feedback files).
    """

    out: Path
    members: tuple[FeedbackMember, ...]
    left_out: tuple[tuple[str, str], ...] = ()

    def summary(self, *, shown: int = 20) -> str:
        """The printed summary: members written, then who was left out and why.

        Parameters
        ----------
        shown : int, optional
            The most students listed as left out; the rest are counted.

        Returns
        -------
        str
            Several lines, every student id through :func:`~.io.printable`.
        """
        lines = [f"feedback canvas: {len(self.members)} students' feedback in {self.out}"]
        lines.append(f"left out: {len(self.left_out)}")
        lines += [f"  {printable(student)}: {why}" for student, why in self.left_out[:shown]]
        if len(self.left_out) > shown:
            lines.append(f"  … and {len(self.left_out) - shown} more")
        lines.append("upload it in Canvas: Assignments → the assignment → Re-Upload Submissions")
        return "\n".join(lines)


# --------------------------------------------------------------------------- names


def canvas_reads(member: str) -> tuple[str, str] | None:
    """The user id and attachment id Canvas's re-upload reads from a member's name, or None when it reads none.

    canvas-lms ``Assignment#infer_comment_context_from_filename``: the base name split on ``_``, its first two
    tokens made only of digits; none when there are fewer, when the last token starts with ``link`` (a URL
    submission) or when the name starts with ``._``.

    Parameters
    ----------
    member : str
        A zip member's name.

    Returns
    -------
    tuple of (str, str) or None
        ``(user id, attachment id)`` as Canvas would look them up.
    """
    name = member.rsplit("/", 1)[-1]
    tokens = name.split("_")
    ids = [t for t in tokens if _DIGITS.fullmatch(t)][:2]
    if len(ids) < 2 or tokens[-1].startswith("link") or name.startswith("._"):
        return None
    return ids[0], ids[1]


@dataclass(frozen=True)
class _Download:
    """A Canvas-named row of ``collected.csv``: whose, which notebook, kept or not, and its name's Canvas part."""

    student: str
    notebook: str
    kept: bool
    name: str
    late: bool
    user_id: str
    file_id: str


def _download(row: dict[str, str]) -> _Download | None:
    """The Canvas part of a row's ``source_file`` (read by the collector's parser), or None for a member that has
    no attachment id (a text or URL submission) or that is not named as Canvas names a download's files."""
    source = row["source_file"]
    found = _canvas_assignment(source) if "/" not in source else None  # Canvas's download is flat
    if found is None or not found.file_id:
        return None
    late = "_LATE" if found.late else ""
    file_id = source[len(f"{found.name}{late}_{found.user}_") :].split("_", 1)[0]
    head = f"{found.name}{late}_{found.user}_{file_id}_"
    if not _DIGITS.fullmatch(file_id) or not source.startswith(head) or int(file_id) != found.file_id:
        return None
    return _Download(
        row["student"], row["notebook"], row["kept"] == "true", found.name, bool(found.late), found.user, file_id
    )


def _member_name(download: _Download) -> str | None:
    """The member's name for a student's file: the download's Canvas part, then :data:`FEEDBACK_MEMBER`, with the
    name part shortened when the whole is over 255 bytes; None when Canvas would not read it back as that file."""
    ids = f"{'_LATE' if download.late else ''}_{download.user_id}_{download.file_id}_{FEEDBACK_MEMBER}"
    room = max(_MAX_MEMBER_BYTES - len(ids.encode()), 0)
    member = download.name.encode()[:room].decode("utf-8", errors="ignore") + ids
    if canvas_reads(member) != (download.user_id, download.file_id):  # a shortened name ending in a number
        member = ids
    return member if canvas_reads(member) == (download.user_id, download.file_id) else None


# --------------------------------------------------------------------------- reading


def _read_collected(path: Path) -> list[dict[str, str]]:
    """``collected.csv``'s rows, cells as the collector meant them (the formula quote removed, ``kept`` checked)."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        try:
            missing = [c for c in _COLLECTED if c not in (reader.fieldnames or [])]
            if missing:
                raise ValueError(f"{path}: not a collector's list (no column {', '.join(missing)})")
            rows = []
            for number, line in enumerate(reader, start=2):
                cell = {k: unquoted(v) if isinstance(v, str) else "" for k, v in line.items() if k is not None}
                kept = _flag(cell["kept"], "kept", f"{path}, line {number}", empty=False)
                rows.append({**cell, "kept": "true" if kept else "false"})
        except csv.Error as err:
            raise ValueError(f"{path}: not a CSV ({err})") from None
    return rows


def _read_feedback(path: Path) -> str:
    """A feedback file's text; :class:`OSError` for a link (never followed) or anything but a regular file, and
    :class:`ValueError` over the cap."""
    if path.parent.is_symlink():
        raise OSError(f"{path.parent}: a link (links are not followed)")
    data, _ = read_capped(path, MAX_FEEDBACK_BYTES)  # a FIFO put there cannot hang the command
    if len(data) > MAX_FEEDBACK_BYTES:
        raise ValueError(f"over {MAX_FEEDBACK_BYTES:,} bytes")
    return data.decode("utf-8", errors="replace")


def feedback_html(student: str, sections: Sequence[str]) -> str:
    """One student's page: each Markdown feedback file rendered to HTML, in order, in ``feedback.html.j2``.

    Parameters
    ----------
    student : str
        The student (the page's title; escaped).
    sections : sequence of str
        The Markdown texts (as :func:`~.feedback.write_feedback` wrote them).

    Returns
    -------
    str
        A self-contained HTML page. Raw HTML in the Markdown is shown as text (mistune's ``escape=True``) and
        links with a harmful protocol (``javascript:``) are dropped.
    """
    import mistune  # imported on first use, like jinja2: a grading run needs neither

    render = mistune.create_markdown(escape=True)
    pages = [str(render(text)) for text in sections]
    return _templates().page.get_template("feedback.html.j2").render(title=student, sections=pages)


# --------------------------------------------------------------------------- the zip


def _who(rows: list[_Download]) -> tuple[dict[str, list[_Download]], dict[str, str]]:
    """Each student's Canvas files, and the students left out because their rows and user ids disagree."""
    files: dict[str, list[_Download]] = defaultdict(list)
    owners: dict[str, set[str]] = defaultdict(set)
    for d in rows:
        if d.student:
            files[d.student].append(d)
            owners[d.user_id].add(d.student)
    refused: dict[str, str] = {}
    for student, own in files.items():
        users = sorted({d.user_id for d in own})
        if len(users) > 1:
            refused[student] = f"files of several Canvas accounts (user ids {', '.join(users)}): none is sent"
        others = sorted({s for u in users for s in owners[u]} - {student})
        if others:
            names = ", ".join(printable(s) for s in others)
            refused[student] = f"Canvas user id {users[0]} is also {names}'s in collected.csv: none is sent"
    return files, refused


def _attach_to(own: list[_Download], notebooks: Sequence[str]) -> _Download:
    """The file the comment goes with: the kept notebook first in ``notebooks``, else her latest other file."""
    kept = [d for d in own if d.kept and d.notebook in notebooks]
    if kept:
        return min(kept, key=lambda d: (notebooks.index(d.notebook), -int(d.file_id)))
    return max(own, key=lambda d: int(d.file_id))


def canvas_feedback_zip(
    collected: Path | str,
    feedback: Path | str,
    out: Path | str,
    *,
    notebooks: Sequence[str] = (),
    force: bool = False,
) -> FeedbackZip:
    """Write the zip of Canvas's *Re-Upload Submissions* with each student's feedback on the assignment.

    Parameters
    ----------
    collected : path
        The ``collected.csv`` that ``collect canvas`` wrote from the assignment's download.
    feedback : path
        The folder ``grade --feedback`` wrote (``<student>/<notebook>.md``, named by
        :func:`~.feedback.feedback_name`).
    out : path
        The zip to write (atomically); must not exist unless ``force``.
    notebooks : sequence of str, optional
        The assignment's notebooks, in the order their feedback is shown; default: the notebooks ``collected``
        names, sorted.
    force : bool
        Replace an existing ``out``.

    Returns
    -------
    FeedbackZip
        The members written and the students left out.

    Raises
    ------
    ValueError
        ``collected`` is not a collector's list, is an anonymous or quiz download (whose names have no user id
        where Canvas's re-upload reads one) or names no Canvas file; ``out`` exists without ``force``; no student
        has both feedback and a file in the download (nothing is written then).
    OSError
        ``collected`` cannot be read, or ``out`` cannot be written.
    """
    collected, folder, out = Path(collected), Path(feedback), Path(out)
    if out.exists() and not force:
        raise ValueError(f"--out {out} exists; give --force to replace it")
    if not folder.is_dir():
        raise ValueError(f"--feedback {folder}: not a folder")
    rows = _read_collected(collected)
    layout = _canvas_layout([_Member(r["source_file"], i) for i, r in enumerate(rows)])
    if layout != "assignment":
        raise ValueError(
            f"{collected}: a {layout} download; Canvas's Re-Upload Submissions reads the user id from the member's "
            "name, which this download's names do not carry"
        )
    downloads = [d for d in map(_download, rows) if d is not None]
    if not downloads:
        raise ValueError(f"{collected}: no file named as Canvas's download names files (<name>_<user id>_<file id>_…)")
    order = list(notebooks) or sorted({r["notebook"] for r in rows if r["notebook"]})
    files, refused = _who(downloads)
    members: list[tuple[FeedbackMember, str]] = []
    left_out: dict[str, str] = dict(refused)
    for student in sorted(files):
        own = folder / feedback_name(student)
        stems = list(order)
        if not any(d.kept for d in files[student]):
            stems.append(NOT_GRADED)
        texts, sections, problems = [], [], []
        for stem in stems:
            path = own / f"{feedback_name(stem)}.md"
            if not os.path.lexists(path):
                continue
            try:
                texts.append(_read_feedback(path))
                sections.append(stem)
            except (OSError, ValueError) as err:
                problems.append(f"{path.name} left out ({printable(str(err))[:200]})")
        if student in refused:
            continue
        if not sections:
            left_out[student] = "; ".join(problems) or f"no feedback in {own} (not graded in this run?)"
            continue
        attach = _attach_to(files[student], order)
        name = _member_name(attach)
        if name is None:
            left_out[student] = f"Canvas would not read the user and file ids back from {attach.name!r}"
            continue
        if problems:
            left_out[student] = "; ".join(problems)
        member = FeedbackMember(student, name, attach.user_id, attach.file_id, tuple(sections))
        members.append((member, feedback_html(student, texts)))
    known = {feedback_name(s) for s in files}
    for stray in sorted(p.name for p in folder.iterdir() if p.name not in known and p.is_dir()):
        if any(os.path.lexists(folder / stray / f"{feedback_name(nb)}.md") for nb in order):
            left_out.setdefault(stray, "feedback, but no file of this student in the download")
    if not members:
        raise ValueError(f"no student has both feedback in {folder} and a file in {collected}: nothing written")
    members.sort(key=lambda pair: pair[0].member)
    _write_zip(out, members)
    return FeedbackZip(out, tuple(m for m, _ in members), tuple(sorted(left_out.items())))


def _write_zip(out: Path, members: Sequence[tuple[FeedbackMember, str]]) -> Path:
    """The zip, written atomically: one deflated member per student, its name UTF-8 as zipfile marks it."""
    when = datetime.now().timetuple()[:6]

    def write(handle: IO[bytes]) -> None:
        with zipfile.ZipFile(handle, "w", zipfile.ZIP_DEFLATED) as archive:
            for member, page in members:
                info = zipfile.ZipInfo(member.member, date_time=when)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o644 << 16
                archive.writestr(info, page.encode("utf-8"))

    return atomic_write(out, write, binary=True)


# --------------------------------------------------------------------------- the command
