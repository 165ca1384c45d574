"""Written exercises read from a notebook (validated, errors naming cell and field), answers read as hostile
text, and the key that groups identical answers."""

from __future__ import annotations

import copy

import nbformat
import pytest

from dpcourse.classroom.marking.written import (
    MAX_ANSWER_BYTES,
    Rubric,
    RubricItem,
    group_key,
    read_answer,
    read_written_exercises,
)

SPEC = {
    "exercise": "svt-proof",
    "points": 4,
    "rubric": [
        {"id": "names-step", "text": "Names the step that fails", "points": 3},
        {"id": "no-reason", "text": "No reason given", "points": -1},
    ],
}


def notebook(spec=SPEC, *, tags=("written",), cell_type="markdown"):
    nb = nbformat.v4.new_notebook()
    written = (nbformat.v4.new_markdown_cell if cell_type == "markdown" else nbformat.v4.new_code_cell)("Model.")
    written.metadata = {"tags": list(tags), "dpcourse": {"written": copy.deepcopy(spec)}}
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_markdown_cell("Which step breaks?"), written]
    return nb


def test_a_written_cell_is_read_with_its_prompt_and_rubric():
    (found,) = read_written_exercises(notebook())
    assert found.exercise == "svt-proof" and found.cell == 2
    assert found.prompt == "Which step breaks?" and found.model_answer == "Model."
    assert found.rubric == Rubric(
        4.0,
        (RubricItem("names-step", "Names the step that fails", 3.0), RubricItem("no-reason", "No reason given", -1.0)),
    )


def test_cells_without_the_tag_or_metadata_are_not_written_exercises():
    nb = notebook()
    nb.cells[2].metadata = {}
    assert read_written_exercises(nb) == []


def with_item(**changes):
    spec = copy.deepcopy(SPEC)
    spec["rubric"][1].update(changes)
    return spec


@pytest.mark.parametrize(
    ("nb", "error", "words"),
    [
        (notebook(tags=()), ValueError, ["cell 2", "no tag 'written'"]),
        (notebook(cell_type="code"), ValueError, ["cell 2", "code cell"]),
        (notebook({**SPEC, "points": 0}), ValueError, ["cell 2", "svt-proof", "points must be a finite number > 0"]),
        (notebook({**SPEC, "points": "4"}), TypeError, ["cell 2", "points must be a number"]),
        (notebook({**SPEC, "exercise": "has space"}), ValueError, ["cell 2", "dpcourse.written.exercise"]),
        (notebook({k: v for k, v in SPEC.items() if k != "rubric"}), ValueError, ["cell 2", "rubric is missing"]),
        (notebook(with_item(id="names-step")), ValueError, ["cell 2", "rubric[1].id must be unique", "names-step"]),
        (notebook(with_item(points=float("nan"))), ValueError, ["cell 2", "rubric[1].points", "finite"]),
        (notebook(with_item(points=True)), TypeError, ["cell 2", "rubric[1].points must be a number"]),
        (notebook(with_item(text="")), ValueError, ["cell 2", "rubric[1].text"]),
        (notebook({**SPEC, "rubric": "all of it"}), TypeError, ["cell 2", "rubric must be a list"]),
        (notebook({**SPEC, "bonus": 1}), ValueError, ["cell 2", "unknown fields ['bonus']"]),
    ],
)
def test_a_malformed_written_cell_is_refused_naming_the_cell_and_field(nb, error, words):
    with pytest.raises(error) as raised:
        read_written_exercises(nb)
    for word in words:
        assert word in str(raised.value)


def test_two_written_cells_with_one_id_are_refused():
    nb = notebook()
    nb.cells.append(copy.deepcopy(nb.cells[2]))
    with pytest.raises(ValueError, match="cell 3: .*'svt-proof' is already used"):
        read_written_exercises(nb)


def test_an_answer_is_cut_at_the_cap_with_its_size_kept():
    answer = read_answer("é" * MAX_ANSWER_BYTES)  # 2 bytes each: the cut falls on a character boundary
    assert len(answer.text.encode()) == MAX_ANSWER_BYTES and answer.cut_from == 2 * MAX_ANSWER_BYTES
    assert "131,072 bytes" in answer.note
    small = read_answer("short")
    assert small.cut_from is None and small.note == ""


def test_an_answer_loses_control_and_bidi_characters_but_keeps_tabs_and_lines():
    answer = read_answer(["a\r\n", "\tb\x00\x1b\x7f\x85\u202e\u2066c\r", "\ud800d"])
    assert answer.text == "a\n\tbc\n?d"
    assert read_answer(b"\xff ok").text == "\ufffd ok"
    with pytest.raises(TypeError, match="source must be"):
        read_answer(42)


def test_the_group_key_ignores_whitespace_and_case_only():
    assert group_key("The step\n\tFAILS ") == group_key("the   step fails")
    assert group_key("ﬁne") == group_key("FINE")  # compatibility forms folded (NFKC)
    assert group_key("the step fails") != group_key("the step fails.")


def test_the_cell_format_lives_once_in_the_checks_and_marking_reads_it_from_there():
    """The hand-in status (in the checks, which may not import the classroom) reads the same format as marking."""
    from dpcourse.checks import _written
    from dpcourse.classroom import marking
    from dpcourse.classroom.marking import written

    for name in ("TAG", "Rubric", "RubricItem", "WrittenExercise", "check_rubric", "read_written_exercises"):
        assert getattr(written, name) is getattr(_written, name)
    assert marking.read_written_exercises is _written.read_written_exercises
