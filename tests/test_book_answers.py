"""The course website gives no answer away (issue 39): the search for answers in a built site, run here on tiny
fake sites (one clean, one with an answer in each kind of file a reader can open), the solution lines it looks
for, the student release the site is built from, the note each panel gets and the right column's names. The
real site is searched by tests/e2e/test_book_in_browser.py, with every exercise's accepted value too."""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from tests.test_book import ROOT, build, extension

SOLUTION = """def workload_l1_sensitivity(W):
    ### BEGIN SOLUTION
    if W is None:
        return None
    return np.abs(W).sum(axis=0).max()   # one person moves x by e_u: the answers move by column u of W
    ### END SOLUTION

### BEGIN SOLUTION
K_max = 1
while K_max < 538:
    K_max += 1
    pass
sizes = [
    538,
]
### END SOLUTION
"""


def solution_notebook() -> nbformat.NotebookNode:
    answer = new_code_cell(SOLUTION, metadata={"tags": ["solution"], "dpcourse": {"exercise": "max-queries"}})
    check = new_code_cell(
        "check.max_queries(K_max)", metadata={"tags": ["check"], "dpcourse": {"exercise": "max-queries"}}
    )
    return new_notebook(cells=[new_markdown_cell("Find the largest K."), answer, check])


LINES = [
    "return np.abs(W).sum(axis=0).max()",
    "one person moves x by e_u: the answers move by column u of W",
    "K_max = 1",
    "while K_max < 538:",
    "K_max += 1",
]


def test_solution_lines_are_every_line_of_a_region_code_and_comment_apart_trivial_ones_left_out():
    assert build.solution_lines([solution_notebook()]) == LINES


def test_a_line_a_student_sees_anyway_is_not_an_answer():
    student = new_notebook(cells=[new_code_cell("K_max = 1  # start here\nx = 2")])
    assert build.shown_to_students(LINES, [student]) == ["K_max = 1"]
    assert build.shown_to_students(["K_max = 1"], [new_notebook(cells=[new_code_cell("K_max = 10")])]) == []


def test_answer_numbers_flattens_what_a_check_accepts():
    import numpy as np

    answer = [np.float64(6.5), {"a": 2, "b": [0.25, True]}, "gaussian", np.array([[1.0, 2.0]]), len, (3,)]
    assert build.answer_numbers(answer) == [6.5, 2.0, 0.25, 1.0, 2.0, 3.0]


CLEAN_PAGE = (
    '<div class="highlight"><pre><span class="n">K_max</span> <span class="o">=</span> '
    '<span class="o">...</span>  <span class="c1"># your answer</span></pre></div>'
    "<p>About 500 queries fit: K_max = 10 is far too few; α = 0.01, ε = 0.5, 6.4, 6.40 (Theorem 6.40) and 2,421"
    " people in 2.42 hours; a σ of 0.0005.</p><p>Notebook 02's answer on 01's page: 15,202 by chance.</p>"
    '<img src="data:image/png;base64,' + "A538" * 40 + '"><p id="x538">v1.2.538</p>'
)


def fake_site(tmp_path, page: str = CLEAN_PAGE, **files: str):
    site = tmp_path / "html"
    (site / "notebooks").mkdir(parents=True)
    (site / "notebooks" / "01.html").write_text(page, encoding="utf-8")
    (site / "searchindex.js").write_text('Search.setIndex({"terms": {"laplac": [0, 1], "500": 2}})')
    notebook = new_notebook(cells=[new_code_cell("K_max = ...  # your answer")])
    (site / "_sources").mkdir()
    (site / "_sources" / "01.ipynb").write_text(nbformat.writes(notebook), encoding="utf-8")
    for name, text in files.items():
        path = site / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return site


NUMBERS = {"01": [538.0, 6.396929655216146, 10.0, 0.5, 64.0, 0.000519], "02": [15202.0, 2420.0, 0.086863]}


def test_a_clean_site_shows_no_answer(tmp_path):
    site = fake_site(tmp_path)
    assert build.answers_shown(site, [*LINES, "✓ max-queries: correct"], NUMBERS) == []


