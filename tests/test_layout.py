"""The package's floors, read from its imports with ``ast``: imports only go down, and nothing is circular.

Floors, lowest first (a module may import its own floor's group and the floors below it):

0. what every floor shares: ``_validation`` (parameter checks), ``data`` (shipped tables), ``plotting`` and
   ``tables`` (how figures and tables look) and ``mechanisms.calibration`` (the noise a guarantee needs, as
   pure formulas that the theory and the samplers both use);
1. the theory, ``theory`` and ``composition`` of each lecture package: it imports no sampler;
2. ``mechanisms``: the noise mechanisms and experiments;
3. ``linear_queries`` and ``svt``, which build on the mechanisms and not on each other;
4. ``pmw``, which runs Private MW on the sparse vector technique;
5. ``audit``: the auditor;
6. ``widgets`` and ``checks`` (neither imports the other);
7. ``classroom``: the instructor's operations;
8. the commands: ``__main__`` and ``data.__main__`` (which regenerates the shipped tables).

A package's ``__init__`` (its face, what the notebooks import) sits on its package's floor, so a theory
module cannot import it. Two groups on one floor may not import each other.

The classroom is a house of its own on floor 7, with floors inside it (:data:`CLASSROOM_FLOORS`, lowest first):

0. ``io`` (atomic writes, safe cells, printable text, capped reads) and ``validation`` (times, numbers, ids);
1. ``release`` (the students' copy) and ``sandbox`` (where a submission runs, and the worker inside);
2. ``grading``: plan, run, judge, report, similarity;
3. ``course``: the course file;
4. ``gradebook``: roster, totals, the summary page, feedback;
5. ``lms`` (each platform's download and upload) and ``marking`` (the marking of written answers), which
   do not import each other;
6. ``outputs``: every file of a grading run;
7. ``cli``: the commands, which only parse and call (and every ``__main__``).

Every module has at most 400 lines of code, or says why in a "Longer than 400 lines because" paragraph of its
docstring.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dpcourse"
LECTURES = {"mechanisms": 2, "linear_queries": 3, "svt": 3, "pmw": 4}
THEORY = {"theory", "composition"}
MAX_LINES = 400  # lines of code (docstrings, comments and blank lines not counted)
WHY_LONGER = "Longer than 400 lines because"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def floor(name: str) -> tuple[int, str]:
    """The floor of a dpcourse module and the name of its group."""
    parts = name.split(".")
    if parts[-1] == "__main__":  # a command (python -m dpcourse, python -m dpcourse.data) may use anything
        return 8, "__main__"
    top = parts[1] if len(parts) > 1 else ""
    leaf = parts[2] if len(parts) > 2 else ""
    if top in ("", "_validation", "data", "plotting", "tables") or (top, leaf) == ("mechanisms", "calibration"):
        return 0, top or "the package's own __init__"
    if top in LECTURES:
        return (1, "theory") if leaf in THEORY else (LECTURES[top], top)
    if top == "audit":
        return 5, "audit"
    if top in ("widgets", "checks"):
        return 6, top
    if top == "classroom":
        return 7, "classroom"
    raise AssertionError(f"{name} is on no floor: put it in a package, or add its floor here and to the docstring")


CLASSROOM_FLOORS = {
    "io": 0,
    "validation": 0,
    "release": 1,
    "sandbox": 1,
    "grading": 2,
    "course": 3,
    "gradebook": 4,
    "lms": 5,
    "marking": 5,
    "outputs": 6,
    "cli": 7,
}


def classroom_floor(name: str) -> tuple[int, str]:
    """The floor inside the classroom of a ``dpcourse.classroom`` module, and its group (its first name in there)."""
    parts = name.split(".")
    if parts[-1] == "__main__":
        return max(CLASSROOM_FLOORS.values()), "__main__"
    if len(parts) == 2:
        return 0, "the classroom's own __init__"
    group = parts[2]
    if group not in CLASSROOM_FLOORS:
        raise AssertionError(
            f"{name} is on no floor of the classroom: add its group to CLASSROOM_FLOORS and the docstring"
        )
    return CLASSROOM_FLOORS[group], group


def classroom_upward(edges) -> list[str]:
    problems = []
    for name, targets in edges.items():
        if not name.startswith("dpcourse.classroom"):
            continue
        mine, group = classroom_floor(name)
        for target, line in targets:
            if not target.startswith("dpcourse.classroom"):
                continue
            theirs, their_group = classroom_floor(target)
            if theirs > mine or (theirs == mine and group != their_group and group != "__main__"):
                problems.append(f"{name} (line {line}) imports {target}: {group} may not import {their_group}")
    return problems


def imports(path: Path, name: str, known: dict[str, Path]) -> list[tuple[str, int]]:
    """Every dpcourse module ``path`` imports (module level or inside functions), with the line; ``known`` is the
    package's modules (:func:`modules`)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names if alias.name.split(".")[0] == "dpcourse"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "dpcourse":
                continue
            for alias in node.names:  # `from . import bounds` imports a module; `from .x import f` imports x
                candidate = f"{target}.{alias.name}"
                found.append((candidate if candidate in known else target, node.lineno))
    return found


