"""The course file, ``course.toml``: assignments, due times, the late policy and extensions.

Beside the instructor's notebooks, one TOML file says how the notebooks are graded as a course::

    timezone = "America/New_York"   # the course's IANA time zone (optional)

    [late]
    grace_minutes = 15          # handed in up to 15 minutes after the due time: on time
    penalty_per_day = 0.1       # each started day late costs 10 % of the assignment's points
    max_penalty = 0.5           # never more than half of them
    accept_late = true          # false: late work scores 0

    [assignments.week1]
    name = "Week 1: the Laplace mechanism"          # the column in Canvas, the Gradescope file
    notebooks = ["01_laplace_utility", "02_rr_vs_laplace"]
    due = 2026-10-05T23:59:00                       # in the course's time zone (or with an offset)
    points = { max-queries = 2 }                    # overrides the notebook's points for an exercise
    extra_credit = ["better-mechanism"]             # counts above the assignment's maximum
    partial_credit = ["exact-tail-level"]           # the share of grading inputs passed counts

    [canvas]                    # for `dpcourse canvas pull|push` (optional)
    url = "https://canvas.example.edu"
    course_id = 12345
    # and in an assignment's table: canvas_id = 67890 (the number in its Canvas address)

    [extensions.ada]
    week1 = 2026-10-07T23:59:00-04:00               # a new due time
    [extensions.bob]
    week1 = 2                                       # or extra days, on the course's calendar

    [similarity]
    threshold = 0.8             # answer pairs this alike or more are listed in the class summary (0 to 1)

An exercise is named by its id, or ``"<notebook>/<exercise>"`` when two notebooks of one
assignment share the id. A written exercise (marked by hand) is an exercise like any other in ``points`` and
``extra_credit``; ``partial_credit`` refuses it (it has no grading inputs: its marks are its points).
:func:`load_course` checks every key against the outline of the notebooks (:func:`~.plan.read_outline`) and
refuses anything it does not know, with :class:`CourseError`: one line naming the key as a dotted path and the
values allowed there.

Due times are calendar times in the course's time zone, ``timezone`` (an IANA name such as
``America/New_York``, read with :mod:`zoneinfo`): a due time written without an offset is read in it (one
that daylight saving skips or repeats is refused), and an extension's extra days are added on its calendar,
so that two days after 23:59 on the Friday before daylight saving ends is 23:59 on the Sunday, not 22:59.
Without ``timezone`` every due time needs its offset and extra days are 24 hours each.

Extensions are keyed by the roster's student id, compared after Unicode NFC (:func:`~.validation.student_id`).
Given the roster's ids, :func:`load_course` refuses an extension key that is none of them, or that is one of
them only after normalisation (an NFD ``zoë`` beside the roster's NFC one): an extension must never miss its
student silently.

Lateness (:meth:`Course.lateness`) is measured from the student's due time (an extension
replaces it): within the grace period the work is on time; after it, every started day from the
due time costs ``penalty_per_day`` of the assignment's points, at most ``max_penalty``; with
``accept_late = false`` late work scores 0. A late mark without a time (Canvas's zip) costs one started
day, except for a student whose due time is an extension: that costs nothing and says to check.

``[similarity] threshold`` (more than 0, at most 1; :data:`~.similarity.DEFAULT_THRESHOLD` without it) is
the lowest score at which the class summary lists two students' answers as alike (:mod:`.similarity`).

Every number is finite and bounded: an exercise's points (the course file's or the notebook's) more than 0
and at most :data:`MAX_POINTS`, ``grace_minutes`` at most :data:`MAX_GRACE_MINUTES` (a year), extra days
at most 365, so that totals, the summary's figure and due times stay ordinary numbers.

The file is checked by hand (:class:`_Reader` over :mod:`dpcourse.classroom.validation`), not by a JSON Schema
(``jsonschema`` is installed): weighed for issue 41 and kept, because most of what is checked is not a schema's
(an exercise named in the instructor's notebooks, an extension's student compared after NFC, a due time read in the
course's zone and refused in a daylight-saving gap, extra days counted on the calendar), and each message names
the file, the key's dotted path and the allowed range, which a schema's errors would have to be rewritten into.
"""

from __future__ import annotations

