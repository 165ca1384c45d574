"""The student copy: `python -m dpcourse release` (dpcourse.classroom.release)."""

import argparse
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from dpcourse.__main__ import main
from dpcourse.classroom import release as student_copy

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
STUB_LINE = re.compile(r"(\w+) = \.\.\.  # your answer")


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """(solution notebook, released notebook) for each of the six notebooks."""
    out = tmp_path_factory.mktemp("student")
    written = student_copy.release(ROOT / "notebooks", out)
    assert [p.name for p in written] == [p.name for p in NOTEBOOKS]
    return [
        (nbformat.read(a, as_version=4), nbformat.read(b, as_version=4))
        for a, b in zip(NOTEBOOKS, written, strict=True)
    ]


def _role(cell):
    tags = cell.metadata.get("tags", [])
    return "solution" if "solution" in tags else "check" if "check" in tags else None


def _check_reads(nb, exercise):
    (check,) = [c for c in nb.cells if _role(c) == "check" and c.metadata["dpcourse"]["exercise"] == exercise]
    return {n.id for n in ast.walk(ast.parse(check.source)) if isinstance(n, ast.Name)}


# --- the six notebooks ---------------------------------------------------------------------------


def _as_released(metadata):
    """A written exercise's cell keeps its tags, exercise id and points in the students' copy; its rubric stays with
    the instructor (issue 42). Any other cell's metadata is kept whole."""
    if "written" not in metadata.get("tags", []):
        return metadata
    written = metadata["dpcourse"]["written"]
    return {
        "tags": metadata["tags"],
        "dpcourse": {"written": {"exercise": written["exercise"], "points": written["points"]}},
    }


def _without_may_raise(metadata):
    tags = [t for t in metadata.get("tags", []) if t != student_copy.ANSWER_MAY_RAISE]
    return {**metadata, "tags": tags} if "tags" in metadata else metadata


def test_release_keeps_every_cell_its_id_and_metadata(released):
    for original, student in released:
        assert [(c.cell_type, c.get("id"), _as_released(c.metadata)) for c in original.cells] == [
            (c.cell_type, c.get("id"), _without_may_raise(c.metadata)) for c in student.cells
        ]
        answers = [c for c in student.cells if _role(c) == "solution"]
        assert answers and all(student_copy.ANSWER_MAY_RAISE in c.metadata["tags"] for c in answers)
        assert student.metadata == original.metadata
        assert student_copy.exercises(student) == student_copy.exercises(original)
        assert len(student_copy.exercises(student)) >= 3


def test_no_solution_is_left_and_no_check_cell_stores_an_output(released):
    for original, student in released:
        for before, after in zip(original.cells, student.cells, strict=True):
            assert student_copy.BEGIN not in after.source and student_copy.END not in after.source
            if _role(before) in ("solution", "check"):
                assert after.outputs == [] and after.execution_count is None, before.id
        assert sum(_role(c) == "check" for c in original.cells) >= 3
        assert any(_role(c) == "check" and c.outputs for c in original.cells)  # there was something to clear


def test_stubs_name_only_what_the_check_reads_and_keep_the_code_around(released):
    top_level = indented = 0
    for original, student in released:
        for before, after in zip(original.cells, student.cells, strict=True):
            if _role(before) != "solution":
                continue
            exercise = before.metadata["dpcourse"]["exercise"]
            lines = before.source.splitlines()
            begins = [i for i, x in enumerate(lines) if x.strip() == student_copy.BEGIN]
            ends = [i for i, x in enumerate(lines) if x.strip() == student_copy.END]
            # the code around the regions is kept as it is, and each region becomes its stub (a cell may have several)
            outside = [
                lines[: begins[0]],
                *(lines[e + 1 : b] for e, b in zip(ends, begins[1:], strict=False)),
                lines[ends[-1] + 1 :],
            ]
            stub = after.source.splitlines()
            assert stub[: len(outside[0])] == outside[0]
            position = len(outside[0])
            for begin, following in zip(begins, outside[1:], strict=True):
                end = next(
                    (
                        j
                        for j in range(position, len(stub) + 1)
                        if following
                        and stub[j : j + len(following)] == following
                        and (following is not outside[-1] or j + len(following) == len(stub))
                    ),
                    len(stub),
                )
                region, position = stub[position:end], end + len(following)
                indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
                if indent:
                    indented += 1
                    assert (
                        region[-1]
                        == f'{indent}raise NotImplementedError("exercise {exercise}: write your answer here")'
                    )
                else:
                    top_level += 1
                    names = [STUB_LINE.fullmatch(line).group(1) for line in region]  # every line is `name = ...`
                    assert names and set(names) <= _check_reads(original, exercise), (exercise, region)
            assert position == len(stub), (exercise, stub[position:])
    assert top_level >= 10 and indented >= 3


