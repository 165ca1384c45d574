"""What collecting found: one row per file of the input (``collected.csv``, :data:`COLUMNS`), kept or not and why."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .archive import (
    REPORT,
)

__all__ = ["COLUMNS", "KINDS", "CollectResult", "CollectedFile"]


COLUMNS = ("student", "notebook", "source_file", "submitted_at", "late", "kept", "note")

KINDS = ("canvas", "gradescope", "folders")

NOT_COURSE = "not a notebook of this course"

NOT_ROSTER = "not on the roster"

OLDER = "older submission"


@dataclass(frozen=True)
class CollectedFile:
    """One row of ``collected.csv``: a file of the input, and what became of it.

    Attributes
    ----------
    student : str
        The student the file is from (the roster's id, or the folder name made from the LMS), whether it was
        kept or not; empty where the file is from no student on the roster or is not named as the LMS names
        files.
    notebook : str
        The course notebook's stem it was matched to; empty where it was matched to none.
    source_file : str
        The file's name in the input (a zip member's path, or ``<student>/<file>`` of a folder).
    submitted_at : str
        ISO 8601 (with the timezone where the LMS gave one); empty where unknown.
    late : bool or None
        The LMS's late mark (for Gradescope: after ``due``); None where unknown.
    kept : bool
        Whether this file was written to ``out/<student>/<notebook>.ipynb``.
    note : str
        Why the file was not kept (``older submission (kept …)`` for one a later file replaced), or how a kept
        one was matched (by its cells, a group submission).
    """

    student: str
    notebook: str
    source_file: str
    submitted_at: str = ""
    late: bool | None = None
    kept: bool = False
    note: str = ""

    def cells(self) -> list[str]:
        """The row as ``collected.csv`` holds it.

        Returns
        -------
        list of str
            One text per column of :data:`COLUMNS`, in order; ``late`` and ``kept`` as ``true``/``false``
            (``late`` empty where unknown).
        """
        late = "" if self.late is None else str(self.late).lower()
        return [
            self.student,
            self.notebook,
            self.source_file,
            self.submitted_at,
            late,
            str(self.kept).lower(),
            self.note,
        ]


@dataclass(frozen=True)
class CollectResult:
    """What a collection did: every row, and where it wrote.

    Attributes
    ----------
    kind : str
        The input's kind, one of :data:`KINDS`.
    out : pathlib.Path
        The folder written: ``out/<student>/<notebook>.ipynb`` and ``out/collected.csv``.
    rows : tuple of CollectedFile
        One row per file of the input (per person, for a group's file), as in ``collected.csv``.
    absent : tuple of str
        The roster's students of whom no notebook was collected, in the roster's order (empty without a roster).
    """

    kind: str
    out: Path
    rows: tuple[CollectedFile, ...]
    absent: tuple[str, ...] = ()

    @property
    def kept(self) -> list[CollectedFile]:
        """The files collected (one per student and notebook)."""
        return [r for r in self.rows if r.kept]

    @property
    def older(self) -> list[CollectedFile]:
        """Files of a student's notebook that a later one replaced."""
        return [r for r in self.rows if not r.kept and r.note.startswith(OLDER)]

    @property
    def ignored(self) -> list[CollectedFile]:
        """Files not collected for any other reason (the note says which; ``student`` says whose, when known)."""
        return [r for r in self.rows if not r.kept and not r.note.startswith(OLDER)]

    @property
    def students(self) -> list[str]:
        """The students with at least one notebook collected, sorted."""
        return sorted({r.student for r in self.kept})

    def summary(self, *, shown: int = 20) -> str:
        """The printed summary: students, files kept, older and ignored files, late files, students without any.

        Parameters
        ----------
        shown : int, optional
            The most files listed under each heading; the rest are counted and left to ``collected.csv``.

        Returns
        -------
        str
            Several lines: the counts, then the late files kept, the older files, the ignored ones (with their
            student where known) and the roster's students of whom no notebook was collected, with what they
            handed in instead.
        """
        lines = [
            f"collect {self.kind}: {len(self.students)} students, {len(self.kept)} notebooks kept in {self.out}",
        ]
        late = [r for r in self.kept if r.late]
        handed: dict[str, list[CollectedFile]] = defaultdict(list)
        for r in self.rows:
            handed[r.student].append(r)
        sections: tuple[tuple[str, Sequence[Any], Callable[[Any], str]], ...] = (
            ("late (kept)", late, lambda r: f"{r.student}/{r.notebook}: {r.source_file}"),
            ("older files, not kept", self.older, lambda r: f"{r.student}/{r.notebook}: {r.source_file}: {r.note}"),
            ("ignored", self.ignored, lambda r: (f"{r.student}: " if r.student else "") + f"{r.source_file}: {r.note}"),
            ("on the roster, no notebook collected", self.absent, lambda s: f"{s}: {_instead(handed.get(s, []))}"),
        )
        for title, rows, line in sections:
            lines.append(f"{title}: {len(rows)}")
            lines += [f"  {line(r)}" for r in rows[:shown]]
            if len(rows) > shown:
                lines.append(f"  … and {len(rows) - shown} more (see {REPORT})")
        lines.append(f"every file is listed in {self.out / REPORT}")
        return "\n".join(lines)


def _instead(rows: list[CollectedFile]) -> str:
    """What a student without a collected notebook handed in, for the summary."""
    if not rows:
        return "nothing in the input"
    named = "; ".join(f"{r.source_file} ({r.note})" for r in rows[:3])
    return f"handed in {named}" + (f" and {len(rows) - 3} more" if len(rows) > 3 else "")
