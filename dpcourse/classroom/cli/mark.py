"""``python -m dpcourse mark REPORT``: the marking app over the written answers ``grade`` put beside ``REPORT``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..marking.app import run

__all__ = ["add_mark_command"]


def add_mark_command(commands: Any) -> None:
    """Register ``mark`` on an argparse sub-command set.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        What :meth:`argparse.ArgumentParser.add_subparsers` returned; ``mark`` is added to it, its ``run``
        default set to :func:`~dpcourse.classroom.marking.app.run`.
    """
    parser = commands.add_parser(
        "mark",
        help="mark written answers in the browser (a web app on 127.0.0.1)",
        description="Serve the marking app on 127.0.0.1 over REPORT.marks.sqlite; print the URL with its token.",
    )
    parser.add_argument("report", type=Path, help="the grade report whose written answers to mark (grades.csv)")
    parser.add_argument("--port", type=int, default=8890, help="the port on 127.0.0.1 (default 8890; 0: any free one)")
    parser.add_argument(
        "--token",
        default=os.environ.get("DPCOURSE_MARK_TOKEN"),
        help="the access token (default: $DPCOURSE_MARK_TOKEN, else a random one)",
    )
    parser.add_argument("--mathjax", type=Path, help="a MathJax 3 folder holding tex-chtml.js (default: found)")
    parser.add_argument(
        "--base-url",
        default=os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/"),
        help="the URL prefix of every page (default: $JUPYTERHUB_SERVICE_PREFIX, else /)",
    )
    parser.set_defaults(run=run)