def test_figures_and_panels_keep_their_outputs(released):
    # a figure or panel that needed a student's answer would stay blank in a released notebook anyway
    kept = 0
    for original, student in released:
        for before, after in zip(original.cells, student.cells, strict=True):
            shows = any(
                k in o.get("data", {})
                for o in before.get("outputs", [])
                for k in ("image/png", "application/vnd.jupyter.widget-view+json")
            )
            if shows and _role(before) is None:
                assert after == before, before.id
                kept += 1
    assert kept >= 12


def test_release_is_deterministic_and_safe_to_rerun(tmp_path):
    student_copy.release(ROOT / "notebooks", tmp_path / "a")
    student_copy.release(ROOT / "notebooks", tmp_path / "a")
    student_copy.release(ROOT / "notebooks", tmp_path / "b")
    for path in (tmp_path / "a").glob("*.ipynb"):
        assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes()


# --- stubs and dependent outputs on small notebooks ----------------------------------------------


def test_an_indented_region_raises_at_its_indent():
    source = "def f(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION\nprint(f)"
    assert student_copy._stub_solution(source, "ex").splitlines() == [
        "def f(x):",
        "    # Your answer here: replace the next line.",
        '    raise NotImplementedError("exercise ex: write your answer here")',
        "print(f)",
    ]


def test_a_top_level_region_keeps_the_names_the_check_reads():
    source = "k = 3\n### BEGIN SOLUTION\nscale = 2 / k\nanswer, other = scale * k, 1\n### END SOLUTION\nprint(answer)"
    assert (
        student_copy._stub_solution(source, "ex", {"check", "answer"})
        == "k = 3\nanswer = ...  # your answer\nprint(answer)"
    )
    # no name the check reads: every name the region assigns
    assert student_copy._stub_solution(source, "ex", {"check"}).splitlines()[1:4] == [
        "scale = ...  # your answer",
        "answer = ...  # your answer",
        "other = ...  # your answer",
    ]
    namespace = {}
    exec(student_copy._stub_solution(source, "ex", {"answer"}).replace("print(answer)", ""), namespace)
    assert namespace["answer"] is Ellipsis


def test_two_regions_in_one_cell():
    source = "### BEGIN SOLUTION\na = 1\n### END SOLUTION\nb = 2\n### BEGIN SOLUTION\nc = a + b\n### END SOLUTION"
    assert (
        student_copy._stub_solution(source, "ex", {"a", "c"}) == "a = ...  # your answer\nb = 2\nc = ...  # your answer"
    )


def _cell(source, tags=(), exercise=None, output="out"):
    cell = new_code_cell(source, execution_count=1, outputs=[new_output("stream", name="stdout", text=output)])
    cell.metadata["tags"] = list(tags)
    if exercise:
        cell.metadata["dpcourse"] = {"exercise": exercise}
    return cell


def test_every_output_that_depends_on_a_solution_is_cleared():
    cells = {
        "before": _cell("x = 1\nprint(x)"),
        "solution": _cell("### BEGIN SOLUTION\nanswer = x + 1\n### END SOLUTION\nprint(answer)", ["solution"], "e"),
        "check": _cell("check(answer)", ["check"], "e"),
        "reads": _cell("doubled = answer * 2\nprint(doubled)"),
        "transitive": _cell("print(doubled)"),
        "rebinds": _cell("doubled = 5\nprint(doubled)"),
        "comprehension": _cell("print([answer for answer in range(3)])"),
        "loop": _cell("for answer in range(2):\n    print(answer)"),
        "function": _cell("def f():\n    return answer"),
        "calls": _cell("print(f())"),
        "magic": _cell("%timeit answer + 1"),
        "broken": _cell("print(x  # does not parse"),
        "after": _cell("print(x)"),
    }
    nb = new_notebook(cells=[new_markdown_cell("# title"), *cells.values()])
    student = student_copy.release_notebook(nb)
    cleared = {name for name, cell in zip(cells, student.cells[1:], strict=True) if cell.outputs == []}
    assert cleared == {"solution", "check", "reads", "transitive", "function", "calls", "magic", "broken"}
    assert all(c.execution_count is None for c in student.cells[1:] if c.outputs == [])
    assert student.cells[0] == nb.cells[0] and nb.cells[3].outputs  # the source notebook is not changed


