"""The classroom's inputs checked in one place: times, numbers, ids and time zones.

The library's parameters are checked by :mod:`dpcourse._validation`; the classroom's inputs come from other
places (the course file, the command line, an LMS's export, a submission's folder name), so their checks live
here, each written once:

- :func:`parse_time`: the one time parser. An ISO 8601 date and time (or a ``datetime``, as TOML gives one),
  with its offset; one without is read in a time zone when the caller has one (refused when daylight saving
  makes it skipped or repeated), else refused. LMS spellings (``Z``, ``UTC``, more than six decimals) are read
  too. :func:`time_or_none` is its lenient form for an LMS's metadata, where an unreadable time is unknown.
- :func:`number_in_range`, :func:`positive_number` and :func:`memory_bytes`: numbers from a file or the
  command line;
- :func:`time_zone`: an IANA time-zone name this machine knows;
- :func:`student_id`: a student id as the gradebook compares it (Unicode NFC).

Each raises :class:`ValueError` (a :class:`TimeError` for times) whose message says what was given and what is
allowed; the caller adds where (the course file's key, the command's flag).
"""

from __future__ import annotations

import math
import re
import unicodedata
import zoneinfo
from datetime import datetime, tzinfo

__all__ = [
    "TimeError",
    "memory_bytes",
    "number_in_range",
    "parse_time",
    "positive_number",
    "shown",
    "student_id",
    "time_or_none",
    "time_zone",
]

#: The longest time text read: an ISO 8601 time with a zone and nanoseconds is under 40 characters.
MAX_TIME_CHARS = 64


def shown(value: object) -> str:
    """``repr(value)``, cut to 40 characters: a value quoted in a message.

    Parameters
    ----------
    value : object
        Anything a file or a user gave.

    Returns
    -------
    str
        Its ``repr``, with ``...`` in place of what is over 40 characters.
    """
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class TimeError(ValueError):
    """A value that is not a time :func:`parse_time` accepts.

    Parameters
    ----------
    message : str
        What is wrong, quoting the value.
    kind : str
        ``"unreadable"`` (not a date and time), ``"no offset"`` (no offset and no time zone to read it in) or
        ``"ambiguous"`` (skipped or repeated in the time zone when daylight saving starts or ends).
    """

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


def _iso_text(text: str) -> str:
    """An LMS's ISO 8601 as :meth:`datetime.fromisoformat` reads it: ``Z``/``UTC`` as +00:00, microseconds."""
    text = re.sub(r"\s*(Z|UTC)$", "+00:00", text.strip())
    return re.sub(r"(\.\d{6})\d+", r"\1", text)


def parse_time(value: object, *, zone: tzinfo | None = None) -> datetime:
    """A date and time with its offset: the classroom's one time parser.

    Parameters
    ----------
    value : str or datetime.datetime
        ISO 8601 text (``2026-10-05T23:59:00-04:00``, ``2026-10-06T04:12:00Z``, ``…UTC``; at most
        :data:`MAX_TIME_CHARS` characters) or a ``datetime``.
    zone : tzinfo or None, optional
        The time zone a time without an offset is read in; None: such a time is refused.

    Returns
    -------
    datetime.datetime
        The time, aware: as given when it had an offset, else in ``zone``.

    Raises
    ------
    TimeError
        If ``value`` is not a date and time, has no offset and no ``zone`` was given, or falls in ``zone``'s
        daylight-saving gap or overlap.

    Examples
    --------
    >>> parse_time("2026-10-06T04:12:00Z").isoformat()
    '2026-10-06T04:12:00+00:00'
    >>> parse_time("2026-10-05T23:59", zone=zoneinfo.ZoneInfo("America/New_York")).isoformat()
    '2026-10-05T23:59:00-04:00'
    """
    if isinstance(value, str):
        try:
            if len(value) > MAX_TIME_CHARS:
                raise ValueError(value)
            moment = datetime.fromisoformat(_iso_text(value))
        except ValueError:
            raise TimeError(f"{shown(value)} is not a date and time", "unreadable") from None
    elif isinstance(value, datetime):
        moment = value
    else:
        raise TimeError(f"must be a date and time, got {shown(value)}", "unreadable")
    if moment.utcoffset() is not None:
        return moment
    if zone is None:
        raise TimeError(f"{moment.isoformat()} has no timezone offset", "no offset")
    local = moment.replace(tzinfo=zone, fold=0)
    if local.utcoffset() != moment.replace(tzinfo=zone, fold=1).utcoffset():
        name = getattr(zone, "key", str(zone))
        raise TimeError(
            f"{moment.isoformat()} is skipped or repeated in {name} when daylight saving starts or ends; "
            "write it with its offset",
            "ambiguous",
        )
    return local


