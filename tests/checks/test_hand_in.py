"""The hand-in status that ends each notebook: every check of the notebook on the student's current answers."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from dpcourse.checks import NOTEBOOKS, HandInStatus, all_exercises, hand_in_status
from dpcourse.checks._hand_in import notebook_exercises
from tests.checks.test_checks import CASES, exact_level

ROOT = Path(__file__).resolve().parents[2]


def _check_calls(stem):
    """(exercise id, attribute called, names passed) of each check cell of the notebook, in order."""
    found = []
    for cell in nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4).cells:
        exercise = cell.metadata.get("dpcourse", {}).get("exercise")
        if cell.cell_type != "code" or "check" not in cell.metadata.get("tags", []):
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if isinstance(node.func.value, ast.Name) and node.func.value.id == "check":
                    found.append((exercise, node.func.attr, tuple(arg.id for arg in node.args)))
    return found


def _namespace(stem, *, wrong=None, missing=(), stub=()):
    """The right answers of the notebook's exercises by their names, with some wrong, missing or stubs."""
    namespace = {}
    for exercise in notebook_exercises(stem):
        _, right, mistakes = CASES[exercise.exercise]
        answers = mistakes[0][0] if exercise.exercise == wrong else right
        if exercise.exercise in stub:
            answers = tuple(_stub if callable(a) else ... for a in answers)
        if exercise.exercise not in missing:
            namespace.update(zip(exercise.answers, answers, strict=True))
    return namespace


def _stub(*args, **kwargs):
    raise NotImplementedError("exercise: write your answer here")


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_each_exercise_knows_the_names_its_check_cell_passes_in_the_notebooks_order(stem):
    calls = _check_calls(stem)
    exercises = notebook_exercises(stem)
    assert [exercise for exercise, _, _ in calls] == [e.exercise for e in exercises]
    module = __import__(f"dpcourse.checks.{NOTEBOOKS[stem]}", fromlist=["_"])
    for (exercise, attribute, names), known in zip(calls, exercises, strict=True):
        assert getattr(module, attribute) is known and known.answers == names, (exercise, names, known.answers)


def test_every_exercise_belongs_to_one_notebook():
    listed = [e.exercise for stem in NOTEBOOKS for e in notebook_exercises(stem)]
    assert sorted(listed) == sorted(all_exercises())


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_right_answers_pass_and_say_which_file_to_hand_in(stem):
    status = hand_in_status(stem, _namespace(stem))
    assert isinstance(status, HandInStatus) and status.passed == status.total == len(status.exercises)
    assert status.total >= 3 and all(v.passed for v in status.exercises)
    summary = status.lines()[0]
    scope = " on the documented examples" if status.functions else ""
    assert summary == f"✓ {status.total} of {status.total} exercises pass{scope}; hand in this file as {stem}.ipynb"
    assert f"<code>{stem}.ipynb</code>" in status._repr_html_() and "`" not in status._repr_html_()
    assert "hand in this file as" in status._repr_html_() and "#1b7837" in status._repr_html_()
    assert hand_in_status(f"{stem}.ipynb", _namespace(stem)).passed == status.total


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_a_wrong_answer_is_named_with_its_message_and_a_missing_one_is_not_attempted(stem):
    first, *rest = (e.exercise for e in notebook_exercises(stem))
    status = hand_in_status(stem, _namespace(stem, wrong=first, missing=rest[-1:]))
    assert (status.passed, status.total) == (status.total - 2, len(rest) + 1)
    assert [v.status for v in status.exercises] == ["failed", *["passed"] * (len(rest) - 1), "not attempted"]
    summary, hand_in, *_ = status.lines()
    assert summary.startswith(f"{status.passed} of {status.total} exercises pass: {first} fails (")
    assert summary.endswith(f"; not attempted: {rest[-1]}")
    assert f"{stem}.ipynb" in hand_in and "`" not in hand_in and len(summary) < 300


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_stubs_and_an_empty_namespace_are_not_attempted(stem):
    ids = [e.exercise for e in notebook_exercises(stem)]
    for namespace in ({}, _namespace(stem, stub=ids)):
        status = hand_in_status(stem, namespace)
        assert status.passed == 0 and {v.status for v in status.exercises} == {"not attempted"}
        assert status.lines()[0] == f"0 of {len(ids)} exercises pass: not attempted: {', '.join(ids)}"
        assert status.score == 0.0


def test_a_stub_among_several_answers_and_a_partly_missing_exercise_are_not_attempted():
    status = hand_in_status("02_rr_vs_laplace", {"l1": 0.005})  # l2 missing
    assert status.exercises[1].status == "not attempted"