def graph() -> dict[str, list[tuple[str, int]]]:
    """Each module's dpcourse imports: parsed once per test process (four tests read it), a fresh copy each call."""
    return {name: list(targets) for name, targets in _parsed_graph().items()}


@functools.cache
def _parsed_graph() -> dict[str, list[tuple[str, int]]]:
    known = modules()
    edges = {}
    for name, path in known.items():
        targets = []
        for target, line in imports(path, name, known):
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != name:
                targets.append((target, line))
        edges[name] = targets
    return edges


def upward(edges) -> list[str]:
    problems = []
    for name, targets in edges.items():
        mine, group = floor(name)
        for target, line in targets:
            theirs, their_group = floor(target)
            if theirs > mine or (mine == theirs and mine in (3, 6) and group != their_group):
                problems.append(f"{name} (line {line}) imports {target}: {group} may not import {their_group}")
    return problems


def cycles(edges) -> list[list[str]]:
    """Every strongly connected component with more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w, _ in edges.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_a_higher_floor():
    assert upward(graph()) == []


def test_no_import_cycle_anywhere_in_the_package():
    assert cycles(graph()) == []


def test_no_classroom_module_imports_a_higher_floor_of_the_classroom():
    assert classroom_upward(graph()) == []


def test_the_classroom_rules_catch_an_upward_import_and_two_groups_of_one_floor():
    edges = {
        "dpcourse.classroom.io": [("dpcourse.classroom.grading.run", 4)],
        "dpcourse.classroom.lms.collect": [("dpcourse.classroom.marking.app", 9)],
        "dpcourse.classroom.cli.grade": [("dpcourse.classroom.outputs", 2)],
        "dpcourse.classroom.lms.gradescope.__main__": [("dpcourse.classroom.cli.gradescope", 5)],
    }
    assert classroom_upward(edges) == [
        "dpcourse.classroom.io (line 4) imports dpcourse.classroom.grading.run: io may not import grading",
        "dpcourse.classroom.lms.collect (line 9) imports dpcourse.classroom.marking.app: lms may not import marking",
    ]


def test_every_classroom_package_names_each_of_its_modules_in_its_docstring():
    """Each package's docstring is its map: every module in it is named there (``:mod:`.name```)."""
    missing = []
    for init in sorted((PACKAGE / "classroom").rglob("__init__.py")):
        text = ast.get_docstring(ast.parse(init.read_text())) or ""
        own = [p.stem for p in init.parent.glob("*.py") if p.stem not in ("__init__", "__main__")]
        own += [p.name for p in init.parent.iterdir() if (p / "__init__.py").is_file()]
        missing += [
            f"{init.parent.name}/{name}" for name in own if f":mod:`.{name}`" not in text and f".{name}`" not in text
        ]
    assert missing == []


def test_the_theory_imports_no_sampler():
    edges = graph()
    theory = [name for name in edges if floor(name)[1] == "theory"]
    assert len(theory) >= 4 and [(n, t) for n in theory for t, _ in edges[n] if floor(t)[0] > 1] == []


