"""The command line's argument types: each reads one flag's text with :mod:`dpcourse.classroom.validation` and turns
its :class:`ValueError` into argparse's error, which names the flag."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from ..grading.run import parse_shard
from ..sandbox.limits import MIN_MEMORY_BYTES
from ..validation import TimeError, memory_bytes, parse_time, positive_number

__all__ = ["due", "memory", "positive", "shard"]


def memory(text: str) -> int:
    """``--memory``: an amount such as ``2G`` (:func:`~dpcourse.classroom.validation.memory_bytes`), at least what a
    kernel with the course's libraries needs.

    Parameters
    ----------
    text : str
        What the user typed.

    Returns
    -------
    int
        Bytes.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not such an amount.
    """
    try:
        return memory_bytes(text, MIN_MEMORY_BYTES)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def positive(kind: type[int] | type[float]) -> Any:
    """The argument type of a number > 0 read as ``kind`` (:func:`~dpcourse.classroom.validation.positive_number`).

    Parameters
    ----------
    kind : type
        ``int`` or ``float``.

    Returns
    -------
    callable
        What argparse's ``type=`` takes: text → the number.

    Raises
    ------
    argparse.ArgumentTypeError
        From the returned callable, for text that is not a number > 0.
    """

    def parse(text: str) -> float:
        try:
            return positive_number(text, kind)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None

    return parse


def shard(text: str) -> tuple[int, int]:
    """``--shard I/N`` (:func:`~dpcourse.classroom.grading.run.parse_shard`).

    Parameters
    ----------
    text : str
        What the user typed.

    Returns
    -------
    tuple of (int, int)
        ``(I, N)``.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not ``I/N`` with 0 <= I < N.
    """
    try:
        return parse_shard(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def due(text: str) -> datetime:
    """``--due``: an ISO 8601 time with its offset (:func:`~dpcourse.classroom.validation.parse_time`).

    Parameters
    ----------
    text : str
        What the user typed.

    Returns
    -------
    datetime.datetime
        The aware time.

    Raises
    ------
    argparse.ArgumentTypeError
        If ``text`` is not such a time.
    """
    try:
        return parse_time(text)
    except TimeError:
        raise argparse.ArgumentTypeError(
            f"--due must be an ISO 8601 time with its timezone, such as 2026-11-30T23:59-08:00; got {text!r}"
        ) from None