@pytest.mark.parametrize(
    "name, leak, found",
    [
        # a highlighted solution line on a page: the tags between its words do not hide it
        (
            "notebooks__01.html",
            '<span class="n">K_max</span> <span class="o">+=</span> <span class="mi">1</span>',
            "text 'K_max += 1'",
        ),
        # the HTML's entities do not hide it either
        ("notebooks__02.html", "<pre>while K_max &lt; 538:</pre>", "text 'while K_max < 538:'"),
        # the downloadable notebook, JSON-escaped
        (
            "_sources__notebooks__01.ipynb",
            json.dumps({"cells": [{"outputs": [{"text": "\u2713 max-queries: correct."}]}]}),
            "text '✓ max-queries: correct'",
        ),
        # an accepted value in the search index, as its own term
        ("searchindex.js", 'Search.setIndex({"terms": {"538": 3}})', "the accepted value 538 as '538'"),
        # ... on its notebook's page, with a thousands separator, or rounded to the digits shown
        ("notebooks__02.html", "<p>Laplace needs 15,202 people.</p>", "the accepted value 15202 as '15,202'"),
        ("notebooks__02.html", "<td>0.0869</td>", "the accepted value 0.086863 as '0.0869'"),
        ("notebooks__01.html", "<td>6.3969</td>", "the accepted value 6.39693 as '6.3969'"),
        # ... or on a page of no notebook
        ("intro.html", "<p>2,420 in all</p>", "the accepted value 2420 as '2,420'"),
        # a source Sphinx copies beside the pages, or any text file
        ("_sources__intro.md", "The level is 6.397.", "the accepted value 6.39693 as '6.397'"),
        ("_sources__api__svt.rst", "K_max += 1", "text 'K_max += 1'"),
        ("notes.txt", "The level is 6.397.", "the accepted value 6.39693 as '6.397'"),
        # widget state (JSON inside a page's script) holding a check's HTML output
        (
            "notebooks__05.html",
            '<script type="application/vnd.jupyter.widget-state+json">'
            + json.dumps({"outputs": [{"text/html": "<b>\u2713 max-queries: correct</b>"}]})
            + "</script>",
            "text '✓ max-queries: correct'",
        ),
    ],
)
def test_an_answer_anywhere_a_reader_can_open_is_found(tmp_path, name, leak, found):
    site = fake_site(tmp_path, **{name: leak})
    shown = build.answers_shown(site, [*LINES, "✓ max-queries: correct"], NUMBERS)
    path = name.replace("__", "/")
    assert f"{path}: {found}" in shown and all(line.startswith(f"{path}: ") for line in shown), shown


def test_other_scripts_are_not_read(tmp_path):
    site = fake_site(tmp_path, **{"_static__mathjax__tex.js": "var a = 538; // K_max += 1"})
    assert build.answers_shown(site, LINES, NUMBERS) == []


def test_the_book_stages_the_student_release_and_the_solutions_only_when_asked(tmp_path, monkeypatch):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nb = solution_notebook()
    nb.cells[2].outputs = [nbformat.v4.new_output("stream", text="✓ max-queries: correct. K = 538\n")]
    nbformat.write(nb, notebooks / "01_x.ipynb")
    monkeypatch.setattr(build, "NOTEBOOKS", notebooks)
    build.stage(tmp_path / "student")
    staged = (tmp_path / "student" / "notebooks" / "01_x.ipynb").read_text()
    assert "BEGIN SOLUTION" not in staged and "K_max += 1" not in staged and "correct" not in staged
    assert "K_max = ...  # your answer" in staged
    assert (tmp_path / "student" / "notebooks" / "01_x.ipynb").stat().st_mtime == (
        notebooks / "01_x.ipynb"
    ).stat().st_mtime
    build.stage(tmp_path / "solutions", with_solutions=True)
    assert "K_max += 1" in (tmp_path / "solutions" / "notebooks" / "01_x.ipynb").read_text()
    assert build._settings_fingerprint(True) != build._settings_fingerprint(False)


def test_each_panel_is_labelled_a_snapshot_with_a_link_to_its_live_notebook():
    def view(model_id: str) -> str:
        return f'<script type="application/vnd.jupyter.widget-view+json">{{"model_id": "{model_id}"}}</script>'

    state = {
        "state": {
            "p1": {"state": {"_dom_classes": ["dpcourse-panel"]}},
            "p2": {"state": {"_dom_classes": ["x", "dpcourse-panel"]}},
            "box": {"state": {"_dom_classes": []}},
            "slider": {"state": {}},
        }
    }
    panels = extension.panel_models(state)
    assert panels == {"p1", "p2"}
    body = f"<p>Move ε.</p><div>{view('p1')}</div><div>{view('box')}</div><div>{view('p2')}</div>"
    url = "https://mybinder.org/v2/gh/o/r/HEAD?labpath=student%2F01_x.ipynb&a=b"
    labelled = extension.label_panels(body, url, panels)
    assert labelled.count("Snapshot") == 2 and all(labelled.count(view(m)) == 1 for m in ("p1", "p2", "box"))
    assert re.findall(r'href="([^"]+)"', labelled) == [url.replace("&", "&amp;")] * 2
    assert labelled.index("Snapshot") < labelled.index(view("p1"))
    assert labelled.index(view("box")) < labelled.rindex("Snapshot") < labelled.index(view("p2"))  # no note on the box
    assert extension.label_panels("<p>no panel</p>", url, panels) == "<p>no panel</p>"