@pytest.mark.parametrize(
    "source, message",
    [
        ("### BEGIN SOLUTION\nx = 1", "BEGIN SOLUTION without ### END SOLUTION (line 1)"),
        ("x = 1\n### END SOLUTION", "END SOLUTION without ### BEGIN SOLUTION (line 2)"),
        ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "a second ### BEGIN SOLUTION"),
    ],
)
def test_unbalanced_regions_name_the_notebook_and_the_cell(source, message):
    nb = new_notebook(cells=[new_markdown_cell("intro"), new_code_cell(source, id="cell-x")])
    with pytest.raises(student_copy.ReleaseError, match=re.escape("03_x.ipynb, cell 1 (id cell-x): ")) as error:
        student_copy.release_notebook(nb, "03_x.ipynb")
    assert message in str(error.value)


# --- refusals: exit 1, one line on stderr, nothing written -----------------------------------------


@pytest.fixture
def sources(tmp_path):
    folder = tmp_path / "solutions"
    folder.mkdir()
    for path in NOTEBOOKS[:2]:
        shutil.copy(path, folder)
    return folder


def _refused(capsys, argv):
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("release: ") and captured.err.count("\n") == 1
    assert "Traceback" not in captured.err
    return captured.err


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.exists() else None


def test_release_into_the_solution_folder_is_refused(capsys, sources):
    before = _snapshot(sources)
    err = _refused(capsys, ["release", str(sources), "--notebooks", str(sources / ".." / sources.name)])
    assert "solution folder itself" in err
    err = _refused(capsys, ["release", str(sources), "--notebooks", str(sources), "--force"])
    assert _snapshot(sources) == before


