"""Written exercises: the cell format an instructor writes (read in :mod:`dpcourse.checks._written`, which the
hand-in status needs too, and re-exported here), a student's answer read as hostile text, and the key that groups
identical answers.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from ...checks._written import (
    TAG,
    Rubric,
    RubricItem,
    WrittenExercise,
    check_exercise_id,
    check_rubric,
    check_rubric_item,
    read_written_exercises,
)

__all__ = [
    "MAX_ANSWER_BYTES",
    "TAG",
    "Answer",
    "RubricItem",
    "Rubric",
    "WrittenExercise",
    "check_exercise_id",
    "check_rubric",
    "check_rubric_item",
    "group_key",
    "read_answer",
    "read_written_exercises",
]

#: The most of one answer kept (UTF-8 bytes); the rest is cut and :attr:`Answer.cut_from` says so.
MAX_ANSWER_BYTES = 64 * 1024
# Control characters a marker must never be shown (C0 but tab and newline, DEL, C1), and the bidirectional
# overrides and isolates that make text read differently from what it is ("Trojan source").
_UNSHOWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class Answer:
    """A student's answer as it may be shown: control characters removed, at most :data:`MAX_ANSWER_BYTES`.

    Attributes
    ----------
    text : str
        The text kept.
    cut_from : int or None
        The answer's size in UTF-8 bytes when it was cut, else ``None``.

    Examples
    --------
    >>> read_answer("x" * 70_000).cut_from
    70000
    """

    text: str
    cut_from: int | None = None

    @property
    def note(self) -> str:
        """One sentence saying that the answer was cut (empty when it was not)."""
        if self.cut_from is None:
            return ""
        return f"[answer cut: {self.cut_from:,} bytes, the first {MAX_ANSWER_BYTES:,} kept]"


def read_answer(source: Any) -> Answer:
    """A student's answer cell's source as text a marker may be shown.

    The text is hostile: it may be any size and hold any character. Lines end in ``\\n``; control characters
    (but tab and newline), the bidirectional overrides and isolates, and unpaired surrogates are removed; the text
    is cut at :data:`MAX_ANSWER_BYTES` (on a character boundary) and :attr:`Answer.cut_from` keeps the original size.

    Parameters
    ----------
    source : str, list of str or bytes
        The cell's source as nbformat gives it (a string or a list of lines), or raw bytes (read as UTF-8, invalid
        sequences replaced).

    Returns
    -------
    Answer

    Raises
    ------
    TypeError
        For any other kind of value.

    Examples
    --------
    >>> read_answer(["a\\r\\n", "b\\x1b[31m\\u202e"]).text
    'a\\nb[31m'
    """
    if isinstance(source, bytes):
        text = source.decode("utf-8", errors="replace")
    elif isinstance(source, str):
        text = source
    elif isinstance(source, list) and all(isinstance(line, str) for line in source):
        text = "".join(source)
    else:
        raise TypeError(f"source must be a string, a list of strings or bytes; got {type(source).__name__}")
    encoded = text.encode("utf-8", errors="replace")  # an unpaired surrogate becomes "?"
    size = len(encoded)
    if size > MAX_ANSWER_BYTES:
        encoded = encoded[:MAX_ANSWER_BYTES]
    text = encoded.decode("utf-8", errors="ignore")  # a character cut in two is dropped
    text = _UNSHOWABLE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return Answer(text, size if size > MAX_ANSWER_BYTES else None)


def group_key(text: str) -> str:
    """The key under which identical answers are marked once.

    Parameters
    ----------
    text : str
        An answer's text (as :func:`read_answer` returns it).

    Returns
    -------
    str
        The SHA-256 hex digest of the text with Unicode compatibility forms folded (NFKC), case folded and every
        run of whitespace made one space, trimmed.

    Raises
    ------
    TypeError
        When ``text`` is not a string.

    Examples
    --------
    >>> group_key("  The  Step\\n fails ") == group_key("the step fails")
    True
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string; got {type(text).__name__}")
    normal = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()