def test_a_site_with_solutions_is_built_only_by_a_target_that_says_so():
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(
        r"^book-with-solutions: \$\(BOOK_STAMP\) \$\(BOOK_NPM_STAMP\)\n\t\$\(BOOK_VENV\)/bin/python book/build.py "
        r"--with-solutions$",
        makefile,
        re.M,
    )
    assert "--with-solutions" not in re.search(r"^book:.*\n\t(.*)$", makefile, re.M).group(1)


def test_the_right_columns_names_may_break_after_each_dot_and_nowhere_else():
    toc = '<a href="#m"><code class="docutils"><span class="pre">dpcourse.mechanisms.calibration</span></code></a> a.b'
    assert extension.breakable_names(toc) == (
        '<a href="#m"><code class="docutils"><span class="pre">dpcourse.<wbr>mechanisms.<wbr>calibration</span>'
        "</code></a> a.b"
    )


def test_a_site_built_with_the_solutions_says_so_on_every_page(monkeypatch):
    assert build.WITH_SOLUTIONS_VARIABLE == extension.WITH_SOLUTIONS_VARIABLE
    for value, banner in [("", None), ("1", extension.WITH_SOLUTIONS_BANNER)]:
        monkeypatch.setenv(extension.WITH_SOLUTIONS_VARIABLE, value)
        config = type("Config", (), {"html_static_path": [], "html_theme_options": {"x": 1}})()
        extension._take_docs_settings({})(None, config)
        assert config.html_theme_options.get("announcement") == banner and config.html_theme_options["x"] == 1


def test_answers_in_looks_for_a_notebooks_solution_lines_check_marks_and_values(tmp_path):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(solution_notebook(), notebooks / "01.ipynb")
    site = fake_site(tmp_path)
    assert build.answers_in(site, notebooks, NUMBERS) == []
    (site / "notebooks" / "01.html").write_text("<pre>K_max += 1</pre><p>✓ max-queries: correct</p><p>6.397</p>")
    assert build.answers_in(site, notebooks, NUMBERS) == [
        "notebooks/01.html: text 'K_max += 1'",
        "notebooks/01.html: text '✓ max-queries: correct'",
        "notebooks/01.html: the accepted value 6.39693 as '6.397'",
    ]


def test_a_written_exercises_model_answer_and_rubric_are_searched_for_in_rendered_and_raw_files(tmp_path):
    """The phrases between math and Markdown's marks: a page shows them as prose, a notebook as written."""
    from tests.written_cells import SPEC, written_cells

    model = (
        "**Model answer.** The proof shifts the one shared threshold noise by $\\Delta$, "
        "and the price of that shift is paid only once by its density ratio."
    )
    spec = {
        **SPEC,
        "rubric": [{"id": "why", "text": "Says that one shift moves all the comparisons at once", "points": 2}],
    }
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    nbformat.write(new_notebook(cells=written_cells(spec, model=model)), notebooks / "04.ipynb")
    assert build.model_answer_phrases([nbformat.read(notebooks / "04.ipynb", as_version=4)]) == [
        "The proof shifts the one shared threshold noise by",
        "and the price of that shift is paid only once by its density ratio",
        "Says that one shift moves all the comparisons at once",
    ]
    site = fake_site(tmp_path)
    assert build.answers_in(site, notebooks) == []
    (site / "notebooks" / "04.html").write_text(
        "<p><strong>Model answer.</strong> The proof shifts the one shared threshold noise by \\(\\Delta\\), and the "
        "price of that shift is paid only once by its density ratio.</p>"
    )
    (site / "notebooks" / "04.ipynb").write_text(json.dumps({"rubric": [{"text": spec["rubric"][0]["text"]}]}))
    assert build.answers_in(site, notebooks) == [
        "notebooks/04.html: text 'The proof shifts the one shared threshold noise by'",
        "notebooks/04.html: text 'and the price of that shift is paid only once by its density ratio'",
        "notebooks/04.ipynb: text 'Says that one shift moves all the comparisons at once'",
    ]
