"""The student's copy of the workbook: solution regions become stubs, outputs that give answers away go.

Exercises follow the nbgrader convention. A solution cell (tag ``solution``) holds the answer
between ``### BEGIN SOLUTION`` and ``### END SOLUTION``; the next cell (tag ``check``) calls
:mod:`dpcourse.checks`. Both cells carry ``metadata["dpcourse"]["exercise"]``, the exercise id.

What a release does to a notebook (:func:`release_notebook`):

- a region inside a function body becomes ``raise NotImplementedError("exercise <id>: …")``;
  a top-level region becomes ``name = ...  # your answer`` for each name it assigns that the
  exercise's check cell reads (``...`` is what the checks read as "not attempted yet");
- the outputs of solution cells, check cells, the hand-in cell (tag ``hand-in``, which runs every
  check on the student's current answers) and every cell that reads a name a solution cell
  assigns (and, in turn, names those cells assign) are cleared; text, figures and panels that
  do not depend on an answer keep theirs. Cell ids and metadata are kept (grading matches on them),
  except that each answer cell and each check cell gets the tag ``raises-exception``: a typo in an
  answer shows its error and *Run All* goes on (JupyterLab and nbclient honour the tag), and the
  check below it says the answer raised instead of judging the value an earlier run left;
- a written exercise (a Markdown cell tagged ``written``, :mod:`dpcourse.checks._written`) becomes an empty answer
  cell: the same cell id and tags, metadata ``dpcourse.written`` with its ``exercise`` and ``points`` only (no
  rubric), and as source one line saying to replace it with the answer; its model answer is gone and the prompt
  above it stays.

:func:`release` writes a folder of them and refuses, with a :class:`ReleaseError`, to write over
solution notebooks or over a notebook a student has changed. Reachable as
``python -m dpcourse release OUTDIR [--notebooks DIR] [--keep-changed | --force]``.
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from ..checks._written import PLACEHOLDER, WrittenExercise, read_written_exercises, released_metadata

__all__ = [
    "BEGIN",
    "END",
    "HAND_IN_TAG",
    "PROJECT",
    "REQUIREMENTS",
    "SOURCE",
    "ReleaseError",
    "exercises",
    "missing_checkout_default",
    "release",
    "release_notebook",
]

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
#: the tag of each notebook's last cell, which runs every check of the notebook on the current answers
HAND_IN_TAG = "hand-in"
#: the tag a student's answer cells get, so that an answer that raises does not stop Run All
ANSWER_MAY_RAISE = "raises-exception"
PROJECT = Path(__file__).resolve().parents[2]
#: the commands' default source, the instructor's notebooks of a checkout of the workbook (a wheel has none)
SOURCE = PROJECT / "notebooks"
#: the pins ``gradescope build`` ships by default, a checkout's requirements.txt (a wheel has none either)
REQUIREMENTS = PROJECT / "requirements.txt"
#: a command's option whose default is a file of the checkout: its name in the parsed arguments → the option,
#: the default's name in the checkout and what to pass instead
_CHECKOUT_DEFAULTS = {
    "source": ("--source", "notebooks", "PATH/TO/notebooks (the instructor's solution notebooks)"),
    "notebooks": ("--notebooks", "notebooks", "PATH/TO/notebooks (the instructor's solution notebooks)"),
    "requirements": ("--requirements", "requirements.txt", "PATH/TO/requirements.txt (the workbook's exact pins)"),
}
STUB_VALUE = "...  # your answer"


class ReleaseError(ValueError):
    """A release that must not go ahead; the message is one line meant for the instructor or student."""


def exercises(nb: NotebookNode) -> dict[str, dict[str, int]]:
    """Exercise id → {"solution": cell index, "check": cell index}, from the cells' metadata.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        A notebook (solution or student version).

    Returns
    -------
    dict
        Exercise id → {"solution": index, "check": index} for the cells carrying
        ``metadata["dpcourse"]["exercise"]``: the check cell is the one tagged ``check``, the solution cell
        the one tagged ``solution`` or holding ``### BEGIN SOLUTION``. A role no cell has is left out; of
        two cells in one role, the later one's index is kept.
    """
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


# --- reading code with ast ------------------------------------------------------------------------


def _parse(source: str) -> ast.Module | None:
    """The cell's syntax tree (IPython magics turned into Python first), or None if it does not parse."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager

        source = TransformerManager().transform_cell(source)
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        pass
    try:
        return ast.parse(source)
    except SyntaxError:
        return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_MAGIC_CALLS = {"run_line_magic", "run_cell_magic", "system", "getoutput"}


