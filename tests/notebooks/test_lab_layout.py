"""Each notebook is a lab (issue 39): it says what it teaches and how long its core takes, the core is at most six
sections with every graded and written exercise inside it, right after the section it tests, the hand-in cell closes
the core, and whatever goes beyond a lab sits after it under one heading that says it is optional.

Read from the stored notebooks' structure: headings (``## …``) of Markdown cells, the cells' exercise metadata and
tags. The 90 minutes themselves are a reader's judgement (the browser suite's read-through screenshots); what a test
can hold is the shape that makes them possible.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from tests.notebooks.core_layout import GOING_FURTHER, exercise_of

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
HEADING = re.compile(r"^## (.+)$", re.MULTILINE)
NOT_A_SECTION = ("Summary", "Before you hand in")
#: the longest code cell a student reads in the core (solution, check and hand-in cells aside): a few lines that
#: say what is measured; anything longer lives in the package
MAX_READ_LINES = 12


def _headings(nb) -> list[tuple[int, str]]:
    return [
        (i, h.strip()) for i, c in enumerate(nb.cells) if c.cell_type == "markdown" for h in HEADING.findall(c.source)
    ]


def _going_further(nb) -> int:
    starts = [i for i, h in _headings(nb) if f"## {h}" == GOING_FURTHER]
    assert len(starts) <= 1, f"more than one {GOING_FURTHER!r} heading: {starts}"
    return starts[0] if starts else len(nb.cells)


@pytest.fixture(params=NOTEBOOKS, ids=lambda p: p.stem[:2])
def nb(request):
    return nbformat.read(request.param, as_version=4)


def test_the_opening_says_what_it_teaches_and_how_long_the_core_takes(nb):
    opening = " ".join(c.source for c in nb.cells[:3] if c.cell_type == "markdown")
    assert re.search(r"\b\d+ minutes\b", opening), "the opening does not say how long the core takes"
    assert re.search(r"(?im)^\s*[-*] ", opening), "the opening does not list what the notebook teaches"


def test_the_core_has_at_most_six_sections(nb):
    end = _going_further(nb)
    sections = [h for i, h in _headings(nb) if i < end and not h.startswith(NOT_A_SECTION)]
    assert 1 <= len(sections) <= 6, sections


def test_every_exercise_is_in_the_core_inside_the_section_it_tests(nb):
    end = _going_further(nb)
    headings = _headings(nb)
    for index, cell in enumerate(nb.cells):
        exercise = exercise_of(cell)
        if exercise is None:
            continue
        assert index < end, f"exercise {exercise} (cell {index}) is in the optional part"
        section = [h for i, h in headings if i <= index][-1]
        assert not section.lower().startswith("exercises"), f"{exercise} sits in a block of exercises, not its section"


def test_the_hand_in_cell_closes_the_core_and_going_further_says_it_is_optional(nb):
    end = _going_further(nb)
    hand_in = [i for i, c in enumerate(nb.cells) if "hand-in" in c.metadata.get("tags", [])]
    assert len(hand_in) == 1 and hand_in[0] < end, hand_in
    assert not any(exercise_of(c) for c in nb.cells[hand_in[0] :]), "an exercise follows the hand-in cell"
    if end < len(nb.cells):
        assert "optional" in nb.cells[end].source.lower(), nb.cells[end].source[:200]


def test_code_a_student_reads_in_the_core_is_a_few_lines(nb):
    end = _going_further(nb)
    long = []
    for index, cell in enumerate(nb.cells[:end]):
        tags = cell.metadata.get("tags", [])
        if cell.cell_type != "code" or {"solution", "check", "hand-in"} & set(tags):
            continue
        if cell.metadata.get("jupyter", {}).get("source_hidden"):
            continue  # collapsed, with a one-line description above it
        lines = [line for line in cell.source.splitlines() if line.strip()]
        if len(lines) > MAX_READ_LINES:
            long.append((index, len(lines)))
    assert not long, f"code cells longer than {MAX_READ_LINES} lines in the core (cell, lines): {long}"