def time_or_none(value: object, *, zone: tzinfo | None = None) -> datetime | None:
    """:func:`parse_time`'s time, or None where it raises (an LMS's metadata: an unreadable time is unknown).

    Parameters
    ----------
    value : object
        What the LMS gave: usually ISO 8601 text; anything else (None, a number) is unknown.
    zone : tzinfo or None, optional
        The time zone a time without an offset is read in; None: such a time is unknown.

    Returns
    -------
    datetime.datetime or None
        The aware time, or None.
    """
    try:
        return parse_time(value, zone=zone)
    except TimeError:
        return None


def number_in_range(value: object, low: float, high: float = math.inf, *, open_low: bool = False) -> float:
    """A finite real number (not a bool) from ``low`` to ``high``, as a float.

    Parameters
    ----------
    value : object
        The value a file gave.
    low, high : float
        The allowed range, both ends included (``high`` may be infinite: no upper end).
    open_low : bool, optional
        Whether ``low`` itself is excluded.

    Returns
    -------
    float
        ``value``.

    Raises
    ------
    ValueError
        ``must be a number from 0 to 1, got 2`` (or ``more than 0 and at most 100``), naming the range.
    """
    allowed = f"more than {low:g}" if open_low else f"from {low:g}"
    if high < math.inf:
        allowed += f" and at most {high:g}" if open_low else f" to {high:g}"
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"must be a number {allowed}, got {shown(value)}")
    if value < low or value > high or (open_low and value == low):
        raise ValueError(f"must be a number {allowed}, got {value:g}")
    return float(value)


def positive_number(text: str, kind: type[int] | type[float] = float) -> float:
    """A command-line number > 0 (finite), read as ``kind``.

    Parameters
    ----------
    text : str
        What the user typed.
    kind : type, optional
        ``int`` or ``float``.

    Returns
    -------
    int or float
        The number.

    Raises
    ------
    ValueError
        ``expected a positive number, got '0'``.
    """
    try:
        value = kind(text)
    except ValueError:
        raise ValueError(f"expected a positive number, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"expected a positive number, got {text!r}")
    return value


def memory_bytes(text: str, minimum: int) -> int:
    """A command-line amount of memory (``2G``, ``512M``, ``1.5GiB``) in bytes, at least ``minimum``.

    Parameters
    ----------
    text : str
        A number with an optional binary unit K, M, G or T (``B`` and ``iB`` allowed after it).
    minimum : int
        The fewest bytes allowed.

    Returns
    -------
    int
        The bytes.

    Raises
    ------
    ValueError
        If ``text`` is not such an amount, or is under ``minimum``.
    """
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", str(text), flags=re.IGNORECASE)
    if not match:
        raise ValueError(f"--memory must look like 2G or 512M; got {text!r}")
    value = float(match.group(1)) * 1024 ** " KMGT".index(match.group(2).upper() or " ")
    if value < minimum:
        raise ValueError(
            f"--memory must be at least {minimum // 1024**2}M (a kernel with numpy, scipy and matplotlib needs that)"
        )
    return int(value)


def time_zone(value: object) -> zoneinfo.ZoneInfo:
    """An IANA time-zone name this machine's time-zone database knows, as a :class:`zoneinfo.ZoneInfo`.

    Parameters
    ----------
    value : object
        The name (``America/New_York``).

    Returns
    -------
    zoneinfo.ZoneInfo
        The zone.

    Raises
    ------
    ValueError
        If ``value`` is not a name :func:`zoneinfo.available_timezones` lists.
    """
    allowed = "an IANA time-zone name such as America/New_York or Europe/Berlin (zoneinfo.available_timezones())"
    if not isinstance(value, str) or value not in zoneinfo.available_timezones():
        raise ValueError(f"{shown(value)} is not a time zone this machine knows (allowed: {allowed})")
    return zoneinfo.ZoneInfo(value)


def student_id(folder_name: str) -> str:
    """A student id as the gradebook compares it: the folder's name in Unicode NFC (a Mac unzip gives NFD).

    Parameters
    ----------
    folder_name : str
        A submission folder's name, a roster's or a course file's student id.

    Returns
    -------
    str
        Its NFC form.
    """
    return unicodedata.normalize("NFC", folder_name)