import math
import re
import tomllib
import urllib.parse
import zoneinfo
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from .grading.similarity import DEFAULT_THRESHOLD
from .validation import TimeError, number_in_range, parse_time, shown, student_id, time_zone

__all__ = [
    "COURSE_FILE",
    "CanvasSite",
    "MAX_GRACE_MINUTES",
    "MAX_POINTS",
    "Assignment",
    "Course",
    "CourseError",
    "LatePolicy",
    "Lateness",
    "duration_text",
    "load_course",
]

COURSE_FILE = "course.toml"
MAX_POINTS = 10_000.0  # an exercise's points, at most
MAX_GRACE_MINUTES = 365 * 24 * 60.0  # a year, as for extra days
_TOP = ("assignments", "canvas", "extensions", "late", "similarity", "timezone")
_ASSIGNMENT = ("canvas_id", "due", "extra_credit", "name", "notebooks", "partial_credit", "points")
_CANVAS = ("course_id", "url")
_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")  # http:// is allowed only for a local server (the tests')
_MAX_CANVAS_ID = 2**63 - 1  # Canvas's ids are 64-bit integers
_LATE = ("accept_late", "grace_minutes", "max_penalty", "penalty_per_day")
_SIMILARITY = ("threshold",)
_KEY = re.compile(r"[A-Za-z0-9_-]+")
_DAY = timedelta(days=1)


class CourseError(ValueError):
    """A course file that cannot be used: the message is one line naming the key and what is allowed."""


@dataclass(frozen=True)
class CanvasSite:
    """Where the course lives on Canvas (``[canvas]``): the instance's address and the course's id.

    Attributes
    ----------
    url : str
        The instance's base address, ``https://canvas.example.edu`` (no trailing slash, no path).
    course_id : int
        The number in the course's address (``/courses/<course_id>``).
    """

    url: str
    course_id: int


@dataclass(frozen=True)
class LatePolicy:
    """How late work is scored; penalties are fractions of the assignment's points (0 to 1).

    Attributes
    ----------
    grace_minutes : float
        Minutes after the due time within which work still counts as on time (``[late] grace_minutes``, ≥ 0).
    penalty_per_day : float
        The share of the assignment's points each started day late costs, 0 to 1.
    max_penalty : float
        The largest share late work can lose, 0 to 1.
    accept_late : bool
        False: late work (past the grace period) scores 0.
    """

    grace_minutes: float = 0.0
    penalty_per_day: float = 0.0
    max_penalty: float = 1.0
    accept_late: bool = True


@dataclass(frozen=True)
class Lateness:
    """How late one student's assignment was and what it costs.

    Attributes
    ----------
    late_by : datetime.timedelta or None
        How long after the student's due time the work came in; None when the time is unknown (the
        collector said late but gave no time).
    due : datetime.datetime or None
        The student's due time (an extension's, else the assignment's); None when the assignment has none.
    submitted_at : datetime.datetime or None
        When the work was handed in; None when unknown.
    days : int
        Started days late, counted from the due time; 1 for a late mark without a time, 0 within the grace
        period, without a due time or when :attr:`needs_check`.
    fraction : float
        The share of the assignment's points deducted, 0 to 1 (1 when late work is not accepted).
    accepted : bool
        False when the course does not accept late work (the assignment then scores 0).
    within_grace : bool
        Handed in after the due time but within the grace period: on time, no penalty (:attr:`late` is False).
    needs_check : bool
        Marked late without a time, by a student whose due time is an extension: how late (if at all) is
        unknown, so nothing is charged and the instructor should check the time.
    """

    late_by: timedelta | None
    due: datetime | None
    submitted_at: datetime | None
    days: int = 0
    fraction: float = 0.0
    accepted: bool = True
    within_grace: bool = False
    needs_check: bool = False

    @property
    def late(self) -> bool:
        """Whether the work counts as late (false only within the grace period)."""
        return not self.within_grace


