"""A written exercise's cells for tests: the prompt and the instructor's cell (model answer, rubric)."""

from __future__ import annotations

import copy

from nbformat.v4 import new_markdown_cell

MODEL_ANSWER = "**Model answer.** The shift $u = z + \\Delta$ of the one shared threshold is paid once."
RUBRIC_TEXT = "Names the shift of the shared threshold noise"
SPEC = {
    "exercise": "free-bottoms",
    "points": 4,
    "rubric": [
        {"id": "shift-threshold", "text": RUBRIC_TEXT, "points": 3},
        {"id": "own-noise", "text": "Says each bottom has its own noise", "points": -1},
    ],
}


def written_cells(spec=SPEC, *, model=MODEL_ANSWER, cell_id="at-written-answer"):
    """The prompt cell and the written exercise's cell, as the instructor's notebook holds them."""
    prompt = new_markdown_cell("### Written exercise\nWhich step makes the $\\bot$ answers free?", id="at-written-md")
    cell = new_markdown_cell(model, id=cell_id)
    cell.metadata = {"tags": ["written"], "dpcourse": {"written": copy.deepcopy(spec)}}
    return [prompt, cell]