def test_the_namespace_defaults_to_the_ipython_user_namespace():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        shell.user_ns.update(K_max=538)
        status = hand_in_status("01_laplace_utility")
        assert [v.status for v in status.exercises] == ["not attempted"] * 2 + ["passed"] + ["not attempted"] * 2
    finally:
        InteractiveShell.clear_instance()


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="notebook"):
        hand_in_status("07_nothing", {})
    with pytest.raises(TypeError, match="namespace"):
        hand_in_status("01_laplace_utility", [("K_max", 538)])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="namespace"):
        hand_in_status("01_laplace_utility")  # no IPython kernel in a test


def test_a_check_already_run_on_the_same_function_is_reused_and_a_redefined_one_is_judged_afresh(monkeypatch):
    from dpcourse.checks import _core
    from dpcourse.checks import above_threshold as at

    monkeypatch.setattr(_core, "_LAST_RUN", {})  # this kernel has run no check cell yet
    right, mistakes = CASES["implement"][1][0], CASES["implement"][2]
    calls = []

    def counted(*args):
        calls.append(1)
        return right(*args)

    at.implementation(counted)  # the check cell: probes the function (many runs on each documented example)
    assert calls
    checked = len(calls)
    namespace = {**_namespace("04_above_threshold_proof"), "my_above_threshold": counted}
    status = hand_in_status("04_above_threshold_proof", namespace)
    assert status.exercises[0].passed and len(calls) == checked  # same function object: not run again

    def counted(*args):  # noqa: F811 - the answer cell run again: a new function object, now a wrong one
        calls.append(1)
        return mistakes[0][0][0](*args)

    namespace["my_above_threshold"] = counted
    status = hand_in_status("04_above_threshold_proof", namespace)
    assert status.exercises[0].status == "failed" and len(calls) > checked


def test_a_list_answer_changed_in_place_after_its_check_is_judged_afresh(monkeypatch):
    from dpcourse.checks import _core
    from dpcourse.checks import above_threshold as at

    monkeypatch.setattr(_core, "_LAST_RUN", {})
    answer = list(CASES["small-pmf"][1][0])
    at.small_pmf(answer)
    answer.reverse()  # the same list object, now wrong
    status = hand_in_status("04_above_threshold_proof", {**_namespace("04_above_threshold_proof"), "small_pmf": answer})
    assert status.exercises[1].status == "failed" and "reverse order" in status.exercises[1].message


@pytest.mark.parametrize("stem", sorted(NOTEBOOKS))
def test_the_block_says_function_exercises_ran_on_the_documented_examples_and_grading_uses_other_inputs(stem):
    functions = [e.exercise for e in notebook_exercises(stem) if e.cases is not None]
    for namespace in (_namespace(stem), _namespace(stem, missing=[e.exercise for e in notebook_exercises(stem)][:1])):
        lines = hand_in_status(stem, namespace).lines()
        if not functions:  # 03: every check is the grader's own
            assert "documented examples" not in str(lines) and len(lines) <= 3  # summary, hand in, the saved file
            continue
        assert lines[-1].startswith("  Checked here on the documented examples only: grading runs ")
        assert all(name in lines[-1] for name in functions) and "other inputs" in lines[-1]
    if functions:
        total = len(notebook_exercises(stem))
        first = hand_in_status(stem, _namespace(stem)).lines()[0]
        assert first.startswith(f"✓ {total} of {total} exercises pass on the documented examples; hand in this file as")


def test_a_table_of_the_documented_examples_passes_here_and_the_block_says_grading_uses_other_inputs():
    from dpcourse.checks import laplace

    table = {case: exact_level(*case) for case in laplace._TAIL_CASES}

    def looked_up(k, beta, sensitivity, epsilon):  # knows the readable examples, nothing else
        return table[(k, beta, sensitivity, epsilon)]

    status = hand_in_status("01_laplace_utility", {**_namespace("01_laplace_utility"), "exact_tail_level": looked_up})
    assert status.passed == status.total == 5
    summary, saved, examples = status.lines()
    assert saved.startswith("  written: the saved file could not be read (01_laplace_utility.ipynb: ")
    assert (
        summary
        == "✓ 5 of 5 exercises pass on the documented examples; hand in this file as " + "01_laplace_utility.ipynb"
    )
    assert examples == (
        "  Checked here on the documented examples only: grading runs workload-sensitivity and exact-tail-level on "
        "other inputs, drawn when it grades."
    )
    assert "documented examples" in status._repr_html_()
    graded = laplace.exact_tail_level.verdict(laplace.exact_tail_level.evidence(looked_up, seed=7), seed=7)
    assert graded.status == "failed"  # what grading does with the same table


