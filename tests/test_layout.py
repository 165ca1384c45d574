"""The package's floors, read from its imports with ``ast``: imports only go down, and nothing is circular.

Floors, lowest first (a module may import its own floor and the floors below it):

0. ``_validation``, ``data`` and ``calibration``: checks, shipped tables and the mechanisms' pure
   calibration formulas (noise scales), which theory and samplers both need;
1. ``bounds`` and its parts ``bounds_*``: the theory, which imports no sampler;
2. the lectures' library: every other top-level module (``mechanisms``, ``queries``, ``svt``, ``pmw``, …);
3. ``audit``: the auditor;
4. ``widgets`` and ``checks`` (neither imports the other);
5. ``classroom``: the instructor's operations;
6. the commands: ``__main__`` and ``data.__main__`` (which regenerates the shipped tables).

The old names kept for one release (:data:`SHIMS`) re-export from above and are the only upward imports.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "dpcourse"
SHIMS = {
    "dpcourse.grading",
    "dpcourse.instructor",
    "dpcourse.student_copy",
    "dpcourse._grade_worker",
    "dpcourse.peer_suites",
}
MAX_LINES = 400
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
        return 6, "__main__"
    top = parts[1] if len(parts) > 1 else ""
    if top in ("", "__init__"):
        return 2, "the package's own __init__"
    if top in ("_validation", "data", "calibration"):
        return 0, top
    if top == "bounds" or top.startswith("bounds_"):
        return 1, "bounds"
    if top == "audit":
        return 3, "audit"
    if top in ("widgets", "checks"):
        return 4, top
    if top == "classroom":
        return 5, "classroom"
    if top == "__main__":
        return 6, "__main__"
    return 2, "the library"


def imports(path: Path, name: str) -> list[tuple[str, int]]:
    """Every dpcourse module ``path`` imports (module level or inside functions), with the line."""
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
            known = modules()
            for alias in node.names:  # `from . import bounds` imports a module; `from .x import f` imports x
                candidate = f"{target}.{alias.name}"
                found.append((candidate if candidate in known else target, node.lineno))
    return found


def graph() -> dict[str, list[tuple[str, int]]]:
    known = modules()
    edges = {}
    for name, path in known.items():
        targets = []
        for target, line in imports(path, name):
            while target not in known and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != name:
                targets.append((target, line))
        edges[name] = targets
    return edges


def upward(edges) -> list[str]:
    problems = []
    for name, targets in edges.items():
        if name in SHIMS:
            continue
        mine, group = floor(name)
        for target, line in targets:
            theirs, their_group = floor(target)
            if theirs > mine or (mine == theirs == 4 and group != their_group):
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


def test_the_theory_imports_no_sampler():
    edges = graph()
    theory = [name for name in edges if floor(name)[1] == "bounds"]
    assert len(theory) >= 2 and [(n, t) for n in theory for t, _ in edges[n] if floor(t)[0] > 1] == []


@pytest.mark.parametrize("name", [n for n in modules() if floor(n)[0] <= 3])
def test_library_and_auditor_modules_are_short_or_say_why(name):
    path = modules()[name]
    lines = len(path.read_text().splitlines())
    docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    assert lines <= MAX_LINES or WHY_LONGER in docstring, f"{name} has {lines} lines and no '{WHY_LONGER}…'"


def test_the_checks_catch_what_they_should():
    """The rules on a made-up graph: an upward import, a cycle, two floor-4 groups importing each other."""
    edges = {
        "dpcourse.bounds": [("dpcourse.svt", 3)],
        "dpcourse.svt": [("dpcourse.bounds", 5)],
        "dpcourse.checks.x": [("dpcourse.widgets.y", 1)],
        "dpcourse.widgets.y": [],
        "dpcourse.mechanisms": [("dpcourse.classroom.grade", 9)],
        "dpcourse.classroom.grade": [],
    }
    problems = upward(edges)
    assert any("dpcourse.bounds (line 3) imports dpcourse.svt" in p for p in problems)
    assert any("checks may not import widgets" in p for p in problems)
    assert any("dpcourse.mechanisms (line 9)" in p for p in problems)
    assert cycles(edges) == [["dpcourse.bounds", "dpcourse.svt"]]
