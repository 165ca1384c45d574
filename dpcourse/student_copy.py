"""The student's copy of the workbook: solution regions become stubs, outputs that give answers away go.

Exercises follow the nbgrader convention. A solution cell (tag ``solution``) holds the answer
between ``### BEGIN SOLUTION`` and ``### END SOLUTION``; the next cell (tag ``check``) calls
:mod:`dpcourse.checks`. Both cells carry ``metadata["dpcourse"]["exercise"]``, the exercise id.

Reachable as ``python -m dpcourse release OUTDIR``.
"""

from __future__ import annotations

import argparse
import copy
from pathlib import Path

import nbformat

__all__ = ["BEGIN", "END", "PROJECT", "add_release_command", "exercises", "release", "release_notebook"]

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
PROJECT = Path(__file__).resolve().parent.parent


def exercises(nb) -> dict[str, dict[str, int]]:
    """Exercise id → {"solution": cell index, "check": cell index}, from the cells' metadata."""
    found: dict[str, dict[str, int]] = {}
    for index, cell in enumerate(nb.cells):
        exercise = cell.get("metadata", {}).get("dpcourse", {}).get("exercise")
        if exercise is None:
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        role = "check" if "check" in tags else "solution" if "solution" in tags or BEGIN in cell.source else None
        if role:
            found.setdefault(exercise, {})[role] = index
    return found


def _stub_solution(source: str, exercise: str) -> str:
    lines, out, inside = source.splitlines(), [], False
    for line in lines:
        stripped = line.strip()
        if stripped == BEGIN:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# Your answer here: replace the next line.")
            out.append(f'{indent}raise NotImplementedError("exercise {exercise}: write your answer here")')
            inside = True
        elif stripped == END:
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"exercise {exercise}: {BEGIN} without {END}")
    return "\n".join(out)


def release_notebook(nb):
    """The student version of a notebook (a new object; ``nb`` is not changed).

    Every ``### BEGIN SOLUTION`` … ``### END SOLUTION`` region becomes a stub raising
    ``NotImplementedError`` with a hint; solution cells lose their outputs and execution
    count; all other cells (text, figures, check cells) are kept as they are.
    """
    student = copy.deepcopy(nb)
    for cell in student.cells:
        if cell.cell_type != "code" or BEGIN not in cell.source:
            continue
        exercise = cell.get("metadata", {}).get("dpcourse", {}).get("exercise", "exercise")
        cell.source = _stub_solution(cell.source, exercise)
        cell.outputs = []
        cell.execution_count = None
        cell.get("metadata", {}).pop("execution", None)
    return student


def release(notebooks_dir, outdir) -> list[Path]:
    """Write the student version of every ``*.ipynb`` in ``notebooks_dir`` to ``outdir`` (deterministic)."""
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in sorted(Path(notebooks_dir).glob("*.ipynb")):
        target = out / path.name
        nbformat.write(release_notebook(nbformat.read(path, as_version=4)), target)
        written.append(target)
    return written




def add_release_command(commands) -> None:
    """Register ``release OUTDIR [--notebooks DIR]`` on an argparse sub-command set."""
    parser = commands.add_parser("release", help="write the student version of every notebook")
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--notebooks", type=Path, default=PROJECT / "notebooks",
                        help="where the solution notebooks are (default: the workbook's notebooks/)")
    parser.set_defaults(run=_run_release)


def _run_release(args: argparse.Namespace) -> int:
    for path in release(args.notebooks, args.outdir):
        print(f"wrote {path}")
    return 0