def test_release_into_a_folder_holding_a_solution_notebook_is_refused(capsys, sources, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(NOTEBOOKS[-1], out / "my_copy.ipynb")
    err = _refused(capsys, ["release", str(out), "--notebooks", str(sources), "--force"])
    assert "holds solution notebooks (my_copy.ipynb)" in err
    assert sorted(p.name for p in out.iterdir()) == ["my_copy.ipynb"]


@pytest.mark.parametrize("make_source", [lambda root: root / "nonexistent", lambda root: root])
def test_release_from_a_missing_or_empty_folder_is_refused(capsys, tmp_path, make_source):
    source = make_source(tmp_path / "empty")
    (tmp_path / "empty").mkdir()
    err = _refused(capsys, ["release", str(tmp_path / "out"), "--notebooks", str(source)])
    assert str(source) in err
    assert not (tmp_path / "out").exists()


def test_an_unclosed_region_is_refused_naming_notebook_and_cell(capsys, sources, tmp_path):
    path = sources / NOTEBOOKS[1].name
    nb = nbformat.read(path, as_version=4)
    index = next(i for i, c in enumerate(nb.cells) if _role(c) == "solution")
    nb.cells[index].source = nb.cells[index].source.replace(student_copy.END, "")
    nbformat.write(nb, path)
    err = _refused(capsys, ["release", str(tmp_path / "out"), "--notebooks", str(sources)])
    assert f"{path.name}, cell {index} (id {nb.cells[index].id}): ### BEGIN SOLUTION without ### END SOLUTION" in err
    assert not (tmp_path / "out").exists()


def test_a_students_changed_notebook_is_never_overwritten_without_force(capsys, sources, tmp_path):
    out = tmp_path / "student"
    assert main(["release", str(out), "--notebooks", str(sources)]) == 0
    first, second = sorted(out.glob("*.ipynb"))
    first.write_text(first.read_text().replace("raise NotImplementedError", "return 42  #"))
    capsys.readouterr()
    work = _snapshot(out)

    err = _refused(capsys, ["release", str(out), "--notebooks", str(sources)])
    assert first.name in err and second.name not in err and "--force" in err
    assert _snapshot(out) == work

    second.unlink()  # e.g. a notebook added to the course since the student's copy was made
    assert main(["release", str(out), "--notebooks", str(sources), "--keep-changed"]) == 0
    said = capsys.readouterr().out
    assert f"kept {first}" in said and f"wrote {second}" in said
    assert first.read_bytes() == work[first.name] and second.read_bytes() == work[second.name]

    stamp = second.stat().st_mtime_ns  # an up-to-date notebook is not rewritten (an open JupyterLab sees no change)
    assert main(["release", str(out), "--notebooks", str(sources), "--keep-changed"]) == 0
    assert "1 notebook(s)" in capsys.readouterr().out and second.stat().st_mtime_ns == stamp

    assert main(["release", str(out), "--notebooks", str(sources), "--force"]) == 0
    assert first.read_bytes() != work[first.name] and "return 42" not in first.read_text()


def test_the_command_line_exits_non_zero_without_a_traceback(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "dpcourse", "release", str(ROOT / "notebooks")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.startswith("release: ") and result.stderr.count("\n") == 1, result.stderr


SITE = "{tmp}/site-packages"  # where an installed wheel's package sits: no notebooks/ or requirements.txt beside it
SOURCE_OPTION = "--source PATH/TO/notebooks"


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["release", "{tmp}/out", "--notebooks", f"{SITE}/notebooks"], "--notebooks PATH/TO/notebooks"),
        (["grade", "{tmp}/a.ipynb", "--report", "{tmp}/g.csv", "--source", f"{SITE}/notebooks"], SOURCE_OPTION),
        (["grade", "--merge", "{tmp}/a.csv", "--report", "{tmp}/g", "--source", f"{SITE}/notebooks"], SOURCE_OPTION),
        (["collect", "folders", "{tmp}", "--out", "{tmp}/c", "--source", f"{SITE}/notebooks"], SOURCE_OPTION),
        (["gradescope", "build", "--out", "{tmp}/a.zip", "--source", f"{SITE}/notebooks"], SOURCE_OPTION),
        (
            ["gradescope", "build", "--out", "{tmp}/a.zip", "--source", str(ROOT / "notebooks"), "--requirements"]
            + [f"{SITE}/requirements.txt"],
            "--requirements PATH/TO/requirements.txt",
        ),
    ],
    ids=["release", "grade", "merge", "collect", "gradescope-source", "gradescope-requirements"],
)
def test_without_a_checkout_a_default_source_says_which_option_to_pass(capsys, monkeypatch, tmp_path, argv, option):
    # the parsers' defaults are fixed when they are built, so the test passes what they would be in a wheel
    monkeypatch.setattr(student_copy, "PROJECT", tmp_path / "site-packages")
    assert main([a.format(tmp=tmp_path) for a in argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1, captured.err
    assert f"the default {option.split()[0]} {tmp_path / 'site-packages'}/" in captured.err
    assert f"only a checkout of the workbook has it): pass {option} (" in captured.err
    assert not any(tmp_path.iterdir())  # nothing ran, nothing was written


def test_in_a_checkout_the_defaults_are_there_and_an_option_not_given_is_not_checked():
    assert student_copy.SOURCE == ROOT / "notebooks" and student_copy.REQUIREMENTS == ROOT / "requirements.txt"
    notebooks, requirements = ROOT / "notebooks", ROOT / "requirements.txt"
    defaults = argparse.Namespace(command="grade", source=notebooks, notebooks=notebooks, requirements=requirements)
    assert student_copy.missing_checkout_default(defaults) is None
    elsewhere = {"source": ROOT / "tests", "requirements": None}
    assert student_copy.missing_checkout_default(argparse.Namespace(command="gradescope", **elsewhere)) is None
    missing = argparse.Namespace(command="grade", source=Path("/nonexistent/notebooks"))
    assert student_copy.missing_checkout_default(missing, project=Path("/nonexistent")).startswith("grade: the default")


# --- a released notebook runs to the end ---------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_released_notebook_runs_top_to_bottom_even_past_a_typo_in_the_first_answer(notebook, tmp_path):
    """The student copy as a student first runs it: nbclient, like JupyterLab's Run All, goes on past an answer cell
    that raises (its raises-exception tag, issue 29), whose check says so; every other check says "not attempted",
    and the last cell says where the student stands and which file to hand in (issue 28). One kernel run checks
    both (each notebook's run is the cost of this test)."""
    from nbclient import NotebookClient

    student_copy.release(notebook.parent, tmp_path)
    nb = nbformat.read(tmp_path / notebook.name, as_version=4)
    first = next(i for i, c in enumerate(nb.cells) if _role(c) == "solution")
    nb.cells[first].source = "typo_check = epsilon_offic * 2  # a misspelt name\n" + nb.cells[first].source
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    assert all(c.execution_count is not None for c in nb.cells if c.cell_type == "code"), "a cell did not run"
    checks = [(i, c) for i, c in enumerate(nb.cells) if _role(c) == "check"]
    below_the_typo = next(i for i, _ in checks if i > first)
    for index, cell in checks:
        text = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs)
        if index == below_the_typo:
            assert "your answer cell raised NameError" in text and "epsilon_offic" in text, text
        else:
            assert "not attempted" in text, (cell.id, text)
    (hand_in,) = [c for c in nb.cells if "hand-in" in c.metadata.get("tags", [])]
    assert _closes_the_core(nb, hand_in)
    text = "".join(str(o.get("data", {}).get("text/plain", "")) for o in hand_in.outputs)
    assert f"0 of {len(checks)} exercises pass" in text and "not attempted" in text and notebook.name in text, text


def _closes_the_core(nb, cell) -> bool:
    """The hand-in cell is the notebook's last, or the last before its optional part (issue 39: a notebook's core
    ends with the hand-in; ``## Going further (optional)`` may follow, holding no exercise)."""
    index = next(i for i, c in enumerate(nb.cells) if c is cell)
    rest = nb.cells[index + 1 :]
    return not rest or (
        rest[0].cell_type == "markdown"
        and rest[0].source.startswith("## Going further (optional)")
        and not any(c.metadata.get("dpcourse") for c in rest)
    )


def test_the_hand_in_cell_closes_the_core_and_its_stored_output_is_cleared_in_the_release(released):
    for original, student in released:
        (hand_in,) = [c for c in original.cells if "hand-in" in c.metadata.get("tags", [])]
        assert _closes_the_core(original, hand_in)
        assert "exercises pass" in str(hand_in.outputs)  # the solutions' status, stored
        (cleared,) = [c for c in student.cells if "hand-in" in c.metadata.get("tags", [])]
        assert cleared.outputs == [] and _closes_the_core(student, cleared)


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git checkout")
@pytest.mark.parametrize(
    "path",
    [
        "student/01_laplace_utility.ipynb",
        "submissions/alice/01_laplace_utility.ipynb",
        "grades.csv",
        "grades-week3.csv",
        "grades_totals.csv",
        "totals.csv",
    ],
)
def test_student_work_and_grades_are_ignored_by_git(path):
    result = subprocess.run(["git", "check-ignore", "--no-index", "-q", path], cwd=ROOT)
    assert result.returncode == 0, f"{path} is not in .gitignore"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_lab_opens_the_student_copy_and_lab_solutions_the_sources():
    def commands(target):
        result = subprocess.run(
            ["make", "-n", "--no-print-directory", target], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
        return [line for line in result.stdout.splitlines() if "dpcourse release" in line or "jupyter lab" in line]

    release_line, lab_line = commands("lab")
    assert release_line.endswith("-m dpcourse release student --keep-changed")  # never over a student's changes
    assert "--ServerApp.root_dir=student" in lab_line
    (solutions_line,) = commands("lab-solutions")
    assert "--ServerApp.root_dir=notebooks" in solutions_line


# --- written exercises ------------------------------------------------------------------------------


def test_a_written_exercise_becomes_an_empty_answer_cell_under_its_prompt():
    from dpcourse.checks._written import PLACEHOLDER
    from tests.written_cells import MODEL_ANSWER, RUBRIC_TEXT, written_cells

    prompt, cell = written_cells()
    cell.attachments = {"proof.png": {"image/png": "iVBORw0KGgo="}}
    nb = new_notebook(cells=[new_markdown_cell("# 04"), prompt, cell, _cell("x = 1")])
    student = student_copy.release_notebook(nb)
    released = student.cells[2]
    assert student.cells[1] == prompt and released.id == "at-written-answer" and released.cell_type == "markdown"
    assert released.metadata == {
        "tags": ["written"],
        "dpcourse": {"written": {"exercise": "free-bottoms", "points": 4}},
    }
    assert released.source == PLACEHOLDER and "Replace" in PLACEHOLDER and "$" in PLACEHOLDER
    text = nbformat.writes(student)
    assert MODEL_ANSWER not in text and RUBRIC_TEXT not in text and "rubric" not in text and "iVBOR" not in text
    assert nb.cells[2].source == MODEL_ANSWER  # the instructor's notebook is not changed


def test_a_malformed_written_exercise_is_refused_naming_the_notebook_and_the_field():
    from tests.written_cells import SPEC, written_cells

    nb = new_notebook(cells=written_cells({**SPEC, "points": 0}))
    with pytest.raises(student_copy.ReleaseError, match=r"04_x.ipynb: cell 1: dpcourse.written .*points must be"):
        student_copy.release_notebook(nb, "04_x.ipynb")


def test_release_refuses_a_folder_holding_a_notebook_with_a_rubric(capsys, sources, tmp_path):
    from tests.written_cells import written_cells

    out = tmp_path / "out"
    out.mkdir()
    nbformat.write(new_notebook(cells=written_cells()), out / "04_x.ipynb")  # model answers, no code solution
    assert "holds solution notebooks (04_x.ipynb)" in _refused(
        capsys, ["release", str(out), "--notebooks", str(sources)]
    )