def _stored(node: ast.AST) -> list[str]:
    """Names stored by ``node`` in its own scope (not inside nested functions, classes or comprehensions)."""
    names = []
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.append(child.id)
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            names += [(a.asname or a.name).split(".")[0] for a in child.names if a.name != "*"]
        elif not isinstance(child, _SCOPES + _COMPREHENSIONS):
            names += _stored(child)
    return names


def _bound_names(statement: ast.stmt) -> list[str]:
    """Names a top-level statement binds in the notebook's namespace (anywhere in it, in order)."""
    return list(dict.fromkeys(_stored(ast.Module(body=[statement], type_ignores=[]))))


def _read_names(node: ast.AST, local: frozenset = frozenset()) -> set[str]:
    """Names ``node`` reads from the notebook's namespace (a comprehension's or function's own names excluded)."""
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) and node.id not in local else set()
    if isinstance(node, _COMPREHENSIONS):
        inner = local | {t.id for g in node.generators for t in ast.walk(g.target) if isinstance(t, ast.Name)}
        reads = _read_names(node.generators[0].iter, local)  # the first iterable is evaluated outside
        parts = [
            *(g.iter for g in node.generators[1:]),
            *(c for g in node.generators for c in g.ifs),
            *(getattr(node, field) for field in ("elt", "key", "value") if hasattr(node, field)),
        ]
        return reads.union(*(_read_names(part, inner) for part in parts))
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        outside = [
            *args.defaults,
            *(d for d in args.kw_defaults if d is not None),
            *getattr(node, "decorator_list", []),
        ]
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg] if a}
        body: list[ast.AST] = [*node.body] if isinstance(node.body, list) else [node.body]  # a lambda's: one expression
        inner = local | params
        if isinstance(node.body, list):
            inner |= set(_stored(ast.Module(body=node.body, type_ignores=[])))  # the function's own locals
        return set().union(*(_read_names(d, local) for d in outside), *(_read_names(b, inner) for b in body))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _MAGIC_CALLS:
        # an IPython magic or shell line (``%timeit f(x)``, ``!echo $x``): its names are inside a string
        words = {
            w
            for arg in node.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
            for w in re.findall(r"[A-Za-z_]\w*", arg.value)
        }
        return (words - local) | set().union(*(_read_names(child, local) for child in ast.iter_child_nodes(node)))
    if isinstance(node, (ast.For, ast.AsyncFor)):
        inner = local | {t.id for t in ast.walk(node.target) if isinstance(t, ast.Name)}
        return _read_names(node.iter, local).union(*(_read_names(b, inner) for b in node.body + node.orelse))
    reads = set()
    for child in ast.iter_child_nodes(node):
        reads |= _read_names(child, local)
    return reads


def _unconditional(statement: ast.stmt) -> bool:
    """Whether the statement always rebinds the names it binds (so a clean one clears their taint)."""
    return isinstance(
        statement,
        (ast.Assign, ast.AnnAssign, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom),
    ) and not (isinstance(statement, ast.AnnAssign) and statement.value is None)


# --- stubs -----------------------------------------------------------------------------------------


def _regions(source: str, where: str) -> list[tuple[int, int]]:
    """(BEGIN line, END line) of every solution region of a cell; unbalanced markers raise ReleaseError."""
    regions, start = [], None
    for number, line in enumerate(source.splitlines()):
        if line.strip() == BEGIN:
            if start is not None:
                raise ReleaseError(f"{where}: a second {BEGIN} before {END} (line {number + 1})")
            start = number
        elif line.strip() == END:
            if start is None:
                raise ReleaseError(f"{where}: {END} without {BEGIN} (line {number + 1})")
            regions.append((start, number))
            start = None
    if start is not None:
        raise ReleaseError(f"{where}: {BEGIN} without {END} (line {start + 1})")
    return regions


def _stub_lines(region: list[str], indent: str, exercise: str, wanted: set[str] | None) -> list[str]:
    if not indent:
        tree = _parse("\n".join(region))
        assigned = (
            []
            if tree is None
            else list(dict.fromkeys(name for statement in tree.body for name in _bound_names(statement)))
        )
        names = [name for name in assigned if wanted is not None and name in wanted] or assigned
        if names:
            return [f"{name} = {STUB_VALUE}" for name in names]
    return [
        f"{indent}# Your answer here: replace the next line.",
        f'{indent}raise NotImplementedError("exercise {exercise}: write your answer here")',
    ]