@dataclass(frozen=True)
class Assignment:
    """One assignment: its notebooks, due time and the points of each exercise, ``(notebook, exercise)`` keyed.

    Attributes
    ----------
    key : str
        The course file's key (``[assignments.<key>]``): letters, digits, ``-`` and ``_``.
    name : str
        The name students and the LMS see (the Canvas column, the Gradescope file); the key by default.
    notebooks : tuple of str
        The stems of the assignment's notebooks.
    due : datetime.datetime or None
        The due time, with its timezone; None only without a course file (:meth:`Course.from_outline`).
    points : Mapping
        ``(notebook, exercise)`` → points: the notebook's own points unless the course file overrides them.
    extra_credit : frozenset of tuple of str
        The ``(notebook, exercise)`` pairs that count above :attr:`maximum`.
    partial_credit : frozenset of tuple of str
        The ``(notebook, exercise)`` pairs whose share of grading inputs passed counts.
    canvas_id : int or None
        The assignment's id on Canvas (``canvas_id``, the number in its address), for ``dpcourse canvas``.
    """

    key: str
    name: str
    notebooks: tuple[str, ...]
    due: datetime | None
    points: Mapping[tuple[str, str], float]
    extra_credit: frozenset[tuple[str, str]] = frozenset()
    partial_credit: frozenset[tuple[str, str]] = frozenset()
    canvas_id: int | None = None

    @property
    def maximum(self) -> float:
        """The assignment's points, extra credit left out."""
        return float(sum(p for key, p in self.points.items() if key not in self.extra_credit))


