"""The grader's side of a check cell: collect evidence in the student's kernel, judge nothing here.

The grader (:mod:`dpcourse.classroom`) wraps each of the instructor's check cells as::

    with dpcourse.checks._grading.collect("<exercise>", "<nonce>", <seed>):
        <the check cell's code>

Inside, every :class:`~dpcourse.checks._core.Exercise` call records its evidence instead of
judging it; on leaving, one output with the MIME type :data:`MIME` carries the nonce, the
exercise and the evidence (or the error that stopped the cell). The nonce is fresh per cell and
run, so an output printed by earlier student code is not taken for the check's.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from . import _core

__all__ = ["MIME", "collect"]

MIME = "application/vnd.dpcourse.evidence"


@contextmanager
def collect(exercise: str, nonce: str, seed: int | None = None) -> Iterator[list]:
    """Record the evidence of the check calls inside the block and publish it once, at the end.

    ``seed``: function exercises are called on inputs drawn from it (see ``Exercise.cases``).
    """
    records: list = []
    error = None
    _core._COLLECTOR, _core._SEED = records, seed
    try:
        yield records
    except Exception as err:  # noqa: BLE001 - e.g. NameError when the student deleted their answer
        error = _core._describe_error(err)
    finally:
        _core._COLLECTOR, _core._SEED = None, None
        payload = json.dumps({"nonce": nonce, "exercise": exercise, "records": records, "error": error}, default=str)
        try:
            from IPython.display import display

            display({MIME: payload}, raw=True)
        except ImportError:  # pragma: no cover
            print(payload)