def _stub_solution(source: str, exercise: str, wanted: set[str] | None = None, where: str | None = None) -> str:
    """``source`` with every solution region replaced by its stub.

    Parameters
    ----------
    source : str
        The solution cell's code.
    exercise : str
        The exercise id, named in the ``NotImplementedError`` of an indented region.
    wanted : set of str, optional
        Names the exercise's check cell reads: a top-level region keeps only those of its
        assigned names (all of them if none is read, or if ``wanted`` is None).
    where : str, optional
        How to name the cell in an error (default: the exercise id).
    """
    lines = source.splitlines()
    out, previous_end = [], -1
    for begin, end in _regions(source, where or f"exercise {exercise}"):
        out += lines[previous_end + 1 : begin]
        indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
        out += _stub_lines(lines[begin + 1 : end], indent, exercise, wanted)
        previous_end = end
    out += lines[previous_end + 1 :]
    return "\n".join(out)


# --- one notebook ----------------------------------------------------------------------------------


def _clear(cell: NotebookNode) -> None:
    cell.outputs = []
    cell.execution_count = None


def release_notebook(nb: NotebookNode, name: str = "notebook") -> NotebookNode:
    """The student version of a notebook (a new object; ``nb`` is not changed).

    Parameters
    ----------
    nb : nbformat.NotebookNode
        A solution notebook.
    name : str
        How to name the notebook in an error.

    Returns
    -------
    nbformat.NotebookNode
        Every solution region replaced by its stub and every written exercise by an empty answer cell
        (see the module docstring); the outputs and
        execution counts of solution cells, check cells, the hand-in cell, cells that do not parse
        and every cell that reads a name a solution cell assigns (transitively) cleared; solution and
        check cells tagged ``raises-exception``; all other cells unchanged.

    Raises
    ------
    ReleaseError
        A ``### BEGIN SOLUTION`` without ``### END SOLUTION`` (or the reverse), naming the
        notebook, the cell's index and its id; or a malformed written exercise, naming the notebook,
        the cell's index and the field.
    """
    student = copy.deepcopy(nb)
    found = exercises(nb)
    try:
        written = read_written_exercises(nb)
    except (TypeError, ValueError) as err:
        raise ReleaseError(f"{name}: {err}") from None
    for exercise in written:
        _empty_written_cell(student.cells[exercise.cell], exercise)
    tainted: set[str] = set()
    for index, cell in enumerate(student.cells):
        if cell.cell_type != "code":
            continue
        where = f"{name}, cell {index} (id {cell.get('id', '?')})"
        meta = cell.get("metadata", {})
        exercise = meta.get("dpcourse", {}).get("exercise")
        tags = meta.get("tags", [])
        original = cell.source
        is_solution = bool(_regions(original, where)) or "solution" in tags
        # the last cell's hand-in status judges the answers in the kernel: its stored output is the solutions'
        is_check = "check" in tags or HAND_IN_TAG in tags
        tree = _parse(original)
        if is_solution:
            check_index = found.get(exercise, {}).get("check")
            check_tree = None if check_index is None else _parse(nb.cells[check_index].source)
            wanted = None if check_tree is None else _read_names(check_tree)
            cell.source = _stub_solution(original, exercise or "exercise", wanted, where)
        # A typo in an answer must not stop Run All: JupyterLab and nbclient go on past cells with this tag, and
        # the check then says the answer raised (dpcourse.checks._kernel) instead of judging a stale value.
        if (is_solution or "check" in tags) and ANSWER_MAY_RAISE not in tags:
            cell.metadata["tags"] = [*tags, ANSWER_MAY_RAISE]
        dependent = is_solution or is_check or tree is None
        for statement in tree.body if tree is not None else []:
            bound = set(_bound_names(statement))
            if is_solution or _read_names(statement) & tainted:
                dependent = True
                tainted |= bound
            elif _unconditional(statement):
                tainted -= bound
        if dependent:
            _clear(cell)
    return student


def _empty_written_cell(cell: NotebookNode, written: WrittenExercise) -> None:
    """Make a written exercise's cell the student's empty answer cell (in place): no model answer, no rubric,
    no attachment; the id and tags kept."""
    cell.metadata = nbformat.from_dict(released_metadata(written, cell.metadata.get("tags", [])))
    cell.source = PLACEHOLDER
    cell.pop("attachments", None)


# --- a folder --------------------------------------------------------------------------------------


def _holds_solutions(path: Path) -> bool:
    """Whether the notebook at ``path`` holds a solution region or a written exercise's rubric (a model answer)."""
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # not a notebook: not a solution notebook either
        return False
    for cell in nb.cells:
        ours = cell.get("metadata", {}).get("dpcourse")
        written = ours.get("written") if isinstance(ours, dict) else None
        if isinstance(written, dict) and "rubric" in written:
            return True
        if cell.cell_type == "code" and any(line.strip() == BEGIN for line in cell.source.splitlines()):
            return True
    return False