@dataclass(frozen=True)
class Course:
    """The assignments of a course, its late policy and per-student due times (extensions).

    Attributes
    ----------
    assignments : tuple of Assignment
        In the course file's order; no notebook is in two of them.
    late : LatePolicy
        How late work is scored (by default: no grace period, no penalty, late work accepted).
    extensions : Mapping
        Student id (NFC, :func:`~.validation.student_id`) → {assignment key: that student's due time}.
    timezone : zoneinfo.ZoneInfo or None
        The course's time zone (``timezone = "America/New_York"``): offset-less due times are read in it and
        extra days are added on its calendar; None when the course file gives none.
    similarity_threshold : float
        ``[similarity] threshold``: answer pairs at least this alike (0 to 1) are listed in the class summary.
    canvas : CanvasSite or None
        The course on Canvas (``[canvas]``), for ``dpcourse canvas``; None when the course file gives none.
    """

    assignments: tuple[Assignment, ...]
    late: LatePolicy = LatePolicy()
    extensions: Mapping[str, Mapping[str, datetime]] = field(default_factory=dict)
    timezone: zoneinfo.ZoneInfo | None = None
    similarity_threshold: float = DEFAULT_THRESHOLD
    canvas: CanvasSite | None = None

    @classmethod
    def from_outline(cls, outline: Mapping[str, Mapping[str, float]]) -> Course:
        """No course file: each notebook is an assignment of its own, with the notebook's points and no due time.

        Parameters
        ----------
        outline : Mapping
            Notebook stem → {exercise id: points}, as :func:`~.plan.read_outline` gives it.

        Returns
        -------
        Course
            One assignment per notebook, keyed and named by its stem, with the default :class:`LatePolicy`
            and no extensions.
        """
        return cls(
            tuple(
                Assignment(nb, nb, (nb,), None, {(nb, ex): float(p) for ex, p in exercises.items()})
                for nb, exercises in outline.items()
            )
        )

    def assignment(self, key: str) -> Assignment:
        """The assignment called ``key``.

        Parameters
        ----------
        key : str
            The assignment's key in the course file.

        Returns
        -------
        Assignment
            The assignment with that key.

        Raises
        ------
        KeyError
            If the course has no assignment called ``key``.
        """
        for assignment in self.assignments:
            if assignment.key == key:
                return assignment
        raise KeyError(key)

    def assignment_of(self, notebook: str) -> Assignment | None:
        """The assignment that holds ``notebook``, or None when the course does not grade it.

        Parameters
        ----------
        notebook : str
            A notebook's stem.

        Returns
        -------
        Assignment or None
            The (only) assignment listing ``notebook``; None when none does.
        """
        return next((a for a in self.assignments if notebook in a.notebooks), None)

    def partial_credit(self, notebook: str) -> frozenset[str]:
        """The exercises of ``notebook`` whose share of grading inputs passed counts (for the judge).

        Parameters
        ----------
        notebook : str
            A notebook's stem.

        Returns
        -------
        frozenset of str
            The exercise ids of ``notebook`` in its assignment's ``partial_credit``; empty when the course
            does not grade the notebook.
        """
        assignment = self.assignment_of(notebook)
        if assignment is None:
            return frozenset()
        return frozenset(ex for nb, ex in assignment.partial_credit if nb == notebook)

    def due_for(self, student: str, assignment: Assignment) -> datetime | None:
        """The student's due time for ``assignment``: an extension's, else the assignment's.

        Parameters
        ----------
        student : str
            The student's id, as the course file's ``[extensions.<student>]`` names it.
        assignment : Assignment
            One of the course's assignments.

        Returns
        -------
        datetime.datetime or None
            The extension's due time for this student, else ``assignment.due`` (None when it has none).
        """
        return self.extensions.get(student, {}).get(assignment.key, assignment.due)

    def extended(self, student: str, assignment: Assignment) -> bool:
        """Whether ``student``'s due time for ``assignment`` is an extension's.

        Parameters
        ----------
        student : str
            The student's id, as the course file's ``[extensions.<student>]`` names it (NFC).
        assignment : Assignment
            One of the course's assignments.

        Returns
        -------
        bool
            True when the course file gives this student an extension for this assignment.
        """
        return assignment.key in self.extensions.get(student, {})

    def lateness(
        self, student: str, assignment: Assignment, submitted_at: datetime | None, flagged_late: bool | None = None
    ) -> Lateness | None:
        """How late ``student`` handed ``assignment`` in; None when on time or when nothing says it was late.

        With a due time and ``submitted_at``, both decide, to the minute (work within the grace period comes
        back with ``within_grace`` set, so that the feedback can say so); in a course with a time zone, how
        late is counted on its calendar, as extra days are. Where either is unknown,
        ``flagged_late`` (the collector's late column) marks the work late: with a due time it costs what one
        started day costs (all of it when late work is not accepted), since how late is unknown; without a due
        time it costs nothing. A student whose due time is an extension is never charged on a mark without a
        time (the LMS marks against its own due date, which knows nothing of the course file's extension): the
        result has ``needs_check`` set and costs nothing.

        Parameters
        ----------
        student : str
            The student's id (whose extension, if any, replaces the due time).
        assignment : Assignment
            One of the course's assignments.
        submitted_at : datetime.datetime or None
            When the work was handed in, with a timezone; None when unknown.
        flagged_late : bool or None, optional
            The collector's own late mark, used only when the due time or ``submitted_at`` is unknown.

        Returns
        -------
        Lateness or None
            How late and what it costs; None when the work was on time, or nothing says it was late.
        """
        due = self.due_for(student, assignment)
        policy = self.late
        if due is None or submitted_at is None:
            if not flagged_late:
                return None
            if due is None:
                return Lateness(None, due, submitted_at)
            if self.extended(student, assignment):
                return Lateness(None, due, None, needs_check=True)
            # Marked late with no time (Canvas's zip says LATE, not when): the least a late mark can mean,
            # one started day.
            if not policy.accept_late:
                return Lateness(None, due, None, 1, 1.0, accepted=False)
            return Lateness(None, due, None, 1, min(policy.max_penalty, policy.penalty_per_day))
        if submitted_at <= due:
            return None
        late_by = _late_by(due, submitted_at)
        if late_by <= timedelta(minutes=policy.grace_minutes):
            return Lateness(late_by, due, submitted_at, within_grace=True)
        days = math.ceil(late_by / _DAY)
        if not policy.accept_late:
            return Lateness(late_by, due, submitted_at, days, 1.0, accepted=False)
        return Lateness(late_by, due, submitted_at, days, min(policy.max_penalty, policy.penalty_per_day * days))


def _late_by(due: datetime, submitted_at: datetime) -> timedelta:
    """How late, on the course's calendar when the due time is in its zone (so that a day late is the same wall-clock
    time a day later, as an extension's extra day is, across a daylight saving change); else the time elapsed."""
    elapsed = submitted_at - due
    if not isinstance(due.tzinfo, zoneinfo.ZoneInfo):
        return elapsed
    on_the_calendar = submitted_at.astimezone(due.tzinfo).replace(tzinfo=None) - due.replace(tzinfo=None)
    return on_the_calendar if on_the_calendar > timedelta(0) else elapsed  # the hour daylight saving repeats