def code_lines(source: str) -> int:
    """Lines of code: not blank, not a comment, not inside a docstring (documentation does not make a module long)."""
    tree = ast.parse(source)
    documented = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            if isinstance(body[0].value.value, str):
                documented.update(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(
        1
        for number, line in enumerate(source.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#") and number not in documented
    )


def test_code_lines_leave_out_docstrings_comments_and_blanks():
    source = '"""Module.\n\nMore."""\n\n# a comment\ndef f():\n    """Doc."""\n    return 1\n'
    assert code_lines(source) == 2


@pytest.mark.parametrize("name", list(modules()))
def test_every_module_is_short_or_says_why(name):
    source = modules()[name].read_text()
    lines = code_lines(source)
    docstring = ast.get_docstring(ast.parse(source)) or ""
    assert lines <= MAX_LINES or WHY_LONGER in docstring, f"{name} has {lines} lines of code and no '{WHY_LONGER}…'"


def test_the_checks_catch_what_they_should():
    """The rules on a made-up graph: an upward import, a cycle, two groups of one floor importing each other."""
    edges = {
        "dpcourse.svt.theory": [("dpcourse.svt.batch", 3)],
        "dpcourse.svt.batch": [("dpcourse.svt.theory", 5)],
        "dpcourse.checks.x": [("dpcourse.widgets.y", 1)],
        "dpcourse.widgets.y": [],
        "dpcourse.linear_queries.workloads": [("dpcourse.svt.batch", 7)],
        "dpcourse.mechanisms.noise": [("dpcourse.classroom.grading.run", 9)],
        "dpcourse.classroom.grading.run": [],
    }
    problems = upward(edges)
    assert any("dpcourse.svt.theory (line 3) imports dpcourse.svt.batch" in p for p in problems)
    assert any("checks may not import widgets" in p for p in problems)
    assert any("linear_queries may not import svt" in p for p in problems)
    assert any("dpcourse.mechanisms.noise (line 9)" in p for p in problems)
    assert cycles(edges) == [["dpcourse.svt.batch", "dpcourse.svt.theory"]]


def test_only_shared_modules_sit_at_the_top():
    """The library lives in packages; the top holds what every floor shares and the command."""
    top = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__", "__main__"}
    assert top == {"_validation", "plotting", "tables"}


def test_every_module_has_a_floor():
    for name in modules():
        floor(name)
        if name.startswith("dpcourse.classroom"):
            classroom_floor(name)


def test_contributing_names_the_tests_of_every_classroom_module():
    """CONTRIBUTING's table names the tests of each classroom module; every module has a row, every file exists."""
    text = (PACKAGE.parent / "CONTRIBUTING.md").read_text()
    table = text[text.index("| classroom modules | tests |") :].split("\n\n")[0]
    named, files = set(), []
    for row in table.splitlines()[2:]:
        cells = row.strip().strip("|").split("|")
        if len(cells) < 2:
            break
        named |= set(re.findall(r"`([a-z_/]+)`", cells[0]))
        files += re.findall(r"`(tests/[^`]+\.py)`", cells[1])
    own = {
        name.removeprefix("dpcourse.classroom.").replace(".", "/")
        for name in modules()
        if name.startswith("dpcourse.classroom.")
        and not name.endswith("__main__")
        and modules()[name].name != "__init__.py"
    }
    assert sorted(own - named) == [] and sorted(named - own - {"cli"}) == []
    assert [f for f in files if not (PACKAGE.parent / f).is_file()] == []


def test_the_longest_first_schedule_names_test_files_that_exist_once_each():
    """tests/conftest.py's LONGEST_FIRST hands out long files first; a renamed file would silently run last."""
    from tests.conftest import LONGEST_FIRST

    test_files = {path.name for path in (PACKAGE.parent / "tests").rglob("test_*.py")}
    assert sorted(set(LONGEST_FIRST) - test_files) == []
    assert len(LONGEST_FIRST) == len(set(LONGEST_FIRST))