def _render(nb: NotebookNode) -> str:
    text = nbformat.writes(nb)
    return text if text.endswith("\n") else text + "\n"


def release(
    notebooks_dir: str | Path, outdir: str | Path, *, force: bool = False, keep_changed: bool = False
) -> list[Path]:
    """Write the student version of every ``*.ipynb`` in ``notebooks_dir`` to ``outdir`` (deterministic).

    Parameters
    ----------
    notebooks_dir : path
        The solution notebooks.
    outdir : path
        Where the student versions go (created if missing).
    force : bool
        Overwrite notebooks in ``outdir`` that differ from the release (a student's work is lost).
    keep_changed : bool
        Leave notebooks in ``outdir`` that differ from the release as they are and write the
        others (how ``make lab`` adds notebooks from a newer source to a student's folder).

    Returns
    -------
    list of Path
        The notebooks written (not those already up to date, nor those ``keep_changed`` left alone).

    Raises
    ------
    ReleaseError
        ``notebooks_dir`` is missing or holds no notebook; ``outdir`` is ``notebooks_dir`` or holds
        a solution notebook; a solution region is not closed; or, without ``force`` or
        ``keep_changed``, a notebook in ``outdir`` differs from its release. Nothing is written then.
    """
    outcome = _release(notebooks_dir, outdir, force=force, keep_changed=keep_changed)
    return [path for path, what in outcome.items() if what == "written"]


def _release(notebooks_dir: str | Path, outdir: str | Path, *, force: bool, keep_changed: bool) -> dict[Path, str]:
    """:func:`release`, saying what happened to each notebook: "written", "up to date" or "kept"."""
    source, out = Path(notebooks_dir), Path(outdir)
    if not source.is_dir():
        raise ReleaseError(f"no notebook folder {source}")
    paths = sorted(source.glob("*.ipynb"))
    if not paths:
        raise ReleaseError(f"{source} holds no notebooks (*.ipynb)")
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"{out} is a file, not a folder")
    if out.resolve() == source.resolve():
        raise ReleaseError(f"{out} is the solution folder itself: release writes stubs, pick another folder")
    solutions = [p.name for p in sorted(out.glob("*.ipynb")) if _holds_solutions(p)] if out.is_dir() else []
    if solutions:
        raise ReleaseError(
            f"{out} holds solution notebooks ({', '.join(solutions)}): "
            "release never writes over solutions, pick another folder"
        )
    texts = {}
    for path in paths:
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception as error:
            raise ReleaseError(f"{path} is not a readable notebook ({type(error).__name__})") from None
        texts[out / path.name] = _render(release_notebook(nb, name=str(path)))
    changed = [t for t, text in texts.items() if t.exists() and t.read_text(encoding="utf-8") != text]
    if changed and not (force or keep_changed):
        raise ReleaseError(
            f"{', '.join(t.name for t in changed)} in {out} differ from the release "
            "(a student's work?); nothing written: pass --keep-changed to leave them and add "
            "the rest, or --force to overwrite them and lose those changes"
        )
    out.mkdir(parents=True, exist_ok=True)
    outcome = {}
    for target, text in texts.items():
        if target in changed and not force:
            outcome[target] = "kept"
        elif target.exists() and target.read_text(encoding="utf-8") == text:
            outcome[target] = "up to date"  # left untouched: an open JupyterLab sees no new timestamp
        else:
            target.write_text(text, encoding="utf-8")
            outcome[target] = "written"
    return outcome


def missing_checkout_default(args: argparse.Namespace, project: Path | None = None) -> str | None:
    """The line to print when a command would read a default that only a checkout of the workbook has.

    The defaults of ``--source`` (``--notebooks`` for ``release``) and ``--requirements`` are files beside the
    package in a checkout (:data:`SOURCE`, :data:`REQUIREMENTS`); a package installed from a wheel has none.

    Parameters
    ----------
    args : argparse.Namespace
        A command's parsed arguments (``command`` names it; an option it does not have is skipped).
    project : pathlib.Path or None, optional
        The folder those defaults are in (default :data:`PROJECT`, the folder holding the package).

    Returns
    -------
    str or None
        One line naming the missing default and the option to pass instead, or None when every such option
        of the command is given or its default exists.
    """
    project = PROJECT if project is None else project
    for name, (option, default_name, instead) in _CHECKOUT_DEFAULTS.items():
        default = project / default_name
        if getattr(args, name, None) == default and not default.exists():
            return (
                f"{args.command}: the default {option} {default} does not exist (only a checkout of the workbook "
                f"has it): pass {option} {instead}"
            )
    return None