def duration_text(span: timedelta) -> str:
    """``2 days 3 h 5 min``: a lateness as a student reads it (whole minutes, rounded up).

    Parameters
    ----------
    span : datetime.timedelta
        The time to show, ≥ 0.

    Returns
    -------
    str
        Days, hours and minutes, leaving out those that are zero (``0 min`` for a zero span).

    Examples
    --------
    >>> from datetime import timedelta
    >>> duration_text(timedelta(days=2, hours=3, minutes=4, seconds=1))
    '2 days 3 h 5 min'
    >>> duration_text(timedelta(hours=1))
    '1 h'
    """
    minutes = math.ceil(span.total_seconds() / 60)
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{days} day{'s' if days != 1 else ''}"] if days else []
    parts += [f"{hours} h"] if hours else []
    parts += [f"{minutes} min"] if minutes or not parts else []
    return " ".join(parts)


# --------------------------------------------------------------------------- reading the file


def _dotted(parts: Sequence[str]) -> str:
    return ".".join(p if _KEY.fullmatch(p) else repr(p).replace("'", '"') for p in parts)


class _Reader:
    """Validation with the file's name and the key's dotted path in every message."""

    def __init__(self, path: Path, outline: Mapping[str, Mapping[str, float]], written: Collection = ()):
        self.path, self.outline, self.written = path, outline, frozenset(written)
        self.zone: zoneinfo.ZoneInfo | None = None  # the course's time zone, once read

    def fail(self, parts: Sequence[str], problem: str) -> CourseError:
        where = f"{self.path}: {_dotted(parts)}: " if parts else f"{self.path}: "
        return CourseError(" ".join((where + problem).split()))  # one line, whatever the values held

    def table(self, value: object, parts: Sequence[str], allowed: Sequence[str] | None) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(parts, f"must be a table, got {shown(value)}")
        if allowed is not None:
            unknown = sorted(set(value) - set(allowed))
            if unknown:
                raise self.fail([*parts, unknown[0]], f"unknown key (allowed: {', '.join(allowed)})")
        return value

    def number(self, value: object, parts: Sequence[str], low: float, high: float, *, open_low: bool = False) -> float:
        try:
            return number_in_range(value, low, high, open_low=open_low)
        except ValueError as err:
            raise self.fail(parts, str(err)) from None

    def moment(self, value: object, parts: Sequence[str]) -> datetime:
        """A date and time with its offset; one without is read in the course's zone, else refused."""
        example = "write it like 2026-10-05T23:59:00-04:00 (ISO 8601 with a timezone offset)"
        if self.zone is not None:
            example = f"write it like 2026-10-05T23:59:00 (in {self.zone.key}) or with its offset, -04:00"
        try:
            moment = parse_time(value, zone=self.zone)
        except TimeError as err:
            if err.kind == "unreadable":
                raise self.fail(parts, f"{err}; {example}") from None
            if err.kind == "no offset":
                raise self.fail(
                    parts,
                    f"{err}; {example}, or give the course's "
                    'timezone = "America/New_York" (an IANA name) at the top of the file',
                ) from None
            raise self.fail(parts, str(err)) from None
        return moment if self.zone is None else moment.astimezone(self.zone)

    def time_zone(self, value: object) -> zoneinfo.ZoneInfo:
        """The course's ``timezone``: an IANA name this machine's time-zone database knows."""
        try:
            return time_zone(value)
        except ValueError as err:
            raise self.fail(["timezone"], str(err)) from None


