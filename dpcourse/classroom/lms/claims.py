"""Who each file belongs to: the LMS's identities matched to the roster's students, or made safe folder names.

A person is only what the LMS writes and the student cannot choose (Canvas's user id, Gradescope's ``sid`` and
e-mail, a folder's own name). With a roster the student is the roster's id, matched exactly after NFC; two LMS
accounts that match one roster student equally get neither's file. Without a roster two people whose names make
the same folder name, even only in case, both get their LMS id appended.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..gradebook.roster import RosterEntry
from .archive import (
    _folder_name,
    _Identity,
    _nfc,
    safe_student,
)
from .collected import NOT_ROSTER


def _check_roster(roster: Sequence[RosterEntry] | None) -> None:
    """:class:`ValueError` for a roster that would put two students in one folder or one id on two students."""
    entries = list(roster or [])
    unsafe = [e.student for e in entries if safe_student(e.student) is None]
    if unsafe:
        raise ValueError(f"--roster: student id {unsafe[0]!r} cannot be a folder name (see safe_student)")
    seen: dict[str, str] = {}
    for e in entries:
        folded = _nfc(e.student).casefold()
        if folded in seen and seen[folded] != e.student:
            raise ValueError(
                f"--roster: student ids {seen[folded]!r} and {e.student!r} differ only in case or form "
                "(they would share a folder on a case-insensitive disk)"
            )
        seen[folded] = e.student
    for column in ("canvas_id", "sid", "email"):
        owners: dict[str, str] = {}
        for e in entries:
            value = _nfc(getattr(e, column))
            value = value.casefold() if column == "email" else value
            if value and owners.setdefault(value, e.student) != e.student:
                raise ValueError(f"--roster: {column} {value!r} is given to both {owners[value]!r} and {e.student!r}")


@dataclass(frozen=True)
class _Claim:
    """The roster student an LMS identity points at, how strongly (more ids agreeing), or why none."""

    student: str | None
    strength: int = 0
    note: str = ""


def _roster_claims(kind: str, people: dict[str, _Identity], roster: Sequence[RosterEntry]) -> dict[str, _Claim]:
    def index(column: str, fold: bool = False) -> dict[str, str]:
        found = {_nfc(getattr(e, column)): str(safe_student(e.student)) for e in roster if getattr(e, column)}
        return {k.casefold(): v for k, v in found.items()} if fold else found

    canvas, sid, email = index("canvas_id"), index("sid"), index("email", fold=True)
    lms_ids = {"canvas": ("canvas_id",), "gradescope": ("sid", "email"), "folders": ()}[kind]
    by_name = {_nfc(e.student): str(safe_student(e.student)) for e in roster if not any(getattr(e, c) for c in lms_ids)}
    claims: dict[str, _Claim] = {}
    for key, who in people.items():
        if who.canvas_id and who.canvas_id in canvas:
            claims[key] = _Claim(canvas[who.canvas_id], 2)
            continue
        by_sid, by_email = sid.get(who.sid) if who.sid else None, email.get(who.email) if who.email else None
        if by_sid and by_email and by_sid != by_email:
            why = f"the roster gives sid {who.sid} to {by_sid} and {who.email} to {by_email}: {who.label}"
            claims[key] = _Claim(None, note=why)
        elif by_sid or by_email:
            claims[key] = _Claim(by_sid or by_email, 2 if by_sid and by_email else 1)
        elif (named := by_name.get(_nfc(who.name))) is not None:
            claims[key] = _Claim(named)
        else:
            claims[key] = _Claim(None, note=f"{NOT_ROSTER}: {who.label}")
    return claims


def _students(kind: str, people: dict[str, _Identity], roster: Sequence[RosterEntry] | None) -> dict[str, _Claim]:
    """LMS identity key → the student it is (or why it is none); never two identities for one student."""
    if roster is None:
        return {key: _Claim(folder) for key, folder in _unique_folders(list(people.values())).items()}
    claims = _roster_claims(kind, people, roster)
    by_student: dict[str, list[str]] = defaultdict(list)
    for key, claim in claims.items():
        if claim.student is not None:
            by_student[claim.student].append(key)
    for student, keys in by_student.items():
        if len(keys) == 1:
            continue
        best = max(claims[k].strength for k in keys)
        winners = [k for k in keys if claims[k].strength == best]
        for key in keys:
            if len(winners) > 1:
                labels = ", ".join(people[k].label for k in sorted(winners))
                note = f"{len(winners)} LMS accounts match roster student {student} alike ({labels}): not collected"
            elif key != winners[0]:
                note = f"{people[key].label} also matches roster student {student}, who is {people[winners[0]].label}"
            else:
                continue
            claims[key] = _Claim(None, note=note)
    return claims


def _unique_folders(people: list[_Identity]) -> dict[str, str]:
    """A folder name per person, no two alike even in case: a name shared by several people gets each one's LMS
    id appended (then a number, if that too is taken); a name only one person has stays as it is."""
    shared = Counter(who.name.casefold() for who in people)
    folders = {who.key: who.name for who in people if shared[who.name.casefold()] == 1}
    used = {name.casefold() for name in folders.values()}
    for number, who in enumerate(sorted((w for w in people if w.key not in folders), key=lambda w: w.key)):
        suffix = _folder_name(who.suffix, "") if who.suffix else ""
        stem = f"{who.name[:60]}_{suffix[:60]}" if suffix else who.name[:60]
        stem = stem if safe_student(stem) else f"student_{number}"
        name, copy = stem, 1
        while name.casefold() in used:
            copy += 1
            name = f"{stem}_{copy}"
        folders[who.key] = name
        used.add(name.casefold())
    return folders