def test_an_answer_cell_that_raised_is_named_with_its_error_not_as_not_attempted(monkeypatch):
    from IPython.core.interactiveshell import InteractiveShell

    from dpcourse.checks import _core, _kernel

    monkeypatch.setattr(_core, "_RAISED", {})
    shell = InteractiveShell.instance()
    try:
        _kernel.install()
        shell.run_cell("K_max = 538")
        shell.run_cell("K_max = int(0.01 * 538 * epsilon_offic)")  # a typo: K_max still holds 538
        shell.run_cell("icu_epsilon = 1 / 0")  # never defined
        shell.run_cell("icu_sensitivity = (10")  # does not parse
        shell.run_cell("from dpcourse.checks import laplace as check\ncheck.max_queries(K_max)")  # not the answer cell
        verdicts = {v.exercise: v for v in hand_in_status("01_laplace_utility").exercises}
        assert verdicts["max-queries"].status == "failed"
        assert (
            verdicts["max-queries"].message
            == "its answer cell raised NameError: " + "name 'epsilon_offic' is not defined"
        )
        assert verdicts["icu-epsilon"].message == "its answer cell raised ZeroDivisionError: division by zero"
        assert verdicts["icu-sensitivity"].message.startswith("its answer cell raised SyntaxError")
        assert verdicts["exact-tail-level"].status == "not attempted"
        summary = hand_in_status("01_laplace_utility").lines()[0]
        assert "max-queries fails (its answer cell raised NameError: name 'epsilon_offic'" in summary
        assert "icu-epsilon fails (its answer cell raised ZeroDivisionError" in summary
        shell.run_cell("K_max = 538")  # fixed and run again
        assert {v.exercise: v for v in hand_in_status("01_laplace_utility").exercises}["max-queries"].passed
    finally:
        InteractiveShell.clear_instance()


def test_only_a_cell_that_binds_all_of_an_exercises_answer_names_is_taken_for_its_answer_cell():
    from dpcourse.checks import rr_vs_laplace  # noqa: F401 - the hook looks at imported check modules only
    from dpcourse.checks._kernel import _answered

    assert "better-mechanism" not in _answered("laplace_mse = 2 * (200 / 5000 / 0.5) ** 2")  # 02's demo cell
    assert "better-mechanism" in _answered("laplace_mse = 1\ngaussian_mse = 2\nchoice = 'gaussian'")
    assert "sensitivities" in _answered("l1 = 5 / 1000\nl2 = (5 ** 0.5 / 1000")  # does not parse: by pattern
    assert _answered("check.sensitivities(l1, l2)") == []


# --- written exercises: listed from the saved file, never judged ------------------------------------------


def _saved_release(tmp_path, answer=None):
    """A released notebook 04 with a written exercise, saved in ``tmp_path`` (answered with ``answer`` if given)."""
    from dpcourse.classroom.release import release_notebook
    from tests.written_cells import written_cells

    student = release_notebook(
        nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# 04"), *written_cells()])
    )
    if answer is not None:
        student.cells[-1].source = answer
    path = tmp_path / "04_above_threshold_proof.ipynb"
    nbformat.write(student, path)
    return path


def test_a_written_exercise_is_listed_empty_then_answered_from_the_saved_file_never_as_pass_or_fail(tmp_path):
    stem = "04_above_threshold_proof"
    path = _saved_release(tmp_path)
    status = hand_in_status(stem, {**_namespace(stem), "__session__": str(path)})
    total = len(notebook_exercises(stem))
    assert (status.passed, status.total, status.written) == (total, total, (("free-bottoms", False),))
    summary, written, *_ = status.lines()
    assert summary.startswith(f"✓ {total} of {total} exercises pass")  # the written one is not counted
    assert written == (
        f"  written: marked by hand: free-bottoms empty (as saved in {path.name}: what counts is the saved file)"
    )
    _saved_release(tmp_path, "The shared threshold's shift is paid once, so the $\\bot$ answers are free.")
    status = hand_in_status(stem, {**_namespace(stem), "__session__": str(path)})
    assert status.written == (("free-bottoms", True),) and "free-bottoms answered" in str(status)
    assert "pass" not in status.lines()[1] and "fail" not in status.lines()[1]
    assert "free-bottoms answered" in status._repr_html_()


def test_without_a_session_path_the_saved_file_is_the_notebook_in_the_working_folder(tmp_path, monkeypatch):
    _saved_release(tmp_path, "An answer.")
    monkeypatch.chdir(tmp_path)
    status = hand_in_status("04_above_threshold_proof", {})
    assert status.written == (("free-bottoms", True),) and status.unreadable == ""


@pytest.mark.parametrize("content", [None, b"{not json", b'{"cells": 3}'])
def test_a_saved_file_that_cannot_be_read_is_said_in_one_line(tmp_path, content):
    path = tmp_path / "04_above_threshold_proof.ipynb"
    if content is not None:
        path.write_bytes(content)
    status = hand_in_status("04_above_threshold_proof", {"__session__": str(path)})
    (line,) = [line for line in status.lines() if "written" in line]
    assert line.startswith(f"  written: the saved file could not be read ({path}: ")
    assert line.endswith("what counts is the saved file") and status.written == ()