def load_course(
    path: Path | str,
    outline: Mapping[str, Mapping[str, float]],
    *,
    students: Collection[str] | None = None,
    written: Collection[tuple[str, str]] = (),
) -> Course:
    """Read and check ``course.toml`` against ``outline`` (notebook stem → {exercise id: points}) and the roster.

    Parameters
    ----------
    path : str or pathlib.Path
        The course file (TOML, in the format of the module's docstring).
    outline : Mapping
        Notebook stem → {exercise id: points}, the whole course as :func:`~.plan.read_outline` reads it
        from the instructor's notebooks: every notebook and exercise the file names must be in it.
    students : collection of str or None, optional
        The roster's student ids (:attr:`~.roster.RosterEntry.student`): every extension key must be one of
        them, exactly. None (no roster): the keys are only NFC-normalised.
    written : collection of (str, str), optional
        ``(notebook stem, exercise id)`` of each written exercise (:func:`~.plan.read_written`), which ``outline``
        holds too: ``partial_credit`` may not name them. Empty: no exercise is known to be written.

    Returns
    -------
    Course
        The assignments in the file's order, with every exercise's points (the notebook's unless
        overridden), the late policy (defaults for keys left out), the extensions as due times (keyed by the
        NFC student id) and the time zone.

    Raises
    ------
    CourseError
        One line naming the file, the key as a dotted path (``assignments.week1.due``) and the values
        allowed there: a key the format does not have, a notebook or exercise the outline does not
        have, a time zone the machine does not know, a due time without a timezone offset (when the file
        gives no ``timezone``), a penalty outside 0 to 1, two extension keys that are one student after NFC,
        an extension key that is not a roster id (``students``) or is one only after NFC (the message shows
        the key's code points), a written exercise in ``partial_credit``, and so on.
    """
    path = Path(path)
    reader = _Reader(path, outline, written)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise reader.fail([], f"not valid TOML: {err}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise reader.fail([], f"cannot be read ({err})") from None
    reader.table(data, [], _TOP)
    if "timezone" in data:
        reader.zone = reader.time_zone(data["timezone"])
    late = _late_policy(reader, data.get("late", {}))
    if "assignments" not in data:
        raise reader.fail(["assignments"], "missing: the course needs at least one assignment ([assignments.<name>])")
    raw = reader.table(data["assignments"], ["assignments"], None)
    if not raw:
        raise reader.fail(["assignments"], "the course needs at least one assignment ([assignments.<name>])")
    assignments: list[Assignment] = []
    for key, value in raw.items():
        assignments.append(_assignment(reader, key, value, assignments))
    course = Course(tuple(assignments), late, timezone=reader.zone)
    extensions = _extensions(reader, data.get("extensions", {}), course, students)
    similarity = reader.table(data.get("similarity", {}), ["similarity"], _SIMILARITY)
    threshold = reader.number(
        similarity.get("threshold", DEFAULT_THRESHOLD), ["similarity", "threshold"], 0, 1, open_low=True
    )
    site = _canvas_site(reader, data["canvas"]) if "canvas" in data else None
    return Course(course.assignments, late, extensions, reader.zone, threshold, site)


def _late_policy(reader: _Reader, value: object) -> LatePolicy:
    table = reader.table(value, ["late"], _LATE)
    accept = table.get("accept_late", True)
    if not isinstance(accept, bool):
        raise reader.fail(["late", "accept_late"], f"must be true or false, got {shown(accept)}")
    return LatePolicy(
        grace_minutes=reader.number(table.get("grace_minutes", 0), ["late", "grace_minutes"], 0, MAX_GRACE_MINUTES),
        penalty_per_day=reader.number(table.get("penalty_per_day", 0), ["late", "penalty_per_day"], 0, 1),
        max_penalty=reader.number(table.get("max_penalty", 1), ["late", "max_penalty"], 0, 1),
        accept_late=accept,
    )


def _assignment(reader: _Reader, key: str, value: object, earlier: Sequence[Assignment]) -> Assignment:
    parts = ["assignments", key]
    if not _KEY.fullmatch(key):
        raise reader.fail(parts, "an assignment's key may hold only letters, digits, '-' and '_' (it names files)")
    table = reader.table(value, parts, _ASSIGNMENT)
    name = table.get("name", key)
    if not isinstance(name, str) or not name.strip():
        raise reader.fail([*parts, "name"], f"must be a non-empty string, got {shown(name)}")
    taken = {a.name: a.key for a in earlier}
    if name in taken:
        raise reader.fail([*parts, "name"], f"{name!r} is already the name of assignments.{taken[name]}")
    notebooks = _notebooks(reader, table.get("notebooks"), [*parts, "notebooks"], earlier)
    if "due" not in table:
        raise reader.fail(
            [*parts, "due"], "missing: every assignment needs its due time, e.g. 2026-10-05T23:59:00-04:00"
        )
    due = reader.moment(table["due"], [*parts, "due"])
    exercises = {(nb, ex): float(p) for nb in notebooks for ex, p in reader.outline[nb].items()}
    overrides = reader.table(table.get("points", {}), [*parts, "points"], None)
    points = dict(exercises)
    for name_given, given in overrides.items():
        exercise = _exercise(reader, name_given, exercises, [*parts, "points", name_given])
        points[exercise] = reader.number(given, [*parts, "points", name_given], 0, MAX_POINTS, open_low=True)
    for (notebook, exercise_id), given in points.items():
        if not 0 <= given <= MAX_POINTS:  # the notebook's points (a check cell's metadata); nan fails too
            raise reader.fail(
                [*parts, "notebooks"],
                f"{notebook}'s exercise {exercise_id!r} has {given:g} points in its check cell's metadata "
                f"(allowed: from 0 to {MAX_POINTS:g}); set them in the notebook or in points = {{ {exercise_id} = … }}",
            )
    extra = _exercise_list(reader, table.get("extra_credit", []), exercises, [*parts, "extra_credit"])
    partial = _exercise_list(reader, table.get("partial_credit", []), exercises, [*parts, "partial_credit"])
    _check_function_exercises(reader, partial, exercises, [*parts, "partial_credit"])
    canvas_id = _canvas_id(reader, table["canvas_id"], [*parts, "canvas_id"]) if "canvas_id" in table else None
    used = {a.canvas_id: a.key for a in earlier if a.canvas_id is not None}
    if canvas_id in used:
        raise reader.fail(
            [*parts, "canvas_id"], f"{canvas_id} is already the canvas_id of assignments.{used[canvas_id]}"
        )
    assignment = Assignment(key, name, notebooks, due, points, extra, partial, canvas_id)
    if assignment.maximum <= 0:
        raise reader.fail([*parts, "extra_credit"], "leaves the assignment no points that are not extra credit")
    return assignment


def _canvas_id(reader: _Reader, value: object, parts: list[str]) -> int:
    """A Canvas id: a whole number from 1 (as its address shows it)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MAX_CANVAS_ID:
        raise reader.fail(parts, f"must be a whole number from 1 (the number in Canvas's address), got {shown(value)}")
    return value


def _canvas_site(reader: _Reader, value: object) -> CanvasSite:
    """``[canvas]``: ``url`` (https, or http on this machine for a local server) and ``course_id``."""
    table = reader.table(value, ["canvas"], _CANVAS)
    for key in _CANVAS:
        if key not in table:
            raise reader.fail(["canvas", key], f"missing: [canvas] needs both {' and '.join(_CANVAS)}")
    url = table["url"]
    allowed = "the instance's address, like https://canvas.example.edu (https; http only for 127.0.0.1 or localhost)"
    parsed = urllib.parse.urlsplit(url) if isinstance(url, str) else None
    loopback = parsed is not None and parsed.scheme == "http" and parsed.netloc.rsplit(":", 1)[0] in _LOOPBACK
    if (
        parsed is None
        or not (parsed.scheme == "https" or loopback)
        or not parsed.hostname
        or parsed.username is not None
        or parsed.password is not None
        or parsed.path.strip("/")
        or parsed.query
        or parsed.fragment
    ):
        raise reader.fail(["canvas", "url"], f"{shown(url)} is not allowed (allowed: {allowed})")
    return CanvasSite(url.rstrip("/"), _canvas_id(reader, table["course_id"], ["canvas", "course_id"]))


def _notebooks(reader: _Reader, value: object, parts: list[str], earlier: Sequence[Assignment]) -> tuple[str, ...]:
    allowed = ", ".join(reader.outline)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise reader.fail(parts, f"must be a non-empty list of notebook names (allowed: {allowed}), got {shown(value)}")
    owner = {nb: a.key for a in earlier for nb in a.notebooks}
    for notebook in value:
        if notebook not in reader.outline:
            raise reader.fail(parts, f"{notebook!r} is not a notebook of the course (allowed: {allowed})")
        if notebook in owner:
            raise reader.fail(parts, f"{notebook!r} is already in assignments.{owner[notebook]}")
    if len(set(value)) != len(value):
        raise reader.fail(parts, "names a notebook twice")
    return tuple(value)


def _exercise(
    reader: _Reader, name: object, exercises: Mapping[tuple[str, str], float], parts: list[str]
) -> tuple[str, str]:
    """``exercise`` or ``notebook/exercise`` → (notebook, exercise) of this assignment."""
    if isinstance(name, str) and "/" in name:
        notebook, _, exercise = name.partition("/")
        if (notebook, exercise) in exercises:
            return notebook, exercise
    matches = [key for key in exercises if key[1] == name]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        both = " and ".join(nb for nb, _ in matches)
        raise reader.fail(parts, f"{name!r} is in {both}; write it as '<notebook>/{name}'")
    allowed = ", ".join(sorted({ex for _, ex in exercises}))
    raise reader.fail(parts, f"{shown(name)} is not an exercise of this assignment (allowed: {allowed})")


def _exercise_list(
    reader: _Reader, value: object, exercises: Mapping[tuple[str, str], float], parts: list[str]
) -> frozenset[tuple[str, str]]:
    if not isinstance(value, list):
        raise reader.fail(parts, f"must be a list of exercise ids, got {shown(value)}")
    return frozenset(_exercise(reader, name, exercises, parts) for name in value)


def _check_function_exercises(
    reader: _Reader, chosen: frozenset[tuple[str, str]], exercises: Mapping[tuple[str, str], float], parts: list[str]
) -> None:
    """Partial credit is a share of grading inputs passed: only a function exercise (one with inputs) has them; a
    written exercise, marked by hand, has none (its marks are its points)."""
    from ..checks import all_exercises

    known = all_exercises()
    functions = sorted({ex for _, ex in exercises if ex in known and known[ex].cases is not None})
    allowed = f"(allowed: {', '.join(functions) or 'none in this assignment'})"
    for notebook, exercise in sorted(chosen):
        if (notebook, exercise) in reader.written:
            raise reader.fail(
                parts, f"{exercise!r} is a written exercise, marked by hand: no share of inputs {allowed}"
            )
        if exercise in known and known[exercise].cases is None:
            raise reader.fail(
                parts, f"{exercise!r} is not a function exercise, so it has no share of inputs passed {allowed}"
            )


def _extension_student(reader: _Reader, key: str, students: Collection[str] | None, taken: Mapping[str, str]) -> str:
    """The student an ``[extensions.<key>]`` table is for: ``key`` in NFC, which the roster (if any) must hold as is."""
    parts = ["extensions", key]
    student = student_id(key)
    if student in taken:
        raise reader.fail(
            parts, f"{ascii(key)} is the same student as {ascii(taken[student])} after Unicode NFC; give one table"
        )
    if students is not None and key not in students:
        alike = sorted(s for s in students if student_id(s) == student)
        if alike:
            raise reader.fail(
                parts,
                f"the key {ascii(key)} is the roster's {ascii(alike[0])} only after Unicode NFC "
                "normalisation; write it as the roster does",
            )
        raise reader.fail(parts, f"{ascii(key)} is no student id on the roster (allowed: the roster's ids)")
    return student


def _extensions(
    reader: _Reader, value: object, course: Course, students: Collection[str] | None
) -> dict[str, dict[str, datetime]]:
    keys = [a.key for a in course.assignments]
    found: dict[str, dict[str, datetime]] = {}
    written: dict[str, str] = {}  # NFC student id → the key as the file wrote it
    for name, per_assignment in reader.table(value, ["extensions"], None).items():
        student = _extension_student(reader, name, students, written)
        written[student] = name
        parts = ["extensions", name]
        table = reader.table(per_assignment, parts, keys)
        found[student] = {}
        for key, given in table.items():
            assignment = course.assignment(key)
            if isinstance(given, int | float) and not isinstance(given, bool):
                days = reader.number(given, [*parts, key], 0, 365, open_low=True)
                if assignment.due is None:  # never in a course file, where every assignment has its due time
                    raise reader.fail([*parts, key], "extra days need the assignment's due time")
                found[student][key] = _days_after(assignment.due, days, course.timezone)
            elif isinstance(given, str | datetime):
                found[student][key] = reader.moment(given, [*parts, key])
            else:
                raise reader.fail(
                    [*parts, key], f"must be a new due time or a number of extra days, got {shown(given)}"
                )
    return found


def _days_after(due: datetime, days: float, zone: zoneinfo.ZoneInfo | None) -> datetime:
    """``days`` after ``due`` on the course's calendar (the same wall-clock time when whole days across a daylight
    saving change); without a zone, ``days`` × 24 hours."""
    if zone is None:
        return due + timedelta(days=days)
    # Arithmetic on a datetime with a ZoneInfo is on the wall clock; the round trip through UTC settles a wall
    # time that daylight saving skips on its real moment.
    return (due.astimezone(zone) + timedelta(days=days)).astimezone(UTC).astimezone(zone)
