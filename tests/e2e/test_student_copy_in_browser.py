"""What a student sees: the released notebook in JupyterLab, Run All to the end, then a wrong answer; and the
helpers the workbook test uses to run every notebook's student copy with a wrong answer in every exercise.

The released notebooks are uploaded through the Jupyter contents API into the server the suite
started (so the solution notebooks it serves stay as they are). Screenshots of the check outputs
land in ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re
import urllib.request

import nbformat
import pytest

from dpcourse.classroom.release import release_notebook
from tests.e2e.conftest import ROOT, TOKEN, Uploaded, open_notebook, save_screenshot, upload_notebook


def _with_wrong_answers(nb):
    """Every exercise's stub answered wrongly: ``name = 0`` for a value, ``return 0`` for a function."""
    for cell in nb.cells:
        if "solution" in cell.metadata.get("tags", []):
            cell.source = re.sub(r"= \.\.\.  # your answer", "= 0  # a wrong answer", cell.source)
            cell.source = re.sub(r"^(\s*)raise NotImplementedError\(.*\)$", r"\1return 0", cell.source, flags=re.M)
    return nb


TYPO = "typo_check = epsilon_offic * 2  # a misspelt name: this answer cell raises NameError\n"


def _with_a_typo_in_the_first_answer(nb):
    """The first answer cell raises ``NameError`` before it binds its answer (issue 29: Run All must go on)."""
    first = next(c for c in nb.cells if "solution" in c.metadata.get("tags", []))
    first.source = TYPO + first.source
    return nb


def _upload(lab: str, name: str, wrong: bool = False) -> Uploaded:
    nb = release_notebook(nbformat.read(ROOT / "notebooks" / name, as_version=4))
    if wrong:
        nb = _with_a_typo_in_the_first_answer(_with_wrong_answers(nb))
        name = name.replace(".ipynb", "_wrong.ipynb")
    return upload_notebook(lab, "student", name, nb)


def check_wrong_answers_ran_to_the_end(page, lab: str, name: str, artifacts) -> None:
    """After Run All on the copy of ``name`` with a wrong answer in every exercise and a typo in the first answer
    cell (``_upload(..., wrong=True)``): every cell ran, the only error shown is the typo's, the first check says
    that its answer cell raised, every exercise shows its ✗, every figure and panel was drawn, and no news pop-up
    covers them.

    What JupyterLab ran is saved and read back from the server, since it keeps only the cells in view in the page.
    """
    released = release_notebook(nbformat.read(ROOT / "notebooks" / name, as_version=4))
    exercises = sorted(
        {c.metadata["dpcourse"]["exercise"] for c in released.cells if "check" in c.metadata.get("tags", [])}
    )
    figures = sum(1 for c in released.cells if c.cell_type == "code" and "plt.show()" in c.source)
    # the shipped settings (jupyter/overrides.json) keep JupyterLab's news question off the figures
    assert page.get_by_text("official Jupyter news").count() == 0
    save_screenshot(page, artifacts / f"student_{name[:2]}_wrong_answers_end.png")
    page.locator(".jp-Notebook").click()
    page.keyboard.press("Control+s")
    saved = name.replace(".ipynb", "_wrong.ipynb")
    page.wait_for_function(
        f"() => !document.title.startsWith('●') && document.title.includes('{saved[:10]}')", timeout=30_000
    )
    page.wait_for_timeout(1000)
    with urllib.request.urlopen(f"{lab}/api/contents/student/{saved}?token={TOKEN}", timeout=30) as response:
        ran = nbformat.from_dict(json.loads(response.read())["content"])
    code = [c for c in ran.cells if c.cell_type == "code" and c.source.strip()]
    assert all(c.execution_count is not None for c in code), "Run All stopped before the last cell"
    raised = [(c, o) for c in code for o in c.outputs if o.output_type == "error"]
    assert [(c.source.startswith(TYPO), o.ename) for c, o in raised] == [(True, "NameError")], "not just the typo"
    first_check = next(c for c in code if "check" in c.metadata.get("tags", []))
    said = "".join(str(o.get("data", {}).get("text/plain", "")) + o.get("text", "") for o in first_check.outputs)
    assert "your answer cell raised NameError" in said, said
    failed = {
        c.metadata["dpcourse"]["exercise"]
        for c in code
        if "check" in c.metadata.get("tags", [])
        and any("✗ " in "".join(o.get("data", {}).get("text/plain", "")) for o in c.outputs)
    }
    assert sorted(failed) == exercises

    def has_png(cell):
        return any("image/png" in o.get("data", {}) for o in cell.outputs)

    panels_shown = [
        c
        for c in code
        if any("".join(o.get("data", {}).get("text/plain", "")).startswith("[panel:") for o in c.outputs)
    ]
    pictures = [c for c in code if "plt.show()" in c.source] + panels_shown
    assert len(pictures) >= figures and panels_shown and all(has_png(c) for c in pictures)
    failure = page.locator(".jp-OutputArea-output").filter(has_text="✗ ").first
    failure.scroll_into_view_if_needed()
    save_screenshot(page, artifacts / f"student_{name[:2]}_wrong_answers_a_check.png")


@pytest.mark.e2e
def test_a_wrong_answer_shows_one_short_block_without_traceback(lab, browser, artifacts):
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        # Run All on every notebook's student copy is tested in test_workbook_in_browser.py: here a student types
        # a wrong answer (with the import an earlier check cell would have run) and runs it with its check
        open_notebook(page, _upload(lab, "01_laplace_utility.ipynb"))
        expect(page.locator("#jp-main-statusbar")).to_contain_text("Python 3 (ipykernel) | Idle", timeout=90_000)
        page.wait_for_timeout(1000)
        stub = page.locator(".jp-CodeCell").filter(has_text="K_max = ...").first
        stub.scroll_into_view_if_needed()
        stub.locator(".cm-content").click()
        page.keyboard.press("Control+a")
        page.keyboard.type(
            "from dpcourse.checks import laplace as check\n"
            "n_office, alpha, beta, epsilon_office = 1_000_000, 0.01, 0.05, 0.5\nK_max = 5000"
        )
        page.keyboard.press("Shift+Enter")  # run the answer, move to the check cell
        page.keyboard.press("Shift+Enter")  # run the check
        failure = page.locator(".jp-OutputArea-output").filter(has_text="✗ max-queries").first
        expect(failure).to_be_visible(timeout=60_000)
        text = failure.inner_text()
        assert "dropped the logarithm" in text and "Hint:" in text
        assert "Traceback" not in text and "dpcourse/checks" not in text and len(text.strip().splitlines()) <= 3
        save_screenshot(failure, artifacts / "student_01_wrong_answer.png")
    finally:
        page.close()
