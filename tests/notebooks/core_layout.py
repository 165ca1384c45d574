"""A lab's layout (issue 39): a short opening cell with its time, a core of at most six sections that ends with the
hand-in cell, every exercise inside the section it tests, then one optional *Going further* part.

The claims tests of notebooks 03 and 04 call :func:`check_core_layout` with the section each exercise tests.
"""

from __future__ import annotations

import re

from tests.notebooks.notebook_claims import StoredNotebook

SECTION = re.compile(r"^## (\d+) · ", re.M)
GOING_FURTHER = "## Going further (optional)"
MAX_SECTIONS = 6


def exercise_of(cell) -> str | None:
    """The exercise id of an answer cell (code tagged ``solution``) or of a written answer (markdown tagged
    ``written``); None for any other cell."""
    meta = cell.metadata.get("dpcourse", {})
    tags = cell.metadata.get("tags", [])
    if "solution" in tags:
        return meta.get("exercise")
    if "written" in tags:
        return meta.get("written", {}).get("exercise")
    return None


def check_core_layout(nb: StoredNotebook, tested_by_section: dict[str, int]) -> None:
    """Assert the layout; ``tested_by_section`` maps each exercise id to the number of the section it tests."""
    cells = nb.notebook.cells
    opening = cells[0].source
    assert "about 90 minutes" in opening, "the opening cell does not say how long the core takes"
    bullets = [line for line in opening.splitlines() if line.startswith("* ")]
    assert 3 <= len(bullets) <= 5, f"the opening cell has {len(bullets)} bullets; 3 to 5 say what it teaches"
    hand_in = [i for i, cell in enumerate(cells) if "hand-in" in cell.metadata.get("tags", [])]
    assert len(hand_in) == 1
    further = [i for i, cell in enumerate(cells) if cell.cell_type == "markdown" and GOING_FURTHER in cell.source]
    assert further == [hand_in[0] + 1], "the one Going further part must follow the hand-in cell"
    assert "not needed for the hand-in" in " ".join(cells[further[0]].source.lower().split())
    section_at, current = {}, None
    for i, cell in enumerate(cells):
        if cell.cell_type == "markdown":
            numbers = SECTION.findall(cell.source)
            if numbers:
                assert i < hand_in[0], f"a numbered section after the hand-in cell: cell {i}"
                current = int(numbers[-1])
        section_at[i] = current
    sections = sorted({n for n in section_at.values() if n is not None})
    assert sections == list(range(1, len(sections) + 1)) and len(sections) <= MAX_SECTIONS, sections
    found = {}
    for i, cell in enumerate(cells):
        exercise = exercise_of(cell)
        if exercise is not None:
            assert i < hand_in[0], f"exercise {exercise} is after the hand-in cell"
            found[exercise] = section_at[i]
        if "check" in cell.metadata.get("tags", []):
            assert i < hand_in[0], f"a check cell is after the hand-in cell: cell {i}"
    assert found == tested_by_section
