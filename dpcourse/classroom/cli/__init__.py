"""The instructor's command line, ``python -m dpcourse <command>``: one module per command, each its parser and
the function that runs it, which only parses and calls the classroom's functions.

- :mod:`.release`: ``release``, the students' copy;
- :mod:`.collect`: ``collect``, an LMS's download as one folder per student;
- :mod:`.grade`: ``grade``, the batch, its report and gradebook;
- :mod:`.gradescope`: ``gradescope build|run``, Gradescope's autograder;
- :mod:`.feedback`: ``feedback``, the feedback zip for Canvas;
- :mod:`.canvas`: ``canvas pull|push``, Canvas's API;
- :mod:`.mark`: ``mark``, the marking app for written answers;
- :mod:`.arguments`: the argument types the commands share (positive numbers, memory, shards, times).
"""

from __future__ import annotations

import argparse
import sys
from importlib import metadata
from pathlib import Path

from ... import __version__
from ..release import missing_checkout_default
from .canvas import add_canvas_command
from .collect import add_collect_command
from .feedback import add_feedback_command
from .grade import add_grade_command
from .gradescope import add_gradescope_command
from .mark import add_mark_command
from .release import add_release_command

__all__ = ["add_grade_command", "main"]


def _version() -> str:
    """The installed distribution's version; in a source checkout that is not installed, the package's own."""
    try:
        return metadata.version("dpcourse")
    except metadata.PackageNotFoundError:
        return __version__


def main(argv: list[str] | None = None) -> int:
    """``dpcourse`` (or ``python -m dpcourse``): the ``release``, ``collect``, ``grade`` and ``gradescope`` commands.

    Parameters
    ----------
    argv : list of str or None, optional
        The arguments after the program's name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        The sub-command's exit status (for ``grade``: see the module's docstring), or 2 with one line on stderr
        when it would read a default that only a checkout of the workbook has (``--source`` without
        ``notebooks/`` beside the package).

    Raises
    ------
    SystemExit
        From argparse, with status 2 for arguments it cannot parse (0 after ``--help`` or ``--version``).
    """
    parser = argparse.ArgumentParser(
        prog="dpcourse" if Path(sys.argv[0]).name == "dpcourse" else "python -m dpcourse",
        description="Instructors' tools for the dpcourse workbook.",
    )
    parser.add_argument("--version", action="version", version=f"dpcourse {_version()}")
    commands = parser.add_subparsers(dest="command", required=True)
    add_release_command(commands)
    add_collect_command(commands)
    add_grade_command(commands)
    add_gradescope_command(commands)
    add_feedback_command(commands)
    add_canvas_command(commands)
    add_mark_command(commands)
    args = parser.parse_args(argv)
    missing = missing_checkout_default(args)
    if missing:
        print(missing, file=sys.stderr)
        return 2
    return int(args.run(args))
